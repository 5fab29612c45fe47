import { join } from 'node:path';
import { countBy, mapIterable } from '../core/collections.ts';
import { stageFolder } from '../core/folders.ts';
import { writeFileAtomic, writeJsonArrayAtomic } from '../core/jsonl.ts';
import type { PipelineDefinition } from '../core/pipeline.ts';
import type { Sample } from '../core/records.ts';
import type { DatasetStore, VersionRef } from '../core/store.ts';
import { argillaRecord, argillaSettings } from './argilla.ts';
import { annotatorName, assignItems } from './assign.ts';
import { writeCsvSheet } from './csv.ts';
import { labelingConfig, labelStudioTask } from './labelstudio.ts';
import { selectionFor, type ReviewSelection } from './options.ts';
import { queueSelection, reasonKey, writeQueue, type QueueItem, type ReviewQueue } from './queue.ts';
import { SHEET_COLUMNS, sheetRow } from './sheet.ts';
import { writeToolSheet } from './tool-export.ts';

export const REVIEW_FORMATS = ['csv', 'labelstudio', 'argilla'] as const;
export type ReviewFormat = (typeof REVIEW_FORMATS)[number];

export interface ReviewExportOptions {
  store: DatasetStore;
  ref: VersionRef;
  format: ReviewFormat;
  /** Where sheets go; default: the version's `review/` folder (the queue always goes there). */
  outDir?: string;
  /** Sheets to write, one per annotator (default 1). */
  annotators?: number;
  /** Share of items given to several annotators (default 0). */
  overlap?: number;
  /** Annotators per overlapping item (default 2). */
  raters?: number;
  /** Overrides of the recipe's selection (`config.review`). */
  selection?: Partial<ReviewSelection>;
  /** The recipe that made the version: its tool-level questions go to a tool sheet, not the queue. */
  pipeline?: Pick<PipelineDefinition, 'toolReview'>;
}

export interface ReviewExportResult {
  dataset: string;
  format: ReviewFormat;
  queueFile: string;
  items: number;
  /** Items per reason (an item can have several) and per category. */
  counts: { failedChecks: number; tagged: number; random: number; byCategory: Record<string, number>; byReason: Record<string, number> };
  /** The tool sheet (one row per tool-level question), when the recipe has any. */
  toolSheet: { file: string; rows: number } | null;
  /** Items given to more than one annotator. */
  overlapItems: number;
  sheets: { annotator: string | null; items: number; file: string }[];
  files: string[];
}

/**
 * Selects the version's review queue (written to its `review/queue.json`) and writes the sheets: a
 * CSV per annotator, Label Studio tasks per annotator plus the labeling config, or Argilla records
 * per annotator plus the dataset settings.
 */
export function exportReview(options: ReviewExportOptions): ReviewExportResult {
  const { store, ref } = options;
  const annotators = options.annotators ?? 1;
  const manifest = store.manifest(ref);
  store.assertIntact(ref);
  const selection = selectionFor(manifest.config, options.selection);
  const toolReview = options.pipeline?.toolReview;
  const source = store.sampleSource(ref);
  const { queue, positions } = queueSelection(ref, source, selection, toolReview);
  // The sheets read each queued sample back by its position, as they write its row.
  const withSamples = function* (items: readonly QueueItem[]): Generator<[QueueItem, Sample]> {
    let next = 0;
    for (const sample of source.readAt(items.map((item) => positions.get(item.sampleId)!))) yield [items[next++], sample];
  };
  const assignment = assignItems(queue.items.length, { annotators, overlap: options.overlap ?? 0, raters: options.raters ?? 2, seed: selection.seed });
  const names = annotators > 1 ? [...Array(annotators).keys()].map(annotatorName) : [];
  queue.items.forEach((item, i) => {
    if (names.length) item.annotators = assignment[i].map((a) => names[a]);
  });
  // The queue and the sheets are written whole or not at all: staged, then moved into place together.
  const reviewDir = store.derivedDir(ref, 'review');
  const reviewStage = stageFolder(reviewDir);
  const outStage = options.outDir === undefined || options.outDir === reviewDir ? reviewStage : stageFolder(options.outDir);
  const stages = [...new Set([reviewStage, outStage])];
  try {
    const result = writeReviewFiles(options, ref, queue, assignment, names, withSamples, reviewStage.dir, outStage.dir);
    for (const stage of stages) stage.commit();
    const final = outStage.final;
    return { ...result, queueFile: reviewStage.final(result.queueFile), toolSheet: result.toolSheet && { ...result.toolSheet, file: final(result.toolSheet.file) }, sheets: result.sheets.map((sheet) => ({ ...sheet, file: final(sheet.file) })), files: result.files.map(final) };
  } catch (error) {
    for (const stage of stages) stage.failed(error);
    throw error;
  }
}

