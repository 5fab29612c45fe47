import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Coordinator, RecordWorker } from '../core/distributed.ts';
import { createGateway } from '../core/llm/index.ts';
import { OfflineGateway } from '../core/llm/offline.ts';
import { runPipeline } from '../core/run.ts';
import type { PipelineDefinition } from '../core/pipeline.ts';
import { main } from '../bin/cli.ts';
import { echoPipeline } from './fixtures/core/echo-pipeline.ts';
import { slowPipeline } from './fixtures/core/slow-pipeline.ts';
import { tempDirs } from './helpers/files.ts';
import { echoChat, mostWithin, startOpenAiServer } from './helpers/openai-server.ts';
import { startRedis, type TestRedis } from '../bench/lib/redis.ts';

const tempDir = tempDirs('tk-workers-');
const WORKER_SCRIPT = 'test/fixtures/core/run-worker.ts';
// Slow enough that a worker can be killed while it holds a job.
const SLOW = { items: 10, delayMs: 1000 };

let redis: TestRedis;
const children: ChildProcess[] = [];

interface WorkerProcess {
  child: ChildProcess;
  stderr: () => string;
}

/** A worker process for the test recipes; resolves once it takes jobs. */
async function startWorker(home: string, options: { lockMs?: number; concurrency?: number } = {}): Promise<WorkerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER_SCRIPT, redis.url, home, String(options.lockMs ?? 30_000), String(options.concurrency ?? 2)], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk) => String(chunk).includes('ready') && resolve());
    child.once('exit', (code) => reject(new Error(`worker exited (${code}) before it was ready: ${stderr}`)));
  });
  return { child, stderr: () => stderr };
}

function stopProcess(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(signal);
  return exited;
}

function publishedFiles(home: string, name: string): Record<string, string> {
  const dir = join(home, 'datasets', name, 'v1');
  const files: Record<string, string> = {};
  const walk = (rel: string) => {
    for (const entry of readdirSync(join(dir, rel), { withFileTypes: true })) {
      const path = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(path);
      // The manifest holds timings and a date; everything else must match byte for byte.
      else if (path !== 'manifest.json') files[path] = readFileSync(join(dir, path), 'utf8');
    }
  };
  walk('');
  return files;
}

/** The records the first per-record stage ran (the second logs its own as `check:…`). */
function callsOf(home: string, runId: string): string[] {
  const path = join(home, '.toolkiln', 'runs', runId, 'calls.log');
  return existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter((line) => line && !line.startsWith('check:')) : [];
}

async function runSlow(home: string, coordinator?: Coordinator) {
  return runPipeline({ pipeline: slowPipeline, configOverrides: SLOW, llm: new OfflineGateway(42), home, projectDir: process.cwd(), cwd: home, progress: { quiet: true }, distribute: coordinator });
}

let reference: Record<string, string>;

beforeAll(async () => {
  redis = await startRedis();
  const home = tempDir();
  await runSlow(home);
  reference = publishedFiles(home, 'slow');
});

afterAll(async () => {
  await redis?.stop();
});

beforeEach(async () => {
  const client = new Redis(redis.url);
  await client.flushall();
  client.disconnect();
});

afterEach(async () => {
  await Promise.all(children.splice(0).map((child) => stopProcess(child, 'SIGKILL')));
});

async function cli(argv: string[], home: string): Promise<{ code: number; err: string }> {
  const err: string[] = [];
  const code = await main(argv, { out: () => {}, err: (text) => err.push(text), home, cwd: home, env: {} });
  return { code, err: err.join('\n') };
}

