import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Check, Sample } from '../core/records.ts';
import type { DatasetStore, VersionRef } from '../core/store.ts';
import { readCsv } from '../review/csv.ts';
import { exportReview } from '../review/export.ts';
import { importReview } from '../review/import.ts';
import type { ImportProblem } from '../review/rows.ts';
import { draft, publishReviewDataset, reviewSamples, tools } from './fixtures/review/dataset.ts';
import { fill, readRawSheet, writeSheet, type RawSheet } from './fixtures/review/sheets.ts';
import { versionSamples } from './helpers/version.ts';

let home: string;
let store: DatasetStore;
let v1: VersionRef;
let v2: VersionRef;
let exported: RawSheet;

beforeAll(() => {
  home = mkdtempSync(join(tmpdir(), 'tk-review-errors-'));
  ({ store, ref: v1 } = publishReviewDataset(home));
  // A second version with the same samples, to import a v1 sheet into by mistake.
  v2 = store.publish({ name: 'demo', manifest: { ...draft({ review: { randomRate: 0 } }), fingerprint: 'fp-2', parent: 'v1' }, samples: reviewSamples(), tools, rejects: [] }).ref;
  exported = readRawSheet(exportReview({ store, ref: v1, format: 'csv' }).files[0]);
  // rows: 2 rv-01, 3 rv-05, 4 rv-03, 5 rv-06
});

/** Imports one hand-made sheet and checks that nothing was applied. */
function importExpectingProblems(name: string, sheet: RawSheet | string, ref = v1, extra: { path: string; shown: string }[] = []): ImportProblem[] {
  const path = join(home, name);
  if (typeof sheet === 'string') writeFileSync(path, sheet);
  else writeSheet(path, sheet);
  const result = importReview({ store, ref, files: [{ path, shown: name }, ...extra] });
  expect(result.status).toBe('invalid');
  expect(result.newVersion).toBeNull();
  expect(store.versions('demo')).toEqual(['v1', 'v2']); // nothing applied
  expect(result.problems.length).toBeGreaterThan(0);
  // Every problem is in the report and in the problems sheet.
  expect(JSON.parse(readFileSync(result.report, 'utf8')).problems).toEqual(result.problems);
  expect(readCsv(result.problemsFile!).records).toHaveLength(result.problems.length);
  return result.problems;
}

const decided = (edits: Record<string, Record<string, string>> = {}) => fill(exported, { 'rv-01': { decision: 'accept' }, 'rv-05': { decision: 'accept' }, 'rv-03': { decision: 'accept' }, 'rv-06': { decision: 'accept' }, ...edits });

