import { mapIterable } from '../core/collections.ts';
import { hashOf } from '../core/hash.ts';
import { withTags } from '../core/sample-edits.ts';
import type { Manifest, Rejection, Sample, StageStats } from '../core/records.ts';
import type { DatasetStore, ManifestDraft, VersionRef } from '../core/store.ts';
import type { FinalDecision } from './adjudicate.ts';

/** Bump when the way decisions are applied changes (it is part of the new version's lineage). */
export const REVIEW_STAGE_VERSION = 1;
export const REVIEW_REJECT_REASON = 'review_rejected';

export interface PublishReviewedInput {
  store: DatasetStore;
  /** The reviewed version (never modified). */
  ref: VersionRef;
  final: FinalDecision[];
  /** `stats.review` of the new version. */
  stats: Record<string, unknown>;
  /** Files for the new version's folder (relative path → text), e.g. the decisions applied. */
  extraFiles?: Record<string, string>;
  /** Undecided samples to flag for the next review queue (e.g. decisions that could not be carried over). */
  flag?: { sampleIds: string[]; tag: string };
}

export interface PublishReviewedResult {
  status: 'published' | 'existing';
  ref: VersionRef;
  manifest: Manifest;
}

/**
 * What a version's samples become, one at a time as they are read: accepted kept, edited replaced,
 * rejected moved to `rejects` (filled as the samples are read; only the decided samples are held).
 * Once every sample is read, a decision whose sample never came is an error.
 */
export function* applyDecisions(reviewed: string, samples: Iterable<Sample>, final: readonly FinalDecision[], rejects: Rejection[]): Generator<Sample> {
  const byId = new Map(final.map((d) => [d.sampleId, d]));
  const applied = new Set<string>();
  for (const sample of samples) {
    const decision = byId.get(sample.id);
    if (!decision) {
      yield sample;
      continue;
    }
    applied.add(sample.id);
    const base = decision.decision === 'edit' && decision.edited ? decision.edited : sample;
    const entry = { version: reviewed, item: decision.itemId, decision: decision.decision, adjudicated: decision.adjudicated, answers: decision.answers };
    const lineage = decision.decision === 'edit' ? [...base.meta.lineage, { stage: 'review', version: REVIEW_STAGE_VERSION }] : base.meta.lineage;
    const reviewedSample: Sample = { ...base, meta: { ...base.meta, lineage, review: [...(base.meta.review ?? []), entry] } };
    if (decision.decision === 'reject') {
      const notes = decision.answers.map((a) => a.notes).filter(Boolean);
      rejects.push({ stage: 'review', reason: REVIEW_REJECT_REASON, ...(notes.length ? { detail: notes.join(' | ') } : {}), recordId: sample.id, record: reviewedSample });
    } else yield reviewedSample;
  }
  const missing = final.find((d) => !applied.has(d.sampleId));
  if (missing) throw new Error(`a decision on sample ${missing.sampleId} (item ${missing.itemId}) has no sample in ${reviewed}`);
}

/**
 * Publishes the next version with the decisions applied; the reviewed version stays as it was.
 * Its fingerprint derives from the parent's and the decisions, so importing the same decisions
 * again finds that version instead of publishing a copy.
 */
export function publishReviewed(input: PublishReviewedInput): PublishReviewedResult {
  const { store, ref } = input;
  const parent = store.manifest(ref);
  const decisions = [...input.final]
    .sort((a, b) => (a.itemId < b.itemId ? -1 : a.itemId > b.itemId ? 1 : 0))
    .map((d) => ({ item: d.itemId, decision: d.decision, correction: d.correction }));
  const flag = input.flag?.sampleIds.length ? { tag: input.flag.tag, samples: [...input.flag.sampleIds].sort() } : undefined;
  const fingerprint = hashOf({ parent: parent.fingerprint, review: decisions, ...(flag ? { flag } : {}) });
  const existing = store.findByFingerprint(ref.name, fingerprint);
  if (existing) return { status: 'existing', ref: existing, manifest: store.manifest(existing) };

  // The version is streamed into the next: only the decided samples and the new rejects are held.
  store.assertIntact(ref);
  const rejects: Rejection[] = [];
  const applied = applyDecisions(ref.version, store.sampleSource(ref).all(), input.final, rejects);
  const flagged = new Set(flag?.samples);
  const samples = flag ? mapIterable(applied, (s) => (flagged.has(s.id) ? withTags(s, [flag.tag]) : s)) : applied;
  // Known before the samples are read: every decision names a sample of the version (applyDecisions fails the publish otherwise).
  const rejected = input.final.filter((d) => d.decision === 'reject').length;
  const stage: StageStats = {
    stage: 'review',
    version: REVIEW_STAGE_VERSION,
    in: parent.counts.samples,
    out: parent.counts.samples - rejected,
    rejected,
    fanned: 0,
    rejectsByReason: rejected ? { [REVIEW_REJECT_REASON]: rejected } : {},
    seconds: 0,
  };
  const { name: _name, version: _version, files: _files, counts: _counts, createdAt: _createdAt, toolkilnVersion: _tv, ...inherited } = parent;
  const manifest: ManifestDraft = { ...inherited, fingerprint, parent: ref.version, stages: [...parent.stages, stage], stats: { ...parent.stats, review: input.stats } };
  // The store checks the fingerprint again under its lock: an identical import racing this one publishes once.
  // The publisher reads the rejects after the samples, when the review's own have all been gathered.
  const allRejects = function* () {
    yield* store.rejects(ref);
    yield* rejects;
  };
  return store.publish({ name: ref.name, manifest, samples, tools: store.tools(ref), rejects: allRejects(), extraFiles: input.extraFiles });
}
