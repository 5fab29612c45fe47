/**
 * What reading a sheet file yields, whatever its format: the rows (one reviewer's answer each) and
 * the problems found on the way. CSV sheets (sources.ts) and Label Studio exports (labelstudio.ts)
 * both produce it; validation reads it.
 */

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
  /** Columns whose text arrived starting with a formula character that no `'` neutralised. */
  formulaColumns: string[];
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
