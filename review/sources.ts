import { basename, extname } from 'node:path';
import { readCsv } from './csv.ts';
import { readLabelStudioExport } from './labelstudio.ts';
import { ANNOTATIONS_COLUMN } from './sheet.ts';

/** One problem found on import: which file, which row (and Label Studio annotation), which column. */
export interface ImportProblem {
  file: string;
  /** Spreadsheet row (header = 1) for CSV; task number (1-based) for Label Studio; null for the whole file. */
  row: number | null;
  /** Label Studio only: the annotation's number within its task (1-based). */
  annotation?: number;
  column: string | null;
  message: string;
}

/** One reviewer's answer for one item, as read from a sheet or a Label Studio annotation. */
export interface ReviewRow {
  file: string;
  row: number | null;
  annotation?: number;
  cells: Record<string, string>;
  /** Who answered when the `annotator` cell is empty: the file's name, or Label Studio's user. */
  defaultAnnotator: string;
}

export type SheetKind = 'annotator' | 'adjudication';

export interface SheetSource {
  file: string;
  kind: SheetKind;
  format: 'csv' | 'labelstudio';
  /** Columns the file has (CSV header; for Label Studio every column, data fields are checked per task). */
  columns: string[];
  rows: ReviewRow[];
  problems: ImportProblem[];
}

/** Reads a CSV sheet or a Label Studio JSON export; `shown` is the path as the user wrote it. */
export function readSheetFile(path: string, shown = path): SheetSource {
  const ext = extname(path).toLowerCase();
  if (ext === '.json') return readLabelStudioExport(path, shown);
  if (ext !== '.csv' && ext !== '.tsv' && ext !== '.txt') {
    return { file: shown, kind: 'annotator', format: 'csv', columns: [], rows: [], problems: [{ file: shown, row: null, column: null, message: 'not a review sheet: give a .csv sheet or a Label Studio .json export' }] };
  }
  const parsed = readCsv(path);
  const defaultAnnotator = basename(path, extname(path));
  return {
    file: shown,
    kind: parsed.header.includes(ANNOTATIONS_COLUMN) ? 'adjudication' : 'annotator',
    format: 'csv',
    columns: parsed.header,
    rows: parsed.records.map((r) => ({ file: shown, row: r.row, cells: r.cells, defaultAnnotator })),
    problems: parsed.problems.map((p) => ({ file: shown, row: p.row, column: null, message: p.message })),
  };
}
