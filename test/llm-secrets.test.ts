import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { main } from '../bin/cli.ts';
import { createGateway, type LlmGateway } from '../core/llm/index.ts';
import { keyMasker, maskingFetch, redactor } from '../core/llm/secrets.ts';
import { definePrompt } from '../core/prompt.ts';
import { startOpenAiServer, type OpenAiTestServer, type RecordedRequest } from './helpers/openai-server.ts';

const KEY = 'sk-test-SECRET-4f8a9c2e1b7d6a5f';
/** The key's secret part: what must never be readable, in any spelling. */
const SECRET = 'SECRET-4f8a9c2e1b7d6a5f';

/** JSON `\u` escapes of every character of `text` (`upper`: upper-case hex digits). */
function escaped(text: string, upper = false): string {
  return [...text].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')[upper ? 'toUpperCase' : 'toLowerCase']()}`).join('');
}

/** `text` with every `\uXXXX` escape (behind any number of backslashes) decoded, at any depth. */
function decoded(text: string): string {
  return text.replace(/\\+u([0-9a-fA-F]{4})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}

/** Every file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

/** The files under `dir` whose text holds the key's secret part, literally or `\u`-escaped. */
function filesHoldingKey(dir: string): string[] {
  return filesUnder(dir).filter((file) => decoded(readFileSync(file, 'utf8')).includes(SECRET));
}

describe('keyMasker', () => {
  const mask = keyMasker(KEY);

  it('masks the key as written, and as JSON \\u escapes of any or all of its characters', () => {
    expect(mask(`my key is ${KEY}.`)).toBe('my key is [redacted].');
    const forms = [escaped(KEY), escaped(KEY, true), `${KEY.slice(0, 10)}${escaped(KEY.slice(10, 14))}${KEY.slice(14)}`, escaped(KEY).replaceAll('\\u', '\\\\u')];
    for (const form of forms) {
      const json = `{"name": "${form}", "count": 3}`;
      expect(decoded(json)).toContain(KEY); // the form really spells the key
      expect(mask(json)).toBe('{"name": "[redacted]", "count": 3}');
    }
    // The key inside a JSON answer inside a JSON body: the body still parses, the answer too.
    const body = JSON.stringify({ content: JSON.stringify({ name: `${KEY}!` }).replace('sk', escaped('sk')) });
    expect(JSON.parse(JSON.parse(mask(body)).content)).toEqual({ name: '[redacted]!' });
  });

  it('leaves other text alone, and does not mask a short placeholder key', () => {
    expect(mask('sk-test-SECRET and 4f8a9c2e1b7d6a5f apart')).toBe('sk-test-SECRET and 4f8a9c2e1b7d6a5f apart');
    expect(keyMasker('EMPTY')('the list is EMPTY')).toBe('the list is EMPTY');
    expect(keyMasker(undefined)(KEY)).toBe(KEY);
    expect(redactor(KEY)(`Authorization: Bearer abc.def and ${KEY}`)).toBe('Authorization: Bearer [redacted] and [redacted]');
  });

  it('masks bodies as they arrive through fetch, keeping status and headers', async () => {
    const completion = { choices: [{ message: { content: null, tool_calls: [{ type: 'function', function: { name: 'f', arguments: JSON.stringify({ token: KEY }) } }] } }] };
    const inner = (async () => new Response(JSON.stringify(completion), { status: 201, headers: { 'content-type': 'application/json', 'x-request-id': 'r1' } })) as typeof fetch;
    const response = await maskingFetch(inner, keyMasker(KEY))('http://x/v1/chat/completions');
    expect(response.status).toBe(201);
    expect(response.headers.get('x-request-id')).toBe('r1');
    const body = await response.json();
    expect(JSON.parse(body.choices[0].message.tool_calls[0].function.arguments)).toEqual({ token: '[redacted]' });
  });
});

const Answer = z.object({ name: z.string().min(1), count: z.number().int() });
const answerPrompt = definePrompt({
  id: 'test/secret-answer',
  template: 'Describe {{thing}}.',
  schema: Answer,
  offline: (vars: { thing: string }) => ({ name: vars.thing, count: 1 }),
});

describe('an endpoint that echoes the key (real openai client)', () => {
  let server: OpenAiTestServer;
  let home: string;
  let logs: string[];
  let llm: LlmGateway;

  beforeAll(async () => {
    server = await startOpenAiServer();
  });
  afterAll(async () => server.close());
  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), 'toolkiln-secrets-'));
    logs = [];
    llm = createGateway({
      backend: 'openai',
      model: 'test-model',
      env: { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: server.baseURL },
      home,
      maxRetries: 1,
      maxRepairs: 0,
      retryBaseMs: 1,
      log: (message) => logs.push(message),
    });
  });
  afterEach(async () => {
    await llm.close();
    rmSync(home, { recursive: true, force: true });
  });

  const ask = (thing: string) => llm.generate(answerPrompt, { thing }, { stage: 'describe', key: thing });

  it('masks the key in successful answers, refusals and error bodies before anything is kept', async () => {
    server.enqueue(
      'chat',
      { content: JSON.stringify({ name: `the key ${KEY}`, count: 1 }) },
      { content: `{"name": "${escaped(KEY)}", "count": 2}` },
      { content: `{"name": "${KEY.slice(0, 12)}${escaped(KEY.slice(12, 20), true)}${KEY.slice(20)}", "count": 3}` },
      { content: null, refusal: `I will not repeat ${KEY}` },
      { status: 400, error: { message: `bad request for ${KEY}` } },
      { content: `not json, but the key: ${KEY}` },
      // A 200 that is no chat completion, the key where a 200-character preview cuts it.
      { body: { note: `${'x'.repeat(185)}${KEY}` } },
      { body: { note: `${'x'.repeat(185)}${KEY}` } },
    );
    const results = [];
    for (const thing of ['plain', 'escaped', 'half escaped', 'refusal', 'error body', 'bad json', 'no completion']) results.push(await ask(thing));

    expect(results.slice(0, 3).map((r) => r.ok && r.value)).toEqual([
      { name: 'the key [redacted]', count: 1 },
      { name: '[redacted]', count: 2 },
      { name: '[redacted]', count: 3 },
    ]);
    expect(results.slice(3).map((r) => !r.ok && r.reason)).toEqual(['refused', 'http_error', 'invalid_json', 'bad_response']);
    const details = results.map((r) => (r.ok ? '' : r.detail)).join('\n');
    expect(details).toContain('[redacted]');

    // Replayed from the cache: still masked.
    const again = await ask('escaped');
    expect(again).toMatchObject({ ok: true, cached: true, value: { name: '[redacted]' } });

    await llm.close();
    const kept = [details, ...logs, ...filesUnder(home).map((f) => readFileSync(f, 'utf8'))].join('\n');
    expect(decoded(kept)).not.toContain(SECRET);
    expect(decoded(kept)).not.toContain(KEY.slice(0, 12) + 'S'); // not even the key's head before a cut
    expect(filesUnder(home).length).toBeGreaterThan(0);
  });
});