function writeReviewFiles(
  options: ReviewExportOptions,
  ref: VersionRef,
  queue: ReviewQueue,
  assignment: number[][],
  names: string[],
  withSamples: (items: readonly QueueItem[]) => Iterable<[QueueItem, Sample]>,
  reviewDir: string,
  outDir: string,
): ReviewExportResult {
  const { store } = options;
  const toolReview = options.pipeline?.toolReview;
  const queueFile = writeQueue(reviewDir, queue);
  const prefix = `${ref.name}-${ref.version}`;
  const files: string[] = [];
  const sheets: ReviewExportResult['sheets'] = [];
  const itemsOf = (name: string | null): QueueItem[] => (name ? queue.items.filter((item) => item.annotators!.includes(name)) : queue.items);

  if (options.format === 'labelstudio') {
    const configFile = join(outDir, `${prefix}-labelstudio-config.xml`);
    writeFileAtomic(configFile, labelingConfig());
    files.push(configFile);
  }
  if (options.format === 'argilla') {
    const settingsFile = join(outDir, `${prefix}-argilla-settings.json`);
    writeFileAtomic(settingsFile, JSON.stringify(argillaSettings(ref, queue.items), null, 1) + '\n');
    files.push(settingsFile);
  }
  for (const name of names.length ? names : [null]) {
    const items = itemsOf(name);
    let file: string;
    if (options.format === 'csv') {
      file = join(outDir, `${prefix}-${name ?? 'review'}.csv`);
      writeCsvSheet(file, SHEET_COLUMNS, mapIterable(withSamples(items), ([item, sample]) => sheetRow(ref, item, sample, name ?? '')));
    } else if (options.format === 'labelstudio') {
      file = join(outDir, `${prefix}-tasks${name ? `-${name}` : ''}.json`);
      writeJsonArrayAtomic(file, mapIterable(withSamples(items), ([item, sample]) => labelStudioTask(ref, item, sample)), 1);
    } else {
      file = join(outDir, `${prefix}-records${name ? `-${name}` : ''}.json`);
      writeJsonArrayAtomic(file, mapIterable(withSamples(items), ([item, sample]) => argillaRecord(ref, item, sample)), 1);
    }
    files.push(file);
    sheets.push({ annotator: name, items: items.length, file });
  }
  const toolSheet = toolReview ? writeToolSheet({ store, ref, toolReview, file: join(outDir, `${prefix}-tools.csv`) }) : null;
  if (toolSheet) files.push(toolSheet.file);

  const has = (kind: string) => queue.items.filter((item) => item.reasons.some((r) => r.kind === kind)).length;
  return {
    dataset: `${ref.name}@${ref.version}`,
    format: options.format,
    queueFile,
    items: queue.items.length,
    counts: { failedChecks: has('check'), tagged: has('tag'), random: has('random'), byCategory: countBy(queue.items.map((item) => item.category)), byReason: countBy(queue.items.flatMap((item) => item.reasons.map(reasonKey))) },
    toolSheet,
    overlapItems: assignment.filter((a) => a.length > 1).length,
    sheets,
    files,
  };
}
