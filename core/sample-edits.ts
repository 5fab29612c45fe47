import type { Check, LineageEntry, Sample } from './records.ts';

/** Small, pure edits of a Sample's meta, shared by the recipes' stages. */

export type { LineageEntry };

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

export function withMeta(sample: Sample, extra: Record<string, unknown>): Sample {
  return { ...sample, meta: { ...sample.meta, ...extra } };
}
