import { CORRUPTIONS, type BenchmarkScorer, type Corruption, type EvalItem } from '../core/eval.ts';
import { Rng } from '../core/rng.ts';

/**
 * The noisy oracle: the gold answer with at most one seeded mistake per item. Each item draws one
 * of the corruptions at these rates (the rest, 60%, stay gold); a drawn mistake the item cannot take
 * (no call to drop a parameter from, no other candidate tool) leaves it gold and is counted as skipped.
 */
export const NOISE_RATES: Readonly<Record<Corruption, number>> = {
  'wrong-tool': 0.1,
  'drop-parameter': 0.1,
  'wrong-value': 0.1,
  'extra-call': 0.1,
};

export interface NoisyAnswer {
  output: string;
  /** The corruption drawn for this item (null: none drawn). */
  drawn: Corruption | null;
  /** Whether the drawn corruption changed the answer. */
  applied: boolean;
}

/** The item's drawn corruption: the same for the same seed and item id, whatever else is evaluated. */
export function drawCorruption(item: EvalItem, seed: number): { corruption: Corruption | null; rng: Rng } {
  const rng = Rng.derive(seed, 'noisy-oracle', item.id);
  let u = rng.next();
  for (const corruption of CORRUPTIONS) {
    if (u < NOISE_RATES[corruption]) return { corruption, rng };
    u -= NOISE_RATES[corruption];
  }
  return { corruption: null, rng };
}

export function noisyAnswer(scorer: BenchmarkScorer, item: EvalItem, seed: number): NoisyAnswer {
  if (!scorer.corrupt) throw new Error(`the ${scorer.benchmark} scorer has no noisy oracle`);
  const { corruption, rng } = drawCorruption(item, seed);
  const corrupted = corruption ? scorer.corrupt(item, corruption, rng) : null;
  return { output: corrupted ?? scorer.oracle(item), drawn: corruption, applied: corrupted !== null };
}
