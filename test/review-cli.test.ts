import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { OfflineGateway } from '../core/llm/offline.ts';
import type { Call } from '../core/records.ts';
import { runPipeline } from '../core/run.ts';
import { DatasetStore } from '../core/store.ts';
import { getPipeline } from '../pipelines/index.ts';
import { publishReviewDataset } from './fixtures/review/dataset.ts';
import { fill, readRawSheet, writeSheet } from './fixtures/review/sheets.ts';
import { samplesInMemory } from '../core/sample-source.ts';
import { review } from './helpers/review-cli.ts';
import { versionSamples } from './helpers/version.ts';

const tmp = () => mkdtempSync(join(tmpdir(), 'tk-review-cli-'));

describe('toolkiln review export / import / agreement', () => {
  it('exports with --json: counts, sheets and files', async () => {
    const home = tmp();
    publishReviewDataset(home);
    const res = await review(home, 'export', 'demo@v1', '--format', 'csv', '--annotators', '3', '--overlap', '0.5', '--rate', '0.5', '--json');
    expect(res.code).toBe(0);
    const doc = JSON.parse(res.out);
    expect(doc).toMatchObject({ dataset: 'demo@v1', format: 'csv', items: 10, counts: { failedChecks: 2, tagged: 2, random: 6 }, overlapItems: 5 });
    expect(doc.sheets.map((s: { annotator: string }) => s.annotator)).toEqual(['annotator-1', 'annotator-2', 'annotator-3']);
    expect(doc.files).toHaveLength(3);

    const human = await review(home, 'export', 'demo@v1', '--format', 'labelstudio', '--out', 'ls');
    expect(human.out).toContain('demo@v1: 4 item(s) to review (2 failed checks, 2 tagged, 0 random');
    expect(human.out).toContain(join(home, 'ls', 'demo-v1-tasks.json'));
  });

  it('refuses bad flags with one clear line', async () => {
    const home = tmp();
    publishReviewDataset(home);
    await expect(review(home, 'export', 'demo@v1')).rejects.toThrow('--format is required: one of csv, labelstudio, argilla');
    await expect(review(home, 'export', 'demo@v1', '--format', 'xlsx')).rejects.toThrow('--format must be one of csv, labelstudio, argilla (got "xlsx")');
    await expect(review(home, 'export', 'demo@v1', '--format', 'csv', '--overlap', '1.5', '--annotators', '2')).rejects.toThrow('--overlap must be at most 1 (got 1.5)');
    await expect(review(home, 'export', 'demo@v1', '--format', 'csv', '--overlap', '0.5')).rejects.toThrow('--overlap needs --annotators 2 or more');
    await expect(review(home, 'export', 'demo@v9', '--format', 'csv')).rejects.toThrow('demo@v9 not found: demo has v1');
    await expect(review(home, 'import', 'demo@v1')).rejects.toThrow('give at least one sheet');
  });

  it('imports with --json: the new version, counts and every error', async () => {
    const home = tmp();
    publishReviewDataset(home);
    const exported = JSON.parse((await review(home, 'export', 'demo@v1', '--format', 'csv', '--json')).out);
    const raw = readRawSheet(exported.files[0]);
    writeSheet(join(home, 'bad.csv'), fill(raw, { 'rv-01': { decision: 'yes' }, 'rv-05': { decision: 'accept', sample_id: 'rv-99' } }));
    const bad = await review(home, 'import', 'demo@v1', 'bad.csv', '--json');
    expect(bad.code).toBe(2);
    const badDoc = JSON.parse(bad.out);
    expect(badDoc).toMatchObject({ dataset: 'demo@v1', status: 'invalid', newVersion: null, counts: { rows: 4, invalid: 2 } });
    expect(badDoc.problems.map((p: { file: string; row: number; column: string }) => [p.file, p.row, p.column])).toEqual([
      ['bad.csv', 2, 'decision'],
      ['bad.csv', 3, 'sample_id'],
    ]);
    expect(bad.err).toBe('toolkiln: nothing applied to demo@v1: 2 problem(s) found; fix them, or re-run with --skip-invalid to apply the valid rows');

    const human = await review(home, 'import', 'demo@v1', 'bad.csv');
    expect(human.code).toBe(2);
    expect(human.err).toContain('bad.csv (row 2, column decision): decision "yes" is not one of accept, reject, edit');

    const skipped = JSON.parse((await review(home, 'import', 'demo@v1', 'bad.csv', '--skip-invalid', '--json')).out);
    expect(skipped).toMatchObject({ status: 'nothing-to-apply', newVersion: null });

    writeSheet(join(home, 'good.csv'), fill(raw, { 'rv-01': { decision: 'accept' }, 'rv-05': { decision: 'reject' } }));
    const good = await review(home, 'import', 'demo@v1', 'good.csv', '--json');
    expect(good.code).toBe(0);
    expect(JSON.parse(good.out)).toMatchObject({ status: 'published', newVersion: 'v2', counts: { decided: 2, pending: 2, accepted: 1, rejected: 1 }, problems: [] });
    const text = await review(home, 'import', 'demo@v1', 'good.csv');
    expect(text.out).toContain('demo@v2 already holds exactly these decisions');
  });

  it('exports Argilla settings and records, and prints import problems by record, response and question', async () => {
    const home = tmp();
    publishReviewDataset(home);
    const exported = JSON.parse((await review(home, 'export', 'demo@v1', '--format', 'argilla', '--out', 'argilla', '--json')).out);
    expect(exported).toMatchObject({ format: 'argilla', items: 4 });
    expect(exported.files).toEqual([join(home, 'argilla', 'demo-v1-argilla-settings.json'), join(home, 'argilla', 'demo-v1-records.json')]);
    const records = JSON.parse(readFileSync(exported.files[1], 'utf8'));
    records[0].responses = { decision: [{ value: 'maybe', user_id: 'u-1', status: 'submitted' }] };
    records[1].responses = { decision: [{ value: 'accept', user_id: 'u-1', status: 'submitted' }] };
    writeFileSync(join(home, 'responses.json'), JSON.stringify(records));
    const bad = await review(home, 'import', 'demo@v1', 'responses.json');
    expect(bad.code).toBe(2);
    expect(bad.err).toContain(`responses.json (record 1 ${records[0].id} response 1, column decision): decision "maybe" is not one of accept, reject, edit`);
    expect(bad.out).toContain('2 row(s) read from 1 file(s): 1 decided, 0 left blank, 1 invalid');
  });

  it('exits 3 when annotators disagree, and prints agreement', async () => {
    const home = tmp();
    publishReviewDataset(home);
    const exported = JSON.parse((await review(home, 'export', 'demo@v1', '--format', 'csv', '--annotators', '2', '--overlap', '1', '--json')).out);
    const [a, b] = exported.files.map((f: string) => readRawSheet(f));
    writeSheet(join(home, 'a.csv'), fill(a, { 'rv-01': { decision: 'accept' }, 'rv-05': { decision: 'accept' } }));
    writeSheet(join(home, 'b.csv'), fill(b, { 'rv-01': { decision: 'accept' }, 'rv-05': { decision: 'reject' } }));
    const res = await review(home, 'import', 'demo@v1', 'a.csv', 'b.csv');
    expect(res.code).toBe(3);
    expect(res.err).toMatch(/1 item\(s\) where annotators disagree: fill the adjudication sheet .*adjudication-\w+\.csv/);
    expect(res.out).toContain("agreement over 2 item(s) with 2+ annotators: all agree 0.500, NesTools p 0.500, Fleiss' κ");
    const agreement = JSON.parse((await review(home, 'agreement', 'demo@v1', 'a.csv', 'b.csv', '--json')).out);
    expect(agreement).toMatchObject({ dataset: 'demo@v1', disagreements: 1, agreement: { items: 2, observed: 0.5 } });
  });
});

