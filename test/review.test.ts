import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sha256 } from '../core/hash.ts';
import type { Call, Sample } from '../core/records.ts';
import type { VersionRef } from '../core/store.ts';
import { assignItems } from '../review/assign.ts';
import { applyCorrection, formatCallsJson, goldCalls, parseCorrectedCalls, renderGold } from '../review/calls.ts';
import { neutraliseCell, restoreCell } from '../core/csv.ts';
import { readCsv } from '../review/csv.ts';
import { exportReview } from '../review/export.ts';
import { importReview } from '../review/import.ts';
import { selectionFor } from '../review/options.ts';
import { callProblems } from '../review/schema-check.ts';
import { itemIdOf, selectQueue } from '../review/queue.ts';
import { SHEET_COLUMNS } from '../review/sheet.ts';
import { publishReviewDataset, reviewSamples } from './fixtures/review/dataset.ts';
import { fill, readRawSheet, writeSheet } from './fixtures/review/sheets.ts';
import { versionSamples, versionRejects } from './helpers/version.ts';

const tmp = () => mkdtempSync(join(tmpdir(), 'tk-review-'));

/** Every data file of a version with its hash: a reviewed version must keep exactly these. */
function snapshot(ref: VersionRef): Record<string, string> {
  const files: Record<string, string> = {};
  const walk = (dir: string, prefix: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === 'review') continue; // review/ is where sheets and reports go
      if (entry.isDirectory()) walk(join(dir, entry.name), `${prefix}${entry.name}/`);
      else files[`${prefix}${entry.name}`] = sha256(readFileSync(join(dir, entry.name)));
    }
  };
  walk(ref.dir, '');
  return files;
}

