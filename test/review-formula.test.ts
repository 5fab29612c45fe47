import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseCsvRecords } from '../core/csv.ts';
import type { Sample } from '../core/records.ts';
import type { DatasetStore, VersionRef } from '../core/store.ts';
import { readCsv, toCsv } from '../review/csv.ts';
import { exportReview } from '../review/export.ts';
import { importReview } from '../review/import.ts';
import type { ImportProblem } from '../review/rows.ts';
import { SHEET_COLUMNS } from '../review/sheet.ts';
import { exportToolE } from '../stages/toole/export.ts';
import { SINGLE_TOOL_SPLIT } from '../stages/toole/records.ts';
import { publishReviewDataset, reviewSamples } from './fixtures/review/dataset.ts';
import { fill, readRawSheet, writeSheet, type RawSheet } from './fixtures/review/sheets.ts';
import { samplesInMemory } from '../core/sample-source.ts';
import { versionSamples } from './helpers/version.ts';

const PAYLOAD = "=cmd|' /C calc'!A0";
const tmp = () => mkdtempSync(join(tmpdir(), 'tk-review-formula-'));

/** Every sample queued, so any of them can be answered; a labelled one (ToolE-like) as rv-12. */
function setUp(): { home: string; store: DatasetStore; ref: VersionRef; sheet: RawSheet; rowOf: (id: string) => number } {
  const home = tmp();
  const labelled: Sample = { ...reviewSamples()[0], id: 'rv-12', dialogue: [{ role: 'user', content: 'Weather in Paris' }], expected: { labels: ['get_weather'] } };
  const { store, ref } = publishReviewDataset(home, { review: { randomRate: 1 } }, [...reviewSamples(), labelled]);
  const sheet = readRawSheet(exportReview({ store, ref, format: 'csv' }).files[0]);
  const rowOf = (id: string) => sheet.rows.findIndex((r) => r[sheet.header.indexOf('sample_id')] === id) + 2;
  return { home, store, ref, sheet, rowOf };
}

/** Imports one file and checks that nothing was applied. */
function refused(setup: ReturnType<typeof setUp>, name: string, text: string): ImportProblem[] {
  const path = join(setup.home, name);
  writeFileSync(path, text);
  const result = importReview({ store: setup.store, ref: setup.ref, files: [{ path, shown: name }] });
  expect(result.status).toBe('invalid');
  expect(setup.store.versions('demo')).toEqual(['v1']);
  return result.problems;
}

function sheetText(setup: ReturnType<typeof setUp>, name: string, edits: Record<string, Record<string, string>>): string {
  return readFileSync(writeSheet(join(setup.home, name), fill(setup.sheet, edits)), 'utf8');
}

const calls = (args: Record<string, unknown>) => JSON.stringify([{ id: 'call_0', tool: 'get_weather', arguments: args }]);

