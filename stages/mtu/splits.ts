import { UserError } from '../../core/errors.ts';
import { Sample } from '../../core/records.ts';
import type { Rng } from '../../core/rng.ts';
import type { ScanStage } from '../../core/stage.ts';
import type { MtuConfig } from './config.ts';
import { mtuMeta } from './sample.ts';

/** The split of one sample: `ood` for a held-out topic, else by the source's split or a seeded draw (`rng`, or what makes it when a draw is due). */
export function splitOf(sample: Sample, options: MtuConfig['splits'], rng: Rng | (() => Rng)): string {
  const meta = mtuMeta(sample);
  if (meta.domains.some((d) => options.oodDomains.includes(d))) return 'ood';
  if (options.mode === 'random') return (typeof rng === 'function' ? rng() : rng).chance(options.testFraction) ? 'test' : 'train';
  const mapped = options.map[meta.sourceSplit];
  if (!mapped) {
    throw new UserError(`source split "${meta.sourceSplit}" of ${sample.meta.source?.dataset ?? 'a source'} is not in splits.map (${Object.keys(options.map).join(', ')}); add it to the config`);
  }
  return mapped;
}

/**
 * Train / test / out-of-distribution splits (MTU-Eval §2.2.1): dialogues of the held-out topics
 * form the `ood` split whatever split their source put them in; the others follow their source's
 * split (`mode: source`, through `map`) or a seeded draw per sample (`mode: random`).
 */
export function assignSplitsStage(options: MtuConfig['splits']): ScanStage<Sample, Sample> {
  return {
    kind: 'scan',
    name: 'assign-splits',
    version: 1,
    input: Sample,
    output: Sample,
    // Each sample's split depends on it alone (its rng is keyed by its id).
    // The generator is made only for a seeded draw (deriving it hashes the sample's key).
    run: (sample, ctx) => ({ ...sample, split: splitOf(sample, options, () => ctx.rng()) }),
  };
}
