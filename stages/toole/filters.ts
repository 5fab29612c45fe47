import type { Check, Sample, ToolSpec } from '../../core/records.ts';
import { reject, type RejectReason, type ScanStage } from '../../core/stage.ts';
import { isSimpleArithmetic } from './arithmetic.ts';
import { TooleItem, withTag, type QueryMethod, type TooleQuery, type TooleTool, queryText } from './records.ts';
import { containsName, squash, wordCount } from './text.ts';

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

/** What the filters need to know of a tool. */
export type FilterTool = Pick<TooleTool, 'name' | 'nameForHuman' | 'description' | 'descriptionForModel'>;

/** A canonical tool as the filters see it (its `plugin` is the human-facing name). */
export function filterToolOf(spec: ToolSpec): FilterTool {
  return { name: spec.name, nameForHuman: spec.plugin ?? spec.name, description: spec.description, descriptionForModel: spec.description };
}

/** The filter context for a library: each tool's names and the calculation tools. */
export function filterContext(tools: FilterTool[], options: FilterOptions): FilterContext {
  return { options, names: toolNames(tools), calculation: calculationTools(tools, options) };
}

export const SIMPLE_ARITHMETIC_TAG = 'review:simple-arithmetic';
export const CHATGPT_TAG = 'rewrote:chatgpt';

/** "ChatGPT", "Chat GPT", "chat-gpt" → the replacement; returns the text unchanged when absent. */
export function replaceChatGPT(text: string, replacement: string): string {
  return replacement ? text.replace(/\bchat[\s-]?gpt\b/gi, replacement) : text;
}

/**
 * The names a query must not contain, per tool: its model name and its human name (Appendix A.3,
 * "queries contain tool name"). Every name counts, also one that is an ordinary word ("maps",
 * "Now"): the released rule removes any query that spells its tool's name.
 */
export function toolNames(tools: FilterTool[]): Map<string, string[]> {
  return new Map(tools.map((tool) => [tool.name, [...new Set([tool.name, tool.nameForHuman])].filter((name) => squash(name).length > 0)]));
}

/** The first of `names` the query spells (case- and spacing-insensitive, on word boundaries), or undefined. */
export function namedTool(text: string, names: readonly string[]): string | undefined {
  return names.find((name) => containsName(text, name));
}

export type FilterOutcome = { query: TooleQuery } | { reject: RejectReason };

export interface FilterContext {
  options: FilterOptions;
  /** The names of each tool, by label. */
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
export function calculationTools(tools: FilterTool[], options: Pick<FilterOptions, 'calculationPattern' | 'calculationTools'>): Set<string> {
  const pattern = options.calculationPattern ? new RegExp(options.calculationPattern, 'i') : null;
  const names = new Set(options.calculationTools);
  for (const tool of tools) if (pattern?.test(`${tool.name} ${tool.description}`)) names.add(tool.name);
  return names;
}

interface FilterState {
  filter: FilterContext;
  counter: FilterCounter;
}

/**
 * The filter stage over generated queries of the given methods; tools and jobs pass through. A
 * whole-set step on a projection: only the tools' names and descriptions are kept between passes.
 */
export function filterQueriesStage(options: FilterOptions, spec: { name: string; methods: readonly QueryMethod[] }): ScanStage<TooleItem, TooleItem, FilterState> {
  return {
    kind: 'scan',
    name: spec.name,
    version: 2,
    input: TooleItem,
    output: TooleItem,
    collect: (items) => {
      const tools: FilterTool[] = [];
      for (const item of items) {
        if (item.kind === 'tool') tools.push({ name: item.tool.name, nameForHuman: item.tool.nameForHuman, description: item.tool.description, descriptionForModel: item.tool.descriptionForModel });
      }
      return { filter: filterContext(tools, options), counter: new FilterCounter() };
    },
    run: (item, ctx) => {
      if (item.kind !== 'query' || !spec.methods.includes(item.query.method)) return item;
      const outcome = filterQuery(item.query, ctx.state.filter);
      if ('reject' in outcome) return reject(outcome.reject.reason, outcome.reject.detail, { recordId: item.id });
      return { ...item, query: ctx.state.counter.count(item.query, outcome.query) };
    },
    finish: (state, ctx) => ctx.report(`toole.filters.${spec.name}`, state.counter.report(state.filter)),
  };
}

/** A sample's query and labels as the filters see them. */
export function queryOfSample(sample: Sample): TooleQuery {
  const labels = sample.expected.labels ?? [];
  const text = queryText(sample);
  return { text, tool: labels[0] ?? '', ...(labels.length > 1 && { tools: labels }), method: 'direct', generatedFor: labels[0] ?? '', checks: sample.meta.checks, tags: sample.meta.tags, lineage: [] };
}

/** The sample with the filtered query's text, tags and checks. */
export function withQuery(sample: Sample, query: TooleQuery): Sample {
  const dialogue = sample.dialogue.map((turn, i) => (i === sample.dialogue.findIndex((t) => t.role === 'user') ? { ...turn, content: query.text } : turn));
  return { ...sample, dialogue, meta: { ...sample.meta, tags: query.tags, checks: query.checks } };
}

/** Counts what the filters changed without rejecting (ChatGPT rewritten, arithmetic flagged). */
class FilterCounter {
  private rewritten = 0;
  private flagged = 0;

  count(before: TooleQuery, after: TooleQuery): TooleQuery {
    if (after.tags.includes(CHATGPT_TAG) && !before.tags.includes(CHATGPT_TAG)) this.rewritten++;
    if (after.tags.includes(SIMPLE_ARITHMETIC_TAG)) this.flagged++;
    return after;
  }

  report(filter: FilterContext): Record<string, unknown> {
    return { chatgptReplaced: this.rewritten, simpleArithmeticFlagged: this.flagged, calculationTools: [...filter.calculation].sort() };
  }
}
