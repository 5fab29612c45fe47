import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { yieldShortfall } from '../core/run-yield.ts';
import type { StageStats } from '../core/records.ts';
import { tempDirs } from './helpers/files.ts';
import { startOpenAiServer, useFreshEndpoint, type OpenAiTestServer } from './helpers/openai-server.ts';
import { startRedis, type TestRedis } from '../bench/lib/redis.ts';

/**
 * A run that produced nothing publishes nothing: an endpoint that answers only talk, a provider
 * that fails every batch and an input folder that holds nothing stop the `toolkiln run` process
 * with exit 1 before publishing, naming the rejects by reason and the resume command.
 */

const BIN = new URL('../bin/toolkiln.js', import.meta.url).pathname;
const tempDir = tempDirs('tk-yield-');
const CHATTER = 'Sure! I would be happy to help with that.';

const endpoint = useFreshEndpoint();
let server: OpenAiTestServer;
beforeAll(() => {
  server = endpoint.server;
});

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `toolkiln <args>` in its own process against the test endpoint. */
function toolkiln(home: string, args: string[], extraEnv: Record<string, string> = {}): Promise<Exit> {
  const env: NodeJS.ProcessEnv = { ...process.env, TOOLKILN_HOME: home, OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: 'sk-test', ...extraEnv };
  delete env.TOOLKILN_MODEL;
  const child = spawn(process.execPath, [BIN, ...args], { cwd: process.cwd(), env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

const versions = (home: string, name: string) => (existsSync(join(home, 'datasets', name)) ? readdirSync(join(home, 'datasets', name)).filter((v) => /^v\d+$/.test(v)) : []);
const runIdOf = (stderr: string) => /--resume (\S+)\)/.exec(stderr)![1];

describe('a run that made nothing publishes nothing', () => {
  for (const recipe of ['toole', 'nestools', 'tooltalk']) {
    it(`${recipe} against an endpoint that answers only talk: exit 1, rejects by reason, the resume command; --allow-empty on resume publishes`, async () => {
      server.setResponder('chat', () => ({ content: CHATTER }));
      const home = tempDir();
      const run = await toolkiln(home, ['run', recipe, '--llm', 'openai', '--model', 'test-model', '--limit', '3', '--quiet']);
      expect(run.code, run.stderr).toBe(1);
      const runId = runIdOf(run.stderr);
      const last = run.stderr.trim().split('\n').at(-1)!;
      expect(last).toMatch(new RegExp(`^toolkiln: the run made no samples from 3 loaded records; nothing was published \\(rejects by reason: [\\w-]+ [\\w:-]+ \\d+.*\\)\\. Its records are kept: fix the cause, then resume with: toolkiln run ${recipe} --resume ${runId} \\(add --allow-empty to publish it as it is\\)$`));
      expect(last).toMatch(/[ :](no_list|chatter|invalid_json|schema_invalid) \d+/);
      expect(versions(home, recipe)).toEqual([]);
      expect(run.stdout).toBe('');

      // The records are kept: publishing them as they are asks nothing again.
      const asked = server.count('chat');
      const resumed = await toolkiln(home, ['run', recipe, '--llm', 'openai', '--model', 'test-model', '--resume', runId, '--allow-empty', '--quiet']);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stdout).toMatch(new RegExp(`published ${recipe}@v1 .*: 0 samples`));
      expect(server.count('chat')).toBe(asked);
    }, 120_000);
  }

  it('toole --batch where the provider fails every batch: exit 1 naming batch_failed and the resume command, and the resume asks again', async () => {
    server.setBatchPlanner(() => ({ polls: 0, status: 'failed' }));
    const home = tempDir();
    const args = ['run', 'toole', '--llm', 'openai', '--model', 'test-model', '--limit', '8', '--batch', '--quiet'];
    const run = await toolkiln(home, args);
    expect(run.code, run.stderr).toBe(1);
    const runId = runIdOf(run.stderr);
    expect(run.stderr.trim().split('\n').at(-1)).toMatch(
      new RegExp(`^toolkiln: stage toole-generate: \\d+ of \\d+ records could not reach the LLM endpoint \\(batch_failed \\d+\\), more than the 10 % that --max-transport-rejects allows; nothing was published\\. .* resume with: toolkiln run toole --resume ${runId}$`),
    );
    expect(versions(home, 'toole')).toEqual([]);

    // The provider is back: the resumed run submits the requests it gave up on again, and publishes.
    const failedBatches = server.batches.length;
    server.setBatchPlanner(() => ({ polls: 0 }));
    server.setResponder('chat', (request) => ({ content: `1. User: Find a hotel in Lima, request ${request.body.messages.length}-${server.requests.length}-${Math.random()}.\n2. User: What are my options in Denver this week?` }));
    const resumed = await toolkiln(home, ['run', 'toole', '--llm', 'openai', '--model', 'test-model', '--resume', runId, '--batch', '--quiet', '--json']);
    expect(resumed.code, resumed.stderr).toBe(0);
    const result = JSON.parse(resumed.stdout);
    expect(result.status).toBe('published');
    expect(result.counts.samples).toBeGreaterThan(0);
    expect(server.batches.length).toBeGreaterThan(failedBatches);
    expect(result.batch.abandoned).toBe(0);
    expect(result.batch.submitted).toBe(result.batch.completed + result.batch.failed + result.batch.expired);
  }, 120_000);

  it('tooltalk importing an empty folder: exit 1, the loading stage named', async () => {
    const home = tempDir();
    const empty = join(home, 'conversations');
    mkdirSync(empty);
    writeFileSync(join(home, 'import.json'), JSON.stringify({ importDir: empty }));
    const run = await toolkiln(home, ['run', 'tooltalk', '--config', join(home, 'import.json'), '--llm', 'offline', '--quiet']);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).toMatch(/toolkiln: the run made no samples from 0 loaded records; nothing was published \(stage import-conversations loaded no records: check the inputs the config names\)\. .*resume with: toolkiln run tooltalk --resume \S+ \(add --allow-empty/);
    expect(versions(home, 'tooltalk')).toEqual([]);
  }, 60_000);

  describe('with workers (--redis)', () => {
    let redis: TestRedis;
    beforeAll(async () => {
      redis = await startRedis();
    });
    afterAll(() => redis?.stop());

    it('nestools run by a worker process against an endpoint that answers only talk stops the same way', async () => {
      server.setResponder('chat', () => ({ content: CHATTER }));
      const home = tempDir();
      const env = { TOOLKILN_HOME: home, OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: 'sk-test' };
      const worker = spawn(process.execPath, [BIN, 'worker', '--redis', redis.url], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
      try {
        await new Promise<void>((resolve, reject) => {
          let stderr = '';
          worker.stderr.on('data', (chunk) => (stderr += chunk).includes('taking jobs') && resolve());
          worker.once('exit', (code) => reject(new Error(`worker exited (${code}): ${stderr}`)));
        });
        const run = await toolkiln(home, ['run', 'nestools', '--llm', 'openai', '--model', 'test-model', '--limit', '3', '--redis', redis.url, '--quiet']);
        expect(run.code, run.stderr).toBe(1);
        expect(run.stderr).toContain('1 worker connected');
        expect(run.stderr).toMatch(/toolkiln: the run made no samples from 3 loaded records; nothing was published \(rejects by reason: generate-chains chatter 3\)\. .*resume with: toolkiln run nestools --resume \S+ \(add --allow-empty/);
        expect(versions(home, 'nestools')).toEqual([]);
      } finally {
        worker.kill('SIGKILL');
      }
    }, 120_000);
  });
});

describe('a dead endpoint', () => {
  // ACEBench's first stage asks about 60 domains from no input record; ToolE's generation takes the records of a stage that fans out as they finish.
  for (const [recipe, stage] of [['acebench', 'context-tree'], ['toole', 'toole-generate']]) {
    it(`${recipe}: the stop message counts failed records out of the records the stage had, never more than it had`, async () => {
      const closed = await startOpenAiServer();
      await closed.close();
      const home = tempDir();
      const run = await toolkiln(home, ['run', recipe, '--llm', 'openai', '--model', 'test-model', '--limit', '1', '--max-retries', '0', '--quiet'], { OPENAI_BASE_URL: closed.baseURL });
      expect(run.code, run.stderr).toBe(1);
      const [, failed, total] = /stage (?:[\w-]+): (\d+) of (\d+) records could not reach the LLM endpoint \(connection_error \d+\)/.exec(run.stderr) ?? [];
      expect(run.stderr).toContain(`stage ${stage}: `);
      expect(Number(failed)).toBeGreaterThan(0);
      expect(Number(failed)).toBeLessThanOrEqual(Number(total));
      // Both stages have more records than the one loaded: the count is theirs, not the loaded one's.
      expect(Number(total)).toBeGreaterThan(1);
    }, 60_000);
  }
});

describe('the yield rule', () => {
  const stats = (loaded: number, samples: number, rejectsByReason: Record<string, number> = {}): StageStats[] => [
    { stage: 'load', version: 1, in: 0, out: loaded, rejected: 0, fanned: loaded, rejectsByReason: {}, seconds: 0 },
    { stage: 'ask', version: 1, in: loaded, out: samples, rejected: Math.max(0, loaded - samples), fanned: 0, rejectsByReason, seconds: 0 },
  ];
  const resumeCommand = 'toolkiln run x --resume r';

  it('publishes from 5 % of the loaded records on, refuses below, and --min-yield / --allow-empty change that', () => {
    expect(yieldShortfall(stats(100, 5), { resumeCommand })).toBeNull();
    expect(yieldShortfall(stats(100, 4, { chatter: 96 }), { resumeCommand })?.message).toBe(
      'the run made 4 samples from 100 loaded records, fewer than 5 % of them (--min-yield 0.05); nothing was published (rejects by reason: ask chatter 96). Its records are kept: fix the cause, then resume with: toolkiln run x --resume r (add --allow-empty to publish it as it is)',
    );
    expect(yieldShortfall(stats(100, 4), { resumeCommand, minYield: 0.01 })).toBeNull();
    expect(yieldShortfall(stats(100, 0), { resumeCommand, minYield: 0 })?.exitCode).toBe(1);
    expect(yieldShortfall(stats(100, 0), { resumeCommand, allowEmpty: true })).toBeNull();
    // A recipe that fans out: 3 loaded records, 200 samples.
    expect(yieldShortfall(stats(3, 200), { resumeCommand })).toBeNull();
  });
});


