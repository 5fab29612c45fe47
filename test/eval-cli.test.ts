import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../bin/cli.ts';
import { DatasetStore } from '../core/store.ts';
import { MTU_SETTINGS } from '../prompts/mtu-instructions.ts';
import { mtuScorer } from '../stages/mtu/score.ts';
import { startOpenAiServer, type OpenAiTestServer } from './helpers/openai-server.ts';

let home: string;

async function cli(argv: string[], env: NodeJS.ProcessEnv = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (t) => out.push(t), err: (t) => err.push(t), home, cwd: home, env });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

const json = (text: string) => JSON.parse(text) as { items: number; missing: number; metrics: Record<string, number>; byCategory: Record<string, Record<string, number>>; files: string[]; usage?: { total: { requests: number } } };
const itemLines = (dataset: string, model: string) =>
  readFileSync(join(home, 'datasets', dataset, 'v1.derived', 'eval', model, 'items.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { id: string; output: string | null; figures: Record<string, unknown> });

// Shares of answers with one tool right: a perfect model has none of them.
const PARTIAL_RATES = ['multi-tool_1/1', 'multi-tool_1/2'];

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'tk-eval-'));
  // 150 MTU source records give test and OOD samples of every setting (S-S, S-M, M-S, M-M) and hard ones.
  for (const [recipe, limit] of [['mtu', '150'], ['toole', '30'], ['nestools', '30']]) {
    const run = await cli(['run', recipe, '--limit', limit, '--quiet', '--name', recipe]);
    expect(run.code, run.err).toBe(0);
  }
}, 600_000);

