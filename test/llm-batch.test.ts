import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { main } from '../bin/cli.ts';
import { BatchFileWritten, createGateway, formatBatchCounts, type BatchOptions, type GatewayOptions } from '../core/llm/index.ts';
import { readBatchState } from '../core/llm/batch-openai.ts';
import { ResponseCache } from '../core/llm/cache.ts';
import { runPipeline } from '../core/run.ts';
import { DatasetStore } from '../core/store.ts';
import type { PipelineDefinition } from '../core/pipeline.ts';
import { Sample, sampleId } from '../core/records.ts';
import { reject, sourceStage, type ScanStage } from '../core/stage.ts';
import { echoPipeline, echoPrompt, echoSample } from './fixtures/core/echo-pipeline.ts';
import { useFreshEndpoint, type OpenAiTestServer, type RecordedRequest } from './helpers/openai-server.ts';

const LINES = ['alpha', 'bravo', 'charlie', 'delta', 'echo'];
const KEY = 'sk-batch-test-key-0123456789';
const script = new URL('./fixtures/core/run-batch.ts', import.meta.url).pathname;

const endpoint = useFreshEndpoint();
let server: OpenAiTestServer;
beforeAll(() => {
  server = endpoint.server;
});

function homeWithLines(lines = LINES): { home: string; file: string } {
  const home = mkdtempSync(join(tmpdir(), 'tk-batch-'));
  const file = join(home, 'lines.txt');
  writeFileSync(file, lines.join('\n') + '\n');
  return { home, file };
}

function gateway(home: string, batch?: BatchOptions, extra: Partial<GatewayOptions> = {}) {
  return createGateway({
    backend: 'openai',
    model: 'gpt-4o-mini',
    home,
    env: { OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: KEY },
    batch: batch && { pollIntervalMs: 1, maxPollIntervalMs: 4, ...batch },
    ...extra,
  });
}

/** The echo recipe with its LLM step in the source: it reads the lines and asks about each, one after the other. */
const sourcePipeline: PipelineDefinition<{ file: string }> = {
  ...echoPipeline,
  name: 'echo-source',
  stages: (config) => [
    sourceStage({
      name: 'ask-all',
      version: 1,
      output: Sample,
      prompts: [echoPrompt],
      load: async function* (ctx) {
        for (const line of readFileSync(ctx.resolvePath(config.file), 'utf8').split('\n').filter(Boolean).map((text, n) => ({ id: `line-${n}`, text }))) {
          const answer = await ctx.tryAsk(echoPrompt, { text: line.text }, { key: line.id });
          yield answer.ok ? echoSample(line, answer.value.echo) : { ...reject(answer.reason, answer.detail), record: line };
        }
      },
    }),
  ],
};

/** The same whole-set step as a scan stage: the answers are gathered in `collect`, the samples written per record. */
const scanPipeline: PipelineDefinition<{ file: string }> = {
  ...echoPipeline,
  name: 'echo-scan',
  stages: (config) => [
    echoPipeline.stages(config)[0],
    {
      kind: 'scan',
      name: 'ask-all',
      version: 1,
      input: echoPipeline.stages(config)[0].output,
      output: Sample,
      prompts: [echoPrompt],
      collect: async (lines, ctx) => {
        const answers = new Map<string, string>();
        for (const line of lines) {
          const answer = await ctx.tryAsk(echoPrompt, { text: line.text }, { key: line.id });
          if (answer.ok) answers.set(line.id, answer.value.echo);
        }
        return answers;
      },
      run: (line, { state }) => {
        const echo = state.get(line.id);
        if (echo === undefined) return reject('no_answer');
        const dialogue = [{ role: 'user' as const, content: line.text }, { role: 'assistant' as const, content: echo }];
        return { id: sampleId('echo', line), benchmark: 'echo', category: 'echo', split: 'test', tools: [], dialogue, expected: { labels: [echo] }, meta: { lineage: [], checks: [], tags: [] } };
      },
    } satisfies ScanStage<{ id: string; text: string }, Sample, Map<string, string>>,
  ],
};