describe('review text cannot carry a formula into data', () => {
  it('refuses cells typed with a leading =, +, @, tab or CR, naming file, row and column, and applies nothing', () => {
    const setup = setUp();
    const text = sheetText(setup, 'typed.csv', {
      'rv-01': { decision: 'edit', corrected_query: PAYLOAD },
      'rv-05': { decision: 'reject', notes: '@SUM(1,2)' },
      'rv-06': { decision: 'accept', annotator: '+me' },
      'rv-07': { decision: 'accept', notes: '\tHYPERLINK' },
      'rv-08': { decision: 'edit', corrected_query: '  =1+1 in Kyiv' }, // the spaces are trimmed away on import
      'rv-09': { decision: 'accept', notes: '-3 is fine' }, // "-" is ordinary text
      'rv-12': { decision: 'edit', corrected_labels: 'get_weather, =cmd' },
    });
    const problems = refused(setup, 'typed.csv', text);
    const at = (id: string, column: string) => ({ file: 'typed.csv', row: setup.rowOf(id), column });
    expect(problems).toEqual([
      { ...at('rv-01', 'corrected_query'), message: `corrected_query starts with "=", which a spreadsheet runs as a formula: remove it, or write ' before it to keep it as text` },
      { ...at('rv-05', 'notes'), message: expect.stringMatching(/^notes starts with "@", which a spreadsheet runs as a formula/) },
      { ...at('rv-06', 'annotator'), message: expect.stringMatching(/^annotator starts with "\+"/) },
      { ...at('rv-07', 'notes'), message: expect.stringMatching(/^notes starts with a tab/) },
      { ...at('rv-08', 'corrected_query'), message: expect.stringMatching(/^corrected_query starts with "=" after the white space import removes/) },
      { ...at('rv-12', 'corrected_labels'), message: 'the label "=cmd" starts with "=", which a spreadsheet runs as a formula; labels are tool names: remove that character' },
    ].sort((a, b) => a.row - b.row));
    // An empty annotator cell means the file's name: that name may not start with one either.
    const named = refused(setup, '+me.csv', sheetText(setup, 'plus.csv', { 'rv-01': { decision: 'accept' } }));
    expect(named).toEqual([{ file: '+me.csv', row: setup.rowOf('rv-01'), column: 'annotator', message: 'the annotator would be the file name "+me", which starts with "+", which a spreadsheet runs as a formula: rename the file or fill in the annotator column' }]);
    // A carriage return at the start of a cell is refused the same way.
    const cr = refused(setup, 'cr.csv', sheetText(setup, 'cr.csv', { 'rv-01': { decision: 'accept', notes: '\r=x' } }));
    expect(cr).toEqual([{ file: 'cr.csv', row: setup.rowOf('rv-01'), column: 'notes', message: expect.stringMatching(/^notes starts with a carriage return/) }]);
  });

  it("refuses typed formula values and names in corrected calls, but not text the sample already holds", () => {
    const setup = setUp();
    const text = sheetText(setup, 'calls.csv', {
      'rv-01': { decision: 'edit', corrected_calls: calls({ city: PAYLOAD }) },
      'rv-05': { decision: 'edit', corrected_calls: calls({ city: 'Rome', '+unit': 'celsius' }) },
    });
    const problems = refused(setup, 'calls.csv', text);
    expect(problems).toEqual([
      { file: 'calls.csv', row: setup.rowOf('rv-01'), column: 'corrected_calls', message: `corrected calls are not accepted: at $[0].arguments.city: the value ${JSON.stringify(PAYLOAD)} starts with "=", which a spreadsheet runs as a formula; remove that character (text the sample already holds is fine)` },
      { file: 'calls.csv', row: setup.rowOf('rv-05'), column: 'corrected_calls', message: expect.stringMatching(/^corrected calls are not accepted: at \$\[0\]\.arguments\["\+unit"\]: the name "\+unit" starts with "\+"/) },
    ].sort((a, b) => a.row - b.row));

    // "@admin" is in rv-03's query: copied from the version, not typed.
    const held = join(setup.home, 'held.csv');
    writeSheet(held, fill(setup.sheet, { 'rv-03': { decision: 'edit', corrected_calls: calls({ city: '@admin' }) } }));
    const result = importReview({ store: setup.store, ref: setup.ref, files: [{ path: held }] });
    expect(result.problems).toEqual([]);
    expect(versionSamples(setup.store, setup.store.resolve('demo@v2')).find((s) => s.id === 'rv-03')!.expected.calls![0].arguments).toEqual({ city: '@admin' });
  });

  it('refuses __proto__, constructor and prototype as names anywhere in corrected calls', () => {
    const setup = setUp();
    const protoArgs = `[{"id":"call_0","tool":"get_weather","arguments":{"city":"Rome","__proto__":{"unit":"celsius"}}}]`;
    const text = sheetText(setup, 'proto.csv', {
      'rv-01': { decision: 'edit', corrected_calls: protoArgs },
      'rv-05': { decision: 'edit', corrected_calls: calls({ city: 'Rome', constructor: 'x' }) },
      'rv-06': { decision: 'edit', corrected_calls: JSON.stringify([{ id: 'call_0', tool: 'book_table', arguments: { restaurant: 'Noma', people: [{ deep: { prototype: 1 } }] } }]) },
    });
    const problems = refused(setup, 'proto.csv', text);
    const byRow = new Map(problems.map((p) => [p.row, p]));
    expect(problems).toHaveLength(3);
    expect(byRow.get(setup.rowOf('rv-01'))).toEqual({ file: 'proto.csv', row: setup.rowOf('rv-01'), column: 'corrected_calls', message: 'corrected calls are not accepted: at $[0].arguments.__proto__: the name "__proto__" is not allowed (it names a part of every JavaScript object, not a value); rename it' });
    expect(byRow.get(setup.rowOf('rv-05'))!.message).toMatch(/at \$\[0\]\.arguments\.constructor: the name "constructor" is not allowed/);
    expect(byRow.get(setup.rowOf('rv-06'))!.message).toMatch(/at \$\[0\]\.arguments\.people\[0\]\.deep\.prototype: the name "prototype" is not allowed/);
  });

  it("round-trips toolkiln's own export: text written through its CSV writer may start with = or +", () => {
    const setup = setUp();
    const sheetFile = exportReview({ store: setup.store, ref: setup.ref, format: 'csv' }).files[0];
    // Filled in and saved by toolkiln's CSV writer, which neutralises such cells (as its export does).
    const edits: Record<string, Record<string, string>> = {
      'rv-01': { decision: 'accept', notes: '=HYPERLINK is in the query, fine' },
      'rv-04': { decision: 'edit', corrected_query: '+2 tables for 4 at Chez Ïlse' },
      'rv-03': { decision: 'accept', annotator: '@reviewer' },
    };
    const rows = readCsv(sheetFile).records.map((r) => ({ ...r.cells, ...edits[r.cells.sample_id] }));
    const filled = join(setup.home, 'own-writer.csv');
    writeFileSync(filled, toCsv(SHEET_COLUMNS, rows));
    expect(readFileSync(filled, 'utf8')).toContain("'+2 tables for 4");

    const result = importReview({ store: setup.store, ref: setup.ref, files: [{ path: filled }] });
    expect(result.problems).toEqual([]);
    expect(result).toMatchObject({ status: 'published', counts: { accepted: 2, edited: 1 } });
    const next = new Map(versionSamples(setup.store, setup.store.resolve('demo@v2')).map((s) => [s.id, s]));
    expect(next.get('rv-04')!.dialogue[0].content).toBe('+2 tables for 4 at Chez Ïlse');
    expect(next.get('rv-01')!.dialogue[0].content).toMatch(/^=HYPERLINK/); // the version's own text is kept as is
    expect(next.get('rv-01')!.meta.review![0]).toMatchObject({ answers: [{ notes: '=HYPERLINK is in the query, fine' }] });
    expect(next.get('rv-03')!.meta.review![0]).toMatchObject({ answers: [{ annotator: '@reviewer' }] });
  });

  it('applies the same rule to Label Studio text fields and corrected calls', () => {
    const setup = setUp();
    const tasks = JSON.parse(readFileSync(exportReview({ store: setup.store, ref: setup.ref, format: 'labelstudio' }).files.find((f) => f.endsWith('-tasks.json'))!, 'utf8'));
    const text = (from_name: string, value: string) => ({ from_name, to_name: 'dialogue', type: 'textarea', value: { text: [value] } });
    const choice = { from_name: 'decision', to_name: 'dialogue', type: 'choices', value: { choices: ['edit'] } };
    const task = (id: string) => tasks.find((t: { data: { sample_id: string } }) => t.data.sample_id === id);
    task('rv-01').annotations = [{ completed_by: 1, result: [choice, text('corrected_query', PAYLOAD)] }];
    task('rv-05').annotations = [{ completed_by: 1, result: [choice, text('corrected_calls', calls({ city: 'Rome', constructor: 'x' }))] }];
    task('rv-06').annotations = [{ completed_by: 1, result: [choice, text('corrected_query', "'=2 at Noma")] }]; // escaped: fine
    const problems = refused(setup, 'ls.json', JSON.stringify(tasks));
    const number = (id: string) => tasks.indexOf(task(id)) + 1;
    expect(problems).toEqual([
      { file: 'ls.json', row: number('rv-01'), annotation: 1, column: 'corrected_query', message: expect.stringMatching(/^corrected_query starts with "=", which a spreadsheet runs as a formula/) },
      { file: 'ls.json', row: number('rv-05'), annotation: 1, column: 'corrected_calls', message: expect.stringMatching(/the name "constructor" is not allowed/) },
    ].sort((a, b) => a.row - b.row));
  });
});

describe("ToolE's native CSV", () => {
  it("neutralises a cell that starts with a formula character (a leading ', quoted), and toolkiln's reader gets the same text back", async () => {
    const out = tmp();
    const sample: Sample = { ...reviewSamples()[0], split: SINGLE_TOOL_SPLIT, dialogue: [{ role: 'user', content: PAYLOAD }], expected: { labels: ['+tool'] } };
    await exportToolE(samplesInMemory([sample]), [], out);
    const text = readFileSync(join(out, 'dataset', 'data', 'all_clean_data.csv'), 'utf8');
    expect(text).toBe(`Query,Tool\n"'${PAYLOAD}","'+tool"\n`);
    expect(parseCsvRecords(text)).toEqual([{ Query: PAYLOAD, Tool: '+tool' }]);
  });
});
