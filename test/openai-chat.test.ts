import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readJsonl } from '../core/jsonl.ts';
import { OfflineGateway } from '../core/llm/offline.ts';
import type { Sample } from '../core/records.ts';
import { runPipeline } from '../core/run.ts';
import { samplesInMemory } from '../core/sample-source.ts';
import { DatasetStore } from '../core/store.ts';
import { pipelines } from '../pipelines/index.ts';
import { exportOpenAIChat, sampleToChat } from '../stages/export/openai-chat.ts';
import { chatLineProblems, validateChatFile } from '../stages/export/openai-chat-validate.ts';
import { main } from '../bin/cli.ts';
import { tempDirs } from './helpers/files.ts';
import { TOOLE_FIXTURE_CONFIG } from './helpers/toole-fixture.ts';

const PROJECT = fileURLToPath(new URL('..', import.meta.url));
const tmp = tempDirs('tk-openai-chat-');

/** Small offline runs of every recipe: enough samples of each kind, in seconds rather than minutes. */
const SMALL_RUNS: Record<string, { config?: Record<string, unknown>; limit?: number }> = {
  mtu: { limit: 8 },
  toole: { config: TOOLE_FIXTURE_CONFIG },
  nestools: { config: { count: 12 } },
  tooltalk: { config: { conversations: 4, plugins: ['Alarm', 'Calendar', 'Reminder', 'Weather', 'AccountTools'] } },
  acebench: { config: { scale: 0.05, tree: { domains: 10 } } },
};

describe('OpenAI chat fine-tuning export of every recipe', () => {
  for (const [name, { config, limit }] of Object.entries(SMALL_RUNS)) {
    it(`${name}: every line passes the format validator and ends with the assistant's answer`, async () => {
      const home = tmp();
      const result = await runPipeline({ pipeline: pipelines[name], configOverrides: config, limit, llm: new OfflineGateway(42), home, projectDir: PROJECT, cwd: PROJECT, progress: { quiet: true } });
      const store = new DatasetStore(home);
      const out = join(home, 'chat');
      const files = await pipelines[name].exports['openai-chat'](store.sampleSource(result.ref!), store.tools(result.ref!), out, result.ref!);
      expect(files.length).toBeGreaterThan(0);
      let lines = 0;
      for (const file of files) {
        expect(validateChatFile(file)).toEqual([]);
        const examples = readJsonl<{ messages: { role: string }[] }>(file);
        lines += examples.length;
        for (const example of examples) expect(example.messages.at(-1)!.role).toBe('assistant');
        // toolkiln's own fields stay out unless asked for.
        expect(readFileSync(file, 'utf8')).not.toContain('x-toolkiln');
      }
      expect(lines).toBe(result.manifest!.counts.samples);
    }, 600_000);
  }
});

const tool = { name: 'get_weather', description: 'Weather of a city.', parameters: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] }, returns: { type: 'object' as const, properties: { temp: { type: 'number' } }, required: [] }, domain: 'weather' };
const base: Sample = {
  id: 's-1',
  benchmark: 'nestools',
  category: 'nested',
  split: 'test',
  tools: [tool],
  dialogue: [{ role: 'user', content: 'Weather in Oslo?' }],
  expected: { calls: [{ id: 'call_0', tool: 'get_weather', arguments: { city: 'Oslo' } }] },
  meta: { lineage: [], checks: [], tags: [] },
};

