import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../core/errors.ts';
import { hashOf } from '../core/hash.ts';
import { toJsonl } from '../core/jsonl.ts';
import type { PipelineDefinition } from '../core/pipeline.ts';
import type { Manifest, Sample } from '../core/records.ts';
import type { DatasetStore, VersionRef } from '../core/store.ts';
import type { FinalDecision } from './adjudicate.ts';
import { publishReviewed } from './apply.ts';
import { itemIdOf } from './queue.ts';
import { editedSample } from './schema-check.ts';
import { datasetLabel } from './sheet.ts';

/**
 * Sample decisions carried across tool decisions. Tool decisions re-run the recipe from the reviewed
 * version, so the version they publish holds none of the sample decisions made on that version (or
 * made on it after them). Rather than lose them, each is carried onto the re-run version: a decision
 * whose sample is there with the same content (tools, dialogue, gold answer) applies as it was made;
 * one whose sample the tool decisions changed or removed is not applied, listed with its reason, and
 * the sample (when still there) is flagged `review:carried-over` for the next queue.
 *
 * Versions are related through their manifests: `stats.review.reviewed` (sample decisions made on
 * that version), `stats.toolReview.reviewed` (tool decisions), `stats.review.carriedFrom` (decisions
 * carried from that version).
 */

export const CARRIED_OVER_TAG = 'review:carried-over';

export interface NotCarried {
  item: string;
  sampleId: string;
  decision: string;
  reason: string;
}

export interface CarryResult {
  /** The version whose sample decisions were carried. */
  from: string;
  /** The version they were carried onto. */
  onto: string;
  /** The version published with them (null when none could be carried). */
  newVersion: string | null;
  status: 'published' | 'existing' | 'nothing-carried';
  decisions: number;
  carried: number;
  notCarried: NotCarried[];
}

/** What a decision file of a sample review holds per item (`review/decisions-from-<v>.jsonl`). */
type StoredDecision = Omit<FinalDecision, 'edited'>;

interface Version {
  ref: VersionRef;
  manifest: Manifest;
}

const reviewStats = (m: Manifest) => m.stats.review as { reviewed?: string; carriedFrom?: { version: string } } | undefined;
const toolReviewStats = (m: Manifest) => m.stats.toolReview as { reviewed?: string } | undefined;

function allVersions(store: DatasetStore, name: string): Version[] {
  return store.versions(name).map((version) => {
    const ref = store.resolve(`${name}@${version}`);
    return { ref, manifest: store.manifest(ref) };
  });
}

/** Versions made from `ref` by sample decisions (`review import` of sample sheets), oldest first. */
export function sampleReviewsOf(store: DatasetStore, ref: VersionRef): VersionRef[] {
  return allVersions(store, ref.name)
    .filter((v) => v.manifest.parent === ref.version && reviewStats(v.manifest)?.reviewed === ref.version)
    .map((v) => v.ref);
}

/**
 * Where sample decisions made on `ref` must also go: the versions made from it by tool decisions,
 * and the versions its own sample decisions were carried to.
 */
function carryTargetsOf(store: DatasetStore, ref: VersionRef): VersionRef[] {
  return allVersions(store, ref.name)
    .filter((v) => (v.manifest.parent === ref.version && toolReviewStats(v.manifest)?.reviewed === ref.version) || reviewStats(v.manifest)?.carriedFrom?.version === ref.version)
    .map((v) => v.ref);
}

/** The sample decisions a sample-review version holds, from its decisions file. */
function storedDecisions(store: DatasetStore, review: VersionRef): { reviewed: string; decisions: StoredDecision[] } {
  const reviewed = reviewStats(store.manifest(review))?.reviewed;
  const file = join(review.dir, 'review', `decisions-from-${reviewed}.jsonl`);
  if (!reviewed || !existsSync(file)) throw new UserError(`${datasetLabel(review)} holds sample decisions but no review/decisions-from-${reviewed ?? '?'}.jsonl to carry them from: import its sample sheets again onto the version the tool decisions publish`);
  store.assertIntact(review);
  const text = readFileSync(file, 'utf8');
  return { reviewed, decisions: text.split('\n').filter((line) => line.trim()).map((line) => JSON.parse(line) as StoredDecision) };
}

/** What a decision judged, as a hash: the sample without its meta (checks, tags, lineage change with a re-run). */
function content(sample: Sample): string {
  const { meta: _meta, ...rest } = sample;
  return hashOf(rest);
}

/**
 * The decided samples of a version, streamed: each one's content hash, and the sample itself for
 * an edit (which is applied to it).
 */
function contentOfDecided(store: DatasetStore, ref: VersionRef, decided: { all: ReadonlySet<string>; edited: ReadonlySet<string> }): Map<string, { content: string; sample?: Sample }> {
  store.assertIntact(ref);
  const found = new Map<string, { content: string; sample?: Sample }>();
  for (const sample of store.sampleSource(ref).all()) {
    if (decided.all.has(sample.id)) found.set(sample.id, { content: content(sample), ...(decided.edited.has(sample.id) ? { sample } : {}) });
  }
  return found;
}

/**
 * Checks, before tool decisions run, that every sample review made from `ref` (and from those) can be
 * carried: each has its decisions file. Throws the one-line error otherwise.
 */
export function assertCarriable(store: DatasetStore, ref: VersionRef): void {
  for (const review of sampleReviewsOf(store, ref)) {
    storedDecisions(store, review);
    assertCarriable(store, review);
  }
}

