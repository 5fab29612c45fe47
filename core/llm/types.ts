import type { Usage } from '../records.ts';
import type { PromptFile } from '../prompt.ts';

export type Backend = 'offline' | 'openai' | 'replay';

export interface GenerateOptions {
  /** The stage asking: usage and cost are accounted per stage. */
  stage: string;
  /**
   * A stable key of the record being worked on. It seeds the offline renderer and separates
   * otherwise identical requests that must get independent answers (e.g. several samples).
   */
  key: string;
  temperature?: number;
  maxTokens?: number;
}

export type GenerateResult<O> =
  | { ok: true; value: O; model: string; cached: boolean }
  | { ok: false; reason: string; detail: string };

export interface UsageReport {
  total: Usage;
  byStage: Record<string, Usage>;
  byModel: Record<string, Usage>;
}

/** The one door to a language model: every generation step of every recipe goes through it. */
export interface LlmGateway {
  readonly backend: Backend;
  readonly model: string;
  /** Ask for a structured answer. A failure after all retries and repairs is a result, not a throw. */
  generate<V extends Record<string, unknown>, O>(prompt: PromptFile<V, O>, vars: V, options: GenerateOptions): Promise<GenerateResult<O>>;
  usage(): UsageReport;
  close(): Promise<void>;
}

export function emptyUsage(): Usage {
  return { requests: 0, cached: 0, promptTokens: 0, completionTokens: 0, costUsd: null };
}