describe('review of a SNIPS pipeline version', () => {
  it('exports, imports an edit and publishes the next version; the generic check guards edits', async () => {
    const home = tmp();
    const run = await runPipeline({ pipeline: getPipeline('mtu'), limit: 12, llm: new OfflineGateway(42), home, projectDir: process.cwd(), progress: { quiet: true } });
    expect(run.status).toBe('published');
    const exported = JSON.parse((await review(home, 'export', 'mtu@v1', '--format', 'csv', '--rate', '1', '--json')).out);
    expect(exported.items).toBe(12);
    const raw = readRawSheet(exported.files[0]);
    const col = (name: string) => raw.header.indexOf(name);
    const first = raw.rows[0];
    // MTU samples hold their gold calls per assistant turn: {"1": [calls]}.
    const turns: Record<string, Call[]> = JSON.parse(first[col('calls_json')]);
    const [turn, calls] = Object.entries(turns).find(([, list]) => list.length)!;
    const call = calls[0];
    const corrected = (args: Record<string, string>) => JSON.stringify({ ...turns, [turn]: [{ ...call, arguments: { ...call.arguments, ...args } }, ...calls.slice(1)] });
    const edits: Record<string, Record<string, string>> = {};
    for (const row of raw.rows) edits[row[col('sample_id')]] = { decision: 'accept' };
    const editedId = first[col('sample_id')];
    edits[editedId] = { decision: 'edit', corrected_calls: corrected({ not_a_slot: 'x' }) };
    writeSheet(join(home, 'mtu-bad.csv'), fill(raw, edits));
    const refused = JSON.parse((await review(home, 'import', 'mtu@v1', 'mtu-bad.csv', '--json')).out);
    expect(refused.problems).toEqual([expect.objectContaining({ row: 2, column: 'corrected_calls', message: expect.stringContaining(`${call.tool} has no parameter "not_a_slot"`) })]);

    const firstArg = Object.keys(call.arguments)[0];
    edits[editedId] = { decision: 'edit', corrected_calls: corrected({ [firstArg]: 'corrected value' }) };
    writeSheet(join(home, 'mtu-good.csv'), fill(raw, edits));
    const done = JSON.parse((await review(home, 'import', 'mtu@v1', 'mtu-good.csv', '--json')).out);
    expect(done).toMatchObject({ status: 'published', newVersion: 'v2', counts: { accepted: 11, edited: 1 } });
    const manifest = JSON.parse(readFileSync(join(home, 'datasets', 'mtu', 'v2', 'manifest.json'), 'utf8'));
    const store = new DatasetStore(home);
    const edited = versionSamples(store, store.resolve('mtu@v2')).find((s) => s.id === editedId)!;
    expect(edited.expected.turns![turn][0].arguments[firstArg]).toBe('corrected value');
    expect(edited.dialogue[Number(turn)].calls![0].arguments[firstArg]).toBe('corrected value');
    expect(edited.expected.calls).toEqual(Object.values(edited.expected.turns!).flat()); // the flat list follows
    expect(manifest).toMatchObject({ parent: 'v1', pipeline: 'mtu', counts: { samples: 12 }, stats: { review: { items: { accepted: 11, edited: 1 } } } });
  });

  it('round-trips a ToolTalk version: drafted conversations are queued with what to check, an edit exports as ToolTalk', async () => {
    const home = tmp();
    const run = await runPipeline({ pipeline: getPipeline('tooltalk'), configOverrides: { conversations: 3, easy: false, referenceDir: '' }, llm: new OfflineGateway(42), home, projectDir: process.cwd(), progress: { quiet: true } });
    expect(run.status).toBe('published');
    const exported = JSON.parse((await review(home, 'export', 'tooltalk@v1', '--format', 'csv', '--json')).out);
    expect(exported.counts.tagged).toBe(3);
    const raw = readRawSheet(exported.files[0]);
    const col = (name: string) => raw.header.indexOf(name);
    expect(raw.rows.every((row) => row[col('what_to_check')].includes('review:check-grounding') && row[col('what_to_check')].includes('review:check-plausibility'))).toBe(true);
    const edits: Record<string, Record<string, string>> = {};
    for (const row of raw.rows) edits[row[col('sample_id')]] = { decision: 'accept' };
    const first = raw.rows[0];
    const turns: Record<string, Call[]> = JSON.parse(first[col('calls_json')]);
    const [turn, calls] = Object.entries(turns).find(([, list]) => list.some((c) => Object.keys(c.arguments).length))!;
    const at = calls.findIndex((c) => Object.keys(c.arguments).length);
    const arg = Object.keys(calls[at].arguments)[0];
    const fixed = calls.map((c, i) => (i === at ? { ...c, arguments: { ...c.arguments, [arg]: 'corrected value' } } : c));
    edits[first[col('sample_id')]] = { decision: 'edit', corrected_calls: JSON.stringify({ ...turns, [turn]: fixed }) };
    writeSheet(join(home, 'tt.csv'), fill(raw, edits));
    const done = JSON.parse((await review(home, 'import', 'tooltalk@v1', 'tt.csv', '--json')).out);
    expect(done).toMatchObject({ status: 'published', newVersion: 'v2', counts: { accepted: 2, edited: 1 } });
    const store = new DatasetStore(home);
    const ref = store.resolve('tooltalk@v2');
    const samples = versionSamples(store, ref);
    const files = await getPipeline('tooltalk').exports.tooltalk(samplesInMemory(samples), store.tools(ref), join(home, 'out'), ref);
    const edited = samples.find((s) => s.id === first[col('sample_id')])!;
    const file = files.find((f) => f.endsWith(`${(edited.meta.tooltalk as { file: string }).file}`))!;
    const written = JSON.parse(readFileSync(file, 'utf8'));
    expect(written.conversation[Number(turn)].apis[at].request.parameters[arg]).toBe('corrected value');
  });
});
