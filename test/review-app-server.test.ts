import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { reviewServeCommand } from '../bin/commands/review.ts';
import type { DatasetStore, VersionRef } from '../core/store.ts';
import { startReviewServer, type ReviewServer } from '../review/app/server.ts';
import { appSheetName, appToolSheetName, openReviewSession, type ReviewSession } from '../review/app/session.ts';
import type { PipelineDefinition } from '../core/pipeline.ts';
import { OfflineGateway } from '../core/llm/offline.ts';
import { UserError } from '../core/errors.ts';
import { toolePipeline } from '../pipelines/toole.ts';
import { importToolReview } from '../review/tool-import.ts';
import { publishToolQuestions } from './fixtures/review/tool-questions.ts';
import { exportReview } from '../review/export.ts';
import { importReview } from '../review/import.ts';
import { itemIdOf } from '../review/queue.ts';
import { publishReviewDataset } from './fixtures/review/dataset.ts';
import { fill, readRawSheet, writeSheet } from './fixtures/review/sheets.ts';
import { versionSamples } from './helpers/version.ts';

const tmp = () => mkdtempSync(join(tmpdir(), 'tk-review-app-'));

/** Sessions and servers a test opened, closed after it (also when it fails). */
const open: { session: ReviewSession; server: ReviewServer }[] = [];
afterEach(async () => {
  for (const { session, server } of open.splice(0)) {
    await server.close();
    session.close();
  }
});

async function serve(store: DatasetStore, ref: VersionRef, annotator = 'alice', pipeline?: PipelineDefinition) {
  const session = openReviewSession({ store, ref, annotator, pipeline });
  const server = await startReviewServer({ session });
  open.push({ session, server });
  return { session, server, url: server.url };
}

async function stop(entry: { session: ReviewSession; server: ReviewServer }) {
  open.splice(open.indexOf(open.find((o) => o.server === entry.server)!), 1);
  await entry.server.close();
  entry.session.close();
}

const post = (url: string, answer: unknown) => fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(answer) });
const item = (ref: VersionRef, sampleId: string) => itemIdOf(ref, sampleId);

