import type { Json, Sample, ToolSpec } from './records.ts';
import type { Rng } from './rng.ts';
import type { SampleSource } from './sample-source.ts';

/**
 * One thing a model answers: a whole single-turn sample, or one turn of a multi-turn one. `messages`
 * and `tools` are what a model is shown (OpenAI chat shape); `gold` is the benchmark's reference
 * answer in whatever shape its scorer compares.
 */
export interface EvalItem {
  /** Unique within a version; a predictions file names items by it. */
  id: string;
  sampleId: string;
  category: string;
  messages: { role: 'system' | 'user' | 'assistant' | 'tool'; content: string | null; [key: string]: unknown }[];
  tools: ToolSpec[];
  gold: Json;
  /**
   * The dialogue index of the assistant turn the item answers (a turn of a multi-turn sample);
   * absent: the sample's last answer (its last assistant turn, or the gold after its dialogue). A training row (`export --format trl`) names
   * the message an item's answer starts at from it.
   */
  turn?: number;
}

/** A call as a model trained on chat data writes it (`tool_calls`, a ShareGPT `function_call`, a Hermes block). */
export interface ReplyCall {
  name: string;
  arguments: Record<string, Json>;
  /** The id the model gave the call, when its format has one (a reference to its result may name it). */
  id?: string;
  /** The call's result, when the reply holds it (a `tool` message between the assistant's messages). */
  result?: Json;
}

/** What a model trained on chat data answered for an item: its calls in order, and its text (null: none). */
export interface ModelReply {
  calls: ReplyCall[];
  text: string | null;
}

/** A model's output for one item, as the model wrote it (text), or null when it gave none. */
export interface EvalOutput {
  item: EvalItem;
  output: string | null;
}

/** Metric name → value in [0, 1] (a rate or an F1), for all items or one category. */
export type MetricTable = Record<string, number>;

export interface EvalReport {
  /** Which benchmark's rules scored it, e.g. `mtu-bench`. */
  benchmark: string;
  items: number;
  metrics: MetricTable;
  byCategory: Record<string, MetricTable>;
  /** Per item: its figures and, for a wrong or unparsable output, why (as the benchmark would count it). */
  details: { id: string; category: string; figures: Record<string, number | boolean>; note?: string }[];
}

/**
 * A benchmark's own scoring rules over canonical samples. `score` never throws on a malformed
 * output: it scores it as the benchmark does (usually as wrong) and says why in the details.
 */
/**
 * The published version a scorer's items come from: its folder (files it carries, such as MTU's
 * instruction templates) and, when the runner has them, all its samples (what a scorer numbers
 * across the version, such as NesTools' API ids). The same object is passed for every sample.
 */
export interface EvalVersion {
  dir: string;
  samples?: SampleSource;
}