async function run(home: string, file: string, batch?: BatchOptions, extra: { resume?: string; gateway?: Partial<GatewayOptions>; pipeline?: PipelineDefinition; maxTransportRejects?: number; log?: (message: string) => void } = {}) {
  const llm = gateway(home, batch, extra.gateway);
  try {
    const result = await runPipeline({ pipeline: extra.pipeline ?? echoPipeline, configOverrides: extra.resume ? undefined : { file }, resume: extra.resume, llm, home, projectDir: process.cwd(), cwd: home, progress: { quiet: true }, maxTransportRejects: extra.maxTransportRejects, log: extra.log });
    return { result, usage: llm.usage() };
  } finally {
    await llm.close();
  }
}

function published(dir: string): Record<string, string | null> {
  // A version without rejects has no rejects.jsonl (null here, the same on both sides of a comparison).
  return Object.fromEntries(['data/test.jsonl', 'tools.jsonl', 'rejects.jsonl'].map((name) => [name, existsSync(join(dir, name)) ? readFileSync(join(dir, name), 'utf8') : null]));
}

const creates = () => server.requests.filter((r: RecordedRequest) => r.method === 'POST' && r.path === '/v1/batches').length;
const counts = (over: Partial<Record<string, number>>) => ({ batches: 1, submitted: 5, completed: 5, failed: 0, expired: 0, resubmitted: 0, abandoned: 0, ...over });

