import { Rng } from '../core/rng.ts';

/** A 95 % percentile interval of a difference, from the resamples in which both sides had the figure. */
export interface Interval {
  low: number;
  high: number;
  /** Resamples the interval is taken from (a resample without the figure on a side, say a category drawn empty, does not count). */
  resamples: number;
}

export interface BootstrapOptions {
  resamples: number;
  seed: number;
}

/**
 * The percentile bootstrap of `statistic(a) − statistic(b)` for every figure the statistic gives:
 * each resample draws the units of each side with replacement, as many as the side has, from its own
 * seeded stream (the same seed gives the same intervals). A unit is whatever the two sides are made of:
 * a score, or a dialogue's judged turns (or its index: `statistic` is told which side it draws from).
 */
export function bootstrapDifferences<U>(a: readonly U[], b: readonly U[], statistic: (units: U[], side: 'a' | 'b') => Record<string, number>, options: BootstrapOptions): Record<string, Interval> {
  const streams = [Rng.derive(options.seed, 'bootstrap', 'a'), Rng.derive(options.seed, 'bootstrap', 'b')];
  const draw = (units: readonly U[], rng: Rng) => Array.from({ length: units.length }, () => units[rng.int(0, units.length - 1)]);
  const differences = new Map<string, number[]>();
  for (let r = 0; r < options.resamples; r++) {
    const left = statistic(draw(a, streams[0]), 'a');
    const right = statistic(draw(b, streams[1]), 'b');
    for (const [key, value] of Object.entries(left)) {
      if (!(key in right)) continue;
      const list = differences.get(key) ?? differences.set(key, []).get(key)!;
      list.push(value - right[key]);
    }
  }
  return Object.fromEntries([...differences].map(([key, list]) => [key, percentileInterval(list)]));
}

/** The 2.5th and 97.5th percentiles (linear between order statistics, as numpy's default). */
export function percentileInterval(values: readonly number[]): Interval {
  const sorted = [...values].sort((x, y) => x - y);
  const at = (q: number) => {
    const position = q * (sorted.length - 1);
    const below = Math.floor(position);
    const above = Math.min(below + 1, sorted.length - 1);
    return sorted[below] + (sorted[above] - sorted[below]) * (position - below);
  };
  return { low: at(0.025), high: at(0.975), resamples: sorted.length };
}

export const mean = (values: readonly number[]): number => (values.length ? values.reduce((sum, v) => sum + v, 0) / values.length : 0);