export interface BenchmarkScorer {
  benchmark: string;
  /** The items a model answers for one sample (none for a sample the benchmark does not score). */
  items(sample: Sample, version?: EvalVersion): EvalItem[];
  /**
   * Metrics where a lower figure is better (a perfect model scores 0 on them, as on ToolTalk's
   * incorrect action rate); reports say so beside the figure. Every other metric: higher is better.
   */
  lowerIsBetter?: readonly string[];
  /** The gold answer written exactly as a perfect model would write it (the `oracle` model). */
  oracle(item: EvalItem): string;
  /**
   * A chat model's reply (its tool calls and text, as a model trained on `export --format trl`
   * writes them) as this benchmark's answer, the text `score` reads. Call names are the item's tool
   * names. Optional: without it a predictions file must give the benchmark's own answer text.
   */
  answerOfReply?(item: EvalItem, reply: ModelReply): string;
  /**
   * Judges each output and gives the tables. An item's details may depend on the other items of its
   * own sample (a conversation's turns), never on other samples': the runner scores a version a few
   * whole samples at a time.
   */
  score(outputs: readonly EvalOutput[]): EvalReport;
  /**
   * The gold answer with one injected mistake, written as a model would (the `noisy-oracle` model);
   * null when the item has nothing the mistake could change (no call to drop a parameter from).
   * Optional: a scorer without it has no noisy oracle.
   */
  corrupt?(item: EvalItem, corruption: Corruption, rng: Rng): string | null;
  /**
   * The item answered with the model in the loop (its calls executed, results fed back, a simulated
   * user where the benchmark has one), or null for an item the benchmark scores on one answer.
   * Optional: without it every item is static. The session's `result().output` is what `score`
   * reads for the item, so one scoring path serves both. Predictions files are never interactive.
   */
  session?(item: EvalItem): EvalSession | null;
  /**
   * Optional, for resampling (the bootstrap of `eval compare`): the unit items are drawn in, the
   * items the benchmark scores together (a dialogue's turns); without it, the item's sample.
   */
  unitOf?(item: EvalItem): string;
  /**
   * The report's tables from items already judged (their `details` figures), grouped in units, each
   * unit counted as its own dialogue (a unit given twice counts twice), without judging again. The
   * runner scores a version a few samples at a time and makes the tables with this, so it must give
   * the tables `score` gives for the same items. It reads of an item only its `id`, `sampleId`,
   * `category` and the plain fields of its `gold` (strings, numbers, booleans, null): judged items
   * are kept in that compact form, never with their messages and tools.
   */
  tablesOf(units: readonly (readonly JudgedItem[])[]): ReportTables;
  /**
   * Optional: `tablesOf` as sums each unit adds (core/eval-tally.ts), so that resampling keeps a
   * unit's terms as numbers and draws no objects; it must give exactly the tables `tablesOf` gives.
   */
  tally?: TallyRule;
}

/** An item with the figures `score` gave it (its entry of `EvalReport.details`). */
export interface JudgedItem {
  item: EvalItem;
  figures: Record<string, number | boolean>;
}

export type ReportTables = Pick<EvalReport, 'metrics' | 'byCategory'>;

/** Adds one term to one of a table's sums (`sum`: an index into the rule's `sums`). */
export type AddTerm = (table: string, sum: number, term: number) => void;

/**
 * A scorer's tables as sums of numbers a unit adds, for resampling (the bootstrap of `eval
 * compare`) without building an object per drawn item: each unit's terms are kept once, as numbers,
 * and a resample adds the terms of the units it draws. Terms reach each sum in the order the
 * scorer's own `tablesOf` adds them (the drawn units in order, a unit's items in order), so the
 * floating-point sums, and with them the tables, are the same to the last bit.
 */
export interface TallyRule {
  /** The names of a table's sums (every table has all of them). */
  sums: readonly string[];
  /** Adds a unit's terms, to every table its items count in; a unit counts as its own dialogue. */
  unit(items: readonly JudgedItem[], add: AddTerm): void;
  /** The tables from each table's sums, tables in first-seen order (a table is there when a drawn unit added to it). */
  tables(sums: ReadonlyMap<string, Float64Array>): ReportTables;
}

/**
 * The mistakes the noisy oracle injects: another candidate tool in place of a gold one, a gold
 * parameter left out, a gold value replaced, a call to a tool the gold does not call added first.
 */
export const CORRUPTIONS = ['wrong-tool', 'drop-parameter', 'wrong-value', 'extra-call'] as const;
export type Corruption = (typeof CORRUPTIONS)[number];

/** `hits / total`, 0 when there is nothing to count (as the benchmarks' own scripts count it). */
export function rate(hits: number, total: number): number {
  return total === 0 ? 0 : hits / total;
}

/** The harmonic mean of precision and recall (0 when both are 0). */
export function f1(precision: number, recall: number): number {
  return precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
}

