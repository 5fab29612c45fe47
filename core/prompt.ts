import type { z } from 'zod';
import { sha256 } from './hash.ts';
import type { Rng } from './rng.ts';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** What a prompt file in `prompts/` declares: template, output schema and offline renderer. */
export interface PromptSpec<V extends Record<string, unknown>, O> {
  /** Stable id, e.g. `mtu/tool-doc`. */
  id: string;
  system?: string;
  /** User message with `{{name}}` variables. */
  template: string;
  /** What the model must answer (JSON, validated; sent as a JSON-schema response format). */
  schema: z.ZodType<O>;
  /** The offline backend's answer: deterministic for the same vars and rng. Plainly template text. */
  offline: (vars: V, rng: Rng) => O;
  /**
   * Optional: turn a free-text answer into the value the schema checks, for prompts whose answers
   * are not JSON (numbered lists, code blocks). Without it the gateway extracts JSON.
   */
  parseText?: (text: string) => unknown;
  temperature?: number;
  maxTokens?: number;
}

export interface PromptFile<V extends Record<string, unknown>, O> extends PromptSpec<V, O> {
  /** Hash of system + template text: goes into lineage and the dataset fingerprint. */
  hash: string;
  render: (vars: V) => ChatMessage[];
}

export function definePrompt<V extends Record<string, unknown>, O>(spec: PromptSpec<V, O>): PromptFile<V, O> {
  const hash = sha256(`${spec.id}\u0000${spec.system ?? ''}\u0000${spec.template}`).slice(0, 16);
  return {
    ...spec,
    hash,
    render(vars: V): ChatMessage[] {
      const messages: ChatMessage[] = [];
      if (spec.system) messages.push({ role: 'system', content: fillTemplate(spec.system, vars, spec.id) });
      messages.push({ role: 'user', content: fillTemplate(spec.template, vars, spec.id) });
      return messages;
    },
  };
}

/** Replaces `{{name}}` with the variable's text (objects as JSON); a missing variable is an error. */
export function fillTemplate(template: string, vars: Record<string, unknown>, promptId = 'prompt'): string {
  return template.replace(/\{\{\s*([A-Za-z_][\w]*)\s*\}\}/g, (_, name: string) => {
    if (!(name in vars) || vars[name] === undefined) throw new Error(`${promptId}: template variable "${name}" was not given`);
    const value = vars[name];
    return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
  });
}
