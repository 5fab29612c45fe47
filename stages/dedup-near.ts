import { z } from 'zod';
import { groupBy } from '../core/collections.ts';
import { findNearDuplicates } from '../core/dedup/near-duplicates.ts';
import { Sample } from '../core/records.ts';
import { reject, type RejectReason, type ScanStage, type StageContext } from '../core/stage.ts';

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
type Config = z.output<typeof DedupNearConfig>;

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

/** What de-duplication decides on of one sample: its id, the text compared and the group it is compared within. */
export interface DedupEntry {
  id: string;
  text: string;
  group: string;
}

export function dedupEntry(sample: Sample, config: Config): DedupEntry {
  return { id: sample.id, text: textOf(sample, config.text), group: config.scope === 'label' ? goldKey(sample) : '' };
}

/** The repeats among the entries: why each dropped one (by position) is rejected, and the comparisons made. */
export function findRepeats(entries: readonly DedupEntry[], config: Config): { rejects: Map<number, RejectReason>; comparisons: number } {
  const rejects = new Map<number, RejectReason>();
  let comparisons = 0;
  for (const members of groupBy(entries.keys(), (i) => entries[i].group).values()) {
    const result = findNearDuplicates(members.map((i) => entries[i].text), { ratio: config.ratio });
    comparisons += result.stats.comparisons;
    for (const match of result.duplicates) {
      const kept = entries[members[match.duplicateOf]];
      const quoted = JSON.stringify(kept.text.slice(0, 120));
      rejects.set(members[match.index], {
        reason: match.kind === 'exact' ? 'exact_duplicate' : 'near_duplicate',
        detail: match.kind === 'exact' ? `same text as ${kept.id} after normalisation: ${quoted}` : `Levenshtein ratio ${match.ratio.toFixed(3)} to ${kept.id}: ${quoted}`,
        recordId: entries[members[match.index]].id,
        duplicateOf: kept.id,
      });
    }
  }
  // In input order, as the records are written.
  return { rejects: new Map([...rejects].sort((a, b) => a[0] - b[0])), comparisons };
}

/** Reports (under `dedupNear` + `suffix`) and logs what de-duplication found among `count` samples. */
export function reportRepeats(ctx: StageContext, config: Config, count: number, rejects: Iterable<RejectReason>, comparisons: number, suffix = ''): void {
  const reasons = Array.from(rejects, (r) => r.reason);
  const dropped = reasons.length;
  const exact = reasons.filter((reason) => reason === 'exact_duplicate').length;
  ctx.report(`dedupNear${suffix}`, { ratio: config.ratio, text: config.text, scope: config.scope, in: count, kept: count - dropped, exactDuplicates: exact, nearDuplicates: dropped - exact, comparisons });
  ctx.log(`${count} samples: ${exact} exact and ${dropped - exact} near duplicates dropped (ratio ≥ ${config.ratio})`);
}

interface DedupState {
  count: number;
  /** Why each dropped sample is rejected, by input position. */
  rejects: Map<number, RejectReason>;
  comparisons: number;
  /** Input position of the next record `run` sees. */
  next: number;
}

/** Whole-set step on a projection: only each sample's id, text and group are kept between the two passes. */
export function dedupNearStage(options: DedupNearConfig = {}): ScanStage<Sample, Sample, DedupState> {
  const config = DedupNearConfig.parse(options);
  return {
    kind: 'scan',
    name: NAME,
    version: 1,
    input: Sample,
    output: Sample,
    collect: (samples) => {
      const entries = Array.from(samples, (sample) => dedupEntry(sample, config));
      return { count: entries.length, ...findRepeats(entries, config), next: 0 };
    },
    run: (sample, ctx) => {
      const why = ctx.state.rejects.get(ctx.state.next++);
      return why ? reject(why.reason, why.detail, { recordId: why.recordId, duplicateOf: why.duplicateOf }) : sample;
    },
    finish: (state, ctx) => reportRepeats(ctx, config, state.count, state.rejects.values(), state.comparisons),
  };
}
