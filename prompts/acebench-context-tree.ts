import { z } from 'zod';
import { definePrompt } from '../core/prompt.ts';

/**
 * ACEBench §3.1.1 (1): one step of the self-evolving API context tree. Given a node (a domain, or a
 * domain and subdomain) and the children it already has, propose new children: subdomains of a
 * domain, or functionalities of a subdomain, so the tree grows in breadth without repeating itself.
 */

export type TreeLevel = 'subdomain' | 'functionality';

export interface ContextTreeVars extends Record<string, unknown> {
  level: TreeLevel;
  /** `Sports` or `Sports > Basketball`. */
  path: string;
  count: number;
  /** The children the node has so far, one per line ('(none yet)' when empty). */
  existing: string;
  /** What the level is and an example of it (from `levelText`). */
  what: string;
  example: string;
  /** Excerpts of the user's documents for this domain with their lead-in, or '' (from `levelText`). */
  documentsBlock: string;
  /**
   * Only the offline renderer reads this (it is not part of the prompt text): what it may propose,
   * in order — the shipped domain lists' subdomains, or the documents' headings and key phrases.
   */
  choices: string[];
}

export const ContextTreeAnswer = z.object({ items: z.array(z.string().trim().min(1).max(120)).min(1) });
export type ContextTreeAnswer = z.infer<typeof ContextTreeAnswer>;

const LEVEL_TEXT: Record<TreeLevel, { what: string; example: string }> = {
  subdomain: { what: 'subdomains (areas of work inside it that software APIs serve)', example: '"Basketball", "Ticketing"' },
  functionality: { what: 'functionalities (concrete tasks an API in it would perform, each a short verb phrase)', example: '"track player statistics", "book a training court"' },
};

export default definePrompt<ContextTreeVars, ContextTreeAnswer>({
  id: 'acebench/context-tree',
  system: 'You design realistic software APIs for a tool-use benchmark and map the areas they cover.',
  template: `We are building a hierarchical tree of API contexts: domain > subdomain > functionality.

Node: {{path}}
Propose {{count}} new {{level}} {{what}}.
They must differ from each other and from the ones the node already has:
{{existing}}
{{documentsBlock}}
Use short English names, e.g. {{example}}.
Answer as JSON: {"items": ["...", "..."]}`,
  schema: ContextTreeAnswer,
  temperature: 0.9,
  maxTokens: 600,
  offline: (vars, rng) => {
    const taken = new Set(vars.existing.split('\n').map((line) => line.trim().toLowerCase()));
    const fresh = (items: string[]) => items.filter((item) => !taken.has(item.toLowerCase()) && (taken.add(item.toLowerCase()), true));
    const items = fresh(vars.choices).slice(0, vars.count);
    // Past the listed choices, template phrases over the node's own name.
    const subject = vars.path.split(' > ').at(-1)!;
    const templates = vars.level === 'subdomain' ? SUBDOMAIN_TEMPLATES : FUNCTIONALITY_TEMPLATES;
    for (const template of rng.shuffle(templates)) {
      if (items.length >= vars.count) break;
      items.push(...fresh([template.replace('{x}', subject)]));
    }
    return { items };
  },
});

/** The prompt's own text for a level, filled in by the stage (the template stays one string). */
export function levelText(level: TreeLevel, documents: string): Pick<ContextTreeVars, 'level' | 'what' | 'example' | 'documentsBlock'> {
  return {
    level,
    ...LEVEL_TEXT[level],
    documentsBlock: documents ? `\nLet these documents guide your proposals (cover what they describe first):\n${documents}\n` : '',
  };
}

const SUBDOMAIN_TEMPLATES = ['{x} Operations', '{x} Analytics', '{x} Planning', '{x} Services', '{x} Compliance', '{x} Customer Support', '{x} Scheduling', '{x} Inventory', '{x} Training', '{x} Marketing'];

const FUNCTIONALITY_TEMPLATES = [
  'track {x} performance metrics',
  'schedule {x} sessions',
  'book {x} reservations',
  'analyze {x} feedback',
  'generate {x} reports',
  'manage {x} inventory',
  'search {x} records',
  'estimate {x} costs',
  'recommend {x} options',
  'monitor {x} status',
  'register {x} participants',
  'update {x} settings',
  'evaluate {x} risks',
  'plan {x} budgets',
  'compare {x} providers',
];
