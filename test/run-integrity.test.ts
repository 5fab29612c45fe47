import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { main } from '../bin/cli.ts';
import { UserError } from '../core/errors.ts';
import { createGateway } from '../core/llm/index.ts';
import { OfflineGateway } from '../core/llm/offline.ts';
import type { LlmGateway } from '../core/llm/types.ts';
import { tryLock } from '../core/lock.ts';
import type { PipelineDefinition } from '../core/pipeline.ts';
import { runPipeline } from '../core/run.ts';
import { DatasetStore } from '../core/store.ts';
import { echoPipeline, echoPrompt, interruption } from './fixtures/core/echo-pipeline.ts';
import { startOpenAiServer, echoChat, type OpenAiTestServer } from './helpers/openai-server.ts';
import { versionRejects } from './helpers/version.ts';

const tmp = (prefix: string) => mkdtempSync(join(tmpdir(), prefix));

function runIds(home: string): string[] {
  const dir = join(home, '.toolkiln', 'runs');
  return existsSync(dir) ? readdirSync(dir).sort() : [];
}

/** A home with a source file of `lines`; returns the home and the file's path. */
function homeWithLines(lines: string[]): { home: string; file: string } {
  const home = tmp('tk-integrity-');
  const file = join(home, 'lines.txt');
  writeFileSync(file, lines.join('\n') + '\n');
  return { home, file };
}

function echo(home: string, file: string, llm: LlmGateway, extra: Partial<Parameters<typeof runPipeline>[0]> = {}) {
  return runPipeline({ pipeline: echoPipeline, configOverrides: { file }, llm, home, projectDir: process.cwd(), cwd: home, progress: { quiet: true }, ...extra });
}

/** Starts a run that stops at `stopAt` (as a killed one would) and returns its id. */
async function interruptedRun(home: string, file: string, stopAt: string, pipeline: PipelineDefinition = echoPipeline): Promise<string> {
  interruption.onText = stopAt;
  try {
    await expect(runPipeline({ pipeline, configOverrides: { file }, llm: new OfflineGateway(42), home, projectDir: process.cwd(), cwd: home, progress: { quiet: true }, concurrency: 1 })).rejects.toThrow(/interrupted/);
  } finally {
    interruption.onText = null;
  }
  const [runId] = runIds(home);
  return runId;
}

describe('resuming a run', () => {
  it('refuses when a source file changed since the run started, naming the file', async () => {
    const { home, file } = homeWithLines(['a', 'b', 'c', 'd']);
    const runId = await interruptedRun(home, file, 'c');
    writeFileSync(file, 'a\nb\nc\nd\ne\n');
    await expect(echo(home, file, new OfflineGateway(42), { resume: runId })).rejects.toThrow(`${file} changed since run ${runId} started; start a new run`);
    expect(new DatasetStore(home).versions('echo')).toEqual([]);
  });

  it('refuses when a stage version or a prompt changed since the run started', async () => {
    const { home, file } = homeWithLines(['a', 'b', 'c']);
    const runId = await interruptedRun(home, file, 'b');
    const bumped: PipelineDefinition = { ...echoPipeline, stages: (c) => echoPipeline.stages(c).map((s) => (s.name === 'ask' ? { ...s, version: 2 } : s)) };
    await expect(runPipeline({ pipeline: bumped, llm: new OfflineGateway(42), home, projectDir: process.cwd(), resume: runId, progress: { quiet: true } })).rejects.toThrow(
      `stage ask is at version 2, but run ${runId} started with version 1; start a new run`,
    );
    const reworded: PipelineDefinition = { ...echoPipeline, stages: (c) => echoPipeline.stages(c).map((s) => (s.name === 'ask' ? { ...s, prompts: [{ ...echoPrompt, hash: 'other-hash' }] } : s)) };
    await expect(runPipeline({ pipeline: reworded, llm: new OfflineGateway(42), home, projectDir: process.cwd(), resume: runId, progress: { quiet: true } })).rejects.toThrow(
      `prompt test/echo changed since run ${runId} started; start a new run`,
    );
    // Unchanged, it resumes and publishes.
    expect((await echo(home, file, new OfflineGateway(42), { resume: runId, configOverrides: undefined })).status).toBe('published');
  });

  it('refuses a run folder a live process holds, and takes over the lock of a dead one', async () => {
    const { home, file } = homeWithLines(['a', 'b', 'c']);
    const runId = await interruptedRun(home, file, 'b');
    const lockPath = join(home, '.toolkiln', 'runs', runId, 'lock');
    const held = tryLock(lockPath, 'a test holding the run');
    if (!('lock' in held)) throw new Error('the test could not take the lock');
    await expect(echo(home, file, new OfflineGateway(42), { resume: runId, configOverrides: undefined })).rejects.toThrow(new RegExp(`run ${runId} is in progress in process ${process.pid} \\(a test holding the run`));
    held.lock.release();

    // A lock left by a process that is gone (here: one that has exited) does not block.
    const dead = spawn(process.execPath, ['-e', '0']);
    await new Promise((resolve) => dead.on('exit', resolve));
    writeFileSync(lockPath, JSON.stringify({ pid: dead.pid, host: (await import('node:os')).hostname(), startTicks: 1, acquiredAt: new Date().toISOString(), purpose: 'killed run' }));
    expect((await echo(home, file, new OfflineGateway(42), { resume: runId, configOverrides: undefined })).status).toBe('published');
    expect(existsSync(lockPath)).toBe(false);
  });
});

