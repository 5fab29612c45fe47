import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, watch } from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { basename, dirname } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Sample } from '../core/records.ts';
import { readCsv, toCsv } from '../review/csv.ts';
import { itemIdOf } from '../review/queue.ts';
import { publishReviewDataset, reviewSamples } from './fixtures/review/dataset.ts';
import { readRawSheet } from './fixtures/review/sheets.ts';
import { tempDirs } from './helpers/files.ts';
import { startServe, stopped, toolkiln, type ServeInfo } from './helpers/review-cli.ts';

/** `toolkiln review serve` as a real process, spoken to over real HTTP connections. */

const tmp = tempDirs('tk-review-process-');
const MIB = 1 << 20;

const running: ChildProcess[] = [];
afterEach(async () => {
  for (const child of running.splice(0)) {
    child.kill('SIGKILL');
    await stopped(child);
  }
});

async function serve(home: string, ...args: string[]): Promise<{ child: ChildProcess; info: ServeInfo; port: number; token: string }> {
  const { process: child, info } = await startServe(home, ...args);
  running.push(child);
  const url = new URL(info.url);
  return { child, info, port: Number(url.port), token: url.pathname.split('/')[1] };
}

/** `demo@v1` with `count` samples, every one queued (a larger sheet makes each save take longer). */
function dataset(count = 12) {
  const base = reviewSamples();
  const samples: Sample[] = Array.from({ length: count }, (_, i) => ({ ...base[i % base.length], id: `rv-${String(i).padStart(4, '0')}` }));
  const home = tmp();
  return { home, ...publishReviewDataset(home, { review: { randomRate: 1 } }, samples) };
}

interface Answer {
  status: number;
  body: string;
  /** The client was told to go on sending (`Expect: 100-continue`). */
  continued: boolean;
}

/**
 * One HTTP request on its own connection. `body`: bytes sent with their Content-Length, or
 * `{ stream }` bytes sent chunked in 64 KiB pieces (no length known in advance). A write refused
 * once the answer is in does not count as a failure; a connection reset before it does.
 */
function call(port: number, path: string, options: { method?: string; headers?: Record<string, string>; body?: Buffer | { stream: number }; expectContinue?: boolean } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const body = options.body;
    const headers: Record<string, string> = { Connection: 'close', ...options.headers };
    if (Buffer.isBuffer(body)) headers['Content-Length'] = String(body.length);
    if (options.expectContinue) headers.Expect = '100-continue';
    let answered = false;
    let continued = false;
    const req = request({ host: '127.0.0.1', port, path, method: options.method ?? 'GET', headers, setHost: !('Host' in headers) }, (res) => {
      answered = true;
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, body: text, continued }));
      res.on('error', reject);
    });
    req.on('error', (error) => {
      if (!answered) reject(error);
    });
    const send = () => {
      if (Buffer.isBuffer(body)) return void req.end(body);
      if (!body) return void req.end();
      const piece = Buffer.alloc(64 << 10, 'a');
      let sent = 0;
      const more = () => {
        while (sent < body.stream && !answered && !req.destroyed) {
          sent += piece.length;
          if (!req.write(piece)) return void req.once('drain', more);
        }
        req.end();
      };
      more();
    };
    if (options.expectContinue) req.on('continue', () => ((continued = true), send()));
    else send();
  });
}

const post = (port: number, path: string, answer: unknown) => call(port, path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: Buffer.from(JSON.stringify(answer)) });

/** Temporary files left beside the decisions file (`<sheet>.csv.tmp-<pid>`). */
function leftovers(file: string): string[] {
  return readdirSync(dirname(file)).filter((name) => name.startsWith(`${basename(file)}.tmp-`));
}

async function ipv6Loopback(): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(0, '::1', () => server.close(() => resolve(true)));
  });
}

