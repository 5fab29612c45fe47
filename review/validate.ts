import type { PipelineDefinition } from '../core/pipeline.ts';
import type { Sample, ToolSpec } from '../core/records.ts';
import { formatCallsJson, goldCalls, parseCorrectedCalls, parseLabels, type Correction } from './calls.ts';
import type { SampleLookup } from './items.ts';
import type { QueueItem } from './queue.ts';
import { callProblems, editedSample } from './schema-check.ts';
import { ADJUDICATION_COLUMNS, datasetLabel, DECISIONS, EDITABLE_COLUMNS, QUEUE_COLUMNS, SAMPLE_COLUMNS, sampleCells, SHEET_COLUMNS, sheetRow, type DatasetLabel, type Decision } from './sheet.ts';
import { rowCount, type ImportProblem, type ReviewRow, type SheetKind, type SheetSource } from './rows.ts';
import { formulaLead, RUNS_AS_FORMULA, sampleHolds } from './typed-text.ts';

/** A valid, decided row: one annotator's (or the adjudicator's) decision on one item. */
export interface RowDecision {
  file: string;
  row: number | null;
  annotation?: number;
  kind: SheetKind;
  itemId: string;
  sampleId: string;
  annotator: string;
  decision: Decision;
  /** The reviewer's corrections, normalised (only what differs from the version). */
  correction: Correction;
  /** For `edit`: the sample with the corrections applied and its checks re-run. */
  edited?: Sample;
  notes: string;
}

export interface ValidationContext {
  ref: DatasetLabel;
  /** Item id → sample, for every item the sheets name (see `versionItems`). */
  items: SampleLookup;
  /** Item id → its entries in the version's queues, latest first (read-only priority / what_to_check). */
  queue: Map<string, QueueItem[]>;
  pipeline?: Pick<PipelineDefinition, 'recheck'>;
  library: ToolSpec[];
}

export interface ValidationResult {
  decisions: RowDecision[];
  problems: ImportProblem[];
  /** Rows read in all. */
  rows: number;
  /** Rows with no decision yet (left blank). */
  pending: number;
  /** Rows with at least one problem. */
  invalidRows: number;
}

/** Line endings some editors add inside cells do not count as edits. */
export const normalise = (text: string) => text.replace(/\r\n?/g, '\n');

/** Where an edited cell first differs from the export, with a little context on each side. */
export function difference(exported: string, now: string): string {
  let at = 0;
  while (at < exported.length && at < now.length && exported[at] === now[at]) at++;
  const from = Math.max(0, at - 20);
  const clip = (text: string) => `${from > 0 ? '…' : ''}${text.slice(from, at + 20)}${text.length > at + 20 ? '…' : ''}`;
  return `at character ${at + 1}: exported ${JSON.stringify(clip(exported))}, now ${JSON.stringify(clip(now))}`;
}

/**
 * Checks every row of every sheet before anything is applied, and reports every problem with its
 * file, row and column: missing columns, a sheet from another version, unknown items, edited
 * read-only cells, decisions other than accept / reject / edit, corrections that are not valid
 * JSON, do not fit the tools' schemas or fail the recipe's checks, and duplicate rows.
 */
export function validateSheets(sources: SheetSource[], ctx: ValidationContext): ValidationResult {
  const problems: ImportProblem[] = [];
  const decisions: RowDecision[] = [];
  // Where each item was first met (only that: rows are not held, a sheet may be read a part at a time).
  const seenInFile = new Map<string, RowPlace>();
  const seenByAnnotator = new Map<string, RowPlace>();
  let rows = 0;
  let pending = 0;
  let invalidRows = 0;
  const label = datasetLabel(ctx.ref);

  for (const source of sources) {
    problems.push(...source.problems);
    const fileBroken = source.problems.some((p) => p.row === null);
    const required = source.kind === 'adjudication' ? ADJUDICATION_COLUMNS : SHEET_COLUMNS;
    const missing = fileBroken ? [] : required.filter((c) => !source.columns.includes(c));
    for (const column of missing) problems.push({ file: source.file, row: 1, column, message: `missing column "${column}": a sheet needs the columns ${required.join(', ')} (export a fresh sheet if they were deleted)` });
    rows += rowCount(source);
    if (fileBroken || missing.length) {
      invalidRows += rowCount(source);
      continue;
    }
    const rowsWithSourceProblems = new Set(source.problems.map((p) => `${p.row}/${p.annotation ?? ''}`));

    for (const row of source.rows) {
      const found: ImportProblem[] = [];
      const problem = (column: string | null, message: string) => found.push({ file: row.file, row: row.row, ...(row.annotation ? { annotation: row.annotation } : {}), column, message });
      const cell = (column: string) => row.cells[column] ?? '';
      const annotator = cell('annotator').trim() || row.defaultAnnotator;
      const itemId = cell('item_id').trim();
      const result = checkRow(row, ctx, label, problem);
      typedFormulaProblems(row, problem);

      // Duplicates: the same item twice in one sheet, or twice from the same annotator (a Label
      // Studio export holds every annotator's answers, so only the second rule applies to it).
      if (itemId) {
        const fileKey = `${source.file}\u0000${itemId}`;
        const earlier = source.format === 'csv' ? seenInFile.get(fileKey) : undefined;
        if (earlier) problem('item_id', `item ${itemId} appears twice in this file (first at ${where(earlier)}); keep one row per item`);
        else seenInFile.set(fileKey, placeOf(row));
        // One adjudication per item, whoever wrote it; one answer per item from each annotator.
        const annotatorKey = source.kind === 'adjudication' ? `adjudication\u0000${itemId}` : `annotator\u0000${itemId}\u0000${annotator}`;
        const other = seenByAnnotator.get(annotatorKey);
        if (other && !earlier) problem('item_id', `${source.kind === 'adjudication' ? 'the adjudicator' : `annotator "${annotator}"`} already answered item ${itemId} in ${other.file} ${where(other)}; import each answer once`);
        else if (!other) seenByAnnotator.set(annotatorKey, placeOf(row));
      }

      if (found.length || rowsWithSourceProblems.has(`${row.row}/${row.annotation ?? ''}`)) {
        problems.push(...found);
        invalidRows++;
      } else if (result === 'pending') pending++;
      else if (result) decisions.push({ file: row.file, row: row.row, ...(row.annotation ? { annotation: row.annotation } : {}), kind: source.kind, annotator, notes: cell('notes').trim(), ...result });
    }
  }
  return { decisions, problems, rows, pending, invalidRows };
}