describe('runs started together', () => {
  const script = new URL('./fixtures/core/run-slow.ts', import.meta.url).pathname;
  const start = (home: string, ...args: string[]) =>
    new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
      const child = spawn(process.execPath, ['--import', 'tsx', script, home, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (err += d));
      child.on('exit', (code) => resolve({ code, out, err }));
    });
  const together = async (home: string, ...args: string[]) => {
    const results = await Promise.all([start(home, ...args), start(home, ...args), start(home, ...args)]);
    for (const r of results) expect(r.code, r.err).toBe(0);
    return results.map((r) => JSON.parse(r.out) as { runId: string; status: string; version: string });
  };

  it('get their own run folders and publish one after the other', async () => {
    const home = tmp('tk-race-');
    const reports = await together(home, '--force');
    expect(new Set(reports.map((r) => r.runId)).size).toBe(3);
    expect(runIds(home)).toEqual(reports.map((r) => r.runId).sort());
    expect(reports.map((r) => r.version).sort()).toEqual(['v1', 'v2', 'v3']);
    expect(new DatasetStore(home).versions('slow')).toEqual(['v1', 'v2', 'v3']);
  }, 60_000);

  it('publish one version when they are identical', async () => {
    const home = tmp('tk-race-same-');
    const reports = await together(home);
    // A process that starts after the version is out finds it and runs nothing (run id "-").
    const ran = reports.filter((r) => r.runId !== '-');
    expect(runIds(home)).toEqual(ran.map((r) => r.runId).sort());
    expect(reports.filter((r) => r.status === 'published')).toHaveLength(1);
    expect(reports.every((r) => r.version === 'v1')).toBe(true);
    expect(new DatasetStore(home).versions('slow')).toEqual(['v1']);
  }, 60_000);
});

describe('dataset names', () => {
  it('refuses a name over 100 characters before anything runs', async () => {
    const home = tmp('tk-name-');
    const out: string[] = [];
    const err: string[] = [];
    const code = await main(['run', 'nestools', '--name', 'n'.repeat(101), '--quiet'], { out: (t) => out.push(t), err: (t) => err.push(t), home, cwd: home, env: {} });
    expect(code).toBe(2);
    expect(err.join('\n')).toBe('toolkiln: dataset name is 101 characters long; use at most 100');
    expect(runIds(home)).toEqual([]);
    expect(() => DatasetStore.checkName('n'.repeat(100))).not.toThrow();
  });
});

