import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
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
import { publishReviewDataset, reviewSamples } from './fixtures/review/dataset.ts';
import { readRawSheet } from './fixtures/review/sheets.ts';

const repo = fileURLToPath(new URL('..', import.meta.url));
const bin = join(repo, 'bin', 'toolkiln.js');
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

function toolkiln(home: string, ...args: string[]) {
  const result = spawnSync(process.execPath, [bin, ...args], { cwd: home, encoding: 'utf8', env: { ...process.env, TOOLKILN_HOME: home } });
  return { code: result.status, out: result.stdout, err: result.stderr };
}

/** Starts `toolkiln review serve … --json` and resolves with its one JSON line (url, files, counts). */
function startServe(home: string, ...args: string[]): Promise<{ process: ChildProcess; info: { url: string; files: string[]; items: number; decided: number } }> {
  const child = spawn(process.execPath, [bin, 'review', 'serve', ...args, '--json'], { cwd: home, env: { ...process.env, TOOLKILN_HOME: home }, stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stdout!.on('data', (chunk) => {
      out += chunk;
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line && out.includes('\n')) resolve({ process: child, info: JSON.parse(line) });
    });
    child.stderr!.on('data', (chunk) => (err += chunk));
    child.on('exit', (code) => reject(new Error(`review serve exited (${code}) before it printed its address: ${err}`)));
  });
}

function stopped(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else child.on('exit', (code) => resolve(code));
  });
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
    const v1 = store.samples(ref);
    const v2 = store.samples(store.resolve('mtu@v2'));
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
    const edited = store.samples(store.resolve('demo@v2')).find((s) => s.id === 'rv-01')!;
    expect(edited.expected.calls).toEqual([{ id: 'call_0', tool: 'get_weather', arguments: { city: 'Oslo', days: 3 } }]);
    expect(edited.dialogue[0].content).toBe(reviewSamples()[1].dialogue[0].content);
  });
});