describe('review serve as a process', () => {
  it('answers 413 to a body over 1 MiB, declared, streamed or announced with Expect: 100-continue, before reading it; and serves on', { timeout: 120_000 }, async () => {
    const { home, ref } = dataset();
    const { port, token, info } = await serve(home, 'demo@v1', '--annotator', 'alice');
    const at = `/${token}/api/items/${itemIdOf(ref, 'rv-0001')}`;
    const json = { 'Content-Type': 'application/json' };
    const oversize = Buffer.alloc(4 * MIB, 'a');
    for (let round = 0; round < 3; round++) {
      const declared = await call(port, at, { method: 'POST', headers: json, body: oversize });
      expect(declared.status).toBe(413);
      expect(JSON.parse(declared.body)).toEqual({ error: `the decision is larger than ${MIB} bytes` });
      const streamed = await call(port, at, { method: 'POST', headers: json, body: { stream: 4 * MIB } });
      expect(streamed.status).toBe(413);
      expect(JSON.parse(streamed.body).error).toContain('larger than');
      const announced = await call(port, at, { method: 'POST', headers: json, body: oversize, expectContinue: true });
      expect(announced).toMatchObject({ status: 413, continued: false });
    }
    // Nothing was saved, and the server answers the next requests as before.
    const state = JSON.parse((await call(port, `/${token}/api/state`)).body);
    expect(state.items.filter((i: { decision: string | null }) => i.decision)).toEqual([]);
    const small = await call(port, at, { method: 'POST', headers: json, body: Buffer.from('{"decision":"accept"}'), expectContinue: true });
    expect(small).toMatchObject({ status: 200, continued: true });
    expect((await post(port, `/${token}/api/items/${itemIdOf(ref, 'rv-0002')}`, { decision: 'reject' })).status).toBe(200);
    expect(leftovers(info.files[0])).toEqual([]);
  });

  it('answers only to the Host it was bound as: another name pointing at it (DNS rebinding) gets 421', { timeout: 120_000 }, async () => {
    const { home } = dataset();
    const { port, token } = await serve(home, 'demo@v1', '--annotator', 'alice');
    const state = (host: string) => call(port, `/${token}/api/state`, { headers: { Host: host } });
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LOCALHOST:${port}`]) expect((await state(host)).status, host).toBe(200);
    for (const host of [`evil.example:${port}`, `attacker.localhost.evil.example:${port}`, `127.0.0.1:${port + 1}`, '127.0.0.1', `[::1]:${port}`, '']) {
      const refused = await state(host);
      expect(refused.status, host).toBe(421);
      expect(JSON.parse(refused.body).error).toContain(`answers only as 127.0.0.1:${port}, localhost:${port}`);
      expect(refused.body).not.toContain('rv-0001');
    }
    // A decision sent under a foreign name is refused as well, and nothing is saved.
    const foreign = await call(port, `/${token}/api/items/x`, { method: 'POST', headers: { Host: `evil.example:${port}`, 'Content-Type': 'application/json' }, body: Buffer.from('{"decision":"accept"}') });
    expect(foreign.status).toBe(421);

    if (!(await ipv6Loopback())) return; // no IPv6 loopback on this machine: the [::1] half cannot run
    const six = await serve(home, 'demo@v1', '--annotator', 'bob', '--host', '::1');
    expect(six.info.url).toMatch(/^http:\/\/\[::1\]:\d+\//);
    const ask = (host: string) =>
      new Promise<number>((resolve, reject) => {
        const req = request({ host: '::1', port: six.port, path: `/${six.token}/api/state`, headers: { Host: host, Connection: 'close' } }, (res) => (res.resume(), resolve(res.statusCode!)));
        req.on('error', reject).end();
      });
    expect(await ask(`[::1]:${six.port}`)).toBe(200);
    expect(await ask(`localhost:${six.port}`)).toBe(200);
    expect(await ask(`127.0.0.1:${six.port}`)).toBe(421);
    expect(await ask(`evil.example:${six.port}`)).toBe(421);
  });

  it("keeps each app annotator's queue apart from the queue review export --annotators rewrites, and takes the latest one with --requeue", { timeout: 300_000 }, async () => {
    const { home, ref } = dataset();
    const stop = async (child: ChildProcess) => {
      child.kill('SIGTERM');
      expect(await stopped(child)).toBe(0);
      running.splice(running.indexOf(child), 1);
    };
    // alice starts on the whole queue (no export yet: the app selects it) and decides one item.
    const alice = await serve(home, 'demo@v1', '--annotator', 'alice');
    expect(alice.info).toMatchObject({ items: 12, decided: 0 });
    expect((await post(alice.port, `/${alice.token}/api/items/${itemIdOf(ref, 'rv-0003')}`, { decision: 'reject' })).status).toBe(200);
    await stop(alice.child);

    // The queue is then split between three annotators, for sheets and for the app.
    const split = toolkiln(home, 'review', 'export', 'demo@v1', '--format', 'csv', '--annotators', '3', '--json');
    expect(split.code, split.err).toBe(0);
    const shares = (JSON.parse(split.out).sheets as { annotator: string; items: number }[]).map((s) => s.items);
    expect(shares.reduce((a, b) => a + b)).toBe(12);

    // alice goes on with her own items and her decision, told that the latest export is another queue.
    const again = await serve(home, 'demo@v1', '--annotator', 'alice');
    expect(again.info).toMatchObject({ items: 12, decided: 1, queueFile: alice.info.queueFile });
    expect(again.info.queueFile).toMatch(/review\/app-queue-alice\.json$/);
    expect((again.info as ServeInfo & { queueNote: string }).queueNote).toContain('add --requeue to take it');
    await stop(again.child);
    const second = await serve(home, 'demo@v1', '--annotator', 'annotator-2');
    expect(second.info).toMatchObject({ items: shares[1], decided: 0 });
    expect((await post(second.port, `/${second.token}/api/items/${(JSON.parse((await call(second.port, `/${second.token}/api/state`)).body).items[0] as { id: string }).id}`, { decision: 'accept' })).status).toBe(200);
    await stop(second.child);

    // A new split does not move annotator-2 either; annotator-3, who never opened the app, is refused with what to give.
    const resplit = toolkiln(home, 'review', 'export', 'demo@v1', '--format', 'csv', '--annotators', '2', '--json');
    expect(resplit.code).toBe(0);
    const kept = await serve(home, 'demo@v1', '--annotator', 'annotator-2');
    expect(kept.info).toMatchObject({ items: shares[1], decided: 1 });
    await stop(kept.child);
    const refused = toolkiln(home, 'review', 'serve', 'demo@v1', '--annotator', 'annotator-3');
    expect(refused.code).not.toBe(0);
    expect(refused.err.trim()).toBe('toolkiln: the queue of demo@v1 is split between annotator-1, annotator-2 (review export --annotators): give --annotator one of them');
    // --requeue takes annotator-2's share of the latest split; the rows already in the file stay (with the decision made).
    const latestShare = readRawSheet(JSON.parse(resplit.out).sheets[1].file);
    const requeued = await serve(home, 'demo@v1', '--annotator', 'annotator-2', '--requeue');
    expect(requeued.info).toMatchObject({ queueNote: null, decided: 1 });
    const listed = (JSON.parse((await call(requeued.port, `/${requeued.token}/api/state`)).body).items as { id: string }[]).map((i) => i.id);
    const shareIds = latestShare.rows.map((row) => row[latestShare.header.indexOf('item_id')]);
    expect(listed.slice(0, shareIds.length)).toEqual(shareIds);
    await stop(requeued.child);

    // Both app files import together: every decision was made on an item of one of the version's queues.
    const imported = toolkiln(home, 'review', 'import', 'demo@v1', alice.info.files[0], second.info.files[0], '--json');
    expect(imported.code, imported.err).toBe(0);
    expect(JSON.parse(imported.out)).toMatchObject({ status: 'published', counts: { decided: 2, rejected: 1, accepted: 1 } });
  });

  it('a kill -9 in the middle of a save leaves a whole sheet holding every acknowledged decision, and temporary files removed at the next start and on exit', { timeout: 300_000 }, async () => {
    const { home, ref } = dataset(600);
    const items = Array.from({ length: 600 }, (_, i) => itemIdOf(ref, `rv-${String(i).padStart(4, '0')}`));
    let file = '';
    let stale = 0;
    let kills = 0;
    /** Item → the decision the server acknowledged (200) for it: each must be in the file after any kill. */
    const acknowledged = new Map<string, string>();
    // Decisions saved back to back; after the first few, kill -9 the moment a save's temporary file
    // appears (a save writes, syncs and renames it): until a kill has left one behind, at least 3 kills.
    while (kills < 3 || (stale === 0 && kills < 15)) {
      const { child, port, token, info } = await serve(home, 'demo@v1', '--annotator', 'alice');
      file = info.files[0];
      const temporary = `${basename(file)}.tmp-${child.pid}`;
      let saved = 0;
      const watcher = watch(dirname(file), (_event, name) => {
        if (name === temporary && saved >= 3) child.kill('SIGKILL');
      });
      let stop = false;
      const writer = async (lane: number) => {
        for (let i = lane; !stop; i += 4) {
          try {
            // An item always gets the same decision (600 is a multiple of 3): a save not yet acknowledged never undoes one that was.
            const decision = i % 3 ? 'accept' : 'reject';
            if ((await post(port, `/${token}/api/items/${items[i % items.length]}`, { decision })).status === 200) {
              saved++;
              acknowledged.set(items[i % items.length], decision);
            }
          } catch {
            return; // the server is gone
          }
        }
      };
      const lanes = [0, 1, 2, 3].map(writer);
      await stopped(child);
      watcher.close();
      running.splice(running.indexOf(child), 1);
      stop = true;
      await Promise.all(lanes);
      kills++;
      stale = leftovers(file).length;
      // The sheet in place is whole, exactly as toCsv writes its rows, and holds every acknowledged decision.
      const sheet = readCsv(file);
      expect(sheet.problems).toEqual([]);
      expect(sheet.records).toHaveLength(items.length);
      expect(readFileSync(file, 'utf8')).toBe(toCsv(sheet.header, sheet.records.map((r) => r.cells)));
      const decided = new Map(sheet.records.map((r) => [r.cells.item_id, r.cells.decision]));
      expect([...acknowledged].filter(([id, decision]) => decided.get(id) !== decision)).toEqual([]);
    }
    expect(stale, `no kill out of ${kills} landed inside a save`).toBeGreaterThan(0);

    // The next start removes them; the file holds every save that finished and imports as it is.
    const { child } = await serve(home, 'demo@v1', '--annotator', 'alice');
    expect(leftovers(file)).toEqual([]);
    child.kill('SIGTERM');
    expect(await stopped(child)).toBe(0);
    running.splice(running.indexOf(child), 1);
    expect(readdirSync(dirname(file)).filter((name) => name.includes('.tmp-') || name.endsWith('.lock'))).toEqual([]);
    const imported = toolkiln(home, 'review', 'import', 'demo@v1', file, '--json');
    expect(imported.code, imported.err).toBe(0);
    expect(JSON.parse(imported.out).counts.decided).toBeGreaterThan(0);
  });
});