/**
 * Reviewer cells that would carry a formula into data: typed with a leading formula character and no
 * `'` before it, or with one behind the white space import trims away; and an annotator's name taken
 * from the file or the Label Studio user that starts with one.
 */
export function typedFormulaProblems(row: ReviewRow, problem: (column: string, message: string) => void, editable: readonly string[] = EDITABLE_COLUMNS): void {
  // The decision is one of a few words, checked on its own; every other reviewer cell can reach data.
  for (const column of editable.filter((c) => c !== 'decision')) {
    const text = row.cells[column] ?? '';
    const typed = row.formulaColumns.includes(column);
    // A neutralised cell (`'=…`) comes back starting with its formula character: that one is fine.
    const lead = typed ? formulaLead(text) : formulaLead(text) ? null : formulaLead(text.trim());
    if (!lead) continue;
    const after = typed ? '' : ' after the white space import removes';
    problem(column, `${column} starts with ${lead}${after}, ${RUNS_AS_FORMULA}: remove it, or write ' before it to keep it as text`);
  }
  // The default name reaches data only with a decision; blank rows need not repeat the problem.
  const lead = (row.cells.annotator ?? '').trim() || !(row.cells.decision ?? '').trim() ? null : formulaLead(row.defaultAnnotator);
  if (lead) {
    const from = row.annotation ? `the Label Studio user "${row.defaultAnnotator}"` : `the file name "${row.defaultAnnotator}"`;
    problem('annotator', `the annotator would be ${from}, which starts with ${lead}, ${RUNS_AS_FORMULA}: ${row.annotation ? 'change that user name' : 'rename the file'} or fill in the annotator column`);
  }
}

/** Where a row is: its file, row and (Label Studio, Argilla) annotation. */
type RowPlace = Pick<ReviewRow, 'file' | 'row' | 'annotation'>;

const placeOf = (row: ReviewRow): RowPlace => ({ file: row.file, row: row.row, ...(row.annotation ? { annotation: row.annotation } : {}) });

function where(row: RowPlace): string {
  return row.annotation ? `task ${row.row}, annotation ${row.annotation}` : `row ${row.row}`;
}

type RowOutcome = 'pending' | Pick<RowDecision, 'itemId' | 'sampleId' | 'decision' | 'correction' | 'edited'> | null;

