import { readFileSync } from 'node:fs';
import { basename, extname } from 'node:path';
import { messageOf } from '../core/errors.ts';
import { isJsonObject } from '../core/records.ts';
import { looksLikeArgillaRecords, readArgillaRecords } from './argilla.ts';
import { openCsv } from './csv.ts';
import { readLabelStudioExport } from './labelstudio.ts';
import type { SheetSource } from './rows.ts';
import { ANNOTATIONS_COLUMN } from './sheet.ts';

/** The problem type callers of readSheetFile report with. */
export type { ImportProblem } from './rows.ts';

/** Reads a CSV sheet, a Label Studio JSON export or Argilla records; `shown` is the path as the user wrote it. */
export function readSheetFile(path: string, shown = path): SheetSource {
  const ext = extname(path).toLowerCase();
  if (ext === '.json') return readJsonExport(path, shown);
  if (ext !== '.csv' && ext !== '.tsv' && ext !== '.txt') return fileProblem(shown, 'not a review sheet: give a .csv sheet, a Label Studio .json export or Argilla records (.json)');
  // Read a part at a time: a sheet's rows are read again on each pass, not held.
  const sheet = openCsv(path);
  const defaultAnnotator = basename(path, extname(path));
  return {
    file: shown,
    kind: sheet.header.includes(ANNOTATIONS_COLUMN) ? 'adjudication' : 'annotator',
    format: 'csv',
    columns: sheet.header,
    rows: {
      count: sheet.count,
      *[Symbol.iterator]() {
        for (const r of sheet.records()) yield { file: shown, row: r.row, cells: r.cells, formulaColumns: r.formulaColumns, defaultAnnotator };
      },
    },
    problems: sheet.problems.map((p) => ({ file: shown, row: p.row, column: null, message: p.message })),
  };
}

function fileProblem(shown: string, message: string, format: SheetSource['format'] = 'csv'): SheetSource {
  return { file: shown, kind: 'annotator', format, columns: [], rows: [], problems: [{ file: shown, row: null, column: null, message }] };
}

/** Label Studio tasks have `data` / `annotations`, Argilla records `fields` / `responses`: the shape says which tool wrote the file. */
function readJsonExport(path: string, shown: string): SheetSource {
  const what = 'Label Studio JSON export or Argilla records file';
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, 'utf8').replace(/^\uFEFF/, ''));
  } catch (error) {
    return fileProblem(shown, `not a readable ${what}: ${messageOf(error)}`, 'labelstudio');
  }
  const list = Array.isArray(value) ? value : null;
  if (list?.some((entry) => isJsonObject(entry) && ('data' in entry || 'annotations' in entry)) || list?.length === 0) return readLabelStudioExport(path, shown);
  if (list && looksLikeArgillaRecords(list)) return readArgillaRecords(list, shown);
  return fileProblem(
    shown,
    `not a ${what}: expected a list of Label Studio tasks ({"data", "annotations"}; export the project as "JSON") or of Argilla records ({"id", "fields", "responses"}; dataset.records.to_list(...), see review/README.md)`,
    'labelstudio',
  );
}