describe('toolkiln run --llm openai against an endpoint that echoes the key', () => {
  const WINE = readFileSync(new URL('./fixtures/nestools/wine-chain.py', import.meta.url), 'utf8');
  const textOf = (request: RecordedRequest) => (request.body.messages as { content: string }[]).map((m) => m.content).join('\n');
  let server: OpenAiTestServer;
  let home: string;

  beforeAll(async () => {
    let generated = 0;
    server = await startOpenAiServer({
      chat: (request) => {
        const text = textOf(request);
        if (text.includes("It's your turn to generate.\n\nDomain:")) {
          const domain = text.slice(text.lastIndexOf('Domain: ') + 8).split('\n')[0];
          // The second domain gets an error body echoing the key; the others a sound program that echoes it too.
          if (++generated === 2) return { status: 400, error: { message: `request of ${KEY} refused` } };
          const program = WINE.replace('on that day.', `on that day. Account ${KEY}.`);
          return { content: `Domain: ${domain}\nAnswer:\n\`\`\`python\n${program}\`\`\`\nKey used: ${escaped(KEY)} (${KEY}).` };
        }
        if (text.includes('You rewrite tasks well')) return { content: `Which red wine sold best in California on October 8th, 2023 (account ${KEY}), where is it from, and how much left there that day?` };
        return { content: `Rewritten task: Which red wine sold best in California on October 8th, 2023? Where does it come from, and how much left there that day? ${KEY}` };
      },
    });
    home = mkdtempSync(join(tmpdir(), 'toolkiln-secrets-cli-'));
    writeFileSync(join(home, 'small.json'), JSON.stringify({ count: 3, examplesPerRequest: 1, referenceFile: '' }));
  });
  afterAll(async () => {
    await server.close();
    rmSync(home, { recursive: true, force: true });
  });

  it('publishes a dataset, and no file under TOOLKILN_HOME holds the key', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const env = { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: server.baseURL, TOOLKILN_MODEL: 'test-model', TOOLKILN_HOME: home };
    // One request in three gets an error body: the run publishes anyway, that record in rejects.
    const argv = ['run', 'nestools', '--llm', 'openai', '--config', 'small.json', '--max-transport-rejects', '1', '--json', '--quiet'];
    const code = await main(argv, { out: (t) => out.push(t), err: (t) => err.push(t), home, cwd: home, env });
    expect(err.join('\n')).not.toContain(SECRET);
    expect(code, err.join('\n')).toBe(0);
    const result = JSON.parse(out.join('\n'));
    expect(result).toMatchObject({ status: 'published', dataset: 'nestools@v1' });
    expect(server.count('chat')).toBeGreaterThanOrEqual(3);

    const written = filesUnder(home);
    // The cache, the run's journals and the published version (samples, rejects, manifest) are all there…
    for (const part of ['.toolkiln/cache/llm/', '.toolkiln/runs/', 'datasets/nestools/v1/rejects.jsonl', 'datasets/nestools/v1/data/']) {
      expect(written.some((file) => file.includes(join(home, part))), part).toBe(true);
    }
    // … the key reached them masked …
    expect(written.some((file) => readFileSync(file, 'utf8').includes('[redacted]'))).toBe(true);
    const rejects = readFileSync(join(home, 'datasets/nestools/v1/rejects.jsonl'), 'utf8');
    expect(rejects).toMatch(/http_error.*\[redacted\]/);
    // … and in no spelling at all.
    expect(filesHoldingKey(home)).toEqual([]);
  }, 120_000);
});