describe('a failing endpoint', () => {
  let server: OpenAiTestServer;
  beforeAll(async () => {
    server = await startOpenAiServer();
  });
  afterAll(async () => server.close());
  beforeEach(() => {
    server.reset();
    server.setResponder('chat', echoChat);
  });

  const gateway = (home: string, baseURL = server.baseURL) =>
    createGateway({ backend: 'openai', model: 'test-model', home, env: { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: baseURL }, maxRetries: 0, retryBaseMs: 1 });
  const lines = Array.from({ length: 20 }, (_, i) => (i < 5 ? `ok ${i}` : `line ${i}`));
  const userText = (body: any) => body.messages.at(-1).content as string;

  it('that cannot be reached stops the run before publishing, with the counts and the resume command', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise((resolve) => closed.close(resolve));
    const { home, file } = homeWithLines(lines);
    const llm = gateway(home, `http://127.0.0.1:${port}/v1`);
    const failure = await echo(home, file, llm).catch((error) => error);
    await llm.close();
    expect(failure).toBeInstanceOf(UserError);
    expect(failure.exitCode).toBe(1);
    expect(failure.message).toMatch(/^stage ask: \d+ of 20 records could not reach the LLM endpoint \(connection_error \d+\), more than the 10 % that --max-transport-rejects allows; nothing was published\./);
    expect(failure.message).toContain(`resume with: toolkiln run echo --resume ${runIds(home)[0]}`);
    expect(new DatasetStore(home).versions('echo')).toEqual([]);
  });

  it('that answers 500 stops the run; after it recovers, a resume asks only what was not answered', async () => {
    const { home, file } = homeWithLines(lines);
    server.setResponder('chat', (request) => (userText(request.body).startsWith('ok') ? echoChat(request) : { status: 500, error: { message: 'overloaded' } }));
    let llm = gateway(home);
    const failure = await echo(home, file, llm, { concurrency: 1 }).catch((error) => error);
    await llm.close();
    expect(failure.message).toMatch(/^stage ask: 3 of 20 records could not reach the LLM endpoint \(http_error 3\)/);
    expect(new DatasetStore(home).versions('echo')).toEqual([]);
    const [runId] = runIds(home);

    server.reset();
    server.setResponder('chat', echoChat);
    llm = gateway(home);
    const resumed = await echo(home, file, llm, { resume: runId, configOverrides: undefined });
    await llm.close();
    expect(resumed.status).toBe('published');
    expect(resumed.manifest!.counts).toMatchObject({ samples: 20, rejects: 0 });
    const asked = server.requests.map((r) => userText(r.body));
    expect(asked.some((text) => text.startsWith('ok'))).toBe(false); // answered before: journalled, not asked again
    expect(asked).toHaveLength(15);
  });

  it('that fails for a few records under the limit publishes them as rejects with their reason', async () => {
    const { home, file } = homeWithLines(lines);
    server.setResponder('chat', (request) => (userText(request.body) === 'line 7' ? { status: 503, error: { message: 'busy' } } : echoChat(request)));
    const llm = gateway(home);
    const result = await echo(home, file, llm);
    await llm.close();
    expect(result.manifest!.counts).toMatchObject({ samples: 19, rejects: 1 });
    expect(versionRejects(new DatasetStore(home), result.ref!)[0]).toMatchObject({ stage: 'ask', reason: 'http_error' });
    // A lower limit stops the same run.
    const { home: home2, file: file2 } = homeWithLines(lines);
    const strict = gateway(home2);
    await expect(echo(home2, file2, strict, { maxTransportRejects: 0 })).rejects.toThrow(/1 of 20 records could not reach the LLM endpoint \(http_error 1\), more than the 0 %/);
    await strict.close();
  });

  it('--llm openai with neither a key nor a base URL fails at once', async () => {
    const home = tmp('tk-nokey-');
    const err: string[] = [];
    const code = await main(['run', 'nestools', '--llm', 'openai', '--quiet'], { out: () => {}, err: (t) => err.push(t), home, cwd: home, env: {} });
    expect(code).toBe(2);
    expect(err.join('\n')).toMatch(/^toolkiln: --llm openai needs an endpoint: set OPENAI_API_KEY/);
    expect(runIds(home)).toEqual([]);
  });
});
