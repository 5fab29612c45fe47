import { hashOf } from '../../core/hash.ts';
import { Sample } from '../../core/records.ts';
import { reject, type ScanStage } from '../../core/stage.ts';
import { taskOf } from './import-export.ts';

/**
 * Drops repeated samples: the same id, or the same task over the same calls (two requests that came
 * back with one program). The first one stays; the others are rejected naming it. Keeps only the
 * keys seen (id and content hash) and the id of the sample that first had each.
 */
export function dedupeStage(): ScanStage<Sample, Sample, Map<string, string>> {
  return {
    kind: 'scan',
    name: 'dedupe',
    version: 1,
    input: Sample,
    output: Sample,
    begin: () => new Map(),
    run: (sample, ctx) => {
      const seen = ctx.state;
      const keys = [`id:${sample.id}`, `content:${hashOf({ task: taskOf(sample).toLowerCase(), calls: sample.expected.calls })}`];
      const first = keys.map((key) => seen.get(key)).find(Boolean);
      if (first) return reject('duplicate', `repeats ${first}`, { recordId: sample.id, duplicateOf: first });
      for (const key of keys) seen.set(key, sample.id);
      return sample;
    },
  };
}
