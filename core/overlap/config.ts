import { z } from 'zod';
import { EmbedderConfig, EMBEDDER_CHOICES } from '../embed/index.ts';

/**
 * What overlap measures and what publishing does with it: the `overlap` key of every recipe's
 * config (and the defaults of `toolkiln datasets overlap`).
 *
 * The levels, each a score in [0, 1] of a sample against its closest reference sample:
 *   - `ngram-<n>`: the share of the sample's distinct word n-grams (user text, normalised) that one
 *     reference sample has;
 *   - `call-exact`: 1 when the tool set shown and every gold call are those of one reference sample,
 *     arguments canonicalised (core/overlap/calls.ts);
 *   - `call-near`: the Jaccard overlap of the sample's calls with one reference sample's, each call
 *     compared loosely (case, `_`, punctuation, number forms, list order);
 *   - `embedding`: the cosine of the user text's embedding with the closest reference's.
 * A sample overlaps a reference at a level when its score reaches the level's threshold.
 */

export const CALL_LEVELS = ['call-exact', 'call-near'] as const;
export type OverlapLevel = `ngram-${number}` | (typeof CALL_LEVELS)[number] | 'embedding';

/**
 * The embedder of the embedding level unless a config says otherwise: the lexical one on words and
 * character n-grams alone. Its third view, the folded verbs, is for telling tools apart; here it
 * made a reworded query (check → verify) look farther than a different query with the same verbs
 * (docs/overlap.md has the measurements).
 */
export const DEFAULT_OVERLAP_EMBEDDER: EmbedderConfig = { kind: 'lexical', views: { actions: 0, words: 0.5, chars: 0.5 } };

/** The thresholds publishing and `datasets overlap` apply unless a config says otherwise (the figures behind them: docs/overlap.md). */
export const DEFAULT_THRESHOLDS = { ngram: 0.5, callExact: 1, callNear: 1, embedding: 0.8 } as const;

const threshold = (byDefault: number, what: string) => z.number().min(0).max(1).nullable().default(byDefault).describe(`${what}; null: not measured`);

export const OverlapThresholds = z.object({
  ngram: threshold(DEFAULT_THRESHOLDS.ngram, "share of a sample's word n-grams one reference sample has, at or above which they overlap (every n)"),
  callExact: threshold(DEFAULT_THRESHOLDS.callExact, 'tool set and gold calls identical once canonicalised: 1 (the only score besides 0)'),
  callNear: threshold(DEFAULT_THRESHOLDS.callNear, "Jaccard overlap of a sample's calls, compared loosely, with one reference sample's"),
  embedding: threshold(DEFAULT_THRESHOLDS.embedding, "cosine of the user text's embedding with the closest reference sample's"),
});
export type OverlapThresholds = z.infer<typeof OverlapThresholds>;

export const OverlapConfig = z
  .object({
    mode: z
      .enum(['report', 'reject'])
      .default('report')
      .describe('report: publish every sample and record the overlap in the manifest and the card; reject: a sample at or over a threshold goes to the rejects with the reference sample it matches'),
    against: z
      .array(z.string().min(1))
      .default([])
      .describe('what publishing compares with: names of the released sets the recipe reads, <dataset>@<version>, or a JSONL file of canonical samples; []: every released set the recipe reads'),
    ngrams: z.array(z.number().int().min(2).max(50)).min(1).default([8, 13]).describe('the n of the word n-gram levels'),
    thresholds: OverlapThresholds.prefault({}).describe('the score at or above which a sample overlaps, per level'),
    embedder: EmbedderConfig.default(DEFAULT_OVERLAP_EMBEDDER).describe(`the embedder of the embedding level: ${EMBEDDER_CHOICES}`),
  })
  .prefault({})
  .describe("a sample's overlap with released test sets, measured when a version is published (docs/overlap.md)");
export type OverlapConfig = z.infer<typeof OverlapConfig>;

/** A level's threshold, or null when it is not measured. */
export function thresholdOf(thresholds: OverlapThresholds, level: OverlapLevel): number | null {
  if (level.startsWith('ngram-')) return thresholds.ngram;
  if (level === 'call-exact') return thresholds.callExact;
  if (level === 'call-near') return thresholds.callNear;
  return thresholds.embedding;
}

/** The levels a config measures, in report order. */
export function levelsOf(config: Pick<OverlapConfig, 'ngrams' | 'thresholds'>): OverlapLevel[] {
  const all: OverlapLevel[] = [...[...new Set(config.ngrams)].sort((a, b) => a - b).map((n) => `ngram-${n}` as const), ...CALL_LEVELS, 'embedding'];
  return all.filter((level) => thresholdOf(config.thresholds, level) !== null);
}
