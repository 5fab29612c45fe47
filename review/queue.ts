import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { hashOf } from '../core/hash.ts';
import { writeFileAtomic } from '../core/jsonl.ts';
import type { Sample } from '../core/records.ts';
import { SamplePositions, samplesInMemory, type SampleAt, type SampleSource } from '../core/sample-source.ts';
import { Rng } from '../core/rng.ts';
import type { VersionRef } from '../core/store.ts';
import type { ToolReview } from '../core/tool-review.ts';
import { tagMatches, type ReviewSelection } from './options.ts';

/** Why a sample is in the queue. */
export type QueueReason = { kind: 'check'; name: string; reason?: string } | { kind: 'tag'; tag: string } | { kind: 'random'; rate: number };

export interface QueueItem {
  /** Stable id of (dataset, version, sample): the same sample of the same version always has the same id. */
  itemId: string;
  sampleId: string;
  category: string;
  /** Higher first: 100 per failed check, 10 per matching tag, 1 for a random pick. */
  priority: number;
  reasons: QueueReason[];
  /** Who reviews it (filled when sheets are split between annotators). */
  annotators?: string[];
}

export interface ReviewQueue {
  dataset: string;
  version: string;
  selection: ReviewSelection;
  items: QueueItem[];
}

export const QUEUE_FILE = 'queue.json';

export function itemIdOf(ref: Pick<VersionRef, 'name' | 'version'>, sampleId: string): string {
  return `it-${hashOf({ dataset: ref.name, version: ref.version, sample: sampleId }, 12)}`;
}

/**
 * Selects the samples to review and orders them by priority (ties keep the version's order):
 * failed checks, recipe tags, then a seeded random share of each category drawn from the rest.
 * Checks and tags the recipe's `toolReview` names ask about tools, not the sample: they are the tool
 * sheet's rows, and select nothing here.
 */
export function selectQueue(ref: Pick<VersionRef, 'name' | 'version'>, samples: SampleSource | readonly Sample[], selection: ReviewSelection, toolLevel?: Pick<ToolReview, 'checks' | 'tags'>): ReviewQueue {
  return queueSelection(ref, isSampleArray(samples) ? samplesInMemory(samples) : samples, selection, toolLevel).queue;
}

/** A queue and where each of its samples is in the version (to read them back one at a time). */
export interface QueueSelection {
  queue: ReviewQueue;
  /** Sample id → its position in the source, for every sample of the queue. */
  positions: Map<string, SampleAt>;
}

/**
 * `selectQueue` in one pass over the version: a flagged sample becomes an item as it is read; of the
 * others only their position is kept, by category, for the random draw (which draws positions, as
 * it would draw the samples, in the same order).
 */
export function queueSelection(ref: Pick<VersionRef, 'name' | 'version'>, source: SampleSource, selection: ReviewSelection, toolLevel?: Pick<ToolReview, 'checks' | 'tags'>): QueueSelection {
  const flagged = new Map<string, QueueItem>();
  /** Place in the version of each item (ties in priority keep it). */
  const order = new Map<string, number>();
  const positions = new Map<string, SampleAt>();
  const all = new SamplePositions();
  /** Per category: how many candidates, and the version places of those not flagged. */
  const categories = new Map<string, { members: number; rest: number[] }>();
  const add = (sample: Sample, place: number, at: SampleAt, reason: QueueReason, weight: number) => {
    let item = flagged.get(sample.id);
    if (!item) {
      flagged.set(sample.id, (item = { itemId: itemIdOf(ref, sample.id), sampleId: sample.id, category: sample.category, priority: 0, reasons: [] }));
      order.set(sample.id, place);
      positions.set(sample.id, at);
    }
    item.reasons.push(reason);
    item.priority += weight;
  };

  for (const { sample, at } of source.located()) {
    if (selection.skipReviewed && sample.meta.review?.length) continue;
    const place = all.add(at);
    if (selection.failedChecks) for (const check of sample.meta.checks) if (!check.pass && !toolLevel?.checks.includes(check.name)) add(sample, place, at, { kind: 'check', name: check.name, ...(check.reason ? { reason: check.reason } : {}) }, 100);
    for (const tag of sample.meta.tags) if (!toolLevel?.tags.includes(tag) && selection.tags.some((p) => tagMatches(p, tag))) add(sample, place, at, { kind: 'tag', tag }, 10);
    const category = categories.get(sample.category) ?? categories.set(sample.category, { members: 0, rest: [] }).get(sample.category)!;
    category.members++;
    if (!flagged.has(sample.id)) category.rest.push(place);
  }
  const drawn: { place: number; rate: number }[] = [];
  for (const [category, { members, rest }] of categories) {
    const rate = selection.perCategory?.[category] ?? selection.randomRate;
    const count = Math.min(rest.length, Math.ceil(rate * members));
    for (const place of Rng.derive(selection.seed, 'review-queue', ref.name, ref.version, category).sample(rest, count)) drawn.push({ place, rate });
  }
  // The drawn samples are read back by their positions, in the order they were drawn.
  let next = 0;
  for (const sample of source.readAt(drawn.map((d) => all.at(d.place)))) {
    const { place, rate } = drawn[next++];
    add(sample, place, all.at(place), { kind: 'random', rate }, 1);
  }

  const items = [...flagged.values()].sort((a, b) => b.priority - a.priority || order.get(a.sampleId)! - order.get(b.sampleId)!);
  const kept = selection.maxItems ? items.slice(0, selection.maxItems) : items;
  const keptPositions = new Map(kept.map((item) => [item.sampleId, positions.get(item.sampleId)!]));
  return { queue: { dataset: ref.name, version: ref.version, selection, items: kept }, positions: keptPositions };
}

