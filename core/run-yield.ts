import { UserError } from './errors.ts';
import type { StageStats } from './records.ts';

/**
 * A run publishes only when it made samples: at least this share of the records its first stage
 * loaded (after `--limit`). The recipes' default runs make 1 (NesTools) to 68 (ToolE) samples per
 * loaded record, and more with `--limit`, so 5 % is far below any run whose endpoint answered, while
 * one that answered nothing usable (every batch failed, every answer talk) or an input that held
 * nothing is stopped before it becomes a version. ToolTalk's generation selects a configured number
 * of conversations from its scenarios (78 of 420 by default, as few as one) and declares 0 instead.
 */
export const DEFAULT_MIN_YIELD = 0.05;

export interface YieldOptions {
  /** Share of the loaded records the samples must reach (`--min-yield`, default `DEFAULT_MIN_YIELD`). */
  minYield?: number;
  /** Publish even with no samples or below the share (`--allow-empty`). */
  allowEmpty?: boolean;
  /** The command that resumes the run (its journals are kept: a resume publishes without recomputing). */
  resumeCommand: string;
}

/**
 * Null when the run made enough samples to publish; else the error that stops it, with the counts
 * by reject reason (where the records went) and how to go on.
 */
export function yieldShortfall(stats: readonly StageStats[], options: YieldOptions): UserError | null {
  if (options.allowEmpty || !stats.length) return null;
  const share = options.minYield ?? DEFAULT_MIN_YIELD;
  const loaded = stats[0].out;
  const samples = stats.at(-1)!.out;
  if (samples > 0 && samples >= share * loaded) return null;
  const made = samples === 0 ? `no samples from ${plural(loaded, 'loaded record')}` : `${plural(samples, 'sample')} from ${plural(loaded, 'loaded record')}, fewer than ${formatShare(share)} of them (--min-yield ${share})`;
  const reasons = stats.flatMap((s) => Object.entries(s.rejectsByReason).map(([reason, n]) => `${s.stage} ${reason} ${n}`));
  const where = loaded === 0 ? `stage ${stats[0].stage} loaded no records: check the inputs the config names` : reasons.length ? `rejects by reason: ${reasons.join(', ')}` : 'no record was rejected';
  return new UserError(
    `the run made ${made}; nothing was published (${where}). ` +
      `Its records are kept: fix the cause, then resume with: ${options.resumeCommand} (add --allow-empty to publish it as it is)`,
    1,
  );
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

function formatShare(share: number): string {
  return `${Math.round(share * 1000) / 10} %`;
}
