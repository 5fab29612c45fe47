import { z } from 'zod';
import { groupBy } from '../core/collections.ts';
import { findNearDuplicates, type DuplicateMatch } from '../core/dedup/near-duplicates.ts';
import { Sample } from '../core/records.ts';
import type { BatchStage, RejectReason } from '../core/stage.ts';

/**
 * Drops repeated queries (MetaTool Appendix A.3 "High repetition queries": one of a repeated batch
 * is kept): first exact duplicates after normalisation (case, punctuation, spacing), then near
 * duplicates by Levenshtein ratio. The first sample in input order is kept; each other one is
 * rejected with reason `exact_duplicate` or `near_duplicate` and the id of the sample it repeats.
 */
export const DedupNearConfig = z
  .object({
    /** Levenshtein ratio (1 − distance / longer length) at or above which two queries are near-duplicates. */
    ratio: z.number().gt(0).max(1).default(0.9),
    /** What is compared: the first user turn, or every user turn joined. */
    text: z.enum(['query', 'user-turns']).default('query'),
    /** `all`: across the whole set; `label`: only among samples with the same gold tools. */
    scope: z.enum(['all', 'label']).default('all'),
  })
  .strict();
export type DedupNearConfig = z.input<typeof DedupNearConfig>;

const NAME = 'dedup-near';

function textOf(sample: Sample, which: 'query' | 'user-turns'): string {
  const turns = sample.dialogue.filter((turn) => turn.role === 'user').map((turn) => turn.content);
  return which === 'query' ? (turns[0] ?? '') : turns.join('\n');
}

/** The gold tools of a sample, as one key. */
function goldKey(sample: Sample): string {
  const tools = new Set([...(sample.expected.labels ?? []), ...(sample.expected.calls ?? []).map((c) => c.tool), ...Object.values(sample.expected.turns ?? {}).flatMap((calls) => calls.map((c) => c.tool))]);
  return [...tools].sort().join('\u0000');
}

export function dedupNearStage(options: DedupNearConfig = {}): BatchStage<Sample, Sample> {
  const config = DedupNearConfig.parse(options);
  return {
    kind: 'batch',
    name: NAME,
    version: 1,
    input: Sample,
    output: Sample,
    run: async (samples, ctx) => {
      const groups = config.scope === 'label' ? [...groupBy(samples.keys(), (i) => goldKey(samples[i])).values()] : [Array.from(samples.keys())];
      const dropped = new Map<number, DuplicateMatch>();
      let comparisons = 0;
      for (const members of groups) {
        const texts = members.map((i) => textOf(samples[i], config.text));
        const result = findNearDuplicates(texts, { ratio: config.ratio });
        comparisons += result.stats.comparisons;
        for (const match of result.duplicates) dropped.set(members[match.index], { ...match, index: members[match.index], duplicateOf: members[match.duplicateOf] });
      }
      const out: Sample[] = [];
      const rejects: (RejectReason & { record: unknown })[] = [];
      samples.forEach((sample, i) => {
        const match = dropped.get(i);
        if (!match) {
          out.push(sample);
          return;
        }
        const kept = samples[match.duplicateOf];
        const quoted = JSON.stringify(textOf(kept, config.text).slice(0, 120));
        rejects.push({
          reason: match.kind === 'exact' ? 'exact_duplicate' : 'near_duplicate',
          detail: match.kind === 'exact' ? `same text as ${kept.id} after normalisation: ${quoted}` : `Levenshtein ratio ${match.ratio.toFixed(3)} to ${kept.id}: ${quoted}`,
          recordId: sample.id,
          duplicateOf: kept.id,
          record: sample,
        });
      });
      const exact = rejects.filter((r) => r.reason === 'exact_duplicate').length;
      ctx.report('dedupNear', { ratio: config.ratio, text: config.text, scope: config.scope, in: samples.length, kept: out.length, exactDuplicates: exact, nearDuplicates: rejects.length - exact, comparisons });
      ctx.log(`${samples.length} samples: ${exact} exact and ${rejects.length - exact} near duplicates dropped (ratio ≥ ${config.ratio})`);
      return { out, rejects };
    },
  };
}
