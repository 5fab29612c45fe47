import type { Check, Sample, SampleMeta } from '../../core/records.ts';

/** Small, pure edits of a Sample's task and meta, shared by the NesTools stages. */

export type LineageEntry = SampleMeta['lineage'][number];

export function withLineage(sample: Sample, entry: LineageEntry): Sample {
  return { ...sample, meta: { ...sample.meta, lineage: [...sample.meta.lineage, entry] } };
}

/** Adds checks, replacing earlier ones of the same name (a re-run stage does not pile them up). */
export function withChecks(sample: Sample, checks: Check[]): Sample {
  const names = new Set(checks.map((c) => c.name));
  return { ...sample, meta: { ...sample.meta, checks: [...sample.meta.checks.filter((c) => !names.has(c.name)), ...checks] } };
}

export function withTags(sample: Sample, tags: string[]): Sample {
  return { ...sample, meta: { ...sample.meta, tags: [...new Set([...sample.meta.tags, ...tags])].sort() } };
}

/** The first user turn holds the NesTools task. */
export function withTask(sample: Sample, task: string): Sample {
  let done = false;
  const dialogue = sample.dialogue.map((turn) => {
    if (done || turn.role !== 'user') return turn;
    done = true;
    return { ...turn, content: task };
  });
  return { ...sample, dialogue: done ? dialogue : [{ role: 'user', content: task }, ...dialogue] };
}

export function withMeta(sample: Sample, extra: Record<string, unknown>): Sample {
  return { ...sample, meta: { ...sample.meta, ...extra } };
}
