import { existsSync, readFileSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { countBy } from '../core/collections.ts';
import { hashOf, sha256 } from '../core/hash.ts';
import { toJsonl, writeFileAtomic } from '../core/jsonl.ts';
import type { DatasetStore, VersionRef } from '../core/store.ts';
import type { PipelineDefinition } from '../core/pipeline.ts';
import { adjudicationSheet, resolveDecisions, type Disagreement, type FinalDecision } from './adjudicate.ts';
import { agreementReport, type AgreementReport } from './agreement.ts';
import { withRecordIds } from './argilla.ts';
import { carryNewSampleReview, type CarryResult } from './carry.ts';
import { publishReviewed } from './apply.ts';
import { toCsv } from './csv.ts';
import { versionItems } from './items.ts';
import { readQueueEntries } from './queue.ts';
import { rowCount, type ImportProblem, type SheetSource } from './rows.ts';
import { readSheetFile } from './sources.ts';
import { validateSheets, type ValidationContext, type ValidationResult } from './validate.ts';

export interface SheetFile {
  path: string;
  /** The path as the user wrote it (used in messages and reports). */
  shown?: string;
}

export interface ReviewImportOptions {
  store: DatasetStore;
  ref: VersionRef;
  files: SheetFile[];
  /** Apply the valid rows and report the rest, instead of applying nothing. */
  skipInvalid?: boolean;
  /** The recipe that made the version (its `recheck` runs on edited samples); default: the generic check. */
  pipeline?: Pick<PipelineDefinition, 'recheck'>;
}

export type ReviewImportStatus = 'published' | 'existing' | 'invalid' | 'needs-adjudication' | 'nothing-to-apply';

export interface ReviewImportResult {
  dataset: string;
  status: ReviewImportStatus;
  /** The version the decisions are in (`published` or `existing`). */
  newVersion: string | null;
  counts: {
    files: number;
    rows: number;
    decided: number;
    pending: number;
    invalid: number;
    items: number;
    accepted: number;
    rejected: number;
    edited: number;
    adjudicated: number;
    disagreements: number;
  };
  problems: ImportProblem[];
  agreement: Omit<AgreementReport, 'perItem'>;
  /** Where the full report (with per-item agreement) was written: the reviewed version's review/. */
  report: string;
  problemsFile: string | null;
  adjudicationSheet: string | null;
  /** The decisions carried on to the versions tool decisions made from the reviewed one (see carry.ts). */
  carried: CarryResult[];
}

export const REPORT_FILE = 'import-report.json';
export const PROBLEMS_FILE = 'import-problems.csv';

interface Loaded<S = SheetSource> {
  ctx: ValidationContext;
  sources: S[];
  validation: ValidationResult;
  agreement: AgreementReport;
}

/** What the report says of a sheet once its rows are validated (the rows themselves are let go). */
type SheetSummary = Pick<SheetSource, 'file' | 'format' | 'kind'> & { rows: number };

/**
 * Reads every sheet and validates every row against the version (nothing is written). The samples
 * of the items the sheets name, and of `alsoItems` (the review app's queue), are found in one pass
 * over the version and read back when a row needs them. A CSV sheet's rows are read from its file
 * on each pass (for their item ids, then to validate them): no sheet is held whole.
 */
export function readAndValidate(store: DatasetStore, ref: VersionRef, files: SheetFile[], pipeline?: Pick<PipelineDefinition, 'recheck'>, alsoItems: Iterable<string> = []): Loaded {
  store.assertIntact(ref);
  const sources = files.map((f) => readSheetFile(f.path, f.shown ?? f.path));
  const wanted = new Set(alsoItems);
  for (const source of sources) for (const row of source.rows) wanted.add((row.cells.item_id ?? '').trim());
  const ctx: ValidationContext = {
    ref,
    items: versionItems(ref, store.sampleSource(ref), wanted),
    queue: readQueueEntries(store.derivedDirForReading(ref, 'review'), ref),
    pipeline,
    library: store.tools(ref),
  };
  const validation = validateSheets(sources, ctx);
  validation.problems = withRecordIds(validation.problems, sources);
  const agreement = agreementReport(validation.decisions.filter((d) => d.kind === 'annotator').map((d) => ({ item: d.itemId, rater: d.annotator, label: d.decision })));
  return { ctx, sources, validation, agreement };
}

/** `readAndValidate` keeping of each sheet only its summary: what is published next streams the version, and the rows need not be held then. */
function validated(store: DatasetStore, ref: VersionRef, files: SheetFile[], pipeline?: Pick<PipelineDefinition, 'recheck'>): Loaded<SheetSummary> {
  const { sources, ...rest } = readAndValidate(store, ref, files, pipeline);
  return { ...rest, sources: sources.map((s) => ({ file: s.file, format: s.format, kind: s.kind, rows: rowCount(s) })) };
}

/**
 * `toolkiln review import`: validate every row of every sheet first; with any problem apply nothing
 * (unless `skipInvalid`); resolve multiple annotators (adjudicator wins, otherwise they must agree);
 * publish the next version with the decisions applied. The reviewed version only gains report
 * files in its `review/` folder.
 */
export function importReview(options: ReviewImportOptions): ReviewImportResult {
  const { store, ref } = options;
  const { ctx, sources, validation, agreement } = validated(store, ref, options.files, options.pipeline);
  const reviewDir = store.derivedDir(ref, 'review');
  const { perItem, ...agreementSummary } = agreement;
  const resolution = resolveDecisions(validation.decisions);
  const blocked = validation.problems.length > 0 && !options.skipInvalid;

  const result: ReviewImportResult = {
    dataset: `${ref.name}@${ref.version}`,
    status: 'invalid',
    newVersion: null,
    counts: {
      files: sources.length,
      rows: validation.rows,
      decided: validation.decisions.length,
      pending: validation.pending,
      invalid: validation.invalidRows,
      items: resolution.final.length,
      ...decisionCounts(resolution.final),
      disagreements: resolution.disagreements.length,
    },
    problems: validation.problems,
    agreement: agreementSummary,
    report: join(reviewDir, REPORT_FILE),
    problemsFile: null,
    adjudicationSheet: null,
    carried: [],
  };

  rmSync(join(reviewDir, PROBLEMS_FILE), { force: true });
  if (validation.problems.length) {
    result.problemsFile = join(reviewDir, PROBLEMS_FILE);
    writeFileAtomic(result.problemsFile, problemsCsv(validation.problems));
  }
  if (!blocked && resolution.disagreements.length) {
    result.status = 'needs-adjudication';
    result.adjudicationSheet = writeAdjudicationSheet(reviewDir, ref, resolution.disagreements, ctx);
  } else if (!blocked && !resolution.final.length) {
    result.status = 'nothing-to-apply';
  } else if (!blocked) {
    const stats = {
      reviewed: ref.version,
      files: sources.map((s, i) => ({ file: basename(s.file), sha256: fileHash(options.files[i].path), format: s.format, kind: s.kind, rows: s.rows })),
      rows: { total: validation.rows, decided: validation.decisions.length, pending: validation.pending, invalidSkipped: validation.invalidRows },
      items: { decided: result.counts.items, accepted: result.counts.accepted, rejected: result.counts.rejected, edited: result.counts.edited, adjudicated: result.counts.adjudicated },
      annotators: countBy(validation.decisions.filter((d) => d.kind === 'annotator').map((d) => d.annotator)),
      agreement: agreementSummary,
    };
    // The copy kept in the new version leaves out what is not known yet or local to this machine.
    const { newVersion: _unknownYet, report: _report, problemsFile: _problems, adjudicationSheet: _sheet, carried: _carried, ...summary } = result;
    const report = { ...summary, status: 'published', agreement: { ...agreementSummary, perItem } };
    const published = publishReviewed({
      store,
      ref,
      final: resolution.final,
      stats,
      extraFiles: {
        [`review/decisions-from-${ref.version}.jsonl`]: toJsonl(resolution.final.map(({ edited: _edited, ...d }) => d)),
        [`review/import-report-from-${ref.version}.json`]: JSON.stringify(report, null, 1) + '\n',
      },
    });
    result.status = published.status;
    result.newVersion = published.ref.version;
    result.carried = carryNewSampleReview(store, published.ref, options.pipeline);
  }
  writeFileAtomic(result.report, JSON.stringify({ ...result, agreement: { ...agreementSummary, perItem } }, null, 1) + '\n');
  return result;
}

export interface ReviewAgreementResult {
  dataset: string;
  agreement: AgreementReport;
  disagreements: number;
  problems: ImportProblem[];
  adjudicationSheet: string | null;
}

/** `toolkiln review agreement`: agreement of the valid rows, and the adjudication sheet if any item disagrees. */
export function reviewAgreement(store: DatasetStore, ref: VersionRef, files: SheetFile[], options: { outDir?: string; pipeline?: Pick<PipelineDefinition, 'recheck'> } = {}): ReviewAgreementResult {
  const { ctx, validation, agreement } = validated(store, ref, files, options.pipeline);
  const { disagreements } = resolveDecisions(validation.decisions);
  const sheet = disagreements.length ? writeAdjudicationSheet(options.outDir ?? store.derivedDir(ref, 'review'), ref, disagreements, ctx) : null;
  return { dataset: `${ref.name}@${ref.version}`, agreement, disagreements: disagreements.length, problems: validation.problems, adjudicationSheet: sheet };
}

/**
 * `adjudication-<hash>.csv`, named after the disagreements it lists. An existing sheet of that
 * name is left alone: the adjudicator may be filling it in place.
 */
function writeAdjudicationSheet(dir: string, ref: VersionRef, disagreements: Disagreement[], ctx: ValidationContext): string {
  const key = disagreements.map((d) => [d.itemId, d.answers.map((a) => [a.annotator, a.decision, a.correction])]);
  const path = join(dir, `adjudication-${hashOf(key, 8)}.csv`);
  if (!existsSync(path)) writeFileAtomic(path, adjudicationSheet(ref, disagreements, ctx.items, ctx.queue));
  return path;
}

function decisionCounts(final: FinalDecision[]) {
  const count = (decision: string) => final.filter((d) => d.decision === decision).length;
  return { accepted: count('accept'), rejected: count('reject'), edited: count('edit'), adjudicated: final.filter((d) => d.adjudicated).length };
}

export function problemsCsv(problems: ImportProblem[]): string {
  return toCsv(
    ['file', 'row', 'annotation', 'column', 'problem'],
    problems.map((p) => ({ file: p.file, row: p.row === null ? '' : String(p.row), annotation: p.annotation ? String(p.annotation) : '', column: p.column ?? '', problem: p.message })),
  );
}

function fileHash(path: string): string {
  try {
    return sha256(readFileSync(path));
  } catch {
    return '';
  }
}