function isSampleArray(samples: SampleSource | readonly Sample[]): samples is readonly Sample[] {
  return Array.isArray(samples);
}

/** A reason without its detail (`check <name>`, `tag <tag>`, `random`), to count the queue by. */
export function reasonKey(reason: QueueReason): string {
  return reason.kind === 'check' ? `check ${reason.name}` : reason.kind === 'tag' ? `tag ${reason.tag}` : 'random';
}

/** "what to check" in a sheet: one line per reason. */
export function describeReasons(reasons: QueueReason[]): string {
  return reasons
    .map((r) => (r.kind === 'check' ? `failed check ${r.name}${r.reason ? `: ${r.reason}` : ''}` : r.kind === 'tag' ? `flagged ${r.tag}` : `random sample (${formatRate(r.rate)} of its category)`))
    .join('\n');
}

function formatRate(rate: number): string {
  return `${Number((rate * 100).toFixed(2))}%`;
}

/** A queue's identity: the name of its copy under `queues/` (without `.json`). */
export function queueKey(queue: ReviewQueue): string {
  return `queue-${hashOf(queue, 12)}`;
}

/**
 * Writes `queue.json` (the latest selection) and keeps a copy of every distinct queue under
 * `queues/`, so sheets exported from an earlier selection still import.
 */
export function writeQueue(reviewDir: string, queue: ReviewQueue): string {
  const text = JSON.stringify(queue, null, 1) + '\n';
  const path = join(reviewDir, QUEUE_FILE);
  writeFileAtomic(path, text);
  const copy = join(reviewDir, 'queues', `${queueKey(queue)}.json`);
  if (!existsSync(copy)) writeFileAtomic(copy, text);
  return path;
}

/** Item id → its entries in the version's queues, the latest queue's first. */
export function readQueueEntries(reviewDir: string, ref: Pick<VersionRef, 'version'>): Map<string, QueueItem[]> {
  const history = join(reviewDir, 'queues');
  const paths = [join(reviewDir, QUEUE_FILE), ...(existsSync(history) ? readdirSync(history).filter((f) => f.endsWith('.json')).sort().map((f) => join(history, f)) : [])];
  const entries = new Map<string, QueueItem[]>();
  for (const path of paths) {
    if (!existsSync(path)) continue;
    const queue = JSON.parse(readFileSync(path, 'utf8')) as ReviewQueue;
    if (queue.version !== ref.version) continue;
    for (const item of queue.items) {
      const list = entries.get(item.itemId) ?? [];
      if (!list.some((known) => known.priority === item.priority && describeReasons(known.reasons) === describeReasons(item.reasons))) list.push(item);
      entries.set(item.itemId, list);
    }
  }
  return entries;
}
