import type { Json, Sample, ToolSpec } from './records.ts';

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
export interface BenchmarkScorer {
  benchmark: string;
  /** The items a model answers for one sample (none for a sample the benchmark does not score). */
  items(sample: Sample): EvalItem[];
  /** The gold answer written exactly as a perfect model would write it (the `oracle` model). */
  oracle(item: EvalItem): string;
  score(outputs: readonly EvalOutput[]): EvalReport;
}
