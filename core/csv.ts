import { parse } from 'csv-parse/sync';
import { stringify, type Options } from 'csv-stringify/sync';
import { withPath } from './errors.ts';
import { AtomicJsonlFile } from './jsonl.ts';

/**
 * Every CSV file toolkiln writes (review sheets, problem lists, native formats such as ToolE's
 * `all_clean_data.csv`) goes through this writer, whatever its cells hold: dataset text, a
 * reviewer's edit, a tool name.
 *
 * Spreadsheets run a cell as a formula when it starts with `=`, `+`, `-`, `@`, tab or CR, and some
 * do so after leading white space or quote characters too (OWASP, CSV Injection). Such a cell is
 * written with a `'` in front (a spreadsheet shows the rest as text and hides the `'`) and quoted.
 * So that the escape can always be undone exactly, a cell that already starts with `''` gets one
 * too; `restoreCell` undoes it, and every reader of toolkiln's own CSV files calls it.
 */
const NEEDS_ESCAPE = /^(?:[\s'"]*[=+\-@\t\r]|'')/;

/** A cell as written: `'` before one a spreadsheet could run as a formula (see above). */
export function neutraliseCell(cell: string): string {
  return NEEDS_ESCAPE.test(cell) ? `'${cell}` : cell;
}

/** A cell as it was before `neutraliseCell`: exact for every cell it wrote. */
export function restoreCell(raw: string): string {
  return isNeutralised(raw) ? raw.slice(1) : raw;
}

/** Whether `raw` carries the escape `neutraliseCell` adds (a cell no spreadsheet runs). */
export function isNeutralised(raw: string): boolean {
  return raw.startsWith("'") && NEEDS_ESCAPE.test(raw.slice(1));
}

export interface CsvLayout {
  /** A UTF-8 byte order mark first, so Excel reads the file as UTF-8. */
  bom?: boolean;
  /** `windows` (CRLF) as Excel writes; `unix` (LF) as most tools write. */
  recordDelimiter: 'unix' | 'windows';
}

function options(layout: CsvLayout): Options {
  // Neutralised cells are quoted as well (OWASP); so are cells holding line breaks, which
  // csv-stringify would otherwise quote only for its own record delimiter.
  return { bom: layout.bom ?? false, record_delimiter: layout.recordDelimiter, quoted_match: [/[\r\n]/, NEEDS_ESCAPE] };
}

/** A whole (small) CSV file: a header row, then the rows, every cell neutralised. */
export function csvText(rows: Iterable<readonly string[]>, layout: CsvLayout): string {
  return stringify([...rows].map((cells) => cells.map(neutraliseCell)), options(layout));
}

/**
 * Writes a CSV file whole or not at all, a row at a time (the rows are never built as one string):
 * the same bytes `csvText` gives for the same rows.
 */
export function writeCsvAtomic(path: string, rows: Iterable<readonly string[]>, layout: CsvLayout): void {
  const file = new AtomicJsonlFile(path);
  try {
    let first = true;
    for (const cells of rows) {
      const record = stringify([cells.map(neutraliseCell)], options({ ...layout, bom: first && layout.bom }));
      // The file ends each text it is given with a line feed: the record's own, taken off here.
      file.writeText(record.slice(0, -1));
      first = false;
    }
  } catch (error) {
    file.discard();
    throw withPath(error, path);
  }
  file.commit();
}

/**
 * One record of a CSV file, every cell neutralised, without its record delimiter: for files written
 * a row at a time (whose rows are written with `\n` between them: `recordDelimiter: 'unix'`).
 */
export function csvRecord(cells: readonly string[]): string {
  return stringify([cells.map(neutraliseCell)], options({ recordDelimiter: 'unix' })).slice(0, -1);
}

/**
 * The records of a CSV file with a header row (a BOM skipped), by column name, each cell's escape
 * undone: reads toolkiln's own CSV files exactly as they were before writing, and any other file as it is.
 */
export function parseCsvRecords(text: string | Buffer): Record<string, string>[] {
  const rows = parse(text, { columns: true, skip_empty_lines: true, bom: true }) as Record<string, string>[];
  return rows.map((row) => Object.fromEntries(Object.entries(row).map(([column, cell]) => [column, restoreCell(cell)])));
}