/**
 * Carries the sample decisions of `review` (a version made by sample decisions on some version X)
 * onto `onto` (made from X by tool decisions, or X's sample decisions carried there): publishes
 * `onto` with every decision that still applies, or reports that none does.
 */
export function carryDecisions(store: DatasetStore, review: VersionRef, onto: VersionRef, pipeline?: Pick<PipelineDefinition, 'recheck'>): CarryResult {
  const { reviewed, decisions } = storedDecisions(store, review);
  // Only the decided samples are looked at: the content of each in both versions, and the target's sample of an edit.
  const decided = { all: new Set(decisions.map((d) => d.sampleId)), edited: new Set(decisions.filter((d) => d.decision === 'edit').map((d) => d.sampleId)) };
  const before = contentOfDecided(store, store.resolve(`${review.name}@${reviewed}`), decided);
  const target = contentOfDecided(store, onto, decided);
  const library = store.tools(onto);
  const final: FinalDecision[] = [];
  const notCarried: NotCarried[] = [];
  for (const d of decisions) {
    const was = before.get(d.sampleId);
    const now = target.get(d.sampleId);
    const skip = (reason: string) => notCarried.push({ item: d.itemId, sampleId: d.sampleId, decision: d.decision, reason });
    if (!now) skip(`the sample is not in ${datasetLabel(onto)}`);
    else if (!was || was.content !== now.content) skip(`the tool decisions changed the sample (its tools, dialogue or gold answer)`);
    else if (d.decision !== 'edit') final.push({ ...d, itemId: itemIdOf(onto, d.sampleId) });
    else {
      const edited = editedSample(now.sample!, d.correction, pipeline, library);
      if (edited.failed.length) skip(`the edit fails the recipe's check ${edited.failed.map((c) => c.name).join(', ')} in ${datasetLabel(onto)}`);
      else final.push({ ...d, itemId: itemIdOf(onto, d.sampleId), edited: edited.sample });
    }
  }
  const result: CarryResult = { from: review.version, onto: onto.version, newVersion: null, status: 'nothing-carried', decisions: decisions.length, carried: final.length, notCarried };
  if (!final.length) return result;
  const count = (decision: string) => final.filter((d) => d.decision === decision).length;
  const reviewedStats = store.manifest(review).stats.review as Record<string, unknown>;
  const stats = {
    ...reviewedStats,
    reviewed: onto.version,
    items: { decided: final.length, accepted: count('accept'), rejected: count('reject'), edited: count('edit'), adjudicated: final.filter((d) => d.adjudicated).length },
    carriedFrom: { version: review.version, reviewed, decisions: decisions.length, carried: final.length, notCarried },
  };
  const published = publishReviewed({
    store,
    ref: onto,
    final,
    stats,
    extraFiles: { [`review/decisions-from-${onto.version}.jsonl`]: toJsonl(final.map(({ edited: _edited, ...d }) => d)) },
    flag: { sampleIds: notCarried.map((n) => n.sampleId).filter((id) => target.has(id)), tag: CARRIED_OVER_TAG },
  });
  return { ...result, status: published.status, newVersion: published.ref.version };
}

/**
 * After tool decisions on `reviewed` published `onto`: the sample reviews made from `reviewed`, and
 * those made from them, carried onto `onto` in the same shape.
 */
export function carrySampleReviews(store: DatasetStore, reviewed: VersionRef, onto: VersionRef, pipeline?: Pick<PipelineDefinition, 'recheck'>): CarryResult[] {
  return sampleReviewsOf(store, reviewed).flatMap((review) => {
    const result = carryDecisions(store, review, onto, pipeline);
    const next = result.newVersion ? store.resolve(`${onto.name}@${result.newVersion}`) : onto;
    return [result, ...carrySampleReviews(store, review, next, pipeline)];
  });
}

/**
 * After sample decisions on some version published `review`: carried to every version that version
 * leads to by tool decisions (or by carrying), and on from there.
 */
export function carryNewSampleReview(store: DatasetStore, review: VersionRef, pipeline?: Pick<PipelineDefinition, 'recheck'>): CarryResult[] {
  const reviewed = reviewStats(store.manifest(review))?.reviewed;
  if (!reviewed) return [];
  return carryTargetsOf(store, store.resolve(`${review.name}@${reviewed}`))
    .filter((target) => target.version !== review.version)
    .flatMap((target) => {
      const result = carryDecisions(store, review, target, pipeline);
      return result.newVersion && result.status === 'published' ? [result, ...carryNewSampleReview(store, store.resolve(`${review.name}@${result.newVersion}`), pipeline)] : [result];
    });
}

/** One line per carry, for the command's output. */
export function describeCarry(name: string, c: CarryResult): string {
  const head = `carried ${c.carried} of ${c.decisions} sample decision(s) of ${name}@${c.from} onto ${name}@${c.onto}`;
  const where = c.status === 'published' ? `: published ${name}@${c.newVersion}` : c.status === 'existing' ? `: ${name}@${c.newVersion} already holds them` : '';
  const left = c.notCarried.length ? `; ${c.notCarried.length} not carried (${[...new Set(c.notCarried.map((n) => n.reason))].join('; ')}): their samples are tagged ${CARRIED_OVER_TAG} for the next review export` : '';
  return head + where + left;
}
