import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import { parse } from 'csv-parse/sync';
import { csvText, isNeutralised, restoreCell, writeCsvAtomic } from '../core/csv.ts';
import { messageOf } from '../core/errors.ts';

/**
 * What a reviewer may not type at the start of a cell: what spreadsheets run as a formula. `-` is
 * escaped on export but allowed back in: `-5 degrees` is ordinary text.
 */
export const TYPED_FORMULA = /^[=+@\t\r]/;

/**
 * A cell as read back: the escape undone (core/csv.ts), and `formula` set when it starts with a
 * formula character that no `'` neutralised (someone typed it into the sheet; toolkiln never writes that).
 */
export function readCell(raw: string): { text: string; formula: boolean } {
  return isNeutralised(raw) ? { text: restoreCell(raw), formula: false } : { text: raw, formula: TYPED_FORMULA.test(raw) };
}

/** How review sheets are written: UTF-8 with a BOM and CRLF between records, as Excel writes and reads it. */
const SHEET_LAYOUT = { bom: true, recordDelimiter: 'windows' } as const;

/** A sheet as text; every cell neutralised (core/csv.ts). */
export function toCsv(columns: readonly string[], rows: readonly Record<string, string>[]): string {
  return csvText([columns, ...rows.map((row) => columns.map((c) => row[c] ?? ''))], SHEET_LAYOUT);
}

/** A sheet's header record as `toCsv` begins it (the byte order mark first). */
export function sheetHeaderText(columns: readonly string[]): string {
  return csvText([columns], SHEET_LAYOUT);
}

/** One row of a sheet as `toCsv` writes it, its record delimiter included: a sheet is its header's text, then its rows'. */
export function sheetRecordText(columns: readonly string[], row: Readonly<Record<string, string>>): string {
  return csvText([columns.map((c) => row[c] ?? '')], { ...SHEET_LAYOUT, bom: false });
}

/** The cells of one record `sheetRecordText` wrote, escapes undone (`readCell`), in the order of `columns`. */
export function parseSheetRecord(text: string): string[] {
  const [cells = []] = parse(text, { bom: false, delimiter: ',', record_delimiter: '\r\n', relax_column_count: true }) as string[][];
  return cells.map((cell) => readCell(cell).text);
}

/** A sheet written row by row as the rows come (the bytes `toCsv` gives), whole or not at all. */
export function writeCsvSheet(path: string, columns: readonly string[], rows: Iterable<Record<string, string>>): void {
  function* records(): Generator<readonly string[]> {
    yield columns;
    for (const row of rows) yield columns.map((c) => row[c] ?? '');
  }
  writeCsvAtomic(path, records(), SHEET_LAYOUT);
}

export interface CsvRecord {
  /** The row number a spreadsheet shows (the header is row 1). */
  row: number;
  cells: Record<string, string>;
  /** Columns whose cell starts with a formula character no `'` neutralised (see `readCell`). */
  formulaColumns: string[];
}

export interface ParsedCsv {
  header: string[];
  records: CsvRecord[];
  /** Problems with the file itself (unreadable, not CSV, ragged rows), with a row when known. */
  problems: { row: number | null; message: string }[];
}

/**
 * Reads a sheet however a spreadsheet saved it: with or without BOM, CRLF or LF, comma, semicolon
 * or tab delimited (guessed from the header). Cells come back with the formula escape undone, and
 * cells that arrived as formulas are named; rows with every cell empty are skipped.
 */
export function readCsv(path: string): ParsedCsv {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    return { header: [], records: [], problems: [{ row: null, message: `cannot read the file (${(error as NodeJS.ErrnoException).code ?? messageOf(error)})` }] };
  }
  let table: string[][];
  try {
    table = parse(text, { bom: true, delimiter: guessDelimiter(text), relax_column_count: true, skip_empty_lines: false });
  } catch (error) {
    const line = (error as { lines?: number }).lines;
    return { header: [], records: [], problems: [{ row: null, message: `not a readable CSV file${line ? ` (near line ${line})` : ''}: ${messageOf(error)}` }] };
  }
  if (!table.length) return { header: [], records: [], problems: [{ row: null, message: 'the file is empty: expected a header row and one row per item' }] };
  const header = table[0].map((h) => h.trim());
  const problems: ParsedCsv['problems'] = [];
  const records: CsvRecord[] = [];
  table.slice(1).forEach((cells, i) => {
    const row = i + 2;
    if (cells.every((c) => c.trim() === '')) return;
    if (cells.length > header.length && cells.slice(header.length).some((c) => c.trim() !== '')) {
      problems.push({ row, message: `the row has ${cells.length} cells but the header only ${header.length}: a cell is outside the columns` });
    }
    const read = header.map((h, k) => [h, readCell(cells[k] ?? '')] as const);
    records.push({ row, cells: Object.fromEntries(read.map(([h, cell]) => [h, cell.text])), formulaColumns: read.filter(([, cell]) => cell.formula).map(([h]) => h) });
  });
  return { header, records, problems };
}