/** A metric table per category, in first-seen order; an entry may count in several (its own and, say, "hard"). */
export function tablesByCategory<T>(entries: readonly T[], categoriesOf: (entry: T) => string[], table: (group: T[]) => MetricTable): Record<string, MetricTable> {
  const groups = new Map<string, T[]>();
  for (const entry of entries) {
    for (const name of categoriesOf(entry)) {
      if (!groups.has(name)) groups.set(name, []);
      groups.get(name)!.push(entry);
    }
  }
  return Object.fromEntries([...groups].map(([name, group]) => [name, table(group)]));
}

// ---------------------------------------------------------------- model in the loop

/** A chat message as an interactive item shows it (plain roles: what the gateway sends). */
export interface SessionMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/**
 * What an interactive item asks next: the model under evaluation, or the simulated user
 * (ACEBench's user played by a language model from the task's instruction).
 */
export interface SessionRequest {
  role: 'model' | 'user';
  /** What the one asked is shown, whole (the cache key of the step is these messages). */
  messages: SessionMessage[];
  /** User requests: the reply of the offline stand-in (the gold user turn replayed). */
  scripted?: string;
}

/** What one step did, for the per-item output: a message, or a call and its result. */
export type TranscriptEntry =
  | { role: 'model' | 'user'; text: string | null }
  | { role: 'call'; call: Json; ok: boolean; result: Json };

/** How an interaction ended: its output as the scorer reads it, and what happened on the way. */
export interface SessionResult {
  /** What the static scorer reads for this item (the calls made, in its answer format). */
  output: string | null;
  transcript: TranscriptEntry[];
  /** Model steps taken. */
  steps: number;
  /** It ended at its step cap, not by itself. */
  capped: boolean;
  /** Why it ended as it did, when not by itself (the cap, an answer that never came). */
  note?: string;
}

/**
 * One item answered with the model in the loop (paper algorithms such as ToolTalk's Algorithm 1 or
 * ACEBench's agent dialogue): the session asks, the runner answers, the session acts on the answer
 * (runs the calls in its simulated tools, feeds the results back, passes text to the user) until it
 * is over. A session enforces its own cap on steps, so `next()` returns null in a bounded number of
 * replies whatever the answers.
 */
export interface EvalSession {
  /** The next request, or null when the interaction is over. */
  next(): SessionRequest | null;
  /** The answer to the request `next()` returned (null: none came; the session ends). */
  reply(text: string | null): void;
  result(): SessionResult;
  /** The model's answers of a perfect run, in order (what the oracle in the loop says, step by step). */
  readonly oracleSteps: readonly string[];
  /**
   * One oracle step with the mistake (for `extra-call`: the step the mistake inserts before it);
   * null when the step cannot take it (a reply in text has no call to change).
   */
  corruptStep(index: number, corruption: Corruption, rng: Rng): string | null;
}

/** A call as the noisy oracle changes it. */
export interface PlainCall {
  name: string;
  arguments: Record<string, Json>;
}

const WRONG_VALUE = '__wrong_value__';

/**
 * One call with an injected mistake: another of `tools` in its place, a parameter left out, a value
 * replaced, or (extra-call) a call of a tool the gold does not call, with no arguments, made first.
 * `goldTools` are the tools the gold calls (an extra call avoids them). Null when the call cannot take it.
 */
export function corruptCall(call: PlainCall, corruption: Corruption, rng: Rng, tools: readonly string[], goldTools: readonly string[]): PlainCall | null {
  const unused = tools.filter((name) => !goldTools.includes(name));
  const names = Object.keys(call.arguments);
  switch (corruption) {
    case 'wrong-tool': {
      const others = tools.filter((name) => name !== call.name);
      return others.length ? { name: rng.pick(others), arguments: call.arguments } : null;
    }
    case 'drop-parameter':
    case 'wrong-value': {
      if (!names.length) return null;
      const name = rng.pick(names);
      const { [name]: _dropped, ...rest } = call.arguments;
      return { name: call.name, arguments: corruption === 'drop-parameter' ? rest : { ...call.arguments, [name]: WRONG_VALUE } };
    }
    case 'extra-call':
      return unused.length ? { name: rng.pick(unused), arguments: {} } : null;
  }
}
