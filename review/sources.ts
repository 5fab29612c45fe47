import { basename, extname } from 'node:path';
import { readCsv } from './csv.ts';
import { readLabelStudioExport } from './labelstudio.ts';
import type { SheetSource } from './rows.ts';
import { ANNOTATIONS_COLUMN } from './sheet.ts';

/** The problem type callers of readSheetFile report with. */
export type { ImportProblem } from './rows.ts';

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
    rows: parsed.records.map((r) => ({ file: shown, row: r.row, cells: r.cells, formulaColumns: r.formulaColumns, defaultAnnotator })),
    problems: parsed.problems.map((p) => ({ file: shown, row: p.row, column: null, message: p.message })),
  };
}
