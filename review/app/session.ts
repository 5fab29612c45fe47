import { existsSync, readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { messageOf, UserError } from '../../core/errors.ts';
import type { PipelineDefinition } from '../../core/pipeline.ts';
import { writeFileAtomic } from '../../core/jsonl.ts';
import type { DatasetStore, VersionRef } from '../../core/store.ts';
import type { ToolReview } from '../../core/tool-review.ts';
import { readAndValidate } from '../import.ts';
import type { ImportProblem, SheetSource } from '../rows.ts';
import { readSheetFile } from '../sources.ts';
import { toolReviewContext } from '../tool-export.ts';
import { validateToolSheets } from '../tool-import.ts';
import { toolSheetRow, type ToolSheetRow } from '../tool-sheet.ts';
import { selectionFor } from '../options.ts';
import { QUEUE_FILE, queueKey, selectQueue, writeQueue, type QueueItem, type QueueReason, type ReviewQueue } from '../queue.ts';
import { datasetLabel, sheetRow } from '../sheet.ts';
import { DecisionSheet, SAMPLE_SHEET_LAYOUT, TOOL_SHEET_LAYOUT } from './decision-sheet.ts';
import type { ItemKind } from './item-kind.ts';
import { sampleItems, sampleTitle } from './sample-items.ts';
import { toolItems } from './tool-items.ts';

export interface ReviewSessionOptions {
  store: DatasetStore;
  ref: VersionRef;
  /** Who is reviewing: names the decisions file and fills its `annotator` column. */
  annotator?: string;
  /** The recipe that made the version (its `recheck` runs on edits, its `toolReview` asks the tool questions), as for `review import`. */
  pipeline?: Pick<PipelineDefinition, 'recheck' | 'toolReview'>;
  /** Take the latest queue `review export` wrote instead of the items the annotator was given at their first session. */
  requeue?: boolean;
}

/** One annotator reviewing one version: the item kinds (each with its decisions file) and where the queue came from. */
export interface ReviewSession {
  dataset: string;
  annotator: string;
  /** The annotator's own queue (`review/app-queue-<annotator>.json`). */
  queueFile: string;
  /** Set when the latest `review export` queue is another one than the annotator's (what to run to take it). */
  queueNote: string | null;
  kinds: ItemKind[];
  close(): void;
}

/** An annotator id is part of a file name and of data: letters, digits, `.`, `_`, `-`. */
const ANNOTATOR_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** `<name>-<v>-app-<annotator>.csv` in the version's review/ folder: a sheet `review import` reads as is. */
export function appSheetName(ref: Pick<VersionRef, 'name' | 'version'>, annotator: string): string {
  return `${ref.name}-${ref.version}-app-${annotator}.csv`;
}

/** `<name>-<v>-app-<annotator>-tools.csv` beside it: a tool sheet `review import` reads as is. */
export function appToolSheetName(ref: Pick<VersionRef, 'name' | 'version'>, annotator: string): string {
  return `${ref.name}-${ref.version}-app-${annotator}-tools.csv`;
}

/**
 * `app-queue-<annotator>.json` in the version's review/ folder: the items an annotator was given at
 * their first session, kept apart from `queue.json`, which every `review export` rewrites.
 */
export function appQueueName(annotator: string): string {
  return `app-queue-${annotator}.json`;
}

/** The login name when it makes a valid annotator id, else "reviewer". */
export function defaultAnnotator(): string {
  try {
    const name = userInfo().username;
    return ANNOTATOR_ID.test(name) ? name : 'reviewer';
  } catch {
    return 'reviewer';
  }
}

/**
 * Opens a version for review in the app: the queue `review export` wrote last (or, when there is none
 * yet, the one it would select, written the same way), narrowed to the annotator's items when the
 * queue was split between annotators; the decisions file, read back and checked as import checks it.
 */
export function openReviewSession(options: ReviewSessionOptions): ReviewSession {
  const { store, ref } = options;
  const annotator = options.annotator ?? defaultAnnotator();
  if (!ANNOTATOR_ID.test(annotator)) throw new UserError(`--annotator "${annotator}" is not a valid id: use letters, digits, ".", "_" and "-" (at most 64, starting with a letter or digit)`);

  const reviewDir = store.derivedDir(ref, 'review');
  const { items, queueFile, queueNote, toKeep } = annotatorQueue(store, ref, annotator, options);
  const path = join(reviewDir, appSheetName(ref, annotator));
  const { ctx, sources, validation } = readAndValidate(store, ref, existsSync(path) ? [{ path }] : [], options.pipeline, items.map((item) => item.itemId));
  refuseBrokenFile(path, validation.problems);

  // Rows made and read as the sheet is written, never held together: each sample is read back by its
  // position, once (its title for the item list is made then).
  const titles = new Map<string, string>();
  const fresh = (function* () {
    for (const item of items) {
      const sample = ctx.items.get(item.itemId)!;
      titles.set(item.itemId, sampleTitle(sample));
      yield sheetRow(ref, item, sample, annotator);
    }
  })();
  const sheet = DecisionSheet.open(path, SAMPLE_SHEET_LAYOUT, fresh, cellsOf(sources));
  const reasons = new Map<string, QueueReason[]>();
  for (const [id, entries] of ctx.queue) reasons.set(id, entries[0].reasons);
  for (const item of items) reasons.set(item.itemId, item.reasons);
  const kinds = [sampleItems({ sheet, ctx, reasons, annotator, titles })];
  try {
    // Kept once the sheet's lock is held: a second server refused by it changes nothing.
    if (toKeep) writeFileAtomic(queueFile, JSON.stringify(toKeep, null, 1) + '\n');
    const tools = options.pipeline?.toolReview && openToolItems(store, ref, annotator, options.pipeline.toolReview);
    if (tools) kinds.push(tools);
  } catch (error) {
    sheet.close();
    throw error;
  }
  return { dataset: datasetLabel(ref), annotator, queueFile, queueNote, kinds, close: () => kinds.forEach((kind) => kind.close()) };
}

/** The cells of every row of the sheets, read from their files again on each pass. */
function cellsOf(sources: SheetSource[]): Iterable<Record<string, string>> {
  return {
    *[Symbol.iterator]() {
      for (const source of sources) for (const row of source.rows) yield row.cells;
    },
  };
}

/** A decisions file read back with problems (edited by hand) is refused: nothing would import it. */
function refuseBrokenFile(path: string, problems: ImportProblem[]): void {
  if (!problems.length) return;
  const [first] = problems;
  const at = [first.row === null ? null : `row ${first.row}`, first.column ? `column ${first.column}` : null].filter(Boolean).join(', ');
  const more = problems.length > 1 ? ` (and ${problems.length - 1} more problem(s))` : '';
  throw new UserError(`${path}${at ? ` (${at})` : ''}: ${first.message}${more}; fix the file, or move it away to start over`);
}

/**
 * The version's tool questions (the rows `review export` writes to `<name>-<v>-tools.csv`) with their
 * decisions file, read back and checked as `review import` checks a tool sheet; none when the version
 * has no tool question.
 */
function openToolItems(store: DatasetStore, ref: VersionRef, annotator: string, toolReview: Pick<ToolReview, 'questions'>): ItemKind | null {
  const ctx = toolReviewContext(store, ref, toolReview);
  if (!ctx.questions.size) return null;
  const path = join(store.derivedDir(ref, 'review'), appToolSheetName(ref, annotator));
  const saved = existsSync(path) ? [readSheetFile(path)] : [];
  refuseBrokenFile(path, validateToolSheets(saved, ref, ctx).problems);
  const fresh = [...ctx.questions.values()].map((q) => toolSheetRow(ref, q, annotator));
  const sheet = DecisionSheet.open(path, TOOL_SHEET_LAYOUT, fresh, cellsOf(saved) as Iterable<ToolSheetRow>);
  return toolItems({ sheet, ref, ctx, library: store.tools(ref), annotator });
}

/**
 * The annotator's own queue: the one kept from their first session, or (at the first session, or
 * with `requeue`) their share of the latest queue `review export` wrote, to keep for the next sessions.
 * A later export (`--annotators n` or another selection) rewrites `queue.json`, not this file, so an
 * annotator's items do not change under them; the note says when the latest export differs.
 */
function annotatorQueue(store: DatasetStore, ref: VersionRef, annotator: string, options: ReviewSessionOptions): { items: QueueItem[]; queueFile: string; queueNote: string | null; toKeep: AnnotatorQueue | null } {
  const reviewDir = store.derivedDir(ref, 'review');
  const own = join(reviewDir, appQueueName(annotator));
  const latest = join(reviewDir, QUEUE_FILE);
  if (existsSync(own) && !options.requeue) {
    const kept = readQueue<AnnotatorQueue>(own, ref, `move it away to take the latest queue (review export writes it)`);
    const from = existsSync(latest) ? queueKey(readQueue(latest, ref, `run toolkiln review export ${datasetLabel(ref)} again`)) : null;
    const note =
      from && from !== kept.from
        ? `${annotator} keeps the ${kept.items.length} item(s) of their first session (${own}); the latest review export (${latest}) is another queue: add --requeue to take it (decisions made so far are kept)`
        : null;
    return { items: kept.items, queueFile: own, queueNote: note, toKeep: null };
  }
  const { queue } = loadQueue(store, ref, options.pipeline?.toolReview);
  const items = annotatorItems(queue, annotator, ref);
  return { items, queueFile: own, queueNote: null, toKeep: { ...queue, annotator, from: queueKey(queue), items } };
}

/** An annotator's queue: their items of the export queue `from` (its key, as `queueKey` gives it). */
interface AnnotatorQueue extends ReviewQueue {
  annotator: string;
  from: string;
}

function readQueue<Q extends ReviewQueue>(path: string, ref: VersionRef, remedy: string): Q {
  let queue: Q;
  try {
    queue = JSON.parse(readFileSync(path, 'utf8')) as Q;
  } catch (error) {
    throw new UserError(`${path} is not a readable queue (${messageOf(error)}): ${remedy}`);
  }
  if (queue?.version !== ref.version || !Array.isArray(queue.items)) throw new UserError(`${path} is not a queue of ${datasetLabel(ref)}: ${remedy}`);
  return queue;
}

/** The latest queue `review export` wrote; without one, the selection export makes by default (tool questions left out as export leaves them), written as export writes it. */
function loadQueue(store: DatasetStore, ref: VersionRef, toolReview?: Pick<ToolReview, 'checks' | 'tags'>): { queue: ReviewQueue; queueFile: string } {
  const existing = join(store.derivedDirForReading(ref, 'review'), QUEUE_FILE);
  if (existsSync(existing)) return { queue: readQueue(existing, ref, `run toolkiln review export ${datasetLabel(ref)} again`), queueFile: existing };
  store.assertIntact(ref);
  const queue = selectQueue(ref, store.sampleSource(ref), selectionFor(store.manifest(ref).config), toolReview);
  return { queue, queueFile: writeQueue(store.derivedDir(ref, 'review'), queue) };
}

/** A queue split by `review export --annotators` gives each annotator their items (overlapping ones to several). */
function annotatorItems(queue: ReviewQueue, annotator: string, ref: VersionRef): QueueItem[] {
  const split = [...new Set(queue.items.flatMap((item) => item.annotators ?? []))];
  if (!split.length) return queue.items;
  if (!split.includes(annotator)) {
    throw new UserError(`the queue of ${datasetLabel(ref)} is split between ${split.join(', ')} (review export --annotators): give --annotator one of them`);
  }
  return queue.items.filter((item) => item.annotators?.includes(annotator));
}
