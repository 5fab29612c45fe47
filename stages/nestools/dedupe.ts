import { hashOf } from '../../core/hash.ts';
import { Sample } from '../../core/records.ts';
import type { BatchStage } from '../../core/stage.ts';
import { taskOf } from './import-export.ts';

/**
 * Drops repeated samples: the same id, or the same task over the same calls (two requests that came
 * back with one program). The first one stays; the others are rejected naming it.
 */
export function dedupeStage(): BatchStage<Sample, Sample> {
  return {
    kind: 'batch',
    name: 'dedupe',
    version: 1,
    input: Sample,
    output: Sample,
    run: async (samples) => {
      const seen = new Map<string, string>();
      const out: Sample[] = [];
      const rejects = [];
      for (const sample of samples) {
        const keys = [`id:${sample.id}`, `content:${hashOf({ task: taskOf(sample).toLowerCase(), calls: sample.expected.calls })}`];
        const first = keys.map((key) => seen.get(key)).find(Boolean);
        if (first) {
          rejects.push({ reason: 'duplicate', detail: `repeats ${first}`, recordId: sample.id, duplicateOf: first, record: sample });
          continue;
        }
        for (const key of keys) seen.set(key, sample.id);
        out.push(sample);
      }
      return { out, rejects };
    },
  };
}
