import type { Check } from '../../core/records.ts';
import type { BatchStage, RejectReason } from '../../core/stage.ts';
import { isSimpleArithmetic } from './arithmetic.ts';
import { TooleItem, withTag, type QueryMethod, type TooleQuery, type TooleTool } from './records.ts';
import { containsName, spellsName, squash, tokens, wordCount } from './text.ts';

/**
 * The query filters of the paper's human validation (Appendix A.3), each counted by its reason:
 * empty and overlong queries and queries naming their tool are rejected; "ChatGPT" becomes
 * "Chatbot"; simple arithmetic asked of a calculation tool is flagged for review (a soft check and a
 * tag) or, if the config says so, rejected. Near-duplicate removal is the shared dedup stage's job.
 */
export interface FilterOptions {
  maxWords: number;
  maxChars: number;
  /** What "ChatGPT" is replaced with ("" leaves it). */
  chatgptReplacement: string;
  /** Tools whose description matches this (case-insensitive) count as calculation tools. */
  calculationPattern: string;
  /** Extra calculation tools by name. */
  calculationTools: string[];
  simpleArithmetic: 'flag' | 'reject';
}

export const SIMPLE_ARITHMETIC_TAG = 'review:simple-arithmetic';
export const CHATGPT_TAG = 'rewrote:chatgpt';

/** "ChatGPT", "Chat GPT", "chat-gpt" → the replacement; returns the text unchanged when absent. */
export function replaceChatGPT(text: string, replacement: string): string {
  return replacement ? text.replace(/\bchat[\s-]?gpt\b/gi, replacement) : text;
}

/** The names of a tool a query must not contain: those that identify it (see `identifyingNames`). */
export interface ToolNames {
  tool: string;
  names: string[];
}

/**
 * The names of each tool that would give it away (model name, human name). A name that also occurs
 * in other tools' descriptions is ordinary vocabulary ("Weather", "Calculator"), not a hint: a
 * query asking about the weather must not be dropped for it. Such names are returned as `generic`.
 */
export function identifyingNames(tools: Pick<TooleTool, 'name' | 'nameForHuman' | 'description' | 'descriptionForModel'>[]): { names: Map<string, string[]>; generic: string[] } {
  // The squashed text screens out most pairs before the word-boundary test.
  const described = tools.map((t) => {
    const words = tokens(`${t.description} ${t.descriptionForModel}`);
    return { words, squashed: words.join('') };
  });
  const names = new Map<string, string[]>();
  const generic: string[] = [];
  tools.forEach((tool, i) => {
    const own: string[] = [];
    for (const name of new Set([tool.name, tool.nameForHuman])) {
      const target = squash(name);
      if (target.length < 3) continue;
      const common = described.some((d, j) => j !== i && d.squashed.includes(target) && spellsName(d.words, name));
      if (common) generic.push(name);
      else own.push(name);
    }
    names.set(tool.name, own);
  });
  return { names, generic: [...new Set(generic)].sort() };
}

/** The first of `names` the query spells (case- and spacing-insensitive, on word boundaries), or undefined. */
export function namedTool(text: string, names: readonly string[]): string | undefined {
  return names.find((name) => containsName(text, name));
}

export type FilterOutcome = { query: TooleQuery } | { reject: RejectReason };

export interface FilterContext {
  options: FilterOptions;
  /** Identifying names per tool label. */
  names: Map<string, string[]>;
  /** Labels of calculation tools. */
  calculation: Set<string>;
}

/** Runs every filter on one query: the cleaned query (maybe flagged), or why it is rejected. */
export function filterQuery(query: TooleQuery, ctx: FilterContext): FilterOutcome {
  const { options } = ctx;
  let q = query;
  const replaced = replaceChatGPT(q.text, options.chatgptReplacement).replace(/\s+/g, ' ').trim();
  if (replaced !== q.text.replace(/\s+/g, ' ').trim()) q = withTag({ ...q, text: replaced }, CHATGPT_TAG);
  else q = { ...q, text: replaced };

  if (!q.text || !/[\p{L}\p{N}]/u.test(q.text)) return { reject: { reason: 'empty_query', detail: 'the query has no words' } };
  const words = wordCount(q.text);
  if (words > options.maxWords || q.text.length > options.maxChars) {
    return { reject: { reason: 'overlong_query', detail: `${words} words, ${q.text.length} characters (limits: ${options.maxWords} words, ${options.maxChars} characters)` } };
  }
  for (const label of q.tools ?? [q.tool]) {
    const named = namedTool(q.text, ctx.names.get(label) ?? [label]);
    if (named) return { reject: { reason: 'names_tool', detail: `the query names its tool ${label} ("${named}")` } };
  }
  if ((q.tools ?? [q.tool]).some((label) => ctx.calculation.has(label)) && isSimpleArithmetic(q.text)) {
    if (options.simpleArithmetic === 'reject') return { reject: { reason: 'simple_arithmetic', detail: 'simple arithmetic needs no calculation tool' } };
    const check: Check = { name: 'simple_arithmetic', pass: false, soft: true, reason: 'simple arithmetic for a calculation tool: an LLM can answer it without the tool (Appendix A.3)' };
    q = withTag({ ...q, checks: [...q.checks.filter((c) => c.name !== check.name), check] }, SIMPLE_ARITHMETIC_TAG);
  }
  return { query: q };
}

/** Labels of calculation tools: by description pattern, or named in the config. */
export function calculationTools(tools: TooleTool[], options: Pick<FilterOptions, 'calculationPattern' | 'calculationTools'>): Set<string> {
  const pattern = options.calculationPattern ? new RegExp(options.calculationPattern, 'i') : null;
  const names = new Set(options.calculationTools);
  for (const tool of tools) if (pattern?.test(`${tool.name} ${tool.description}`)) names.add(tool.name);
  return names;
}

/** The filter stage over queries of the given methods; tools and jobs pass through. */
export function filterQueriesStage(options: FilterOptions, spec: { name: string; methods: readonly QueryMethod[] }): BatchStage<TooleItem, TooleItem> {
  return {
    kind: 'batch',
    name: spec.name,
    version: 1,
    input: TooleItem,
    output: TooleItem,
    run: async (items, ctx) => {
      const tools = items.flatMap((item) => (item.kind === 'tool' ? [item.tool] : []));
      const { names, generic } = identifyingNames(tools);
      const filterCtx: FilterContext = { options, names, calculation: calculationTools(tools, options) };
      const out: TooleItem[] = [];
      const rejects: (RejectReason & { record: unknown })[] = [];
      let rewritten = 0;
      let flagged = 0;
      for (const item of items) {
        if (item.kind !== 'query' || !spec.methods.includes(item.query.method)) {
          out.push(item);
          continue;
        }
        const outcome = filterQuery(item.query, filterCtx);
        if ('reject' in outcome) {
          rejects.push({ ...outcome.reject, recordId: item.id, record: item });
          continue;
        }
        if (outcome.query.tags.includes(CHATGPT_TAG) && !item.query.tags.includes(CHATGPT_TAG)) rewritten++;
        if (outcome.query.tags.includes(SIMPLE_ARITHMETIC_TAG)) flagged++;
        out.push({ ...item, query: outcome.query });
      }
      ctx.report(`toole.filters.${spec.name}`, {
        chatgptReplaced: rewritten,
        simpleArithmeticFlagged: flagged,
        calculationTools: [...filterCtx.calculation].sort(),
        genericNames: generic,
      });
      return { out, rejects };
    },
  };
}