/** One row's checks; reports through `problem` and returns its decision, 'pending', or null when invalid. */
function checkRow(row: ReviewRow, ctx: ValidationContext, label: string, problem: (column: string | null, message: string) => void): RowOutcome {
  const cell = (column: string) => row.cells[column] ?? '';
  const dataset = cell('dataset').trim();
  if (dataset !== label) {
    problem('dataset', `this sheet is from ${dataset ? `"${dataset}"` : 'no dataset'}, not ${label}: import it into the version it was exported from`);
    return null;
  }
  const itemId = cell('item_id').trim();
  const sample = ctx.items.get(itemId);
  if (!itemId) problem('item_id', 'item_id is empty: every row needs the item_id it was exported with');
  else if (!sample) problem('item_id', `unknown item id "${itemId}": ${label} has no such item (was the cell edited?)`);
  if (!sample) return null;

  // Read-only cells must be exactly what the version (and one of its queues) gives.
  let edited = false;
  const same = (column: string, expected: string) => normalise(cell(column)).trimEnd() === normalise(expected).trimEnd();
  const readOnlyEdited = (column: string, expected: string) => {
    problem(column, `read-only column "${column}" was edited ${difference(normalise(expected), normalise(cell(column)))}; undo it (corrections go in the corrected_… columns)`);
    edited = true;
  };
  const fromSample = sampleCells(ctx.ref, sample);
  for (const column of SAMPLE_COLUMNS) if (!same(column, fromSample[column])) readOnlyEdited(column, fromSample[column]);
  const queued = (ctx.queue.get(itemId) ?? []).map((entry) => sheetRow(ctx.ref, entry, sample));
  if (queued.length && !queued.some((row) => QUEUE_COLUMNS.every((c) => same(c, row[c])))) {
    for (const column of QUEUE_COLUMNS) if (!same(column, queued[0][column])) readOnlyEdited(column, queued[0][column]);
  }

  const rawDecision = cell('decision').trim().toLowerCase();
  const { correction, filled, invalid } = readCorrections(cell, sample, problem);
  const changed = Object.keys(correction).length > 0;
  const where = (CORRECTION_COLUMNS.find((c) => c.key in correction) ?? CORRECTION_COLUMNS.find((c) => filled.includes(c.column)))?.column ?? 'decision';

  if (!rawDecision) {
    if (filled.length) problem('decision', 'corrections are filled in but the decision is empty: write "edit" (or clear the corrections)');
    return filled.length || edited ? null : 'pending';
  }
  if (!(DECISIONS as readonly string[]).includes(rawDecision)) {
    problem('decision', `decision "${cell('decision').trim()}" is not one of ${DECISIONS.join(', ')}`);
    return null;
  }
  const decision = rawDecision as Decision;
  if (decision !== 'edit' && (changed || invalid)) {
    problem(where, `the decision is "${decision}" but corrections are filled in: write "edit" to apply them, or clear them`);
    return null;
  }
  const columns = CORRECTION_COLUMNS.map((c) => c.column).join(' / ');
  if (decision === 'edit' && !invalid && !changed) {
    problem('decision', filled.length ? `the decision is "edit" but the corrections change nothing: edit ${columns}, or accept` : `the decision is "edit" but ${columns} are empty: fill one in`);
    return null;
  }
  if (edited || invalid) return null;

  let changedSample: Sample | undefined;
  if (decision === 'edit') {
    const result = editedSample(sample, correction, ctx.pipeline, ctx.library);
    for (const check of result.failed) problem(where, `the edited sample fails the recipe's check ${check.name}${check.reason ? `: ${check.reason}` : ''}`);
    if (result.failed.length) return null;
    changedSample = result.sample;
  }
  return { itemId, sampleId: sample.id, decision, correction, ...(changedSample ? { edited: changedSample } : {}) };
}

/** The editable correction columns and the part of a sample each replaces. */
const CORRECTION_COLUMNS = [
  { column: 'corrected_query', key: 'query' },
  { column: 'corrected_calls', key: 'calls' },
  { column: 'corrected_labels', key: 'labels' },
] as const;

/**
 * A row's corrections, keeping only what differs from the sample (a correction equal to the
 * original, e.g. calls_json pasted unchanged, is no correction). `filled` lists the non-empty
 * correction columns; `invalid` is set when one of them could not be read.
 */
function readCorrections(cell: (column: string) => string, sample: Sample, problem: (column: string, message: string) => void): { correction: Correction; filled: string[]; invalid: boolean } {
  const correction: Correction = {};
  const filled = CORRECTION_COLUMNS.map((c) => c.column).filter((column) => cell(column).trim() !== '');
  let invalid = false;

  const query = normalise(cell('corrected_query')).trim();
  const firstUser = sample.dialogue.find((t) => t.role === 'user')?.content ?? '';
  if (query && query !== firstUser.trim()) correction.query = query;

  const callsText = cell('corrected_calls').trim();
  if (callsText) {
    const parsed = parseCorrectedCalls(callsText, sample);
    if (!parsed.ok) {
      problem('corrected_calls', `corrected calls are ${parsed.message}`);
      invalid = true;
    } else if (formatCallsJson(parsed.value) !== formatCallsJson(goldCalls(sample))) {
      const issues = callProblems(parsed.value, sample.tools);
      for (const issue of issues) problem('corrected_calls', `corrected calls do not fit the tool schema: ${issue}`);
      if (issues.length) invalid = true;
      else correction.calls = parsed.value;
    }
  }

  const labelsText = cell('corrected_labels').trim();
  if (labelsText) {
    const labels = parseLabels(labelsText);
    const typed = labels.filter((l) => formulaLead(l) && !sampleHolds(sample, l));
    if (typed.length) {
      for (const l of typed) problem('corrected_labels', `the label ${JSON.stringify(l)} starts with ${formulaLead(l)}, ${RUNS_AS_FORMULA}; labels are tool names: remove that character`);
      invalid = true;
    } else if (!sample.expected.labels) {
      problem('corrected_labels', 'this sample has no labels to correct (its gold answer is its calls): clear corrected_labels');
      invalid = true;
    } else if (labels.join('\n') !== sample.expected.labels.join('\n')) correction.labels = labels;
  }
  return { correction, filled, invalid };
}