describe('review import refuses bad sheets, reporting file, row and column, and applies nothing', () => {
  it('unknown item id', () => {
    const sheet = decided();
    sheet.rows[1] = sheet.rows[1].slice();
    sheet.rows[1][0] = 'it-000000000000';
    expect(importExpectingProblems('unknown-item.csv', sheet)).toEqual([
      { file: 'unknown-item.csv', row: 3, column: 'item_id', message: 'unknown item id "it-000000000000": demo@v1 has no such item (was the cell edited?)' },
    ]);
  });

  it('sheet from another version', () => {
    const problems = importExpectingProblems('v1-sheet.csv', decided(), v2);
    expect(problems).toHaveLength(4);
    expect(problems[0]).toEqual({ file: 'v1-sheet.csv', row: 2, column: 'dataset', message: 'this sheet is from "demo@v1", not demo@v2: import it into the version it was exported from' });
    expect(problems.map((p) => p.row)).toEqual([2, 3, 4, 5]);
  });

  it('decision not one of accept / reject / edit', () => {
    expect(importExpectingProblems('bad-decision.csv', decided({ 'rv-05': { decision: 'maybe' } }))).toEqual([
      { file: 'bad-decision.csv', row: 3, column: 'decision', message: 'decision "maybe" is not one of accept, reject, edit' },
    ]);
  });

  it('corrected calls that are not valid JSON', () => {
    const problems = importExpectingProblems('bad-json.csv', decided({ 'rv-03': { decision: 'edit', corrected_calls: '[{"id": "call_0", "tool": "get_weather",' } }));
    expect(problems).toEqual([{ file: 'bad-json.csv', row: 4, column: 'corrected_calls', message: expect.stringMatching(/^corrected calls are not valid JSON \(.+\); copy calls_json and edit it$/) }]);
  });

  it('corrected calls that do not fit the tool schema', () => {
    const edit = (args: string, tool = 'get_weather') => ({ decision: 'edit', corrected_calls: `[{"id":"call_0","tool":"${tool}","arguments":${args}}]` });
    const problems = importExpectingProblems(
      'bad-schema.csv',
      decided({
        'rv-01': edit('{"city":"Oslo"}', 'get_forecast'),
        'rv-05': edit('{"city":"Rome","unit":"kelvin","wind":true}'),
        'rv-03': edit('{"unit":"celsius","days":"two"}'),
        'rv-06': edit('{"restaurant":"Noma","people":2.5}', 'book_table'),
      }),
    );
    expect(problems.map((p) => [p.row, p.column, p.message])).toEqual([
      [2, 'corrected_calls', 'corrected calls do not fit the tool schema: call_0: tool "get_forecast" is not offered by this sample (offered: get_weather, book_table)'],
      [3, 'corrected_calls', 'corrected calls do not fit the tool schema: call_0: get_weather.unit: "kelvin" is not one of "celsius", "fahrenheit"'],
      [3, 'corrected_calls', 'corrected calls do not fit the tool schema: call_0: get_weather has no parameter "wind" (parameters: city, unit, days)'],
      [4, 'corrected_calls', 'corrected calls do not fit the tool schema: call_0: get_weather.days: "two" is not of type integer'],
      [4, 'corrected_calls', 'corrected calls do not fit the tool schema: call_0: get_weather needs the required parameter "city"'],
      [5, 'corrected_calls', 'corrected calls do not fit the tool schema: call_0: book_table.people: 2.5 is not of type integer'],
    ]);
  });

  it('corrected calls of the wrong shape', () => {
    const problems = importExpectingProblems('bad-shape.csv', decided({ 'rv-01': { decision: 'edit', corrected_calls: '{"tool":"get_weather"}' } }));
    expect(problems).toEqual([{ file: 'bad-shape.csv', row: 2, column: 'corrected_calls', message: expect.stringMatching(/^corrected calls are expected a JSON array of calls/) }]);
  });

  it('duplicate rows, in one file and across files from the same annotator', () => {
    const sheet = decided();
    const withCopy = { header: sheet.header, rows: [...sheet.rows, sheet.rows[0]] };
    expect(importExpectingProblems('duplicate.csv', withCopy)).toEqual([
      { file: 'duplicate.csv', row: 6, column: 'item_id', message: `item ${sheet.rows[0][0]} appears twice in this file (first at row 2); keep one row per item` },
    ]);
    const byAnn = fill(decided(), { 'rv-01': { annotator: 'ann' } });
    const first = join(home, 'ann-1.csv');
    writeSheet(first, byAnn);
    const problems = importExpectingProblems('ann-2.csv', byAnn, v1, [{ path: first, shown: 'ann-1.csv' }]);
    expect(problems).toEqual([{ file: 'ann-1.csv', row: 2, column: 'item_id', message: `annotator "ann" already answered item ${sheet.rows[0][0]} in ann-2.csv row 2; import each answer once` }]);
  });

  it('missing columns', () => {
    const drop = new Set(['notes', 'calls_json']);
    const keep = exported.header.map((h, i) => [h, i] as const).filter(([h]) => !drop.has(h));
    const sheet = { header: keep.map(([h]) => h), rows: decided().rows.map((r) => keep.map(([, i]) => r[i])) };
    const problems = importExpectingProblems('missing-columns.csv', sheet);
    expect(problems.map((p) => [p.row, p.column])).toEqual([
      [1, 'calls_json'],
      [1, 'notes'],
    ]);
    expect(problems[0].message).toMatch(/^missing column "calls_json": a sheet needs the columns item_id, dataset, /);
  });

  it('edited read-only columns', () => {
    const problems = importExpectingProblems(
      'read-only.csv',
      decided({ 'rv-05': { calls: 'call_0: get_weather(city="Roma")', category: 'S-M' }, 'rv-06': { what_to_check: '' } }),
    );
    expect(problems.map((p) => [p.row, p.column])).toEqual([
      [3, 'category'],
      [3, 'calls'],
      [5, 'what_to_check'],
    ]);
    expect(problems[1].message).toBe('read-only column "calls" was edited at character 30: exported "…et_weather(city=\\"Rome\\", unit=\\"fahrenheit…", now "…et_weather(city=\\"Roma\\")"; undo it (corrections go in the corrected_… columns)');
  });

  it('decisions that contradict the corrections', () => {
    const problems = importExpectingProblems(
      'contradictions.csv',
      decided({
        'rv-01': { decision: 'edit' },
        'rv-05': { decision: 'accept', corrected_query: 'Weather in Rome, Italy' },
        'rv-03': { decision: '', corrected_query: 'Weather in Tokyo' },
        'rv-06': { decision: 'edit', corrected_calls: exported.rows[3][exported.header.indexOf('calls_json')] },
      }),
    );
    expect(problems.map((p) => [p.row, p.column, p.message])).toEqual([
      [2, 'decision', 'the decision is "edit" but corrected_query / corrected_calls / corrected_labels are empty: fill one in'],
      [3, 'corrected_query', 'the decision is "accept" but corrections are filled in: write "edit" to apply them, or clear them'],
      [4, 'decision', 'corrections are filled in but the decision is empty: write "edit" (or clear the corrections)'],
      [5, 'decision', 'the decision is "edit" but the corrections change nothing: edit corrected_query / corrected_calls / corrected_labels, or accept'],
    ]);
  });

  it('corrected labels on a sample without labels', () => {
    expect(importExpectingProblems('labels.csv', decided({ 'rv-01': { decision: 'edit', corrected_labels: 'get_weather' } }))).toEqual([
      { file: 'labels.csv', row: 2, column: 'corrected_labels', message: 'this sample has no labels to correct (its gold answer is its calls): clear corrected_labels' },
    ]);
  });

  it('files that are not sheets', () => {
    expect(importExpectingProblems('broken.csv', '\uFEFFitem_id,dataset\r\n"unclosed,demo@v1\r\n')).toEqual([
      { file: 'broken.csv', row: null, column: null, message: expect.stringMatching(/^not a readable CSV file/) },
    ]);
    expect(importExpectingProblems('notes.docx', 'x')).toEqual([{ file: 'notes.docx', row: null, column: null, message: 'not a review sheet: give a .csv sheet, a Label Studio .json export or Argilla records (.json)' }]);
  });

  it('reports every problem of every file at once', () => {
    const other = join(home, 'other.csv');
    writeSheet(other, decided({ 'rv-01': { decision: 'nope' } }));
    const problems = importExpectingProblems('many.csv', decided({ 'rv-05': { decision: '??' }, 'rv-06': { corrected_calls: 'x', decision: 'edit' } }), v1, [{ path: other, shown: 'other.csv' }]);
    expect(problems.map((p) => `${p.file}:${p.row}:${p.column}`)).toEqual(['many.csv:3:decision', 'many.csv:5:corrected_calls', 'other.csv:2:decision']);
  });
});

