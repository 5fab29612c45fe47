/**
 * What reading a sheet file yields, whatever its format: the rows (one reviewer's answer each) and
 * the problems found on the way. CSV sheets (sources.ts), Label Studio exports (labelstudio.ts) and
 * Argilla records (argilla.ts) produce it; validation reads it.
 */

/** One problem found on import: which file, which row (and annotation or response), which column. */
export interface ImportProblem {
  file: string;
  /** Spreadsheet row (header = 1) for CSV; task (Label Studio) or record (Argilla) number, 1-based; null for the whole file. */
  row: number | null;
  /** The annotation's number within its Label Studio task, or the response's within its Argilla record (1-based). */
  annotation?: number;
  /** Argilla only: the record's id (`row` is its position in the file). */
  record?: string;
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
  format: 'csv' | 'labelstudio' | 'argilla';
  /** Columns the file has (CSV header; for Label Studio every column, data fields are checked per task). */
  columns: string[];
  /** The rows in file order: a list, or (a CSV sheet) read from the file again on each pass. */
  rows: readonly ReviewRow[] | SheetRows;
  problems: ImportProblem[];
}

/** A sheet's rows read from its file on each pass, never held together. */
export interface SheetRows extends Iterable<ReviewRow> {
  readonly count: number;
}

/** How many rows a sheet has. */
export function rowCount(source: Pick<SheetSource, 'rows'>): number {
  return 'count' in source.rows ? source.rows.count : source.rows.length;
}
