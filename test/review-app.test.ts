import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { OfflineGateway } from '../core/llm/offline.ts';
import { runPipeline } from '../core/run.ts';
import { DatasetStore } from '../core/store.ts';
import { getPipeline } from '../pipelines/index.ts';
import { startReviewServer } from '../review/app/server.ts';
import { openReviewSession } from '../review/app/session.ts';
import { importReview } from '../review/import.ts';
import { itemIdOf } from '../review/queue.ts';
import { toolePipeline } from '../pipelines/toole.ts';
import { exportReview } from '../review/export.ts';
import { publishReviewDataset, reviewSamples } from './fixtures/review/dataset.ts';
import { publishToolQuestions } from './fixtures/review/tool-questions.ts';
import { readRawSheet } from './fixtures/review/sheets.ts';
import { startServe, stopped, toolkiln } from './helpers/review-cli.ts';
import { versionSamples } from './helpers/version.ts';

const repo = fileURLToPath(new URL('..', import.meta.url));
/** Screenshots for a person to look at (git-ignored). */
const artifacts = join(repo, 'test-artifacts', 'review-app');
/** Debian's chromium (CI installs it); playwright-core downloads no browser of its own. */
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const CHROMIUM_FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
/** Generous: the machine may be loaded; nothing here waits for a fixed time. */
const WAIT = { timeout: 90_000 };

let browser: Browser | undefined;
let server: ChildProcess | undefined;
afterAll(async () => {
  await browser?.close();
  server?.kill('SIGTERM');
});

async function newPage(): Promise<Page> {
  browser ??= await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });
  return browser.newPage({ viewport: { width: 1440, height: 900 } });
}

async function shot(page: Page, name: string) {
  mkdirSync(artifacts, { recursive: true });
  await page.screenshot({ path: join(artifacts, name) });
}

/** Waits until the item view shows `id` (its key handler is then the active one). */
async function showing(page: Page, id: string) {
  await page.waitForSelector(`main[data-loaded="${id}"] #accept`, WAIT);
}