describe('workers: bad settings', () => {
  it('say what is wrong in one line', async () => {
    const home = tempDir();
    expect(await cli(['worker'], home)).toEqual({ code: 2, err: expect.stringMatching(/^toolkiln: missing --redis <url>/) });
    expect(await cli(['run', 'nestools', '--redis', 'localhost:6379'], home)).toEqual({ code: 2, err: 'toolkiln: --redis takes a redis:// or rediss:// URL, not "localhost:6379"' });
    expect(await cli(['run', 'nestools', '--redis', redis.url, '--dry-run'], home)).toEqual({ code: 2, err: expect.stringContaining('does not combine with --dry-run') });
    expect(await cli(['run', 'nestools', '--redis-wait', '30'], home)).toEqual({ code: 2, err: 'toolkiln: --redis-wait says how long a run with workers waits for a lost Redis: it needs --redis' });
    // Nothing listens on the port redis-server had before it was stopped: a closed port.
    const closed = await startRedis();
    await closed.stop();
    const unreachable = await cli(['run', 'nestools', '--redis', closed.url], home);
    expect(unreachable.code).toBe(2);
    expect(unreachable.err).toMatch(new RegExp(`^toolkiln: cannot reach Redis at ${closed.url} \\(.*\\): start redis-server there, or check --redis$`));
  });

  it('a worker whose recipe differs from the run\'s fails the job, and the run stops with the reason', async () => {
    const home = tempDir();
    const bumped: PipelineDefinition = { ...slowPipeline, stages: (c) => slowPipeline.stages(c).map((s) => (s.name === 'score-slowly' ? { ...s, version: 2 } : s)) };
    const worker = await RecordWorker.start({ redisUrl: redis.url, home, concurrency: 2, pipelineOf: () => bumped, gatewayFor: (spec) => new OfflineGateway(spec.seed), resolvePath: (path) => path });
    const coordinator = await Coordinator.open(redis.url);
    try {
      await expect(runSlow(home, coordinator)).rejects.toThrow(/^stage score-slowly failed on record item-\d+: run slow-.* has stages make-items@1, score-slowly@1, check-slowly@1, to-samples@1, this worker's slow recipe has make-items@1, score-slowly@2, check-slowly@1, to-samples@1: run the same toolkiln version on every machine/);
    } finally {
      await coordinator.close();
      await worker.close();
    }
  });
});

describe('workers', () => {
  it('a run whose per-record stage runs on two worker processes publishes the same bytes as a single-process run', async () => {
    const home = tempDir();
    const workers = [await startWorker(home), await startWorker(home)];
    const coordinator = await Coordinator.open(redis.url);
    try {
      const result = await runSlow(home, coordinator);
      expect(result.status).toBe('published');
      expect(publishedFiles(home, 'slow')).toEqual(reference);
      expect(Object.keys(reference)).toEqual(expect.arrayContaining(['data/test.jsonl', 'rejects.jsonl', 'reports/summary/scores.txt']));
      // Each record ran once, and both workers took some.
      expect(callsOf(home, result.runId).sort()).toEqual(Array.from({ length: SLOW.items }, (_, n) => `item-${n}`).sort());
      for (const worker of workers) expect(worker.stderr()).toContain(`run ${result.runId}`);
    } finally {
      await coordinator.close();
      await Promise.all(workers.map((w) => stopProcess(w.child)));
    }
  });

  it('toolkiln worker and toolkiln run --redis: a recipe run through the CLI publishes what a run without workers does', async () => {
    const [local, distributed] = [tempDir(), tempDir()];
    const args = ['run', 'nestools', '--llm', 'offline', '--limit', '12', '--quiet'];
    expect((await cli(args, local)).code).toBe(0);
    const worker = spawn(process.execPath, ['bin/toolkiln.js', 'worker', '--redis', redis.url], { env: { ...process.env, TOOLKILN_HOME: distributed }, stdio: ['ignore', 'ignore', 'pipe'] });
    children.push(worker);
    let stderr = '';
    await new Promise<void>((resolve) => worker.stderr!.on('data', (chunk) => (stderr += chunk) && stderr.includes('taking jobs') && resolve()));
    const run = await cli([...args, '--redis', redis.url], distributed);
    expect(run).toEqual({ code: 0, err: expect.stringContaining('1 worker connected') });
    expect(publishedFiles(distributed, 'nestools')).toEqual(publishedFiles(local, 'nestools'));
    await stopProcess(worker);
    expect(worker.exitCode).toBe(0);
    expect(stderr).toMatch(/worker: stopped after [1-9]\d* records/);
  });

  it('a worker SIGKILLed mid-job: another worker takes its job once the lock expires, and the data is the same', async () => {
    const home = tempDir();
    const doomed = await startWorker(home, { lockMs: 1500 });
    const coordinator = await Coordinator.open(redis.url);
    try {
      const run = runSlow(home, coordinator);
      const runs = join(home, '.toolkiln', 'runs');
      const runId = async () => {
        for (;;) {
          const [id] = existsSync(runs) ? readdirSync(runs) : [];
          if (id && callsOf(home, id).length) return id;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      };
      const id = await runId();
      // It has started a record (each takes at least a second) and has not finished it.
      await stopProcess(doomed.child, 'SIGKILL');
      const taken = callsOf(home, id);
      await startWorker(home, { lockMs: 1500 });
      const result = await run;
      expect(result.status).toBe('published');
      expect(publishedFiles(home, 'slow')).toEqual(reference);
      const calls = callsOf(home, id);
      // The killed worker's records were started again by the other one.
      for (const item of taken) expect(calls.filter((c) => c === item).length).toBeGreaterThanOrEqual(2);
      expect(new Set(calls).size).toBe(SLOW.items);
    } finally {
      await coordinator.close();
    }
  });

  it('three workers with the same rpm share one budget: the starts in any window never exceed rpm', async () => {
    const server = await startOpenAiServer({ chat: echoChat, latencyMs: 20 });
    const home = tempDir();
    const file = join(home, 'lines.txt');
    writeFileSync(file, Array.from({ length: 12 }, (_, n) => `line ${n}`).join('\n'));
    const env = { OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: 'test-key' };
    const rpm = 4;
    const windowMs = 1500;
    const starts: number[][] = [[], [], []];
    const workers = await Promise.all(
      starts.map((mine) =>
        RecordWorker.start({
          redisUrl: redis.url,
          home,
          concurrency: 4,
          pipelineOf: () => echoPipeline,
          // Each worker alone would allow `rpm` starts per window: only the shared budget keeps the sum there.
          gatewayFor: (spec, sharedPermit) =>
            createGateway({ backend: spec.backend, model: spec.model, seed: spec.seed, home, env, noCache: true, concurrency: 4, rpm, rateWindowMs: windowMs, rateWindowMarginMs: 400, onRequestStart: (start) => mine.push(start.at), sharedPermit }),
          resolvePath: (path) => path,
        }),
      ),
    );
    const coordinator = await Coordinator.open(redis.url);
    const llm = createGateway({ backend: 'openai', model: 'test-model', home, env, noCache: true });
    try {
      const result = await runPipeline({ pipeline: echoPipeline, configOverrides: { file }, llm, home, projectDir: process.cwd(), cwd: home, progress: { quiet: true }, distribute: coordinator });
      expect(result.manifest!.counts.samples).toBe(12);
      expect(server.count('chat')).toBe(12);
      // The manifest counts the requests the workers sent.
      expect(result.manifest!.usage.total.requests).toBe(12);
      expect(result.manifest!.usage.byStage.ask.requests).toBe(12);
      expect(starts.filter((mine) => mine.length > 0).length).toBeGreaterThanOrEqual(2);
      expect(mostWithin(starts.flat(), windowMs)).toBeLessThanOrEqual(rpm);
    } finally {
      await coordinator.close();
      await llm.close();
      await Promise.all(workers.map((w) => w.close()));
      await server.close();
    }
  });
});