describe('--skip-invalid', () => {
  it('applies the valid rows and writes a report of the rest', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tk-review-skip-'));
    const { store: s, ref } = publishReviewDataset(dir);
    const raw = readRawSheet(exportReview({ store: s, ref, format: 'csv' }).files[0]);
    const path = writeSheet(join(dir, 'mixed.csv'), fill(raw, { 'rv-01': { decision: 'reject' }, 'rv-05': { decision: 'maybe' }, 'rv-03': { decision: 'accept', calls: 'edited' } }));
    const result = importReview({ store: s, ref, files: [{ path, shown: 'mixed.csv' }], skipInvalid: true });
    expect(result).toMatchObject({ status: 'published', newVersion: 'v2', counts: { rows: 4, decided: 1, pending: 1, invalid: 2, rejected: 1 } });
    expect(result.problems.map((p) => [p.row, p.column])).toEqual([
      [3, 'decision'],
      [4, 'calls'],
    ]);
    const report = readCsv(result.problemsFile!).records.map((r) => r.cells);
    expect(report.map((r) => [r.file, r.row, r.column])).toEqual([
      ['mixed.csv', '3', 'decision'],
      ['mixed.csv', '4', 'calls'],
    ]);
    expect(s.manifest(s.resolve('demo@v2')).stats.review).toMatchObject({ rows: { invalidSkipped: 2 }, items: { rejected: 1 } });
    expect(existsSync(join(s.resolve('demo@v2').dir, 'review', 'import-report-from-v1.json'))).toBe(true);
  });
});

describe("edited samples go back through the recipe's checks", () => {
  it('refuses an edit that fails a hard check and stores soft results', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tk-review-recheck-'));
    const { store: s, ref } = publishReviewDataset(dir);
    const raw = readRawSheet(exportReview({ store: s, ref, format: 'csv' }).files[0]);
    const recheck = (sample: Sample): Check[] => {
      const query = sample.dialogue[0].content;
      return [
        { name: 'query-not-empty', pass: query.trim().length > 3, reason: 'the query is too short', soft: false },
        { name: 'mentions-city', pass: JSON.stringify(sample.expected.calls).includes(query.split(' ').at(-1)!), soft: true },
      ];
    };
    const bad = writeSheet(join(dir, 'bad.csv'), fill(raw, { 'rv-01': { decision: 'edit', corrected_query: 'Hi' } }));
    const refused = importReview({ store: s, ref, files: [{ path: bad, shown: 'bad.csv' }], pipeline: { recheck } });
    expect(refused.status).toBe('invalid');
    expect(refused.problems).toEqual([{ file: 'bad.csv', row: 2, column: 'corrected_query', message: "the edited sample fails the recipe's check query-not-empty: the query is too short" }]);

    const good = writeSheet(join(dir, 'good.csv'), fill(raw, { 'rv-01': { decision: 'edit', corrected_query: 'Weather in Bergen' } }));
    expect(importReview({ store: s, ref, files: [{ path: good }], pipeline: { recheck } }).status).toBe('published');
    const edited = versionSamples(s, s.resolve('demo@v2')).find((x) => x.id === 'rv-01')!;
    expect(edited.meta.checks).toEqual([
      { name: 'arg-grounded', pass: false, reason: 'value "Oslo" ok but unit missing', soft: true },
      { name: 'query-not-empty', pass: true, reason: 'the query is too short', soft: false },
      { name: 'mentions-city', pass: false, soft: true },
    ]);
  });
});
