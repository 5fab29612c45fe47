import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { groupBy } from '../core/collections.ts';
import { hashOf } from '../core/hash.ts';
import { writeFileAtomic } from '../core/jsonl.ts';
import type { Sample } from '../core/records.ts';
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

/** Item id → sample for every sample of a version (any sample can be reviewed, queued or not). */
export function itemIndex(ref: Pick<VersionRef, 'name' | 'version'>, samples: Sample[]): Map<string, Sample> {
  const index = new Map<string, Sample>();
  for (const sample of samples) {
    const id = itemIdOf(ref, sample.id);
    const clash = index.get(id);
    if (clash && clash.id !== sample.id) throw new Error(`item id ${id} is shared by samples ${clash.id} and ${sample.id}`);
    index.set(id, sample);
  }
  return index;
}

/**
 * Selects the samples to review and orders them by priority (ties keep the version's order):
 * failed checks, recipe tags, then a seeded random share of each category drawn from the rest.
 * Checks and tags the recipe's `toolReview` names ask about tools, not the sample: they are the tool
 * sheet's rows, and select nothing here.
 */
export function selectQueue(ref: Pick<VersionRef, 'name' | 'version'>, samples: Sample[], selection: ReviewSelection, toolLevel?: Pick<ToolReview, 'checks' | 'tags'>): ReviewQueue {
  const candidates = selection.skipReviewed ? samples.filter((s) => !s.meta.review?.length) : samples;
  const flagged = new Map<string, QueueItem>();
  const order = new Map(samples.map((s, i) => [s.id, i]));
  const add = (sample: Sample, reason: QueueReason, weight: number) => {
    let item = flagged.get(sample.id);
    if (!item) flagged.set(sample.id, (item = { itemId: itemIdOf(ref, sample.id), sampleId: sample.id, category: sample.category, priority: 0, reasons: [] }));
    item.reasons.push(reason);
    item.priority += weight;
  };

  for (const sample of candidates) {
    if (selection.failedChecks) for (const check of sample.meta.checks) if (!check.pass && !toolLevel?.checks.includes(check.name)) add(sample, { kind: 'check', name: check.name, ...(check.reason ? { reason: check.reason } : {}) }, 100);
    for (const tag of sample.meta.tags) if (!toolLevel?.tags.includes(tag) && selection.tags.some((p) => tagMatches(p, tag))) add(sample, { kind: 'tag', tag }, 10);
  }
  for (const [category, members] of groupBy(candidates, (s) => s.category)) {
    const rate = selection.perCategory?.[category] ?? selection.randomRate;
    const rest = members.filter((s) => !flagged.has(s.id));
    const count = Math.min(rest.length, Math.ceil(rate * members.length));
    for (const sample of Rng.derive(selection.seed, 'review-queue', ref.name, ref.version, category).sample(rest, count)) add(sample, { kind: 'random', rate }, 1);
  }

  const items = [...flagged.values()].sort((a, b) => b.priority - a.priority || order.get(a.sampleId)! - order.get(b.sampleId)!);
  return { dataset: ref.name, version: ref.version, selection, items: selection.maxItems ? items.slice(0, selection.maxItems) : items };
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