describe('--batch (OpenAI Batch API)', () => {
  it('completes through one batch and publishes the same bytes as a direct run, at the batch discount', async () => {
    const direct = homeWithLines();
    const plain = await run(direct.home, direct.file);
    expect(server.count('chat')).toBe(5);
    server.reset();

    const { home, file } = homeWithLines();
    const batched = await run(home, file, { mode: 'openai' });
    expect(server.count('chat')).toBe(0); // nothing sent directly
    expect(creates()).toBe(1);
    const [batch] = server.batches;
    expect(batch.lines).toHaveLength(5);
    for (const line of batch.lines) {
      expect(Object.keys(line).sort()).toEqual(['body', 'custom_id', 'method', 'url']);
      expect(line).toMatchObject({ method: 'POST', url: '/v1/chat/completions', body: { model: 'gpt-4o-mini', response_format: { type: 'json_schema' } } });
      expect(line.custom_id).toMatch(/^[0-9a-f]{64}$/);
    }
    expect(batch.metadata).toMatchObject({ stage: 'ask' });

    expect(batched.result.status).toBe('published');
    expect(published(batched.result.ref!.dir)).toEqual(published(plain.result.ref!.dir));
    expect(batched.result.manifest!.stats.batch).toEqual(counts({}));
    // Same tokens, half the price (gpt-4o-mini's batchDiscount in prices.json).
    expect(batched.usage.total).toMatchObject({ requests: 5, promptTokens: plain.usage.total.promptTokens, completionTokens: plain.usage.total.completionTokens });
    expect(plain.usage.total.costUsd).toBeGreaterThan(0);
    expect(batched.usage.total.costUsd).toBeCloseTo(plain.usage.total.costUsd! / 2, 6);
    expect(batched.result.manifest!.usage.total.costUsd).toBeCloseTo(plain.usage.total.costUsd! / 2, 6);

    // The answers are in the response cache: a normal run over the same cache sends nothing.
    server.reset();
    const again = await run(home, file, undefined, { gateway: {} });
    expect(again.result.status).toBe('existing');
    expect(server.requests).toHaveLength(0);
  });

  it('a price table without a batch discount charges batch answers in full', async () => {
    const { home, file } = homeWithLines();
    const full = await run(home, file, { mode: 'openai' }, { gateway: { priceTable: { 'gpt-4o-mini': { input: 1, output: 1 } } } });
    const tokens = full.usage.total.promptTokens + full.usage.total.completionTokens;
    expect(full.usage.total.costUsd).toBeCloseTo(tokens / 1e6, 9);
  });

  it('splits the requests at the per-batch request and byte limits', async () => {
    const byCount = homeWithLines();
    const first = await run(byCount.home, byCount.file, { mode: 'openai', maxRequests: 2 });
    expect(server.batches.map((b) => b.lines.length)).toEqual([2, 2, 1]);
    expect(first.result.manifest!.stats.batch).toEqual(counts({ batches: 3 }));

    // One line per batch when two never fit: the limit is the longest line's size.
    const longest = Math.max(...server.batches.flatMap((b) => b.lines).map((line) => Buffer.byteLength(JSON.stringify(line) + '\n')));
    server.reset();
    const bySize = homeWithLines();
    const second = await run(bySize.home, bySize.file, { mode: 'openai', maxBytes: longest });
    expect(server.batches.map((b) => b.lines.length)).toEqual([1, 1, 1, 1, 1]);
    expect(second.result.manifest!.stats.batch).toEqual(counts({ batches: 5 }));
  });

  it('resubmits failed and expired requests in new batches, with exact counts in the manifest', async () => {
    server.setBatchPlanner(({ number }) => {
      if (number === 1) return { polls: 2, line: (_line, i) => (i < 2 ? 'error' : 'ok') }; // two answered with HTTP 500
      if (number === 2) return { status: 'expired', line: (_line, i) => (i === 0 ? 'ok' : 'expired') }; // one ran before the window closed
      return {};
    });
    const { home, file } = homeWithLines();
    const { result } = await run(home, file, { mode: 'openai' });
    expect(server.batches.map((b) => b.lines.length)).toEqual([5, 2, 1]);
    expect(server.batches[2].lines[0].custom_id).toBe(server.batches[1].lines[1].custom_id);
    expect(result.manifest!.stats.batch).toEqual({ batches: 3, submitted: 8, completed: 5, failed: 2, expired: 1, resubmitted: 3, abandoned: 0 });
    expect(formatBatchCounts(result.manifest!.stats.batch as never)).toBe('batch: 3 batches, 8 requests submitted, 5 completed, 2 failed, 1 expired, 3 resubmitted, 0 given up');
    expect(result.manifest!.counts.samples).toBe(5);
    expect(result.manifest!.counts.rejects).toBe(0);
    const state = JSON.parse(readFileSync(join(home, '.toolkiln', 'runs', result.runId, 'batches.json'), 'utf8'));
    expect(state.batches.map((b: { id: string; status: string }) => [b.id, b.status])).toEqual(server.batches.map((b) => [b.id, b.status]));
  });

  it('rejects a record whose request fails on every submission, with the reason', async () => {
    server.setBatchPlanner(() => ({ line: (line) => (String(line.body.messages.at(-1).content) === 'charlie' ? 'error' : 'ok') }));
    const { home, file } = homeWithLines();
    // One record of five: more than the 10 % of records that may fail to get an answer by default.
    await expect(run(homeWithLines().home, file, { mode: 'openai', maxSubmissions: 2 })).rejects.toThrow(/^stage ask: 1 of 5 records could not reach the LLM endpoint \(batch_failed 1\)/);
    const { result } = await run(home, file, { mode: 'openai', maxSubmissions: 2 }, { maxTransportRejects: 0.2 });
    expect(result.manifest!.stats.batch).toEqual({ batches: 2, submitted: 6, completed: 4, failed: 2, expired: 0, resubmitted: 1, abandoned: 1 });
    const rejects = readFileSync(join(result.ref!.dir, 'rejects.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
    expect(rejects).toHaveLength(1);
    expect(rejects[0]).toMatchObject({ stage: 'ask', reason: 'batch_failed' });
    expect(rejects[0].detail).toMatch(/HTTP 500: scripted batch line error; submitted 2 times/);
    expect(result.manifest!.counts.samples).toBe(4);
  });

  it('sends a repair request in a later batch when a batch answer fails the schema', async () => {
    server.setResponder('chat', (request) => {
      const messages = request.body.messages as { role: string; content: string }[];
      if (messages[0].content === 'charlie' && messages.length === 1) return { content: 'not json at all' };
      return { content: JSON.stringify({ echo: messages[0].content }) };
    });
    const { home, file } = homeWithLines();
    const { result } = await run(home, file, { mode: 'openai' });
    expect(server.batches.map((b) => b.lines.length)).toEqual([5, 1]);
    expect(server.batches[1].lines[0].body.messages).toHaveLength(3); // the question, the bad answer, the repair request
    expect(result.manifest!.stats.batch).toEqual(counts({ batches: 2, submitted: 6, completed: 6 }));
    expect(result.manifest!.counts.samples).toBe(5);
  });

  it('resubmits every request of a batch the provider failed whole', async () => {
    server.setBatchPlanner(({ number }) => (number === 1 ? { status: 'failed' } : {}));
    const { home, file } = homeWithLines();
    const { result } = await run(home, file, { mode: 'openai' });
    expect(result.manifest!.stats.batch).toEqual({ batches: 2, submitted: 10, completed: 5, failed: 5, expired: 0, resubmitted: 5, abandoned: 0 });
    expect(result.manifest!.counts.samples).toBe(5);
  });

  it('a source asking one request after another sends them all in one batch, then loads again from the cache', async () => {
    const direct = homeWithLines();
    const plain = await run(direct.home, direct.file, undefined, { pipeline: sourcePipeline });
    server.reset();
    const { home, file } = homeWithLines();
    const { result } = await run(home, file, { mode: 'openai' }, { pipeline: sourcePipeline });
    expect(server.batches.map((b) => b.lines.length)).toEqual([5]);
    expect(server.count('chat')).toBe(0);
    expect(published(result.ref!.dir)).toEqual(published(plain.result.ref!.dir));
    expect(result.stats[0]).toMatchObject({ stage: 'ask-all', in: 0, out: 5, rejected: 0 });
  });

  it('a scan stage asking in collect sends its requests in one batch, then collects again from the cache', async () => {
    const direct = homeWithLines();
    const plain = await run(direct.home, direct.file, undefined, { pipeline: scanPipeline });
    server.reset();
    const { home, file } = homeWithLines();
    const { result } = await run(home, file, { mode: 'openai' }, { pipeline: scanPipeline });
    expect(server.batches.map((b) => b.lines.length)).toEqual([5]);
    expect(server.count('chat')).toBe(0);
    expect(published(result.ref!.dir)).toEqual(published(plain.result.ref!.dir));
    expect(result.stats[1]).toMatchObject({ stage: 'ask-all', in: 5, out: 5, rejected: 0 });
    expect(result.manifest!.stats.batch).toMatchObject({ batches: 1, submitted: 5, completed: 5 });
  });

  it('releases the state of each collect pass of a scan stage, also of the one the batch makes it run again', async () => {
    const released: number[] = [];
    let passes = 0;
    const releasing: PipelineDefinition<{ file: string }> = {
      ...scanPipeline,
      stages: (config) => {
        const [source, scan] = scanPipeline.stages(config) as [unknown, ScanStage<{ id: string; text: string }, Sample, Map<string, string>>];
        const stage: ScanStage<{ id: string; text: string }, Sample, { answers: Map<string, string>; pass: number }> = {
          kind: 'scan',
          name: scan.name,
          version: scan.version,
          input: scan.input,
          output: scan.output,
          prompts: scan.prompts,
          collect: async (lines, ctx) => ({ answers: await scan.collect!(lines, ctx), pass: ++passes }),
          run: (line, ctx) => scan.run(line, { ...ctx, state: ctx.state.answers }),
          dispose: (state) => void released.push(state.pass),
        };
        return [source, stage] as ReturnType<typeof scanPipeline.stages>;
      },
    };
    const { home, file } = homeWithLines();
    const { result } = await run(home, file, { mode: 'openai' }, { pipeline: releasing });
    expect(result.stats[1]).toMatchObject({ stage: 'ask-all', in: 5, out: 5, rejected: 0 });
    expect(passes).toBe(2);
    expect(released).toEqual([1, 2]);
  });

  it('adopts the batch a lost create answer made instead of creating a second one', async () => {
    server.dropCreateAnswers(1);
    const { home, file } = homeWithLines();
    const { result } = await run(home, file, { mode: 'openai' });
    expect(creates()).toBe(1);
    expect(server.batches).toHaveLength(1);
    expect(result.manifest!.stats.batch).toEqual(counts({}));
    expect(result.manifest!.counts.samples).toBe(5);
  });

  it('refuses a damaged batches.json rather than guess (a guess could pay for submitted batches twice)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tk-batch-state-'));
    writeFileSync(join(dir, 'batches.json'), '{"batches": [');
    expect(() => readBatchState(dir)).toThrow(`${join(dir, 'batches.json')}: not readable JSON`);
  });

  it('masks the API key in batch answers before they reach the cache, the run folder or the dataset', async () => {
    server.setResponder('chat', (request) => ({ content: JSON.stringify({ echo: `${request.body.messages[0].content} ${KEY}` }) }));
    const { home, file } = homeWithLines();
    const { result } = await run(home, file, { mode: 'openai' });
    expect(readFileSync(join(result.ref!.dir, 'data/test.jsonl'), 'utf8')).toContain('alpha [redacted]');
    const files = readdirSync(home, { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
    expect(files.length).toBeGreaterThan(5);
    for (const entry of files) expect(readFileSync(join(entry.parentPath, entry.name), 'utf8'), entry.name).not.toContain(KEY);
  });

  it('a run SIGKILLed between submit and collect resumes by polling the batch it submitted, not paying again', async () => {
    server.holdBatches(true);
    const { home, file } = homeWithLines();
    const child = spawn(process.execPath, ['--import', 'tsx', script, home, server.baseURL, file], { stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
    const runs = join(home, '.toolkiln', 'runs');
    const statePath = () => (existsSync(runs) && readdirSync(runs).length ? join(runs, readdirSync(runs)[0], 'batches.json') : '');
    const deadline = Date.now() + 60_000;
    // Submitted and recorded, and polled at least once since (the child waits in its poll loop).
    while (!(statePath() && existsSync(statePath()) && server.batches[0]?.retrieves > 0) && Date.now() < deadline) await sleep(20);
    expect(server.batches).toHaveLength(1);
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    expect(new DatasetStore(home).versions('echo')).toEqual([]);
    expect(JSON.parse(readFileSync(statePath(), 'utf8')).batches).toEqual([expect.objectContaining({ id: server.batches[0].id, collected: false })]);

    server.holdBatches(false);
    const runId = readdirSync(runs)[0];
    // Resumed without --batch, it would pay for the submitted requests again: refused.
    await expect(run(home, file, undefined, { resume: runId })).rejects.toThrow(`this run has 1 batch submitted and not yet collected (${server.batches[0].id}); resume with --batch`);
    expect(server.count('chat')).toBe(0);
    const { result } = await run(home, file, { mode: 'openai' }, { resume: runId });
    expect(result.status).toBe('published');
    expect(creates()).toBe(1); // no second batch for the same requests
    expect(server.count('chat')).toBe(0);
    expect(result.manifest!.stats.batch).toEqual(counts({}));
    expect(result.manifest!.counts.samples).toBe(5);
  });
});

describe("--batch: each request's result is taken once, whatever the provider's files hold", () => {
  const keyOf = (line: string) => (JSON.parse(line) as { custom_id: string }).custom_id;
  const withKey = (line: string, key: string) => line.replace(/"custom_id":"[^"]*"/, `"custom_id":"${key}"`);
  const addsUp = (batch: Record<string, number>) => expect(batch.submitted).toBe(batch.completed + batch.failed + batch.expired);

  it('a result line that is not JSON is reported and its request sent again, with the same bytes as a direct run', async () => {
    const direct = homeWithLines();
    const plain = await run(direct.home, direct.file);
    server.reset();
    let broken = '';
    server.setBatchPlanner(({ number }) => ({
      files: ({ output, errors }) => {
        if (number > 1) return { output, errors };
        broken = keyOf(output[2]);
        return { output: output.map((line, i) => (i === 2 ? line.slice(0, 60) : line)), errors };
      },
    }));
    const { home, file } = homeWithLines();
    const logs: string[] = [];
    const { result } = await run(home, file, { mode: 'openai' }, { log: (message) => logs.push(message) });
    expect(result.status).toBe('published');
    expect(server.batches.map((b) => b.lines.length)).toEqual([5, 1]);
    expect(server.batches[1].lines[0].custom_id).toBe(broken);
    expect(result.manifest!.stats.batch).toEqual(counts({ batches: 2, submitted: 6, completed: 5, failed: 1, resubmitted: 1 }));
    addsUp(result.manifest!.stats.batch as Record<string, number>);
    expect(published(result.ref!.dir)).toEqual(published(plain.result.ref!.dir));
    expect(logs.join('\n')).toMatch(/batch batch_\d+: 1 result line ignored \(first: \S+001-ask\.output\.jsonl:3: not valid JSON/);
  });

  it('a result line for a request the batch did not hold is neither counted nor cached', async () => {
    const stray = createHash('sha256').update('a request nobody asked').digest('hex');
    server.setBatchPlanner(({ number }) => ({ files: ({ output, errors }) => (number > 1 ? { output, errors } : { output: [...output, withKey(output[0], stray), withKey(output[1], 'request-1')], errors }) }));
    const { home, file } = homeWithLines();
    const { result } = await run(home, file, { mode: 'openai' });
    expect(result.manifest!.stats.batch).toEqual(counts({}));
    expect(result.manifest!.counts.samples).toBe(5);
    const cache = ResponseCache.open(join(home, '.toolkiln', 'cache', 'llm'));
    try {
      expect(cache.has(stray)).toBe(false);
      expect(server.batches[0].lines.every((line) => cache.has(line.custom_id))).toBe(true);
    } finally {
      cache.close();
    }
  });

  it('a request both answered and failed in the result files is taken as answered: sent once, paid once, counted once', async () => {
    server.setBatchPlanner(({ number }) => ({
      files: ({ output, errors }) => {
        if (number > 1) return { output, errors };
        const failedToo = JSON.stringify({ id: 'batch_req_late', custom_id: keyOf(output[0]), response: { status_code: 500, request_id: 'req_late', body: { error: { message: 'late failure' } } }, error: null });
        return { output: [...output, output[3]], errors: [...errors, failedToo] };
      },
    }));
    const { home, file } = homeWithLines();
    const { result } = await run(home, file, { mode: 'openai' });
    expect(server.batches).toHaveLength(1);
    expect(result.manifest!.stats.batch).toEqual(counts({}));
    addsUp(result.manifest!.stats.batch as Record<string, number>);
    expect(result.manifest!.counts.samples).toBe(5);
  });
});

describe('--batch-file / --batch-results (vllm run-batch)', () => {
  it('writes the requests as batch JSONL and stops, then finishes from the results file with the same bytes as a direct run', async () => {
    const direct = homeWithLines();
    const plain = await run(direct.home, direct.file);
    server.reset();

    const { home, file } = homeWithLines();
    const out = join(home, 'requests.jsonl');
    const fileMode = { gateway: { env: {} } }; // no endpoint: the file is all that is written
    const results = join(home, 'requests.results.jsonl');
    const stopped = await run(home, file, { mode: 'file', file: out }, fileMode).catch((error) => error);
    expect(stopped).toBeInstanceOf(BatchFileWritten);
    expect(stopped.exitCode).toBe(0);
    const runId = readdirSync(join(home, '.toolkiln', 'runs'))[0];
    expect(stopped.message).toContain(`wrote 5 requests to ${out}; nothing was published. Next: vllm run-batch -i ${out} -o ${join(home, 'requests.results.jsonl')} --model gpt-4o-mini`);
    expect(stopped.message).toContain(`--resume ${runId} --llm openai --model gpt-4o-mini --batch-results ${results} --batch-file ${out}`);
    expect(new DatasetStore(home).versions('echo')).toEqual([]);
    expect(server.requests).toHaveLength(0);

    const lines = readFileSync(out, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
    expect(lines).toHaveLength(5);
    // What vllm run-batch writes: one output line per request; one in the older shape with the completion directly under `response`.
    writeFileSync(
      results,
      lines
        .map((line, i) => {
          const content = JSON.stringify({ echo: line.body.messages.at(-1).content });
          const body = { id: `cmpl-${i}`, object: 'chat.completion', model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }], usage: { prompt_tokens: 10, completion_tokens: 5 } };
          return JSON.stringify(i === 0 ? { id: `vllm-${i}`, custom_id: line.custom_id, response: body } : { id: `vllm-${i}`, custom_id: line.custom_id, response: { status_code: 200, request_id: `vllm-batch-${i}`, body }, error: null });
        })
        .join('\n') + '\n',
    );
    const finished = await run(home, file, { mode: 'file', file: out }, { resume: runId, gateway: { env: {}, batchResults: results } });
    expect(finished.result.status).toBe('published');
    expect(published(finished.result.ref!.dir)).toEqual(published(plain.result.ref!.dir));
    expect(finished.usage.total).toMatchObject({ requests: 5, promptTokens: 50, completionTokens: 25 });
    expect(server.requests).toHaveLength(0);
  });

  it('names the file and line of a results line that is not a toolkiln batch answer', async () => {
    const { home } = homeWithLines();
    const results = join(home, 'bad.jsonl');
    writeFileSync(results, '{"custom_id": "request-1", "response": {"status_code": 200, "body": {}}}\n');
    expect(() => gateway(home, undefined, { batchResults: results })).toThrow(`${results}:1: custom_id "request-1" is not a toolkiln request key`);
  });

  it('toolkiln run --batch-file writes the requests of the first stage that asks the model and exits 0 with what to run next', async () => {
    const { home } = homeWithLines();
    const out: string[] = [];
    const code = await main(['run', 'mtu', '--limit', '3', '--llm', 'openai', '--model', 'served-model', '--batch-file', 'next.jsonl', '--quiet', '--json'], { out: (t) => out.push(t), err: () => {}, home, cwd: home, env: {} });
    expect(code).toBe(0);
    const doc = JSON.parse(out.join('\n'));
    expect(doc).toMatchObject({ status: 'batch-file', file: join(home, 'next.jsonl') });
    expect(doc.next).toMatch(/nothing was published\. Next: vllm run-batch -i .*next\.jsonl -o .*next\.results\.jsonl --model served-model/);
    const lines = readFileSync(join(home, 'next.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
    expect(lines).toHaveLength(doc.requests);
    expect(lines[0]).toMatchObject({ method: 'POST', url: '/v1/chat/completions', body: { model: 'served-model' } });
    expect(new DatasetStore(home).versions('mtu')).toEqual([]);
  });

  it('the CLI refuses --batch with --batch-file, and --batch with another backend', async () => {
    const { home } = homeWithLines();
    const cli = async (...argv: string[]) => {
      const err: string[] = [];
      const code = await main(argv, { out: () => {}, err: (t) => err.push(t), home, cwd: home, env: {} });
      return { code, err: err.join('\n') };
    };
    expect(await cli('run', 'toole', '--batch', '--batch-file', 'x.jsonl')).toEqual({ code: 2, err: 'toolkiln: --batch sends requests to the provider and --batch-file writes them to a file: pick one' });
    expect((await cli('run', 'toole', '--batch', '--llm', 'offline')).err).toMatch(/--batch, --batch-file and --batch-results work with --llm openai/);
  });
});
