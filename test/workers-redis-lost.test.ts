import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Coordinator } from '../core/distributed.ts';
import { OfflineGateway } from '../core/llm/offline.ts';
import { runPipeline } from '../core/run.ts';
import { slowPipeline } from './fixtures/core/slow-pipeline.ts';
import { tempDirs } from './helpers/files.ts';
import { startRedis, type TestRedis } from '../bench/lib/redis.ts';

/**
 * Workers and their coordinator survive Redis going away: a real redis-server SIGKILLed in the
 * middle of a run, with worker and coordinator processes of their own. Restarted empty, the run
 * completes with the bytes of an uninterrupted one; gone for longer than --redis-wait, the run stops
 * with exit 1 and its resume command instead of waiting for ever.
 */

const tempDir = tempDirs('tk-redis-lost-');
const WORKER = 'test/fixtures/core/run-worker.ts';
const COORDINATOR = 'test/fixtures/core/run-distributed.ts';
// Slow enough that Redis goes away with records in flight.
const ITEMS = 24;
const DELAY_MS = 300;

let redis: TestRedis;
let reference: Record<string, string>;
const children: ChildProcess[] = [];

interface Running {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exit: Promise<number | null>;
}

function start(script: string, args: string[]): Running {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const exit = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, stdout: () => stdout, stderr: () => stderr, exit };
}

async function startWorker(home: string): Promise<Running> {
  const worker = start(WORKER, [redis.url, home, '30000', '2']);
  while (!worker.stdout().includes('ready')) {
    if (worker.child.exitCode !== null) throw new Error(`worker exited before it was ready: ${worker.stderr()}`);
    await sleep(20);
  }
  return worker;
}

function coordinate(home: string, redisWaitMs: number, resume?: string): Running {
  return start(COORDINATOR, [redis.url, home, String(ITEMS), String(DELAY_MS), String(redisWaitMs), ...(resume ? [resume] : [])]);
}

/** Waits until the run's first per-record stage has started `n` records (on the workers). */
async function recordsStarted(home: string, n: number): Promise<string> {
  const runs = join(home, '.toolkiln', 'runs');
  for (;;) {
    const [runId] = existsSync(runs) ? readdirSync(runs) : [];
    const calls = runId && existsSync(join(runs, runId, 'calls.log')) ? readFileSync(join(runs, runId, 'calls.log'), 'utf8').split('\n').filter(Boolean).length : 0;
    if (calls >= n) return runId;
    await sleep(20);
  }
}

function publishedFiles(home: string): Record<string, string> {
  const dir = join(home, 'datasets', 'slow', 'v1');
  const files: Record<string, string> = {};
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath, entry.name).slice(dir.length + 1);
    // The manifest holds timings and a date; everything else must match byte for byte.
    if (entry.isFile() && path !== 'manifest.json') files[path] = readFileSync(join(dir, path), 'utf8');
  }
  return files;
}

beforeAll(async () => {
  redis = await startRedis();
  const home = tempDir();
  await runPipeline({ pipeline: slowPipeline, configOverrides: { items: ITEMS, delayMs: DELAY_MS }, llm: new OfflineGateway(42), home, projectDir: process.cwd(), cwd: home, progress: { quiet: true } });
  reference = publishedFiles(home);
});

afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await redis.stop();
  await redis.restart();
});

afterAll(() => redis?.stop());

describe('Redis going away during a run with workers', () => {
  it('SIGKILLed and restarted empty: coordinator and workers say so, the records in flight are sent again, and the run publishes the bytes of an uninterrupted one', async () => {
    const home = tempDir();
    const workers = [await startWorker(home), await startWorker(home)];
    const run = coordinate(home, 60_000);
    await recordsStarted(home, 4);
    await redis.stop();
    await sleep(1500);
    await redis.restart();

    expect(await run.exit, run.stderr()).toBe(0);
    expect(JSON.parse(run.stdout())).toMatchObject({ status: 'published', version: 'v1' });
    expect(publishedFiles(home)).toEqual(reference);
    // Said once, for the outage: not again when the run closes its connections.
    expect(run.stderr().match(/lost the connection to Redis at redis:\/\/127\.0\.0\.1:\d+: reconnecting/g)).toHaveLength(1);
    expect(run.stderr()).toMatch(/\d+ records in flight wait for Redis; the run stops if it is not back within 60 s/);
    expect(run.stderr()).toMatch(/Redis at redis:\/\/127\.0\.0\.1:\d+ lost the run's queue \(restarted empty, or flushed\): sent [1-9]\d* records? in flight again/);
    for (const worker of workers) {
      expect(worker.stderr()).toMatch(/lost the connection to Redis at redis:\/\/127\.0\.0\.1:\d+: reconnecting/);
      expect(worker.stderr()).toMatch(/Redis at redis:\/\/127\.0\.0\.1:\d+ answers again after \d+ s/);
    }
  }, 180_000);

  it('gone for longer than --redis-wait: the run stops with exit 1 and its resume command; resumed once Redis is back, it publishes the same bytes', async () => {
    const home = tempDir();
    await startWorker(home);
    const run = coordinate(home, 3000);
    await recordsStarted(home, 3);
    await redis.stop();

    expect(await run.exit, run.stderr()).toBe(1);
    const last = run.stderr().trim().split('\n').at(-1)!;
    expect(last).toMatch(/^toolkiln: stage score-slowly failed on record item-\d+: Redis at redis:\/\/127\.0\.0\.1:\d+ has been unreachable for \d+ s \(--redis-wait 3\), with \d+ records in flight; start redis-server there again \(finished records are kept; fix the cause, then resume with: toolkiln run slow --resume \S+\)$/);
    const runId = /--resume (\S+)\)$/.exec(last)![1];
    expect(existsSync(join(home, 'datasets', 'slow'))).toBe(false);

    await redis.restart();
    const resumed = coordinate(home, 60_000, runId);
    expect(await resumed.exit, resumed.stderr()).toBe(0);
    expect(JSON.parse(resumed.stdout())).toMatchObject({ runId, status: 'published', version: 'v1' });
    expect(publishedFiles(home)).toEqual(reference);
  }, 180_000);

  it("the coordinator's own requests (a whole-set stage's) wait for Redis too, and fail with the resume command when it gives up", async () => {
    const coordinator = await Coordinator.open(redis.url, () => {}, { maxDownMs: 1500, checkEveryMs: 200 });
    try {
      await coordinator.forRun('slow-run-1', { pipeline: 'slow', name: 'slow', config: {}, seed: 42, model: 'm', backend: 'openai' });
      const permit = coordinator.sharedRate('model:m');
      expect(await permit({ tokens: 10, rpm: 100, spanMs: 60_000 })).toBe(0);
      await redis.stop();
      await expect(permit({ tokens: 10, rpm: 100, spanMs: 60_000 })).rejects.toThrow(/^Redis at redis:\/\/127\.0\.0\.1:\d+ has been unreachable for \d+ s \(--redis-wait 2\), with 0 records in flight; start redis-server there again; then resume with: toolkiln run slow --resume slow-run-1$/);
    } finally {
      await coordinator.close();
    }
  }, 60_000);
});
