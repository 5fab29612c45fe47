import { appendFileSync, cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { UserError } from '../core/errors.ts';
import { createGateway, ReplayMissError, type GatewayOptions, type LlmGateway } from '../core/llm/index.ts';
import { definePrompt } from '../core/prompt.ts';
import type { LimiterStart } from '../core/llm/limiter.ts';
import { startOpenAiServer, fakeEmbedding, mostWithin, type OpenAiTestServer } from './helpers/openai-server.ts';

const KEY = 'sk-test-SECRET-4f8a9c2e1b7d6a5f';

const Answer = z.object({ name: z.string().min(1), count: z.number().int() });
const answerPrompt = definePrompt({
  id: 'test/answer',
  system: 'You describe things.',
  template: 'Describe {{thing}}.',
  schema: Answer,
  maxTokens: 50,
  offline: (vars: { thing: string }, rng) => ({ name: `offline ${vars.thing}`, count: rng.int(1, 9) }),
});

const listPrompt = definePrompt({
  id: 'test/list',
  template: 'List {{n}} verbs, one per numbered line.',
  schema: z.array(z.string().min(1)).min(1),
  parseText: (text) => text.split('\n').map((line) => line.replace(/^\s*\d+\.\s*/, '').trim()).filter(Boolean),
  offline: () => ['find', 'get'],
});

/** The server's answer to a request for `thing`: a valid Answer naming it. */
function validFor(body: any): string {
  const user = body.messages.find((m: { role: string }) => m.role === 'user').content as string;
  return JSON.stringify({ name: user.replace(/^Describe (.*)\.$/, '$1'), count: 3 });
}

let server: OpenAiTestServer;
let home: string;
let logs: string[];
const gateways: LlmGateway[] = [];

beforeAll(async () => {
  server = await startOpenAiServer();
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  server.reset();
  server.setResponder('chat', (request) => ({ content: validFor(request.body) }));
  home = mkdtempSync(join(tmpdir(), 'toolkiln-llm-'));
  logs = [];
});
afterEach(async () => {
  for (const gateway of gateways.splice(0)) await gateway.close();
  rmSync(home, { recursive: true, force: true });
});

function gateway(extra: Partial<GatewayOptions> = {}, at = home): LlmGateway {
  const created = createGateway({
    backend: 'openai',
    model: 'test-model',
    env: { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: server.baseURL },
    home: at,
    retryBaseMs: 5,
    maxRetryWaitMs: 2000,
    requestTimeoutMs: 2000,
    priceTable: { 'test-model': { input: 1, output: 2 } },
    log: (message) => logs.push(message),
    ...extra,
  });
  gateways.push(created);
  return created;
}

const ask = (llm: LlmGateway, thing: string, key = thing) => llm.generate(answerPrompt, { thing }, { stage: 'describe', key });

function cacheFiles(at = home): string[] {
  const dir = join(at, '.toolkiln', 'cache', 'llm');
  return readdirSync(dir).map((name) => join(dir, name));
}

describe('openai backend', () => {
  it('sends the schema as response_format, a per-record seed, and counts usage and cost', async () => {
    const llm = gateway();
    const result = await ask(llm, 'a lamp');
    expect(result).toEqual({ ok: true, value: { name: 'a lamp', count: 3 }, model: 'test-model', cached: false });
    expect(server.count('chat')).toBe(1);
    const body = server.requests[0].body;
    expect(body.model).toBe('test-model');
    expect(body.max_tokens).toBe(50);
    expect(typeof body.seed).toBe('number');
    expect(body.response_format.type).toBe('json_schema');
    expect(body.response_format.json_schema.name).toBe('test_answer');
    expect(body.response_format.json_schema.schema.required).toEqual(['name', 'count']);
    expect(body.response_format.json_schema.strict).toBe(false); // minLength is outside strict mode
    expect(server.requests[0].headers.authorization).toBe(`Bearer ${KEY}`);

    const other = await ask(llm, 'a lamp', 'another record');
    expect(other.ok).toBe(true);
    expect(server.requests[1].body.seed).not.toBe(body.seed);

    const usage = llm.usage();
    expect(usage.total.requests).toBe(2);
    expect(usage.byStage.describe.requests).toBe(2);
    expect(usage.byModel['test-model'].promptTokens).toBeGreaterThan(0);
    const { promptTokens, completionTokens } = usage.total;
    expect(usage.total.costUsd).toBeCloseTo((promptTokens * 1 + completionTokens * 2) / 1e6, 5);
  });

  it('a second run with the cache sends zero requests and gives the same values', async () => {
    const first = gateway();
    const things = ['a lamp', 'a chair', 'a door'];
    const before = await Promise.all(things.map((t) => ask(first, t)));
    await first.close();
    expect(server.count()).toBe(3);

    const second = gateway();
    const after = await Promise.all(things.map((t) => ask(second, t)));
    expect(server.count()).toBe(3);
    expect(after.map((r) => r.ok && r.value)).toEqual(before.map((r) => r.ok && r.value));
    expect(after.every((r) => r.ok && r.cached)).toBe(true);
    expect(second.usage().total).toMatchObject({ requests: 0, cached: 3, promptTokens: 0, costUsd: 0 });
  });

  it('--no-cache neither reads nor writes the cache', async () => {
    await ask(gateway(), 'a lamp');
    const fresh = gateway({ noCache: true });
    expect((await ask(fresh, 'a lamp')).ok).toBe(true);
    expect(server.count()).toBe(2);
    expect(cacheFiles()).toHaveLength(1);
  });

  it('sends identical requests in flight at once only once', async () => {
    server.setLatency(50);
    const llm = gateway();
    const [a, b] = await Promise.all([ask(llm, 'a lamp'), ask(llm, 'a lamp')]);
    server.setLatency(0);
    expect(a.ok && b.ok).toBe(true);
    expect(server.count()).toBe(1);
    expect(llm.usage().total).toMatchObject({ requests: 1, cached: 1 });
  });

  it('on 429 waits for Retry-After, slows the pool, then succeeds', async () => {
    server.enqueue('chat', { status: 429, headers: { 'retry-after': '1' }, error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' } });
    const llm = gateway({ concurrency: 4 });
    const result = await ask(llm, 'a lamp');
    expect(result.ok && result.value).toEqual({ name: 'a lamp', count: 3 });
    expect(server.count()).toBe(2);
    expect(logs.some((l) => /rate limited: pausing 1\.0 s, slowing to 50% \(concurrency 2\)/.test(l))).toBe(true);
    expect(llm.usage().total.requests).toBe(2);
  });

  it('caps a long Retry-After at maxRetryWaitMs', async () => {
    server.enqueue('chat', { status: 429, headers: { 'retry-after': '120' } });
    const llm = gateway({ maxRetryWaitMs: 200 });
    expect((await ask(llm, 'a lamp')).ok).toBe(true);
    expect(logs.some((l) => l.includes('pausing 0.2 s'))).toBe(true);
  });

  it('retries 5xx with backoff and rejects with http_error when they do not stop', async () => {
    server.enqueue('chat', { status: 500 }, { status: 502 }, { status: 503 });
    expect((await ask(gateway(), 'a lamp')).ok).toBe(true);
    expect(server.count()).toBe(4);

    server.reset();
    server.setResponder('chat', () => ({ status: 500, error: { message: 'upstream exploded' } }));
    const failed = await ask(gateway({ maxRetries: 2 }), 'a chair');
    expect(failed).toMatchObject({ ok: false, reason: 'http_error' });
    expect(!failed.ok && failed.detail).toMatch(/test\/answer: HTTP 500: .*upstream exploded.*gave up after 3 attempts/);
    expect(server.count()).toBe(3);
  });

  it('times out a hung request (and a stalled body), then retries; rejects with timeout when it keeps hanging', async () => {
    server.enqueue('chat', { hang: true }, { stallBody: true });
    const llm = gateway({ requestTimeoutMs: 1000 }); // room for a slow but healthy answer on a loaded machine
    const result = await ask(llm, 'a lamp');
    expect(result.ok && result.value).toEqual({ name: 'a lamp', count: 3 });
    expect(server.count()).toBe(3);

    server.reset();
    server.setResponder('chat', () => ({ hang: true }));
    const failed = await ask(gateway({ requestTimeoutMs: 200, maxRetries: 1 }), 'a chair');
    expect(failed).toMatchObject({ ok: false, reason: 'timeout' });
    expect(server.count()).toBe(2);
  });

  it('retries a connection reset and a malformed response body', async () => {
    server.enqueue('chat', { reset: true }, { rawBody: '{"id": "x", "choices": [' }, { body: { unexpected: true } });
    const result = await ask(gateway(), 'a lamp');
    expect(result.ok && result.value).toEqual({ name: 'a lamp', count: 3 });
    expect(server.count()).toBe(4);
  });

  it('repairs malformed JSON by sending the error back', async () => {
    server.enqueue('chat', { content: '{"name": "a lamp", "count": ' });
    const result = await ask(gateway(), 'a lamp');
    expect(result.ok && result.value).toEqual({ name: 'a lamp', count: 3 });
    expect(server.count()).toBe(2);
    const messages = server.requests[1].body.messages;
    expect(messages.slice(-2).map((m: { role: string }) => m.role)).toEqual(['assistant', 'user']);
    expect(messages.at(-2).content).toBe('{"name": "a lamp", "count": ');
    expect(messages.at(-1).content).toMatch(/no complete JSON value|not valid JSON/);
  });

  it('repairs an answer that fails the schema, and caches only the passing answer', async () => {
    server.enqueue('chat', { content: 'Sure! ```json\n{"name": "", "count": 1.5}\n```' });
    const llm = gateway();
    const result = await ask(llm, 'a lamp');
    expect(result.ok && result.value).toEqual({ name: 'a lamp', count: 3 });
    expect(server.count()).toBe(2);
    const repair = server.requests[1].body.messages.at(-1).content as string;
    expect(repair).toContain('name:');
    expect(repair).toContain('count:');
    expect(llm.usage().total.requests).toBe(2);

    const cached = readFileSync(cacheFiles()[0], 'utf8');
    expect(cached).toContain(JSON.stringify(JSON.stringify({ name: 'a lamp', count: 3 })));
    expect(cached).not.toContain('1.5');
  });

  it('rejects with schema_invalid after the last repair', async () => {
    server.setResponder('chat', () => ({ content: '{"name": "x", "count": "three"}' }));
    const result = await ask(gateway({ maxRepairs: 2 }), 'a lamp');
    expect(result).toMatchObject({ ok: false, reason: 'schema_invalid' });
    expect(!result.ok && result.detail).toMatch(/^test\/answer: .*count: .*after 2 repair attempts.*the answer began: \{"name": "x"/);
    expect(server.count()).toBe(3);
    expect(() => cacheFiles()).toThrow(); // nothing cached
  });

  it('retries a truncated answer once with a larger max_tokens, then rejects with truncated', async () => {
    server.enqueue('chat', { content: '{"name": "a la', finishReason: 'length' });
    const result = await ask(gateway(), 'a lamp');
    expect(result.ok && result.value).toEqual({ name: 'a lamp', count: 3 });
    expect(server.requests.map((r) => r.body.max_tokens)).toEqual([50, 100]);

    server.reset();
    server.setResponder('chat', () => ({ content: '{"name": "a ch', finishReason: 'length' }));
    const failed = await ask(gateway(), 'a chair');
    expect(failed).toMatchObject({ ok: false, reason: 'truncated' });
    expect(server.count()).toBe(2);
  });

  it('rejects refusals and content-filtered answers with their reasons', async () => {
    server.enqueue('chat', { content: null, refusal: 'I cannot help with that.' }, { content: '', finishReason: 'content_filter' });
    const llm = gateway();
    expect(await ask(llm, 'a lamp')).toMatchObject({ ok: false, reason: 'refused' });
    expect(await ask(llm, 'a chair')).toMatchObject({ ok: false, reason: 'content_filter' });
  });

  it('falls back to a JSON instruction when the endpoint rejects response_format, and remembers it', async () => {
    server.setResponder('chat', (request) =>
      request.body.response_format
        ? { status: 400, error: { message: "Unknown parameter: 'response_format.json_schema'", type: 'invalid_request_error', param: 'response_format' } }
        : { content: `Here you go: ${validFor(request.body)}` },
    );
    const llm = gateway();
    expect((await ask(llm, 'a lamp')).ok).toBe(true);
    expect((await ask(llm, 'a chair')).ok).toBe(true);
    expect(server.requests.map((r) => Boolean(r.body.response_format))).toEqual([true, false, false]);
    expect(server.requests[1].body.messages[0].content).toContain('Answer with only a JSON value');
    expect(logs.filter((l) => l.includes('rejects response_format'))).toHaveLength(1);
  });

  it('renames max_tokens when the endpoint asks for max_completion_tokens', async () => {
    server.setResponder('chat', (request) =>
      'max_tokens' in request.body
        ? { status: 400, error: { message: "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.", param: 'max_tokens' } }
        : { content: validFor(request.body) },
    );
    const result = await ask(gateway(), 'a lamp');
    expect(result.ok).toBe(true);
    expect(server.requests[1].body.max_completion_tokens).toBe(50);
  });

  it('reads text answers with the prompt parseText, without response_format', async () => {
    server.setResponder('chat', () => ({ content: '1. find\n2. search\n' }));
    const result = await gateway().generate(listPrompt, { n: 2 }, { stage: 'verbs', key: 'k' });
    expect(result.ok && result.value).toEqual(['find', 'search']);
    expect(server.requests[0].body.response_format).toBeUndefined();
  });

  it('a rejected key is a UserError for every later request, without sending them', async () => {
    server.setResponder('chat', () => ({ status: 401, error: { message: `Incorrect API key provided: ${KEY}.`, type: 'invalid_request_error', code: 'invalid_api_key' } }));
    const llm = gateway();
    const error = await ask(llm, 'a lamp').catch((e) => e);
    expect(error).toBeInstanceOf(UserError);
    expect(error.message).toMatch(/rejected the API key \(401\)/);
    await expect(ask(llm, 'a chair')).rejects.toBeInstanceOf(UserError);
    expect(server.count()).toBe(1);
  });
});

describe('rate limits', () => {
  // The limits are checked against what the limiter decided (its own start times), not against when
  // the server saw the requests: on a loaded machine requests reach the server bunched together.
  function recordStarts(): { starts: LimiterStart[]; onRequestStart: (start: LimiterStart) => void } {
    const starts: LimiterStart[] = [];
    return { starts, onRequestStart: (start) => void starts.push(start) };
  }

  it('never starts more than rpm requests in any window', async () => {
    const { starts, onRequestStart } = recordStarts();
    const llm = gateway({ concurrency: 8, rpm: 4, rateWindowMs: 1000, onRequestStart });
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => ask(llm, `thing ${i}`)));
    expect(results.every((r) => r.ok)).toBe(true);
    expect(server.count()).toBe(10);
    expect(starts).toHaveLength(10);
    expect(mostWithin(starts.map((s) => s.at), 1000)).toBeLessThanOrEqual(4);
  });

  it('never has more than concurrency requests open at once', async () => {
    // The server holds every request until three are open, so the pool must reach its limit and the
    // test does not depend on how fast requests arrive.
    const held: (() => void)[] = [];
    server.setResponder('chat', async (request) => {
      await new Promise<void>((release) => {
        held.push(release);
        if (held.length === 3) for (const next of held.splice(0)) next();
      });
      return { content: validFor(request.body) };
    });
    const llm = gateway({ concurrency: 3 });
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => ask(llm, `thing ${i}`)));
    expect(results.every((r) => r.ok)).toBe(true);
    expect(server.maxInFlight).toBe(3);
  });

  it('keeps the tokens reported by the endpoint within tpm in any window', async () => {
    server.setResponder('chat', (request) => ({ content: validFor(request.body), usage: { prompt_tokens: 30, completion_tokens: 10 } }));
    const { starts, onRequestStart } = recordStarts();
    const llm = gateway({ concurrency: 8, tpm: 100, rateWindowMs: 500, onRequestStart });
    const results = await Promise.all(Array.from({ length: 5 }, (_, i) => ask(llm, `thing ${i}`)));
    expect(results.every((r) => r.ok)).toBe(true);
    // Each request really costs 40 tokens: three started in one window would be 120 > 100.
    expect(starts).toHaveLength(5);
    expect(mostWithin(starts.map((s) => s.at), 500)).toBeLessThanOrEqual(2);
    expect(llm.usage().total.promptTokens + llm.usage().total.completionTokens).toBe(200);
  });
});