describe('samples as chat examples', () => {
  it("ends a sample whose gold is in expected with the assistant's gold tool calls", () => {
    const { messages } = sampleToChat(base);
    expect(messages).toEqual([
      { role: 'user', content: 'Weather in Oslo?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] },
    ]);
  });

  it('ends a labels-only sample with the labels, and drops a closing user line that has no answer', () => {
    const labelled = sampleToChat({ ...base, tools: [], expected: { labels: ['yes'] } });
    expect(labelled).toEqual({ messages: [{ role: 'user', content: 'Weather in Oslo?' }, { role: 'assistant', content: 'yes' }] });
    const closing = sampleToChat({ ...base, dialogue: [...base.dialogue, { role: 'assistant', content: 'Sunny.', calls: base.expected.calls, observations: { call_0: { temp: 20 } } }, { role: 'user', content: 'Thanks!' }] });
    expect(closing.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
  });

  it('leaves x-toolkiln out unless extensions are kept, and writes names OpenAI accepts', () => {
    const odd = { ...tool, name: 'PDF&URL Tool' };
    const sample = { ...base, tools: [odd], expected: { calls: [{ id: 'c1', tool: 'PDF&URL Tool', arguments: { city: 'Oslo' } }] } };
    const plain = sampleToChat(sample);
    expect(plain.tools![0].function).toEqual({ name: 'PDF_URL_Tool', description: 'Weather of a city.', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } });
    expect(plain.messages[1].tool_calls![0].function.name).toBe('PDF_URL_Tool');
    const kept = sampleToChat(sample, { keepExtensions: true });
    expect(kept.tools![0].function.parameters['x-toolkiln']).toEqual({ returns: tool.returns, domain: 'weather', name: 'PDF&URL Tool' });
    expect(chatLineProblems(JSON.stringify(kept))).toEqual([]);
  });

  it('refuses to write a sample it cannot make valid, naming it, and writes nothing', async () => {
    const out = tmp();
    const bad = { ...base, id: 's-bad', expected: {} };
    await expect(exportOpenAIChat(samplesInMemory([base, bad]), [], out)).rejects.toThrow(/sample s-bad \(split test\) is not a valid OpenAI chat example: no assistant message/);
    expect(() => readFileSync(join(out, 'test.jsonl'))).toThrow();
  });
});

describe('the chat format validator', () => {
  const good = { messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: null, tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } }] }], tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: {} } } }] };
  const BAD: [string, unknown, RegExp][] = [
    ['no assistant message', { messages: [{ role: 'user', content: 'hi' }] }, /no assistant message/],
    ['an unknown role', { messages: [{ role: 'robot', content: 'hi' }, { role: 'assistant', content: 'x' }] }, /messages\[0\]\.role "robot" is not one of/],
    ['arguments as an object', { ...good, messages: [good.messages[0], { role: 'assistant', content: null, tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: {} } }] }] }, /arguments must be a JSON string, not object/],
    ['arguments not a JSON object', { ...good, messages: [good.messages[0], { role: 'assistant', content: null, tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '[1]' } }] }] }, /arguments is not a JSON object/],
    ['a call without id', { ...good, messages: [good.messages[0], { role: 'assistant', content: null, tool_calls: [{ type: 'function', function: { name: 'f', arguments: '{}' } }] }] }, /tool_calls\[0\]\.id is missing/],
    ['a call of another type', { ...good, messages: [good.messages[0], { role: 'assistant', content: null, tool_calls: [{ id: 'a', type: 'code', function: { name: 'f', arguments: '{}' } }] }] }, /type must be "function"/],
    ['a tool message answering no call', { messages: [{ role: 'user', content: 'hi' }, { role: 'tool', tool_call_id: 'zz', content: '1' }, { role: 'assistant', content: 'x' }] }, /tool_call_id "zz" answers no call/],
    ['a call left unanswered mid-dialogue', { ...good, messages: [...good.messages, { role: 'assistant', content: 'done' }] }, /the tool call\(s\) a before it have no tool message/],
    ['a call of an undeclared tool', { ...good, tools: [{ type: 'function', function: { name: 'g', parameters: { type: 'object', properties: {} } } }] }, /"f" is not among the example's tools/],
    ['a tool name OpenAI refuses', { ...good, tools: [{ type: 'function', function: { name: 'a b', parameters: { type: 'object' } } }] }, /tools\[0\]\.function\.name "a b" is not a function name/],
    ['parameters that are not an object schema', { ...good, tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'string' } } }] }, /parameters\.type must be "object"/],
    ['a required parameter not among the properties', { ...good, tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: {}, required: ['x'] } } }] }, /required names "x"/],
    ['a closing user message', { messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'yo' }, { role: 'user', content: 'bye' }] }, /the last message is a user message/],
    ['an unknown top-level key', { ...good, id: 'x' }, /unknown key "id"/],
  ];

  it('accepts a well-formed example', () => expect(chatLineProblems(JSON.stringify(good))).toEqual([]));

  for (const [what, example, error] of BAD) it(`rejects ${what}`, () => expect(chatLineProblems(JSON.stringify(example)).join('\n')).toMatch(error));

  it('names file and line of each problem', () => {
    const file = join(tmp(), 'bad.jsonl');
    writeFileSync(file, `${JSON.stringify(good)}\nnot json\n${JSON.stringify(BAD[0][1])}\n`);
    const problems = validateChatFile(file, 'bad.jsonl');
    expect(problems).toEqual([expect.stringMatching(/^bad\.jsonl:2: not JSON/), 'bad.jsonl:3: no assistant message: an example trains on what the assistant says']);
  });
});

describe('toolkiln export --keep-extensions', () => {
  it("keeps x-toolkiln only when asked, and only for openai-chat", async () => {
    const home = tmp();
    const cli = async (...argv: string[]) => {
      const out: string[] = [];
      const err: string[] = [];
      const code = await main(argv, { out: (t) => out.push(t), err: (t) => err.push(t), home, cwd: home, env: {} });
      return { code, out: out.join('\n'), err: err.join('\n') };
    };
    expect((await cli('run', 'mtu', '--limit', '6', '--quiet', '--name', 'tiny')).code).toBe(0);
    const text = async (...flags: string[]) => {
      const { code, out } = await cli('export', 'tiny@v1', '--format', 'openai-chat', '--out', `chat${flags.length}`, '--json', ...flags);
      expect(code).toBe(0);
      return (JSON.parse(out).files as string[]).map((f) => readFileSync(f, 'utf8')).join('');
    };
    expect(await text()).not.toContain('x-toolkiln');
    expect(await text('--keep-extensions')).toContain('"x-toolkiln"');
    const refused = await cli('export', 'tiny@v1', '--format', 'mtu', '--out', 'mtu', '--keep-extensions');
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(/--keep-extensions applies to --format openai-chat .* and acebench .* only/);
  }, 120_000);
});