describe('toolkiln eval', () => {
  it.each(['mtu', 'toole', 'nestools'])('the oracle scores 1.0 on the offline %s export; results beside the version, never in it', async (recipe) => {
    const result = await cli(['eval', `${recipe}@v1`, '--model', 'oracle', '--json']);
    expect(result.code, result.err).toBe(0);
    const doc = json(result.out);
    expect(doc.items).toBeGreaterThan(0);
    expect(doc.missing).toBe(0);
    if (recipe === 'mtu') {
      expect(Object.keys(doc.byCategory)).toEqual(['S-S', 'S-M', 'M-S', 'M-M', 'OOD', 'hard']);
      // MTU-Eval scores the test and OOD splits: training dialogues give no items.
      const train = readFileSync(join(home, 'datasets', 'mtu', 'v1', 'data', 'train.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l).id as string);
      expect(train.length).toBeGreaterThan(0);
      const scored = new Set((itemLines('mtu', 'oracle') as unknown as { sampleId: string }[]).map((l) => l.sampleId));
      expect(train.filter((id) => scored.has(id))).toEqual([]);
    }
    for (const table of [doc.metrics, ...Object.values(doc.byCategory)]) {
      for (const [name, value] of Object.entries(table)) if (!PARTIAL_RATES.includes(name)) expect(value, name).toBe(1);
    }
    expect(doc.files).toEqual([join(home, 'datasets', recipe, 'v1.derived', 'eval', 'oracle', 'report.json'), join(home, 'datasets', recipe, 'v1.derived', 'eval', 'oracle', 'items.jsonl')]);
    expect(itemLines(recipe, 'oracle')).toHaveLength(doc.items);
    expect(existsSync(join(home, 'datasets', recipe, 'v1', 'eval'))).toBe(false);
    expect((await cli(['datasets', 'verify', `${recipe}@v1`])).code).toBe(0);
    // Human text: the table with every category.
    const text = await cli(['eval', `${recipe}@v1`, '--model', 'oracle']);
    expect(text.out).toContain('100.0');
    for (const category of Object.keys(doc.byCategory)) expect(text.out).toContain(category);
  });

  it('the noisy oracle is seeded: the same seed gives the same answers, another seed others', async () => {
    const first = json((await cli(['eval', 'mtu@v1', '--model', 'noisy-oracle', '--seed', '5', '--json'])).out);
    const again = json((await cli(['eval', 'mtu@v1', '--model', 'noisy-oracle', '--seed', '5', '--json'])).out);
    expect(again.metrics).toEqual(first.metrics);
    expect(first.metrics.turn_success_rate).toBeLessThan(1);
    const other = await cli(['eval', 'mtu@v1', '--model', 'noisy-oracle', '--seed', '6', '--json']);
    expect(itemLines('mtu', 'noisy-oracle-seed6').map((l) => l.output)).not.toEqual(itemLines('mtu', 'noisy-oracle-seed5').map((l) => l.output));
    expect(json(other.out)).toHaveProperty('noise.rates.wrong-tool', 0.1);
  });

  it('shows a model the instruction text the MTU version was exported with', () => {
    const store = new DatasetStore(home);
    const ref = store.resolve('mtu@v1');
    const sample = [...store.sampleSource(ref).inSplit('test')].find((s) => mtuScorer.items(s, ref).length)!;
    const dir = join(home, 'custom-version');
    mkdirSync(join(dir, 'reports'), { recursive: true });
    writeFileSync(join(dir, 'reports', 'mtu-instructions.json'), JSON.stringify(Object.fromEntries(MTU_SETTINGS.map((s) => [s, `CUSTOM ${s} wording, today {today}`]))));
    expect(JSON.stringify(mtuScorer.items(sample, { dir })[0].messages)).toContain('CUSTOM');
    expect(JSON.stringify(mtuScorer.items(sample, ref)[0].messages)).not.toContain('CUSTOM');
  });

  it('scores a predictions file; an item without a line counts as no output', async () => {
    const gold = itemLines('nestools', 'oracle');
    const file = join(home, 'preds.jsonl');
    writeFileSync(file, gold.slice(1).map((l) => JSON.stringify({ id: l.id, output: l.output })).join('\n') + '\n');
    const result = await cli(['eval', 'nestools@v1', '--predictions', 'preds.jsonl', '--json']);
    expect(result.code, result.err).toBe(0);
    const doc = json(result.out);
    expect(doc.items).toBe(gold.length);
    expect(doc.missing).toBe(1);
    expect(doc.metrics.format_accuracy).toBeCloseTo((gold.length - 1) / gold.length, 12);
    expect(itemLines('nestools', 'predictions-preds')[0]).toMatchObject({ id: gold[0].id, output: null, note: 'no output' });
    // A file made for the whole version, scored on the first samples only: the other lines are known ids.
    const whole = join(home, 'whole.jsonl');
    writeFileSync(whole, gold.map((l) => JSON.stringify({ id: l.id, output: l.output })).join('\n') + '\n');
    const limited = await cli(['eval', 'nestools@v1', '--predictions', 'whole.jsonl', '--limit', '3', '--json']);
    expect(limited.code, limited.err).toBe(0);
    expect(json(limited.out)).toMatchObject({ items: 3, missing: 0, metrics: { format_accuracy: 1 } });
  });

  it('a bad predictions file is a one-line error naming the line', async () => {
    const [a, b] = itemLines('mtu', 'oracle');
    const cases: [string, string, RegExp][] = [
      ['unknown.jsonl', `${JSON.stringify({ id: a.id, output: 'x' })}\n${JSON.stringify({ id: 'nope', output: 'x' })}\n`, /unknown.jsonl line 2: unknown item id "nope"/],
      ['dup.jsonl', `${JSON.stringify({ id: a.id, output: 'x' })}\n${JSON.stringify({ id: b.id, output: 'y' })}\n${JSON.stringify({ id: a.id, output: 'z' })}\n`, /dup.jsonl line 3: item ".*" again \(first on line 1\)/],
      ['broken.jsonl', `${JSON.stringify({ id: a.id, output: 'x' })}\n{"id": \n`, /broken.jsonl line 2: not valid JSON/],
      ['noid.jsonl', `{"output": "x"}\n`, /noid.jsonl line 1: "id" is missing/],
      ['number.jsonl', `${JSON.stringify({ id: a.id, output: 3 })}\n`, /number.jsonl line 1: "output" of .* must be the model's text/],
    ];
    for (const [name, content, message] of cases) {
      writeFileSync(join(home, name), content);
      const result = await cli(['eval', 'mtu@v1', '--predictions', name]);
      expect(result.code, name).toBe(2);
      expect(result.err).toMatch(message);
      expect(result.err.split('\n')).toHaveLength(1);
    }
    expect((await cli(['eval', 'mtu@v1', '--predictions', 'missing.jsonl'])).err).toMatch(/predictions file not found: missing.jsonl/);
  });

  it('says which model to use when the flags do not', async () => {
    const cases: [string[], RegExp][] = [
      [['eval', 'mtu@v1'], /say whose answers to score/],
      [['eval', 'mtu@v1', '--model', 'gpt-4o'], /--model gpt-4o needs --llm openai/],
      [['eval', 'mtu@v1', '--llm', 'offline'], /--llm offline has no model to answer with/],
      [['eval', 'mtu@v1', '--predictions', 'p.jsonl', '--model', 'oracle'], /leave out --model and --llm/],
      [['eval', 'mtu@v1', '--model', 'oracle', '--limit', '0'], /--limit must be at least 1/],
      [['eval', 'nope@v1', '--model', 'oracle'], /no dataset named "nope"/],
    ];
    for (const [argv, message] of cases) {
      const result = await cli(argv);
      expect(result.code, argv.join(' ')).toBe(2);
      expect(result.err).toMatch(message);
    }
  });

  describe('a model behind the gateway', () => {
    let server: OpenAiTestServer;
    beforeAll(async () => {
      // Answers every MTU question with a call of the first listed tool.
      server = await startOpenAiServer({
        chat: (request) => {
          const question = String(request.body?.messages?.at(-1)?.content ?? '');
          const tool = /"name": ?"([^"]+)"/.exec(question)?.[1] ?? 'none';
          return { content: `Thought: calling ${tool}\nAction: ${tool}\nAction Input: {}` };
        },
      });
    });
    afterAll(() => server.close());

    it('sends each item once, scores the answers, reports usage, and answers a re-run from the cache', async () => {
      const env = { OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: 'sk-test' };
      const argv = ['eval', 'mtu@v1', '--llm', 'openai', '--model', 'test-model', '--limit', '4', '--concurrency', '2', '--json'];
      const first = await cli(argv, env);
      expect(first.code, first.err).toBe(0);
      const doc = json(first.out);
      expect(server.count('chat')).toBe(doc.items);
      expect(doc.usage?.total.requests).toBe(doc.items);
      expect(doc.missing).toBe(0);
      const lines = itemLines('mtu', 'openai-test-model');
      expect(lines.every((l) => l.output?.startsWith('Thought: calling '))).toBe(true);
      // The item's question is what the model was shown.
      const oracle = itemLines('mtu', 'oracle');
      expect(oracle.map((l) => l.id)).toEqual(expect.arrayContaining(lines.map((l) => l.id)));
      expect(String(server.requests[0].body.messages[0].content)).toContain('The following is a list of APIs');

      const again = await cli(argv, env);
      expect(again.code).toBe(0);
      expect(server.count('chat')).toBe(doc.items);
      expect(json(again.out).metrics).toEqual(doc.metrics);
    });

    it('an item the model could not answer counts as no output, with why', async () => {
      server.reset();
      server.setResponder('chat', () => ({ status: 400, error: { message: 'bad request' } }));
      const env = { OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: 'sk-test' };
      const result = await cli(['eval', 'mtu@v1', '--llm', 'openai', '--model', 'other-model', '--limit', '1', '--max-retries', '0', '--json'], env);
      expect(result.code, result.err).toBe(0);
      const doc = json(result.out);
      expect(doc.missing).toBe(doc.items);
      expect(itemLines('mtu', 'openai-other-model')[0]).toMatchObject({ output: null, failure: expect.stringContaining('http_error') });
    });
  });
});