describe('review queue selection', () => {
  it('takes failed checks, then tagged samples, then a seeded random share per category, by priority', () => {
    const samples = reviewSamples();
    const ref = { name: 'demo', version: 'v1' };
    const queue = selectQueue(ref, samples, selectionFor({ review: { randomRate: 0.2 } }));
    const ids = queue.items.map((i) => i.sampleId);
    // rv-01 and rv-05 failed a soft check (priority 100), rv-03 and rv-06 carry review: tags (10)
    expect(ids.slice(0, 4)).toEqual(['rv-01', 'rv-05', 'rv-03', 'rv-06']);
    expect(queue.items.slice(0, 4).map((i) => i.priority)).toEqual([100, 100, 10, 10]);
    // random: ceil(0.2 × 6) = 2 per category (6 S-S, 6 S-M), drawn from the samples not flagged
    const random = queue.items.filter((i) => i.reasons.every((r) => r.kind === 'random'));
    expect(random.filter((i) => i.category === 'S-S')).toHaveLength(2);
    expect(random.filter((i) => i.category === 'S-M')).toHaveLength(2);
    expect(random.every((i) => i.priority === 1)).toBe(true);
    expect(queue.items[0].itemId).toBe(itemIdOf(ref, 'rv-01'));
    // seeded: same selection every time, another seed another draw
    expect(selectQueue(ref, samples, selectionFor({ review: { randomRate: 0.2 } }))).toEqual(queue);
    const other = selectQueue(ref, samples, selectionFor({ review: { randomRate: 0.2, seed: 7 } }));
    expect(other.items.map((i) => i.sampleId)).not.toEqual(ids);
  });

  it('honours the options: tags, per-category rates, reviewed samples, a cap, and flags over config', () => {
    const samples = reviewSamples();
    const ref = { name: 'demo', version: 'v1' };
    const ids = (config: unknown, overrides = {}) => selectQueue(ref, samples, selectionFor(config, overrides)).items.map((i) => i.sampleId);
    expect(ids({ review: { randomRate: 0, failedChecks: false, tags: ['review:arithmetic'] } })).toEqual(['rv-06']);
    expect(ids({ review: { randomRate: 0, failedChecks: false, tags: ['other'] } })).toEqual(['rv-06']);
    expect(ids({ review: { randomRate: 0, failedChecks: false, tags: [], perCategory: { 'S-M': 1 } } })).toEqual(['rv-00', 'rv-02', 'rv-04', 'rv-06', 'rv-08', 'rv-10']);
    expect(ids({ review: { randomRate: 0, maxItems: 1 } })).toEqual(['rv-01']);
    expect(ids({ review: { randomRate: 0 } }, { randomRate: 1 })).toHaveLength(12);
    const reviewed = samples.map((s): Sample => (s.id === 'rv-01' ? { ...s, meta: { ...s.meta, review: [{ decision: 'accept' }] } } : s));
    expect(selectQueue(ref, reviewed, selectionFor({ review: { randomRate: 0 } })).items.map((i) => i.sampleId)).not.toContain('rv-01');
    expect(() => selectionFor({ review: { randomRate: 2 } })).toThrow(/invalid review selection.*randomRate/);
    expect(() => selectionFor({ review: { bogus: true } })).toThrow(/invalid review selection/);
  });

  it("is written under the version's review/ folder, and the version's data stays untouched", () => {
    const { store, ref } = publishReviewDataset(tmp());
    const before = snapshot(ref);
    const result = exportReview({ store, ref, format: 'csv' });
    expect(result.queueFile).toBe(join(`${ref.dir}.derived`, 'review', 'queue.json'));
    const queue = JSON.parse(readFileSync(result.queueFile, 'utf8'));
    expect(queue).toMatchObject({ dataset: 'demo', version: 'v1', selection: { randomRate: 0 } });
    expect(queue.items.map((i: { sampleId: string }) => i.sampleId)).toEqual(['rv-01', 'rv-05', 'rv-03', 'rv-06']);
    expect(result.files).toEqual([join(`${ref.dir}.derived`, 'review', 'demo-v1-review.csv')]);
    expect(snapshot(ref)).toEqual(before);
  });

  it('keeps every queue it wrote, so a sheet from an earlier selection still imports', () => {
    const home = tmp();
    const { store, ref } = publishReviewDataset(home);
    const first = exportReview({ store, ref, format: 'csv', selection: { randomRate: 1 }, outDir: join(home, 'round-1') });
    exportReview({ store, ref, format: 'csv', selection: { randomRate: 0.5, seed: 3 } });
    expect(readdirSync(join(`${ref.dir}.derived`, 'review', 'queues'))).toHaveLength(2);
    const sheet = readRawSheet(first.files[0]);
    const decided = fill(sheet, Object.fromEntries(sheet.rows.map((r) => [r[sheet.header.indexOf('sample_id')], { decision: 'accept' }])));
    const result = importReview({ store, ref, files: [{ path: writeSheet(join(home, 'round-1.csv'), decided) }] });
    expect(result.problems).toEqual([]);
    expect(result.counts.accepted).toBe(12);
    // what_to_check must still match one of the queues
    const tampered = fill(decided, { 'rv-00': { what_to_check: 'random sample (7% of its category)' } });
    const refused = importReview({ store, ref, files: [{ path: writeSheet(join(home, 'tampered.csv'), tampered) }] });
    expect(refused.problems.map((p) => [p.column, p.message])).toEqual([['what_to_check', expect.stringMatching(/^read-only column "what_to_check" was edited at character 16: exported "random sample \(100% of/)]]);
  });
});

describe('CSV sheets', () => {
  it('neutralises formula cells and restores them exactly', () => {
    for (const cell of ['=1+1', '+1', '-5', '@cmd', '\tx', '\rx', "'=x", "''", "'plain", 'plain', '', "'", '=', 'a=b', "''=x"]) {
      const escaped = neutraliseCell(cell);
      expect(/^[=+\-@\t\r]/.test(escaped)).toBe(false);
      expect(restoreCell(escaped)).toBe(cell);
    }
    expect(neutraliseCell('=1+1')).toBe("'=1+1");
    expect(neutraliseCell("'plain")).toBe("'plain"); // a quote before harmless text is left alone
  });

  it('is UTF-8 with BOM and CRLF, with the documented columns, one row per item', () => {
    const { store, ref } = publishReviewDataset(tmp());
    const [file] = exportReview({ store, ref, format: 'csv' }).files;
    const bytes = readFileSync(file);
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const text = bytes.toString('utf8');
    expect(text.split('\r\n')[0]).toBe('\uFEFF' + SHEET_COLUMNS.join(','));
    expect(text.endsWith('\r\n')).toBe(true);
    const sheet = readRawSheet(file);
    expect(sheet.rows).toHaveLength(4);
    const row = Object.fromEntries(sheet.header.map((h, i) => [h, sheet.rows[0][i]]));
    expect(row).toMatchObject({ dataset: 'demo@v1', sample_id: 'rv-01', category: 'S-S', priority: '100', what_to_check: 'failed check arg-grounded: value "Oslo" ok but unit missing' });
    expect(row.dialogue).toBe('[0] user: =HYPERLINK("http://evil.example","click") weather in Oslo\n[1] assistant: → call_0: get_weather(city="Oslo")');
    expect(row.calls).toBe('call_0: get_weather(city="Oslo")');
    expect(JSON.parse(row.calls_json)).toEqual([{ id: 'call_0', tool: 'get_weather', arguments: { city: 'Oslo' } }]);
    expect(readCsv(file).records[0].cells.dialogue).toBe(row.dialogue);
  });

  it('round-trips through an Excel-style sheet: BOM, CRLF, quoted newlines and commas, leading = and -, non-ASCII', () => {
    const home = tmp();
    // Any cell may start with a formula character: here two read-only category cells do.
    const samples = reviewSamples().map((s) => (s.id === 'rv-02' ? { ...s, category: '-minus' } : s.id === 'rv-04' ? { ...s, category: '=SUM(1,2)' } : s));
    const { store, ref } = publishReviewDataset(home, { review: { randomRate: 0, tags: ['review:*'], perCategory: { '-minus': 1, '=SUM(1,2)': 1 } } }, samples);
    const before = snapshot(ref);
    const [file] = exportReview({ store, ref, format: 'csv' }).files;
    const raw = readRawSheet(file);
    const categoryCells = raw.rows.map((r) => r[raw.header.indexOf('category')]);
    expect(categoryCells).toContain("'-minus");
    expect(categoryCells).toContain("'=SUM(1,2)");

    const query = '-10 degrees in Montréal, "really"\nsecond line ✓';
    const filled = fill(raw, {
      // A note that must start with "=" carries the export's escape; "-" needs none.
      'rv-01': { decision: 'accept', notes: "'=SUM(A1:A3) looks fine, ok" },
      'rv-05': { decision: 'Reject', notes: '-unit is invented' },
      'rv-02': { decision: 'edit', corrected_query: query, notes: 'ça va, "quoted"' },
      'rv-04': { decision: 'edit', corrected_calls: '[{"id":"call_0","tool":"book_table","arguments":{"restaurant":"Chez Ïlse","people":5}}]' },
      'rv-03': { decision: 'accept', annotator: 'Zoë' },
    });
    // Excel saves line breaks inside cells as it pleases: CRLF here; they count as LF.
    const sheetPath = writeSheet(join(home, 'filled.csv'), filled, '\r\n');
    expect(readFileSync(sheetPath, 'utf8')).toContain('\r\n');

    const result = importReview({ store, ref, files: [{ path: sheetPath, shown: 'filled.csv' }] });
    expect(result.problems).toEqual([]);
    expect(result).toMatchObject({ status: 'published', newVersion: 'v2', counts: { rows: 6, decided: 5, pending: 1, invalid: 0, items: 5, accepted: 2, rejected: 1, edited: 2 } });
    expect(snapshot(ref)).toEqual(before); // the reviewed version is untouched

    const next = store.resolve('demo@v2');
    const manifest = store.manifest(next);
    expect(manifest.parent).toBe('v1');
    expect(manifest.stats.review).toMatchObject({ reviewed: 'v1', items: { accepted: 2, rejected: 1, edited: 2 }, rows: { total: 6, pending: 1 }, annotators: { filled: 4, Zoë: 1 } });
    expect(manifest.stages.at(-1)).toMatchObject({ stage: 'review', in: 12, out: 11, rejected: 1 });
    const byId = new Map(versionSamples(store, next).map((s) => [s.id, s]));
    expect(byId.has('rv-05')).toBe(false);
    expect(versionRejects(store, next)).toEqual([expect.objectContaining({ stage: 'review', reason: 'review_rejected', recordId: 'rv-05', detail: '-unit is invented' })]);
    expect(byId.get('rv-02')!.dialogue[0].content).toBe(query);
    expect(byId.get('rv-02')!.category).toBe('-minus');
    expect(byId.get('rv-04')!.expected.calls).toEqual([{ id: 'call_0', tool: 'book_table', arguments: { restaurant: 'Chez Ïlse', people: 5 } }]);
    expect(byId.get('rv-04')!.dialogue[1].calls).toEqual(byId.get('rv-04')!.expected.calls);
    expect(byId.get('rv-04')!.meta.checks).toEqual([{ name: 'review:calls-valid', pass: true, soft: false }]);
    expect(byId.get('rv-01')!.meta.review).toEqual([
      { version: 'v1', item: itemIdOf(ref, 'rv-01'), decision: 'accept', adjudicated: false, answers: [{ annotator: 'filled', kind: 'annotator', decision: 'accept', notes: '=SUM(A1:A3) looks fine, ok' }] },
    ]);
    expect(byId.get('rv-00')).toEqual(samples[0]); // not reviewed: unchanged
    expect(byId.get('rv-02')!.meta.lineage.at(-1)).toEqual({ stage: 'review', version: 1 });

    // The same decisions again: the version that holds them already exists.
    const again = importReview({ store, ref, files: [{ path: sheetPath }] });
    expect(again).toMatchObject({ status: 'existing', newVersion: 'v2' });
    expect(store.versions('demo')).toEqual(['v1', 'v2']);
  });

  it('reads semicolon-separated sheets (Excel in locales with a decimal comma)', () => {
    const home = tmp();
    const { store, ref } = publishReviewDataset(home);
    const [file] = exportReview({ store, ref, format: 'csv' }).files;
    const raw = fill(readRawSheet(file), { 'rv-01': { decision: 'accept', notes: 'a, b; c' } });
    const cell = (c: string) => (/[";\r\n]/.test(c) ? `"${c.replace(/"/g, '""')}"` : c);
    const path = join(home, 'semicolon.csv');
    writeFileSync(path, '\uFEFF' + [raw.header, ...raw.rows].map((r) => r.map(cell).join(';')).join('\r\n'));
    const result = importReview({ store, ref, files: [{ path }] });
    expect(result.problems).toEqual([]);
    expect(result).toMatchObject({ status: 'published', counts: { accepted: 1 } });
  });
});

describe('sheets for several annotators', () => {
  it('splits the items evenly and gives the overlap share to two or more annotators', () => {
    const assigned = assignItems(20, { annotators: 3, overlap: 0.5, raters: 2, seed: 42 });
    expect(assigned.filter((a) => a.length === 2)).toHaveLength(10);
    expect(assigned.filter((a) => a.length === 1)).toHaveLength(10);
    const loads = [0, 1, 2].map((a) => assigned.filter((list) => list.includes(a)).length);
    expect(loads.reduce((x, y) => x + y)).toBe(30);
    expect(Math.max(...loads) - Math.min(...loads)).toBeLessThanOrEqual(1);
    expect(assignItems(20, { annotators: 3, overlap: 0.5, raters: 2, seed: 42 })).toEqual(assigned);
    expect(assignItems(6, { annotators: 3, overlap: 1, raters: 3, seed: 1 }).every((a) => a.length === 3)).toBe(true);
    expect(() => assignItems(6, { annotators: 1, overlap: 0.5, raters: 2, seed: 1 })).toThrow(/--overlap needs --annotators 2 or more/);
    expect(() => assignItems(6, { annotators: 2, overlap: 0.5, raters: 3, seed: 1 })).toThrow(/--raters must be between 2 and --annotators/);
  });

  it('writes one sheet per annotator with the annotator pre-filled', () => {
    const { store, ref } = publishReviewDataset(tmp(), { review: { randomRate: 1 } });
    const result = exportReview({ store, ref, format: 'csv', annotators: 3, overlap: 0.5 });
    expect(result.items).toBe(12);
    expect(result.overlapItems).toBe(6);
    expect(result.sheets.map((s) => [s.annotator, s.items])).toEqual([
      ['annotator-1', 6],
      ['annotator-2', 6],
      ['annotator-3', 6],
    ]);
    const seen = new Map<string, number>();
    for (const sheet of result.sheets) {
      const rows = readCsv(sheet.file).records;
      expect(rows.every((r) => r.cells.annotator === sheet.annotator)).toBe(true);
      for (const r of rows) seen.set(r.cells.item_id, (seen.get(r.cells.item_id) ?? 0) + 1);
    }
    expect(seen.size).toBe(12);
    expect([...seen.values()].filter((n) => n >= 2)).toHaveLength(6);
    const queue = JSON.parse(readFileSync(result.queueFile, 'utf8'));
    expect(queue.items.filter((i: { annotators: string[] }) => i.annotators.length === 2)).toHaveLength(6);
    expect(statSync(result.sheets[0].file).size).toBeGreaterThan(0);
  });
});

describe('corrected calls', () => {
  const multiTurn: Sample = {
    ...reviewSamples()[0],
    id: 'mt-1',
    dialogue: [
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: '', calls: [{ id: 'call_0', tool: 'get_weather', arguments: { city: 'Paris' } }] },
      { role: 'user', content: 'Then book a table for 2 at Noma' },
      { role: 'assistant', content: '', calls: [{ id: 'call_1', tool: 'book_table', arguments: { restaurant: 'Noma', people: 2 } }] },
    ],
    expected: {
      turns: {
        '1': [{ id: 'call_0', tool: 'get_weather', arguments: { city: 'Paris' } }],
        '3': [{ id: 'call_1', tool: 'book_table', arguments: { restaurant: 'Noma', people: 2 } }],
      },
    },
  };

  it('shows and takes per-turn calls for multi-turn samples', () => {
    expect(renderGold(multiTurn)).toBe('turn 1:\n  call_0: get_weather(city="Paris")\nturn 3:\n  call_1: book_table(restaurant="Noma", people=2)');
    expect(JSON.parse(formatCallsJson(goldCalls(multiTurn)))).toEqual(multiTurn.expected.turns);
    const fixed = { '1': multiTurn.expected.turns!['1'], '3': [{ id: 'call_1', tool: 'book_table', arguments: { restaurant: 'Noma', people: 3 } }] };
    const parsed = parseCorrectedCalls(JSON.stringify(fixed), multiTurn);
    expect(parsed).toEqual({ ok: true, value: fixed });
    const edited = applyCorrection(multiTurn, { calls: fixed });
    expect(edited.dialogue[3].calls).toEqual(fixed['3']);
    expect(edited.expected.turns).toEqual(fixed);
    expect(multiTurn.dialogue[3].calls![0].arguments.people).toBe(2); // the original is not touched
    expect(parseCorrectedCalls('[]', multiTurn)).toMatchObject({ ok: false, message: expect.stringMatching(/^expected an object \{"<turn index>": \[calls\]\}/) });
    expect(parseCorrectedCalls('{"2": []}', multiTurn)).toEqual({ ok: false, message: 'turn 2: dialogue turn 2 is not an assistant turn' });
  });

  it('checks references to earlier calls and repeated call ids', () => {
    const sample = reviewSamples()[0];
    const ref = (target: string): Call[] => [
      { id: 'call_0', tool: 'get_weather', arguments: { city: 'Paris' } },
      { id: 'call_1', tool: 'book_table', arguments: { restaurant: { $ref: `${target}.temperature` }, people: 2 } },
    ];
    expect(callProblems(ref('call_0'), sample.tools)).toEqual([]);
    expect(callProblems(ref('call_7'), sample.tools)).toEqual(['call_1: book_table.restaurant: call_7.temperature refers to no earlier call "call_7"']);
    expect(parseCorrectedCalls(JSON.stringify([ref('call_0')[0], ref('call_0')[0]]), sample)).toEqual({ ok: false, message: 'call id "call_0" is used twice' });
    expect(renderGold({ ...sample, expected: { calls: ref('call_0') } })).toBe('call_0: get_weather(city="Paris")\ncall_1: book_table(restaurant=$call_0.temperature, people=2)');
  });
});

describe('corrected labels', () => {
  it('replace the gold labels of a classification sample', () => {
    const home = tmp();
    const samples = reviewSamples().map((s) => (s.id === 'rv-01' ? { ...s, category: 'toole/single', expected: { ...s.expected, labels: ['get_weather'] } } : s));
    const { store, ref } = publishReviewDataset(home, { review: { randomRate: 0 } }, samples);
    const raw = readRawSheet(exportReview({ store, ref, format: 'csv' }).files[0]);
    expect(raw.rows[0][raw.header.indexOf('calls')]).toBe('call_0: get_weather(city="Oslo")\nlabels: get_weather');
    const path = writeSheet(join(home, 'labels.csv'), fill(raw, { 'rv-01': { decision: 'edit', corrected_labels: 'book_table,\nget_weather' } }));
    const result = importReview({ store, ref, files: [{ path }] });
    expect(result.problems).toEqual([]);
    expect(versionSamples(store, store.resolve('demo@v2')).find((s) => s.id === 'rv-01')!.expected.labels).toEqual(['book_table', 'get_weather']);
  });
});
