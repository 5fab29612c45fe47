import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DecisionSheet, SAMPLE_SHEET_LAYOUT } from '../review/app/decision-sheet.ts';
import { readCsv, toCsv } from '../review/csv.ts';
import { SHEET_COLUMNS } from '../review/sheet.ts';
import { tempDirs } from './helpers/files.ts';

/** The app's decisions file (`DecisionSheet`) on its own: the bytes it writes, what it reads back, what it holds. */

const tmp = tempDirs('tk-decision-sheet-');

/** A text no row shares with another, long as a dialogue cell is. */
const DIALOGUE = (i: number) => `[0] user: book a table for ${i} — «quoted» "text", with, commas\n[1] assistant: → FindRestaurants(city="Paris") ${'ü'.repeat(300)} row-${i}-end`;

/** Rows of the sample sheet's layout, their read-only cells with what `toCsv` must escape (line breaks, quotes, formula starts). */
function rows(count: number, from = 0): Record<string, string>[] {
  return Array.from({ length: count }, (_, k) => {
    const i = from + k;
    const row = Object.fromEntries(SHEET_COLUMNS.map((c) => [c, ''])) as Record<string, string>;
    return { ...row, item_id: `it-${String(i).padStart(4, '0')}`, dataset: 'demo@v1', sample_id: `rv-${i}`, category: 'S-S', priority: '1', what_to_check: 'random sample (5% of its category)', dialogue: DIALOGUE(i), calls: `=SUM(${i})`, calls_json: `[{"id":"c1","tool":"t","arguments":{"n":${i}}}]`, annotator: 'alice' };
  });
}

/** Every string reachable from `root` through properties, array elements and Map entries. */
function reachableStrings(root: unknown): string[] {
  const seen = new Set<object>();
  const found: string[] = [];
  const visit = (value: unknown) => {
    if (typeof value === 'string') return void found.push(value);
    if (!value || typeof value !== 'object' || seen.has(value)) return;
    seen.add(value);
    if (ArrayBuffer.isView(value)) return;
    if (value instanceof Map) for (const [k, v] of value) visit(k), visit(v);
    else if (value instanceof Set) for (const v of value) visit(v);
    else for (const key of Reflect.ownKeys(value)) visit((value as Record<string | symbol, unknown>)[key]);
  };
  visit(root);
  return found;
}

describe('the review app decisions file', () => {
  it('is written as review export writes a sheet, its rows read back from the file and none of their text held', () => {
    const path = join(tmp(), 'demo-v1-app-alice.csv');
    const given = rows(200);
    const sheet = DecisionSheet.open(path, SAMPLE_SHEET_LAYOUT, given, []);
    try {
      expect(readFileSync(path, 'utf8')).toBe(toCsv(SHEET_COLUMNS, given));
      expect(sheet.itemIds()).toEqual(given.map((r) => r.item_id));
      expect(sheet.row('it-0007')).toEqual(given[7]);
      expect(sheet.rowNumber('it-0007')).toBe(9);

      // Each change is the whole sheet again, exactly: a row's record grows, shrinks, and the rows after it move.
      const expected = given.map((r) => ({ ...r }));
      const decide = (id: string, cells: Record<string, string>) => {
        const at = expected.findIndex((r) => r.item_id === id);
        expected[at] = { ...expected[at], ...cells };
        expect(sheet.update(id, cells)).toEqual(expected[at]);
        expect(readFileSync(path, 'utf8')).toBe(toCsv(SHEET_COLUMNS, expected));
      };
      decide('it-0007', { decision: 'edit', corrected_query: 'a table for two,\n"tonight"', notes: '=1+1 is typed text' });
      decide('it-0003', { decision: 'reject', notes: 'off topic' });
      decide('it-0007', { decision: 'accept', corrected_query: '', notes: '' });
      decide('it-0199', { decision: 'reject' });
      for (const id of ['it-0003', 'it-0007', 'it-0008', 'it-0199']) expect(sheet.row(id)).toEqual(expected.find((r) => r.item_id === id));
      expect(['it-0003', 'it-0007', 'it-0008'].map((id) => sheet.decision(id))).toEqual(['reject', 'accept', '']);

      // What the sheet keeps is the items' ids and decisions: no cell of a row (its dialogue, calls, the queue's reasons).
      const held = reachableStrings(sheet);
      expect(held.filter((s) => s.includes('row-7-end') || s.includes('FindRestaurants') || s.includes('random sample'))).toEqual([]);
      expect(held.reduce((sum, s) => sum + s.length, 0)).toBeLessThan(given.length * 40);
    } finally {
      sheet.close();
    }
    expect(readdirSync(join(path, '..')).sort()).toEqual(['demo-v1-app-alice.csv']);
  });

  it('reopened on a new queue: saved reviewer cells carried over, rows of items no longer queued kept after the others', () => {
    const path = join(tmp(), 'demo-v1-app-alice.csv');
    const first = DecisionSheet.open(path, SAMPLE_SHEET_LAYOUT, rows(6).values(), []);
    first.update('it-0001', { decision: 'reject', notes: 'wrong city' });
    first.update('it-0004', { decision: 'accept' });
    first.close();

    // The new queue drops items 0–2 and adds 6–7; the saved file is read as the session reads it.
    const saved = () => readCsv(path).records.map((r) => r.cells);
    const fresh = rows(5, 3).map((r): Record<string, string> => ({ ...r, priority: '2' }));
    const sheet = DecisionSheet.open(path, SAMPLE_SHEET_LAYOUT, fresh.values(), { [Symbol.iterator]: () => saved().values() });
    try {
      const before = rows(6);
      const expected = [
        ...fresh.map((r) => (r.item_id === 'it-0004' ? { ...r, decision: 'accept' } : r)),
        before[0],
        { ...before[1], decision: 'reject', notes: 'wrong city' },
        before[2],
      ];
      expect(readFileSync(path, 'utf8')).toBe(toCsv(SHEET_COLUMNS, expected));
      expect(sheet.itemIds()).toEqual(expected.map((r) => r.item_id));
      expect(sheet.decision('it-0001')).toBe('reject');
      expect(sheet.row('it-0001')).toEqual(expected[6]);
    } finally {
      sheet.close();
    }
  });

  it('a save that fails leaves the sheet on disk and in memory as it was, and the next one goes through', () => {
    const path = join(tmp(), 'demo-v1-app-alice.csv');
    const given = rows(20);
    const sheet = DecisionSheet.open(path, SAMPLE_SHEET_LAYOUT, given, []);
    try {
      sheet.update('it-0002', { decision: 'reject' });
      const saved = readFileSync(path, 'utf8');
      // The save's temporary file cannot be made (a folder is in its place).
      const temporary = `${path}.tmp-${process.pid}`;
      mkdirSync(temporary);
      expect(() => sheet.update('it-0005', { decision: 'accept', notes: 'fine' })).toThrow();
      expect(readFileSync(path, 'utf8')).toBe(saved);
      expect(sheet.decision('it-0005')).toBe('');
      expect(sheet.row('it-0005')).toEqual(given[5]);
      rmdirSync(temporary);
      sheet.update('it-0005', { decision: 'accept' });
      expect(readFileSync(path, 'utf8')).toBe(toCsv(SHEET_COLUMNS, given.map((r, i) => (i === 2 ? { ...r, decision: 'reject' } : i === 5 ? { ...r, decision: 'accept' } : r))));
    } finally {
      sheet.close();
    }
    expect(existsSync(`${path}.lock`)).toBe(false);
  });
});