describe('review app in a browser', () => {
  it('reviews a version by keyboard, edits a call through the form, keeps decisions over a reload, and imports them', { timeout: 600_000 }, async () => {
    const home = mkdtempSync(join(tmpdir(), 'tk-review-browser-'));
    const run = await runPipeline({ pipeline: getPipeline('mtu'), limit: 12, llm: new OfflineGateway(42), home, projectDir: repo, progress: { quiet: true } });
    expect(run.status).toBe('published');
    const exported = toolkiln(home, 'review', 'export', 'mtu@v1', '--format', 'csv', '--rate', '0.5', '--json');
    expect(exported.code).toBe(0);
    const sheet = readRawSheet(JSON.parse(exported.out).files[0]);
    const sheetIds = sheet.rows.map((row) => row[sheet.header.indexOf('item_id')]);

    const started = await startServe(home, 'mtu@v1', '--annotator', 'alice');
    server = started.process;
    const { url, files } = started.info;
    expect(started.info).toMatchObject({ items: sheetIds.length, decided: 0 });
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/[0-9a-f]{48}\/$/);

    const page = await newPage();
    const pageErrors: string[] = [];
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await page.goto(url, WAIT);
    await page.waitForSelector('#items li', WAIT);
    const ids = await page.$$eval('#items li', (lis) => lis.map((li) => (li as HTMLElement).dataset.item!));
    // The queue review export selected: the same items, in the same order.
    expect(ids).toEqual(sheetIds);
    await showing(page, ids[0]);
    await page.waitForSelector('.turn.user', WAIT);
    expect(await page.locator('.turn.assistant .call').count()).toBeGreaterThan(0);
    expect(await page.locator('.tool-doc.used').count()).toBeGreaterThan(0);
    expect(await page.textContent('.check')).toContain('random sample (50% of its category)');
    await shot(page, '1-item.png');

    // j / k move between items.
    await page.keyboard.press('j');
    await showing(page, ids[1]);
    await page.keyboard.press('k');
    await showing(page, ids[0]);

    // Three items by keyboard: accept, reject, accept; each saved, then on to the next.
    for (const [i, key, decision] of [[0, 'a', 'accept'], [1, 'r', 'reject'], [2, 'a', 'accept']] as const) {
      await showing(page, ids[i]);
      await page.keyboard.press(key);
      await page.waitForSelector(`#items li[data-item="${ids[i]}"][data-decision="${decision}"]`, WAIT);
    }
    await showing(page, ids[3]);
    expect(await page.textContent('#progress-text')).toBe('3 / 6 decided');
    expect(await page.textContent('[data-reason="random sample"] .num')).toBe('3 / 6');

    // Edit one call through the schema form: an invalid value is refused next to its field.
    await page.keyboard.press('e');
    await page.waitForSelector('#editor .call-card', WAIT);
    const input = page.locator('#editor .call-card > .field input[type="text"]').first();
    const field = (await input.getAttribute('data-field'))!;
    const [, turn, index, param] = field.split(':');
    expect(param).toBeTruthy();
    await input.fill('=SUM(1)');
    await input.press('Control+Enter');
    const problem = page.locator(`#editor [data-error="${field}"] .problem`);
    await problem.waitFor(WAIT);
    expect(await problem.textContent()).toContain('starts with "=", which a spreadsheet runs as a formula');
    expect(await input.getAttribute('class')).toContain('invalid');
    expect(await page.locator(`#items li[data-item="${ids[3]}"]`).getAttribute('data-decision')).toBe('open');
    await shot(page, '2-edit-refused.png');

    await input.fill('corrected value');
    await input.press('Control+Enter');
    await page.waitForSelector(`#items li[data-item="${ids[3]}"][data-decision="edit"]`, WAIT);
    await showing(page, ids[4]);

    // Help: ? opens and closes it.
    await page.keyboard.press('?');
    await page.waitForSelector('#help[open]', WAIT);
    expect(await page.textContent('#help')).toContain('accept the item');
    await shot(page, '3-help.png');
    await page.keyboard.press('?');
    await page.waitForSelector('#help:not([open])', { ...WAIT, state: 'attached' });

    // A reload finds every decision, and the edit with its corrected value.
    await page.reload(WAIT);
    await page.waitForSelector(`#items li[data-item="${ids[3]}"][data-decision="edit"]`, WAIT);
    expect(await page.$$eval('#items li', (lis) => lis.map((li) => (li as HTMLElement).dataset.decision))).toEqual(['accept', 'reject', 'accept', 'edit', 'open', 'open']);
    await page.click(`#items li[data-item="${ids[3]}"]`);
    await showing(page, ids[3]);
    expect(await page.textContent('.decision-badge')).toBe('edited');
    await page.keyboard.press('e');
    await page.waitForSelector('#editor', WAIT);
    expect(await page.inputValue(`#editor [data-field="${field}"]`)).toBe('corrected value');
    await shot(page, '4-after-reload.png');
    expect(pageErrors).toEqual([]);

    // Stopping the server releases its lock; review import takes the file as it is.
    server.kill('SIGTERM');
    expect(await stopped(server)).toBe(0);
    expect(existsSync(`${files[0]}.lock`)).toBe(false);
    const imported = toolkiln(home, 'review', 'import', 'mtu@v1', files[0], '--json');
    expect(imported.code, imported.err).toBe(0);
    expect(JSON.parse(imported.out)).toMatchObject({ status: 'published', newVersion: 'v2', counts: { decided: 4, pending: 2, accepted: 2, rejected: 1, edited: 1 } });

    const store = new DatasetStore(home);
    const ref = store.resolve('mtu@v1');
    const v1 = versionSamples(store, ref);
    const v2 = versionSamples(store, store.resolve('mtu@v2'));
    const sampleFor = (id: string) => v1.find((s) => itemIdOf(ref, s.id) === id)!;
    expect(v2.map((s) => s.id)).toEqual(v1.map((s) => s.id).filter((id) => id !== sampleFor(ids[1]).id));
    const accepted = v2.find((s) => s.id === sampleFor(ids[0]).id)!;
    expect(accepted.expected).toEqual(sampleFor(ids[0]).expected);
    expect(accepted.meta.review).toEqual([expect.objectContaining({ version: 'v1', decision: 'accept', answers: [expect.objectContaining({ annotator: 'alice', decision: 'accept' })] })]);
    const edited = v2.find((s) => s.id === sampleFor(ids[3]).id)!;
    const editedCalls = turn ? edited.expected.turns![turn] : edited.expected.calls!;
    expect(editedCalls[Number(index)].arguments[param]).toBe('corrected value');
    expect(edited.meta.review).toEqual([expect.objectContaining({ decision: 'edit' })]);
  });

  it('shows a problem with a folded parameter next to it, and does not judge text the reviewer left as it was', { timeout: 300_000 }, async () => {
    const { store, ref } = publishReviewDataset(mkdtempSync(join(tmpdir(), 'tk-review-browser-')));
    const session = openReviewSession({ store, ref, annotator: 'alice' });
    const app = await startReviewServer({ session });
    try {
      const page = await newPage();
      await page.goto(app.url, WAIT);
      const first = itemIdOf(ref, 'rv-01'); // its query starts with "=HYPERLINK(": the version's text, not typed
      await showing(page, first);
      expect(await page.textContent('.failed-checks')).toContain('arg-grounded');
      await page.keyboard.press('e');
      await page.waitForSelector('#editor .more-params', WAIT);
      await page.click('#editor .more-params summary');
      await page.fill('[data-field="calls::0:days"]', 'two');
      await page.click('#editor .more-params summary'); // folded again: the problem unfolds it
      await page.click('#save-edit');
      const problem = page.locator('[data-error="calls::0:days"] .problem');
      await problem.waitFor(WAIT);
      expect(await problem.textContent()).toBe('corrected calls do not fit the tool schema: call_0: get_weather.days: "two" is not of type integer');
      expect(await page.locator('[data-error="query"] .problem').count()).toBe(0);
      await shot(page, '5-folded-parameter-refused.png');
      await page.fill('[data-field="calls::0:days"]', '3');
      await page.click('#save-edit');
      await page.waitForSelector(`#items li[data-item="${first}"][data-decision="edit"]`, WAIT);
      await page.close();
    } finally {
      await app.close();
      session.close();
    }
    const result = importReview({ store, ref, files: [{ path: session.kinds[0].file }] });
    expect(result).toMatchObject({ status: 'published', counts: { edited: 1 } });
    const edited = versionSamples(store, store.resolve('demo@v2')).find((s) => s.id === 'rv-01')!;
    expect(edited.expected.calls).toEqual([{ id: 'call_0', tool: 'get_weather', arguments: { city: 'Oslo', days: 3 } }]);
    expect(edited.dialogue[0].content).toBe(reviewSamples()[1].dialogue[0].content);
  });

  it('decides a tool question by keyboard (a bad merged name refused at its field), keeps it over a reload, and review import publishes the next version from the app\'s tools file', { timeout: 300_000 }, async () => {
    const home = mkdtempSync(join(tmpdir(), 'tk-review-browser-tools-'));
    const { store, ref } = await publishToolQuestions(home);
    const exported = exportReview({ store, ref, format: 'csv', pipeline: toolePipeline });
    const sheet = readRawSheet(exported.toolSheet!.file);
    const questionIds = sheet.rows.map((row) => row[sheet.header.indexOf('question_id')]);
    const session = openReviewSession({ store, ref, annotator: 'lead', pipeline: toolePipeline });
    const app = await startReviewServer({ session });
    const toolsFile = session.kinds.find((k) => k.kind === 'tools')!.file;
    try {
      const page = await newPage();
      const pageErrors: string[] = [];
      page.on('pageerror', (error) => pageErrors.push(error.message));
      await page.goto(app.url, WAIT);
      // Tool questions open first, with the note that they come before sample review.
      await page.waitForSelector(`main[data-loaded="${questionIds[0]}"] #keep-apart`, WAIT);
      expect(await page.getAttribute('#kind-tabs .tab.current', 'data-kind')).toBe('tools');
      expect(await page.textContent('#kind-note')).toContain(`Tool questions come first. Their decisions run the recipe again and publish the next version`);
      expect(await page.textContent('#kind-note')).toContain(`toolkiln review import ${ref.name}@v1 ${toolsFile}`);
      expect(await page.$$eval('#items li', (lis) => lis.map((li) => (li as HTMLElement).dataset.item))).toEqual(questionIds);
      expect(await page.$$eval('.tool-card', (cards) => cards.map((c) => (c as HTMLElement).dataset.tool))).toEqual(['weather_now', 'forecaster', 'sky_report', 'flight_status']);
      expect(await page.textContent('.proposal')).toContain('merged into sky_report without a decision');
      expect(await page.textContent('.tool-card[data-tool="forecaster"]')).toMatch(/\d+ samples.*Hourly and ten-day weather forecasts/s);
      await shot(page, '6-tool-question.png');

      // m opens the merge form, the merged name pre-filled with the suggestion; a bad name is refused next to it.
      await page.keyboard.press('m');
      const name = page.locator('#merged_name');
      await name.waitFor(WAIT);
      expect(await name.inputValue()).toBe('sky_report');
      await name.fill('Weather Tool');
      await name.press('Enter');
      const problem = page.locator('[data-error="merged_name"] .problem');
      await problem.waitFor(WAIT);
      expect(await problem.textContent()).toBe('"Weather Tool" is not a tool name: use letters, digits, _ and - (up to 64, not starting with -)');
      expect(await name.getAttribute('class')).toContain('invalid');
      expect(await page.getAttribute(`#items li[data-item="${questionIds[0]}"]`, 'data-decision')).toBe('open');
      await shot(page, '7-merge-name-refused.png');

      // flight_status stays apart; a valid name saves, and the next question opens.
      await page.uncheck('#target_tools input[value="flight_status"]');
      await name.fill('WeatherTool');
      await name.press('Enter');
      await page.waitForSelector(`#items li[data-item="${questionIds[0]}"][data-decision="merge"]`, WAIT);
      await page.waitForSelector(`main[data-loaded="${questionIds[1]}"] #keep-apart`, WAIT);
      expect(await page.textContent('#progress-text')).toBe('1 / 3 decided');
      // The buttons are the decisions the question allows (an MTU conflict's leave out decompose).
      expect(await page.$$eval('.decision-bar .buttons button', (bs) => bs.map((b) => b.id))).toEqual(['merge', 'keep-apart', 'decompose', 'rename']);

      // t switches to the samples and back.
      await page.keyboard.press('t');
      await page.waitForSelector('#kind-tabs .tab.current[data-kind="sample"]', WAIT);
      await page.waitForSelector('main[data-loaded] #accept', WAIT);
      await page.keyboard.press('t');
      await page.waitForSelector('#kind-tabs .tab.current[data-kind="tools"]', WAIT);

      // A reload finds the decision with its name and members.
      await page.reload(WAIT);
      await page.waitForSelector(`#items li[data-item="${questionIds[0]}"][data-decision="merge"]`, WAIT);
      await page.click(`#items li[data-item="${questionIds[0]}"]`);
      await page.waitForSelector(`main[data-loaded="${questionIds[0]}"] #keep-apart`, WAIT);
      expect(await page.textContent('.decision-badge')).toBe('merged');
      await page.keyboard.press('m');
      await page.locator('#merged_name').waitFor(WAIT);
      expect(await page.inputValue('#merged_name')).toBe('WeatherTool');
      expect(await page.$$eval('#target_tools input:checked', (cs) => cs.map((c) => (c as HTMLInputElement).value))).toEqual(['weather_now', 'forecaster', 'sky_report']);
      await shot(page, '8-tool-question-after-reload.png');
      expect(pageErrors).toEqual([]);
      await page.close();
    } finally {
      await app.close();
      session.close();
    }

    // review import takes the app's tools file unchanged and publishes the next version.
    const imported = toolkiln(home, 'review', 'import', `${ref.name}@v1`, toolsFile, '--llm', 'offline', '--json');
    expect(imported.code, imported.err).toBe(0);
    expect(JSON.parse(imported.out)).toMatchObject({ status: 'published', newVersion: 'v2', counts: { decided: 1, pending: 2, questions: 3 } });
    const manifest = store.manifest(store.resolve(`${ref.name}@v2`));
    expect(manifest.parent).toBe('v1');
    expect((manifest.stats.toolReview as { decisions: unknown[] }).decisions).toEqual([
      expect.objectContaining({ question: questionIds[0], decision: 'merge', members: ['weather_now', 'forecaster', 'sky_report'], into: 'WeatherTool', annotators: ['lead'] }),
    ]);
    expect((manifest.config as { overlap: { decisions: { merge: unknown[] } } }).overlap.decisions.merge).toContainEqual({ tools: ['weather_now', 'forecaster', 'sky_report'], into: 'WeatherTool' });
  });
});