describe('cache', () => {
  it('skips a torn last write and asks again for that answer only', async () => {
    const first = gateway();
    for (const thing of ['a lamp', 'a chair', 'a door']) await ask(first, thing);
    await first.close();
    const [segment] = cacheFiles();
    truncateSync(segment, statSync(segment).size - 7); // the last line loses its end
    appendFileSync(join(home, '.toolkiln', 'cache', 'llm', 'zzzz-other.jsonl'), '{"half a line');
    server.reset();

    const second = gateway();
    const results = await Promise.all(['a lamp', 'a chair', 'a door'].map((t) => ask(second, t)));
    expect(results.map((r) => r.ok && r.cached)).toEqual([true, true, false]);
    expect(server.count()).toBe(1);
    expect(logs.filter((l) => l.includes('skipped a torn last write'))).toHaveLength(2);
  });

  it('asks again when a cached answer no longer passes the prompt, and keeps the new answer', async () => {
    server.setResponder('chat', () => ({ content: '1. find\n2. search' }));
    expect((await gateway().generate(listPrompt, { n: 2 }, { stage: 'verbs', key: 'k' })).ok).toBe(true);
    // Same id, template and schema (so the same cache key), but a stricter reader of the text.
    const stricter = definePrompt({
      ...listPrompt,
      parseText: (text: string) => {
        if (!text.startsWith('VERBS')) throw new Error('expected a VERBS header');
        return text.split('\n').slice(1);
      },
    });
    server.setResponder('chat', () => ({ content: 'VERBS\nfind\nsearch' }));
    const again = await gateway().generate(stricter, { n: 2 }, { stage: 'verbs', key: 'k' });
    expect(again.ok && again.value).toEqual(['find', 'search']);
    expect(server.count()).toBe(2);
    const third = await gateway().generate(stricter, { n: 2 }, { stage: 'verbs', key: 'k' });
    expect(third.ok && third.cached).toBe(true);
    expect(server.count()).toBe(2);
  });

  it('replay cannot run without the cache', () => {
    expect(() => createGateway({ backend: 'replay', noCache: true, env: {}, home })).toThrow(/cannot be combined with --no-cache/);
  });

  it('replays a copied cache byte for byte, with no endpoint and no key', async () => {
    const things = ['a lamp', 'a chair', 'a door', 'a window'];
    const original = await Promise.all(things.map((t) => ask(gateway(), t)));
    const elsewhere = mkdtempSync(join(tmpdir(), 'toolkiln-llm-copy-'));
    try {
      cpSync(join(home, '.toolkiln', 'cache'), join(elsewhere, '.toolkiln', 'cache'), { recursive: true });
      server.reset();
      const replay = createGateway({ backend: 'replay', env: {}, home: elsewhere });
      gateways.push(replay);
      expect(replay.model).toBe('test-model'); // the one model in the cache
      const replayed = await Promise.all(things.map((t) => ask(replay, t)));
      expect(JSON.stringify(replayed.map((r) => r.ok && r.value))).toBe(JSON.stringify(original.map((r) => r.ok && r.value)));
      expect(server.count()).toBe(0);

      const miss = await ask(replay, 'a lamp', 'a record never asked');
      expect(miss).toMatchObject({ ok: false, reason: 'replay_miss' });
      expect(!miss.ok && miss.detail).toMatch(/prompt test\/answer .*record a record never asked.*cache key [0-9a-f]{64}/);

      const strict = createGateway({ backend: 'replay', env: {}, home: elsewhere, replayMiss: 'throw' });
      gateways.push(strict);
      await expect(ask(strict, 'a table')).rejects.toBeInstanceOf(ReplayMissError);
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });
});

describe('secrets', () => {
  it('never writes the API key to the cache, errors, rejects, logs or usage', async () => {
    const llm = gateway();
    await ask(llm, 'a lamp');
    await llm.embed(['find a flight'], { stage: 'embed' });
    server.enqueue('chat', { status: 400, error: { message: `Bad request from key ${KEY} (Authorization: Bearer ${KEY})` } });
    const rejected = await ask(llm, 'a chair');
    expect(rejected).toMatchObject({ ok: false, reason: 'http_error' });
    server.setResponder('chat', () => ({ status: 500, error: { message: `internal error for ${KEY}` } }));
    await ask(gateway({ maxRetries: 1 }), 'a door');
    server.setResponder('chat', () => ({ status: 403, error: { message: `key ${KEY} may not use this model` } }));
    const thrown = await ask(gateway(), 'a window').catch((e: Error) => e);
    await llm.close();

    expect(thrown).toBeInstanceOf(UserError);
    const seen = [JSON.stringify(rejected), (thrown as Error).message, ...logs, JSON.stringify(llm.usage()), ...cacheFiles().map((f) => readFileSync(f, 'utf8'))].join('\n');
    expect(seen).toContain('[redacted]');
    expect(seen).not.toContain(KEY);
    expect(seen).not.toContain(KEY.slice(8));
  });
});

describe('embeddings', () => {
  it('embeds in batches through the cache; replay serves them; offline refuses clearly', async () => {
    const texts = Array.from({ length: 300 }, (_, i) => `text ${i % 250}`); // 250 distinct
    const llm = gateway({ embedBatchSize: 100 });
    const vectors = await llm.embed(texts, { stage: 'embed', model: 'test-embedding' });
    expect(vectors).toHaveLength(300);
    expect(vectors[260]).toEqual(fakeEmbedding('text 10'));
    expect(server.count('embeddings')).toBe(3);
    expect(server.requests[0].body.encoding_format).toBe('float');

    const again = await gateway().embed(texts.slice(0, 5), { stage: 'embed', model: 'test-embedding' });
    expect(again[4]).toEqual(fakeEmbedding('text 4'));
    expect(server.count('embeddings')).toBe(3);

    const replay = createGateway({ backend: 'replay', model: 'test-model', env: {}, home });
    gateways.push(replay);
    expect((await replay.embed(['text 7'], { stage: 'embed', model: 'test-embedding' }))[0]).toEqual(fakeEmbedding('text 7'));
    await expect(replay.embed(['never seen'], { stage: 'embed', model: 'test-embedding' })).rejects.toThrow(/never seen.*cache key/);

    const offline = createGateway({ env: {} });
    expect(offline.backend).toBe('offline');
    await expect(offline.embed(['x'], { stage: 'embed' })).rejects.toThrow(/lexical embedder/);
  });
});

describe('backend choice, dry run, cost', () => {
  it('defaults to openai when a key or base URL is set, else offline; rejects unknown backends', () => {
    expect(createGateway({ env: {} }).backend).toBe('offline');
    expect(createGateway({ env: { OPENAI_API_KEY: KEY }, home }).backend).toBe('openai');
    expect(createGateway({ env: { OPENAI_API_KEY: KEY }, home }).model).toBe('gpt-4o-mini');
    expect(createGateway({ env: { OPENAI_BASE_URL: server.baseURL, TOOLKILN_MODEL: 'llama3.1' }, home }).model).toBe('llama3.1');
    expect(() => createGateway({ env: { OPENAI_BASE_URL: server.baseURL }, home })).toThrow(/pass --model or set TOOLKILN_MODEL/);
    expect(() => createGateway({ backend: 'llamafile', env: {} })).toThrow(/--llm must be one of offline, openai, replay/);
    expect(() => createGateway({ backend: 'openai', env: { OPENAI_API_KEY: KEY }, home, concurrency: 0 })).toThrow(/--concurrency must be/);
  });

  it('a dry run sends nothing, answers with offline renderings and estimates requests, tokens and dollars', async () => {
    await ask(gateway({ model: 'gpt-4o-mini' }), 'a lamp'); // one answer already cached
    server.reset();
    const dry = createGateway({ dryRun: true, model: 'gpt-4o-mini', env: {}, home });
    gateways.push(dry);
    expect(dry.dryRun).toBe(true);
    expect(dry.backend).toBe('openai');
    const results = await Promise.all(['a lamp', 'a chair', 'a door'].map((t) => ask(dry, t)));
    expect(results.map((r) => r.ok && r.value.name)).toEqual(['offline a lamp', 'offline a chair', 'offline a door']);
    expect(server.count()).toBe(0);
    const { total } = dry.usage();
    expect(total.requests).toBe(2);
    expect(total.cached).toBe(1);
    expect(total.promptTokens).toBeGreaterThan(20);
    expect(total.completionTokens).toBeGreaterThan(5);
    expect(total.costUsd).toBeCloseTo((total.promptTokens * 0.15 + total.completionTokens * 0.6) / 1e6, 5);
  });

  it('prices models from the table (dated names too) and leaves unknown models without a cost', async () => {
    const priced = gateway({ model: 'gpt-4o-2024-08-06', priceTable: undefined });
    await ask(priced, 'a lamp');
    expect(priced.usage().total.costUsd).toBeGreaterThan(0);
    const unpriced = gateway({ model: 'my-local-llama', priceTable: undefined });
    await ask(unpriced, 'a lamp');
    expect(unpriced.usage().total.costUsd).toBeNull();
    expect(unpriced.usage().total.promptTokens).toBeGreaterThan(0);
    expect(logs.some((l) => l.includes('no price for model "my-local-llama"'))).toBe(true);
  });
});