describe('review app server', () => {
  it('refuses every request without the access token, and serves the page and the API with it', async () => {
    const { store, ref } = publishReviewDataset(tmp());
    const { url } = await serve(store, ref);
    const { origin, pathname } = new URL(url);
    const token = pathname.split('/')[1];
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/[0-9a-f]{48}\/$/);
    const wrongToken = token.replace(/^./, (c) => (c === 'a' ? 'b' : 'a'));
    for (const path of ['/', '/index.html', '/api/state', `/${wrongToken}/api/state`, `/${wrongToken}/`, `/${token.slice(0, -1)}/api/state`, `/x${token}/app.js`]) {
      const res = await fetch(origin + path);
      expect(res.status, path).toBe(403);
      expect(await res.text()).not.toContain('rv-01');
    }
    const refusedPost = await post(`${origin}/${wrongToken}/api/items/${item(ref, 'rv-01')}`, { decision: 'accept' });
    expect(refusedPost.status).toBe(403);

    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(await page.text()).toContain('<script type="module" src="app.js">');
    expect((await fetch(`${url}app.js`)).headers.get('content-type')).toMatch(/^text\/javascript/);
    expect((await fetch(`${origin}/${token}`, { redirect: 'manual' })).status).toBe(308);
    const state = await (await fetch(`${url}api/state`)).json();
    expect(state).toMatchObject({ dataset: 'demo@v1', annotator: 'alice' });
    expect(state.items.map((i: { id: string }) => i.id)).toEqual(['rv-01', 'rv-05', 'rv-03', 'rv-06'].map((s) => item(ref, s)));
    expect(state.items[0]).toMatchObject({ kind: 'sample', reasons: ['failed check arg-grounded'], decision: null });
    const view = await (await fetch(`${url}api/items/${item(ref, 'rv-01')}`)).json();
    expect(view.view).toMatchObject({ kind: 'sample', sampleId: 'rv-01', whatToCheck: ['failed check arg-grounded: value "Oslo" ok but unit missing'], failedChecks: [{ name: 'arg-grounded' }] });
    expect((await fetch(`${url}api/items/it-000000000000`)).status).toBe(404);
    expect((await fetch(`${url}../../etc/passwd`)).status).toBe(403);
    expect((await fetch(`${url}nope.js`)).status).toBe(404);
    // A broken escape in an item id is the request's fault; pages are read, not posted to.
    const broken = await fetch(`${url}api/items/%E0%A4%A`);
    expect(broken.status).toBe(400);
    expect(await broken.text()).toContain('not a valid URL escape');
    expect((await fetch(`${url}app.js`, { method: 'POST', body: '{}' })).status).toBe(405);
  });

  it("refuses a bad decision with the import's own error, at the field it concerns, and writes nothing", async () => {
    const home = tmp();
    const { store, ref } = publishReviewDataset(home);
    const { session, url } = await serve(store, ref);
    const file = session.kinds[0].file;
    const before = readFileSync(file, 'utf8');
    const at = (sampleId: string) => `${url}api/items/${item(ref, sampleId)}`;

    const bad = await post(at('rv-01'), { decision: 'yes' });
    expect(bad.status).toBe(422);
    const badBody = await bad.json();
    // The same row typed into an exported sheet gets the same message from review import.
    const sheet = exportReview({ store, ref, format: 'csv', outDir: home }).files[0];
    writeSheet(join(home, 'typed.csv'), fill(readRawSheet(sheet), { 'rv-01': { decision: 'yes' } }));
    const imported = importReview({ store, ref, files: [{ path: join(home, 'typed.csv') }] });
    expect(badBody).toEqual({ ok: false, problems: [{ column: 'decision', message: imported.problems[0].message }] });
    expect(imported.problems[0].message).toBe('decision "yes" is not one of accept, reject, edit');

    const calls = (args: Record<string, unknown>) => JSON.stringify([{ id: 'call_0', tool: 'get_weather', arguments: args }]);
    const wrongType = await (await post(at('rv-01'), { decision: 'edit', corrected_calls: calls({ city: 'Oslo', days: 'two' }) })).json();
    expect(wrongType.problems).toEqual([{ column: 'corrected_calls', field: 'calls::0:days', message: 'corrected calls do not fit the tool schema: call_0: get_weather.days: "two" is not of type integer' }]);
    const missing = await (await post(at('rv-01'), { decision: 'edit', corrected_calls: calls({ unit: 'celsius' }) })).json();
    expect(missing.problems).toEqual([expect.objectContaining({ field: 'calls::0:city', message: expect.stringContaining('needs the required parameter "city"') })]);
    const notInEnum = await (await post(at('rv-01'), { decision: 'edit', corrected_calls: calls({ city: 'Oslo', unit: 'kelvin' }) })).json();
    expect(notInEnum.problems[0]).toMatchObject({ field: 'calls::0:unit', message: expect.stringContaining('"kelvin" is not one of "celsius", "fahrenheit"') });
    const formula = await (await post(at('rv-01'), { decision: 'edit', corrected_calls: calls({ city: '=HYPERLINK("x")' }) })).json();
    expect(formula.problems[0]).toMatchObject({ field: 'calls::0:city', message: expect.stringContaining('starts with "="') });
    const typedNote = await (await post(at('rv-01'), { decision: 'accept', notes: '=SUM(A1)' })).json();
    expect(typedNote.problems).toEqual([expect.objectContaining({ column: 'notes', field: 'notes', message: expect.stringContaining('notes starts with "="') })]);
    const nothingEdited = await (await post(at('rv-01'), { decision: 'edit', corrected_query: '' })).json();
    expect(nothingEdited.problems).toEqual([expect.objectContaining({ column: 'decision', message: expect.stringContaining('the decision is "edit" but') })]);
    const acceptWithEdit = await (await post(at('rv-01'), { decision: 'accept', corrected_query: 'Weather in Bergen' })).json();
    expect(acceptWithEdit.problems).toEqual([expect.objectContaining({ column: 'corrected_query', field: 'query', message: expect.stringContaining('the decision is "accept" but corrections are filled in') })]);

    expect((await post(at('rv-01'), { decision: 'accept', annotator: 'mallory' })).status).toBe(422);
    expect((await post(at('rv-01'), { decision: 1 })).status).toBe(400);
    expect((await fetch(at('rv-01'), { method: 'POST', body: '{"decision":"accept"}' })).status).toBe(415);
    expect((await fetch(at('rv-01'), { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"decision":' })).status).toBe(400);
    expect(readFileSync(file, 'utf8')).toBe(before);

    // Escaped as a sheet escapes it, the same text is kept (and import reads it back as typed).
    const escaped = await post(at('rv-01'), { decision: 'accept', notes: "'=SUM(A1)" });
    expect(escaped.status).toBe(200);
    expect((await escaped.json()).summary).toMatchObject({ id: item(ref, 'rv-01'), decision: 'accept' });
    const result = importReview({ store, ref, files: [{ path: file }] });
    expect(result).toMatchObject({ status: 'published', counts: { decided: 1, pending: 3, accepted: 1 } });
    const reviewed = versionSamples(store, store.resolve('demo@v2')).find((s) => s.id === 'rv-01')!;
    expect(reviewed.meta.review).toEqual([expect.objectContaining({ decision: 'accept', answers: [{ annotator: 'alice', kind: 'annotator', decision: 'accept', notes: '=SUM(A1)' }] })]);
  });

  it('keeps every decision across a server restart, and review import publishes them', async () => {
    const home = tmp();
    const { store, ref } = publishReviewDataset(home);
    const first = await serve(store, ref);
    const at = (url: string, sampleId: string) => `${url}api/items/${item(ref, sampleId)}`;
    expect((await post(at(first.url, 'rv-01'), { decision: 'accept', notes: 'unit is fine' })).status).toBe(200);
    const corrected = JSON.stringify([{ id: 'call_0', tool: 'get_weather', arguments: { city: 'Rome', unit: 'celsius', days: 3 } }]);
    expect((await post(at(first.url, 'rv-05'), { decision: 'edit', corrected_calls: corrected, corrected_query: 'Weather in Rome in celsius for 3 days' })).status).toBe(200);
    expect((await post(at(first.url, 'rv-03'), { decision: 'reject', notes: 'not a weather question' })).status).toBe(200);
    // The lock keeps a second server off the same sheet while the first runs.
    expect(() => openReviewSession({ store, ref, annotator: 'alice' })).toThrow(/is in use by another review server/);
    await stop(first);

    const second = await serve(store, ref);
    expect(second.url).not.toBe(first.url); // a new token every start
    const state = await (await fetch(`${second.url}api/state`)).json();
    expect(state.items.map((i: { decision: string | null }) => i.decision)).toEqual(['accept', 'edit', 'reject', null]);
    const edited = (await (await fetch(at(second.url, 'rv-05'))).json()).view;
    expect(edited.answer).toMatchObject({ decision: 'edit', corrected_query: 'Weather in Rome in celsius for 3 days', calls: JSON.parse(corrected), notes: '' });
    expect((await (await fetch(at(second.url, 'rv-01'))).json()).view.answer).toMatchObject({ decision: 'accept', notes: 'unit is fine' });
    // A decision changed after the restart replaces the earlier one.
    expect((await post(at(second.url, 'rv-06'), { decision: 'accept' })).status).toBe(200);
    const file = second.session.kinds[0].file;
    expect(file).toBe(join(`${ref.dir}.derived`, 'review', appSheetName(ref, 'alice')));
    await stop(second);

    const result = importReview({ store, ref, files: [{ path: file }] });
    expect(result).toMatchObject({ status: 'published', newVersion: 'v2', counts: { decided: 4, accepted: 2, rejected: 1, edited: 1 } });
    const v2 = versionSamples(store, store.resolve('demo@v2'));
    expect(v2.map((s) => s.id)).not.toContain('rv-03');
    const rome = v2.find((s) => s.id === 'rv-05')!;
    expect(rome.expected.calls).toEqual(JSON.parse(corrected));
    expect(rome.dialogue[0].content).toBe('Weather in Rome in celsius for 3 days');
  });

  it('gives each annotator of a split queue their items and their own file; overlapping answers meet in agreement', async () => {
    const home = tmp();
    const { store, ref } = publishReviewDataset(home);
    exportReview({ store, ref, format: 'csv', annotators: 2, overlap: 1, outDir: home });
    expect(() => openReviewSession({ store, ref, annotator: 'alice' })).toThrow('the queue of demo@v1 is split between annotator-1, annotator-2 (review export --annotators): give --annotator one of them');
    const one = await serve(store, ref, 'annotator-1');
    const two = await serve(store, ref, 'annotator-2');
    const items = async (url: string) => (await (await fetch(`${url}api/state`)).json()).items.map((i: { id: string }) => i.id);
    expect(await items(one.url)).toEqual(await items(two.url)); // overlap 1: every item to both
    expect(one.session.kinds[0].file).not.toBe(two.session.kinds[0].file);
    for (const sampleId of ['rv-01', 'rv-05', 'rv-03', 'rv-06']) {
      await post(`${one.url}api/items/${item(ref, sampleId)}`, { decision: 'accept' });
      await post(`${two.url}api/items/${item(ref, sampleId)}`, { decision: sampleId === 'rv-03' ? 'reject' : 'accept' });
    }
    const files = [one, two].map((s) => ({ path: s.session.kinds[0].file }));
    const result = importReview({ store, ref, files });
    expect(result).toMatchObject({ status: 'needs-adjudication', counts: { disagreements: 1 }, agreement: { items: 4, observed: 0.75, raters: ['annotator-1', 'annotator-2'] } });
  });

  it('refuses a busy port and bad flags with one clear line', async () => {
    const home = tmp();
    const { store, ref } = publishReviewDataset(home);
    const { server } = await serve(store, ref);
    const session = openReviewSession({ store, ref, annotator: 'bob' });
    try {
      await expect(startReviewServer({ session, port: server.port })).rejects.toThrow(`port ${server.port} on 127.0.0.1 is in use: give another --port, or --port 0 for any free one`);
    } finally {
      session.close();
    }
    const io = { out: () => {}, err: () => {}, json: false, home, cwd: home, env: {} };
    await expect(reviewServeCommand.run(['demo@v1'], { port: '70000' }, io)).rejects.toThrow('--port must be at most 65535 (got 70000)');
    await expect(reviewServeCommand.run(['demo@v9'], {}, io)).rejects.toThrow('demo@v9 not found');
    await expect(reviewServeCommand.run(['demo@v1'], { annotator: '=x' }, io)).rejects.toThrow('--annotator "=x" is not a valid id');
  });

  it('refuses a hand-broken decisions file and a bad annotator id with one clear line', async () => {
    const { store, ref } = publishReviewDataset(tmp());
    expect(() => openReviewSession({ store, ref, annotator: '../x' })).toThrow('--annotator "../x" is not a valid id');
    const first = await serve(store, ref);
    const file = first.session.kinds[0].file;
    await stop(first);
    writeFileSync(file, readFileSync(file, 'utf8').replace(/,rv-01,/, ',rv-99,'));
    expect(() => openReviewSession({ store, ref, annotator: 'alice' })).toThrow(new RegExp(`${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(row 2, column sample_id\\): read-only column "sample_id" was edited .*; fix the file, or move it away to start over`));
    expect(existsSync(`${file}.lock`)).toBe(false);
  });

  it("lists the version's tool questions as review export writes them, refuses a bad tool decision with the tool sheet import's own message, and saves a good one as a tool sheet", async () => {
    const home = tmp();
    const { store, ref } = await publishToolQuestions(home);
    const first = await serve(store, ref, 'lead', toolePipeline);
    const state = await (await fetch(`${first.url}api/state`)).json();
    const toolsFile = join(`${ref.dir}.derived`, 'review', appToolSheetName(ref, 'lead'));
    expect(state.kinds.map((k: { kind: string; file: string }) => [k.kind, k.file])).toEqual([['sample', first.session.kinds[0].file], ['tools', toolsFile]]);
    const toolItems = state.items.filter((i: { kind: string }) => i.kind === 'tools');
    const sampleIds = state.items.filter((i: { kind: string }) => i.kind === 'sample').map((i: { id: string }) => i.id);
    expect(toolItems.map((i: { title: string }) => i.title)).toEqual(['weather_now · forecaster · sky_report · flight_status', 'hotel_deals · travel_all', 'stay_finder · flight_finder · recipe_box']);
    expect(toolItems[0]).toMatchObject({ reasons: ['tool question: merge proposal'], decision: null });

    // The same questions, ids and order as review export's tool sheet; the same sample queue (tool questions left out).
    const exported = exportReview({ store, ref, format: 'csv', outDir: join(home, 'export'), pipeline: toolePipeline });
    const sheet = readRawSheet(exported.toolSheet!.file);
    const ids = sheet.rows.map((row) => row[sheet.header.indexOf('question_id')]);
    expect(toolItems.map((i: { id: string }) => i.id)).toEqual(ids);
    const queue = JSON.parse(readFileSync(exported.queueFile, 'utf8')) as { items: { itemId: string }[] };
    expect(sampleIds).toEqual(queue.items.map((i) => i.itemId));

    const view = (await (await fetch(`${first.url}api/items/${ids[0]}`)).json()).view;
    expect(view).toMatchObject({ kind: 'tools', id: ids[0], questionKind: 'merge-proposal', suggestedName: 'sky_report', decisions: ['merge', 'keep-apart', 'decompose', 'rename'], answer: { decision: '', merged_name: '' } });
    expect(view.tools.map((t: { name: string; spec: unknown }) => [t.name, t.spec !== null])).toEqual([['weather_now', false], ['forecaster', false], ['sky_report', true], ['flight_status', false]]);
    expect(view.tools[0]).toMatchObject({ samples: expect.any(Number), examples: expect.arrayContaining([expect.any(String)]) });

    const before = readFileSync(toolsFile, 'utf8');
    const at = (id: string) => `${first.url}api/items/${id}`;
    const taken = await post(at(ids[0]), { decision: 'merge', merged_name: 'flight_finder' });
    expect(taken.status).toBe(422);
    const { problems } = await taken.json();
    expect(problems).toEqual([{ column: 'merged_name', field: 'merged_name', message: '"flight_finder" is already the name of another tool: choose a new name' }]);
    // The same answer typed into the exported tool sheet: review import refuses it with the same message.
    const typed = join(home, 'typed-tools.csv');
    const row = sheet.rows[0].slice();
    row[sheet.header.indexOf('decision')] = 'merge';
    row[sheet.header.indexOf('merged_name')] = 'flight_finder';
    writeSheet(typed, { header: sheet.header, rows: [row] });
    const refused = await importToolReview({ store, ref, files: [{ path: typed, shown: 'typed-tools.csv' }], pipeline: toolePipeline, llm: new OfflineGateway(42), home, projectDir: home, cwd: home, progress: { quiet: true } }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(UserError);
    expect((refused as Error).message).toContain(`typed-tools.csv:2:merged_name: ${problems[0].message}`);

    const refusals: [Record<string, unknown>, unknown][] = [
      [{ decision: 'fuse' }, [{ column: 'decision', field: 'decision', message: 'decision "fuse" is not one of merge, keep apart, decompose, rename' }]],
      [{ decision: 'merge', merged_name: 'Weather Tool' }, [expect.objectContaining({ field: 'merged_name', message: '"Weather Tool" is not a tool name: use letters, digits, _ and - (up to 64, not starting with -)' })]],
      [{ decision: 'keep apart', new_name: 'x -> y' }, [expect.objectContaining({ field: 'new_name', message: '"keep apart" takes no new_name: clear it' })]],
      [{ decision: 'decompose', target_tools: 'nowhere' }, [expect.objectContaining({ field: 'target_tools', message: 'unknown tool nowhere: name tools of this version' })]],
      [{ decision: 'keep apart', notes: '=HYPERLINK("x")' }, [expect.objectContaining({ field: 'notes', message: expect.stringContaining('notes starts with "="') })]],
      [{ decision: 'keep apart', annotator: 'mallory' }, [expect.objectContaining({ column: null, message: expect.stringContaining('unknown field(s) annotator') })]],
    ];
    for (const [answer, expected] of refusals) {
      const res = await post(at(ids[0]), answer);
      expect(res.status, JSON.stringify(answer)).toBe(422);
      expect((await res.json()).problems, JSON.stringify(answer)).toEqual(expected);
    }
    expect(readFileSync(toolsFile, 'utf8')).toBe(before);

    // Valid: saved at once in the tool sheet's format; a later answer clashing with it is refused, naming the row.
    const merged = await post(at(ids[0]), { decision: 'merge', merged_name: 'WeatherTool', target_tools: 'weather_now, forecaster, sky_report', notes: 'one weather tool' });
    expect(merged.status).toBe(200);
    expect((await merged.json()).summary).toMatchObject({ id: ids[0], kind: 'tools', decision: 'merge' });
    const clash = await (await post(at(ids[2]), { decision: 'rename', new_name: 'stay_finder -> WeatherTool' })).json();
    expect(clash.problems).toEqual([{ column: 'new_name', field: 'new_name', message: `"WeatherTool" is also the new name given in ${toolsFile} row 2: two tools cannot take one name` }]);
    expect((await post(at(ids[1]), { decision: 'Keep' })).status).toBe(200);
    const saved = readRawSheet(toolsFile);
    expect(saved.header).toEqual(sheet.header);
    const cells = (r: string[]) => Object.fromEntries(saved.header.map((c, i) => [c, r[i]]));
    expect(saved.rows.map(cells).map((r) => [r.question_id, r.decision, r.merged_name, r.target_tools, r.annotator, r.notes])).toEqual([
      [ids[0], 'merge', 'WeatherTool', 'weather_now, forecaster, sky_report', 'lead', 'one weather tool'],
      [ids[1], 'keep apart', '', '', 'lead', ''],
      [ids[2], '', '', '', 'lead', ''],
    ]);
    // The read-only cells are the exported sheet's.
    expect(saved.rows.map((r) => r.filter((_, i) => !['decision', 'merged_name', 'new_name', 'target_tools', 'annotator', 'notes'].includes(saved.header[i])))).toEqual(
      sheet.rows.map((r) => r.filter((_, i) => !['decision', 'merged_name', 'new_name', 'target_tools', 'annotator', 'notes'].includes(sheet.header[i]))),
    );
    await stop(first);

    // A restart keeps the decisions; a hand-broken tools file is refused with one line.
    const second = await serve(store, ref, 'lead', toolePipeline);
    expect((await (await fetch(`${second.url}api/items/${ids[0]}`)).json()).view.answer).toEqual({ decision: 'merge', merged_name: 'WeatherTool', new_name: '', target_tools: 'weather_now, forecaster, sky_report', notes: 'one weather tool' });
    await stop(second);
    writeFileSync(toolsFile, readFileSync(toolsFile, 'utf8').replace('merge-proposal', 'merge-conflict'));
    expect(() => openReviewSession({ store, ref, annotator: 'lead', pipeline: toolePipeline })).toThrow(`${toolsFile} (row 2, column kind): read-only column "kind" was edited`);
    expect(existsSync(`${toolsFile}.lock`)).toBe(false);
    expect(existsSync(`${first.session.kinds[0].file}.lock`)).toBe(false);
  });
});
