import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../bin/cli.ts';
import { startOpenAiServer, type OpenAiTestServer, type RecordedRequest } from './helpers/openai-server.ts';

const CLI = fileURLToPath(new URL('../bin/toolkiln.js', import.meta.url));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let home: string;
let server: OpenAiTestServer;
/** Requests answered before the kill, by prompt. */
const answeredBeforeKill = new Set<string>();
/** Requests the server holds (never answered) when the kill comes. */
const heldAtKill = new Set<string>();
let holding = false;
let release: () => void = () => {};
const gate = new Promise<void>((resolve) => (release = resolve));

const promptOf = (request: RecordedRequest) => JSON.stringify(request.body?.messages);

/** Answers every MTU question with a call of the first listed tool (the answer depends on the question only). */
const answerOf = (request: RecordedRequest) => {
  const question = String(request.body?.messages?.at(-1)?.content ?? '');
  const tool = /"name": ?"([^"]+)"/.exec(question)?.[1] ?? 'none';
  return `Thought: calling ${tool}\nAction: ${tool}\nAction Input: {}`;
};

/** The CLI as a child process; resolves with its exit and stdout. */
function evalChild(extra: string[] = []) {
  const child = spawn(process.execPath, [CLI, 'eval', 'mtu@v1', '--llm', 'openai', '--model', 'test-model', '--limit', '12', '--concurrency', '2', '--max-retries', '0', '--json', ...extra], {
    cwd: home,
    env: { ...process.env, TOOLKILN_HOME: home, OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: 'sk-test' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { child, exited };
}

const requestsByPrompt = () => {
  const counts = new Map<string, number>();
  for (const request of server.requests.filter((r) => r.endpoint === 'chat')) counts.set(promptOf(request), (counts.get(promptOf(request)) ?? 0) + 1);
  return counts;
};

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'tk-eval-resume-'));
  const run = await main(['run', 'mtu', '--limit', '60', '--quiet', '--name', 'mtu'], { out: () => {}, err: () => {}, home, cwd: home, env: {} });
  expect(run).toBe(0);
  // The first six requests are answered; after them the server holds every request until released.
  server = await startOpenAiServer({
    chat: async (request) => {
      if (holding || answeredBeforeKill.size >= 6) {
        holding = true;
        heldAtKill.add(promptOf(request));
        await gate;
      } else answeredBeforeKill.add(promptOf(request));
      return { content: answerOf(request) };
    },
  });
}, 600_000);
afterAll(() => server?.close());

describe('an eval through the gateway killed mid-run', () => {
  it('resumes on the next run: no answered request is sent again, and the result is that of an uninterrupted run', async () => {
    const killed = evalChild();
    const deadline = Date.now() + 120_000;
    // Both concurrent requests held: the answered ones are in the cache, two are in flight.
    while (heldAtKill.size < 2 && Date.now() < deadline) await sleep(20);
    expect(answeredBeforeKill.size).toBe(6);
    expect(heldAtKill.size).toBe(2);
    killed.child.kill('SIGKILL');
    expect((await killed.exited).signal).toBe('SIGKILL');

    // Resumed: the server now answers everything at once.
    server.setResponder('chat', (request) => ({ content: answerOf(request) }));
    release();
    const resumed = await evalChild().exited;
    expect(resumed.code, resumed.stderr).toBe(0);
    const doc = JSON.parse(resumed.stdout) as { items: number; missing: number; metrics: Record<string, number>; usage: { total: { requests: number } } };
    expect(doc.missing).toBe(0);
    expect(doc.items).toBeGreaterThan(8);

    const counts = requestsByPrompt();
    // Every prompt asked; answered before the kill: asked once in all; held at the kill (never
    // answered, so never cached): asked again once; the rest: once, by the resumed run.
    expect(counts.size).toBeGreaterThan(8);
    for (const [prompt, count] of counts) expect(count, prompt.slice(0, 80)).toBe(heldAtKill.has(prompt) ? 2 : 1);
    for (const prompt of answeredBeforeKill) expect(counts.get(prompt)).toBe(1);
    // The resumed run asked only what the cache lacked.
    expect(doc.usage.total.requests).toBe(counts.size - answeredBeforeKill.size);
    const resumedItems = readFileSync(join(home, 'datasets', 'mtu', 'v1.derived', 'eval', 'openai-test-model', 'items.jsonl'), 'utf8');

    // The same eval uninterrupted, every answer asked afresh (--no-cache): the same report and outputs.
    server.reset();
    const fresh = await evalChild(['--no-cache']).exited;
    expect(fresh.code, fresh.stderr).toBe(0);
    const whole = JSON.parse(fresh.stdout) as typeof doc;
    expect(server.count('chat')).toBe(counts.size);
    expect(whole.metrics).toEqual(doc.metrics);
    expect(whole.items).toBe(doc.items);
    expect(readFileSync(join(home, 'datasets', 'mtu', 'v1.derived', 'eval', 'openai-test-model', 'items.jsonl'), 'utf8')).toBe(resumedItems);
  }, 300_000);
});