/** A sheet read a part at a time: its header and problems from a first pass, its records again on each pass. */
export interface CsvSheet {
  header: string[];
  /** As `readCsv` gives them: the file's own (no row), and rows with cells outside the columns. */
  problems: ParsedCsv['problems'];
  /** Records (rows not all empty). */
  count: number;
  records(): Generator<CsvRecord>;
}

/** Bytes read at a time. */
const CSV_CHUNK = 1 << 20;

/**
 * `readCsv` a record at a time: the file is cut after line ends that are outside quoted cells (a
 * quoted cell may hold line breaks), and each record is parsed as the whole file would parse it, so
 * a sheet of any size is never held whole. A file the parts cannot read (a quote left
 * open, an unreadable file) is read by `readCsv`, whose whole-file error it then reports.
 */
export function openCsv(path: string): CsvSheet {
  let header: string[] | undefined;
  let delimiter = ',';
  const problems: ParsedCsv['problems'] = [];
  let count = 0;
  // Parses record by record, numbering rows: every record after the header, with its row. One
  // record's text and cells at a time, so what a pass allocates dies young (a part of many parsed
  // records, or a part's text past V8's large-object size, would outlive collections of the young generation).
  const pass = function* (): Generator<{ cells: string[]; row: number }> {
    let row = 1;
    let first = true;
    // The record delimiter the whole file's parse detects from its first line end, given to each record's parse.
    let records: { record_delimiter: string } | object = {};
    for (const text of csvRecordTexts(path)) {
      if (first) {
        delimiter = guessDelimiter(text);
        records = text.endsWith('\r\n') ? { record_delimiter: '\r\n' } : text.endsWith('\n') ? { record_delimiter: '\n' } : {};
      }
      const table: string[][] = parse(text, { bom: first, delimiter, ...records, relax_column_count: true, skip_empty_lines: false });
      if (first && table.length) header ??= table[0].map((h) => h.trim());
      for (const cells of first ? table.slice(1) : table) yield { cells, row: ++row };
      first = false;
    }
  };
  try {
    for (const { cells, row } of pass()) {
      if (cells.every((c) => c.trim() === '')) continue;
      count++;
      if (cells.length > header!.length && cells.slice(header!.length).some((c) => c.trim() !== '')) {
        problems.push({ row, message: `the row has ${cells.length} cells but the header only ${header!.length}: a cell is outside the columns` });
      }
    }
  } catch {
    return whole(readCsv(path));
  }
  if (header === undefined) return whole(readCsv(path));
  const columns = header;
  return {
    header: columns,
    problems,
    count,
    *records() {
      for (const { cells, row } of pass()) {
        if (cells.every((c) => c.trim() === '')) continue;
        const read = columns.map((h, k) => [h, readCell(cells[k] ?? '')] as const);
        yield { row, cells: Object.fromEntries(read.map(([h, cell]) => [h, cell.text])), formulaColumns: read.filter(([, cell]) => cell.formula).map(([h]) => h) };
      }
    },
  };
}

/** A sheet read whole, as a `CsvSheet`. */
function whole(parsed: ParsedCsv): CsvSheet {
  return { header: parsed.header, problems: parsed.problems, count: parsed.records.length, records: function* () { yield* parsed.records; } };
}

/**
 * The file's records as texts, each with its line end: cut after line ends outside quotes (the last
 * where the file ends). The first line end says which ends records, as the parser detects it: after
 * a `\r\n` only `\r\n` does (a bare `\n` is then part of a cell, quoted or not), else `\n`.
 */
function* csvRecordTexts(path: string): Generator<string> {
  const fd = openSync(path, 'r');
  try {
    const chunk = Buffer.allocUnsafe(CSV_CHUNK);
    // A record that spans chunks: its bytes so far.
    let carry: Buffer[] = [];
    let quoted = false;
    let crlf: boolean | undefined;
    let previous = -1;
    for (;;) {
      const read = readSync(fd, chunk, 0, CSV_CHUNK, null);
      if (read === 0) break;
      let from = 0;
      // A doubled quote inside a quoted cell toggles twice: the state stays right.
      for (let i = 0; i < read; i++) {
        const byte = chunk[i];
        if (byte === 0x22) quoted = !quoted;
        else if (byte === 0x0a && !quoted) {
          crlf ??= previous === 0x0d;
          if (!crlf || previous === 0x0d) {
            yield carry.length ? Buffer.concat([...carry, chunk.subarray(from, i + 1)]).toString('utf8') : chunk.toString('utf8', from, i + 1);
            carry = [];
            from = i + 1;
          }
        }
        previous = byte;
      }
      if (from < read) carry.push(Buffer.from(chunk.subarray(from, read)));
    }
    if (carry.length) yield Buffer.concat(carry).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

function guessDelimiter(text: string): string {
  const firstLine = text.replace(/^\uFEFF/, '').split(/\r?\n/, 1)[0];
  const counts = [',', ';', '\t'].map((d) => [d, firstLine.split(d).length - 1] as const);
  return counts.reduce((best, next) => (next[1] > best[1] ? next : best))[0];
}
