import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../bin/cli.ts';
import { readJsonl } from '../core/jsonl.ts';
import { Sample, type ToolSpec } from '../core/records.ts';
import { DatasetStore } from '../core/store.ts';
import { exportTrl, sampleToTrl, trlExporter } from '../stages/export/trl.ts';
import { hermes, llama31Json, mistral, rowCallsAndResults } from './helpers/chat-templates.ts';
import { readDatasetCard } from './helpers/dataset-card.ts';
import { readParquetRows } from './helpers/parquet-read.ts';
import { loadRowsInPython, pythonHasDatasets } from './helpers/python.ts';
import { draftManifest } from './fixtures/core/samples.ts';

const tmp = () => mkdtempSync(join(tmpdir(), 'tk-trl-'));

const tool = (name: string, properties: Record<string, object>): ToolSpec =>
  ({ name, description: `${name} tool`, parameters: { type: 'object', properties, required: [] }, returns: { type: 'object', properties: {}, required: [] } }) as ToolSpec;

const FROM = { type: 'string', description: 'where from' };
const TOOLS = [
  tool('GetFlight', { from: FROM }),
  tool('GetFare', { from: FROM, flight: { type: 'string', description: 'a flight id' } }),
  tool('Book', { flight: { type: 'string', description: 'a flight id' }, people: { type: 'integer', description: 'how many' } }),
];

/**
 * A multi-turn sample: a thought, two calls made together and one that uses the first one's result,
 * their results and a reply; a question back; and the gold calls of the turn after the dialogue.
 */
const multiTurn = Sample.parse({
  id: 'm-1',
  benchmark: 'demo',
  category: 'M-M',
  split: 'train',
  tools: TOOLS,
  dialogue: [
    { role: 'user', content: 'Find a flight from a and its fare' },
    {
      role: 'assistant',
      content: '',
      thought: 'I look up the flight and the fares, then the flight\'s fare.',
      calls: [
        { id: 'c0', tool: 'GetFlight', arguments: { from: 'a' } },
        { id: 'c1', tool: 'GetFare', arguments: { from: 'a', flight: { $ref: 'c0.id' } } },
        { id: 'c2', tool: 'GetFare', arguments: { from: 'a' } },
      ],
      observations: { c0: { id: 'F1' }, c1: { fare: 20 }, c2: { fare: 10 } },
      response: 'Flight F1 costs 20.',
    },
    { role: 'user', content: 'Book it' },
    { role: 'assistant', content: 'For how many people?', thought: 'The party size is missing.' },
    { role: 'user', content: 'Two' },
  ],
  expected: { turns: { '5': [{ id: 'c3', tool: 'Book', arguments: { flight: 'F1', people: 2 } }] } },
  meta: {},
});

const call = (id: string, name: string, args: object) => ({ id, type: 'function', function: { name, arguments: args } });
const result = (id: string, name: string, content: string) => ({ role: 'tool', tool_call_id: id, name, content });
const THOUGHT = "I look up the flight and the fares, then the flight's fare.";

describe('trl rows', () => {
  it('carry thoughts, calls with object arguments, named results, replies, questions back and the gold answer, one row per sample', () => {
    const row = sampleToTrl(multiTurn);
    expect(row.id).toBe('m-1');
    expect(row.category).toBe('M-M');
    expect(row.messages).toEqual([
      { role: 'user', content: 'Find a flight from a and its fare' },
      { role: 'assistant', content: THOUGHT, tool_calls: [call('call00001', 'GetFlight', { from: 'a' })] },
      result('call00001', 'GetFlight', '{"id":"F1"}'),
      // The call that uses the flight's id comes after it, with the value; the calls keep the turn's order.
      { role: 'assistant', content: '', tool_calls: [call('call00002', 'GetFare', { from: 'a', flight: 'F1' }), call('call00003', 'GetFare', { from: 'a' })] },
      result('call00002', 'GetFare', '{"fare":20}'),
      result('call00003', 'GetFare', '{"fare":10}'),
      { role: 'assistant', content: 'Flight F1 costs 20.' },
      { role: 'user', content: 'Book it' },
      { role: 'assistant', content: 'For how many people?' },
      { role: 'user', content: 'Two' },
      { role: 'assistant', content: '', tool_calls: [call('call00004', 'Book', { flight: 'F1', people: 2 })] },
    ]);
    // A message without calls has no tool_calls key: templates test whether it is defined.
    expect(row.messages.filter((m) => !m.tool_calls).every((m) => !('tool_calls' in m))).toBe(true);
    expect(row.tools.map((t) => t.function.name)).toEqual(['GetFlight', 'GetFare', 'Book']);
    expect(row.tools[0]).toEqual({ type: 'function', function: { name: 'GetFlight', description: 'GetFlight tool', parameters: { type: 'object', properties: { from: FROM }, required: [] } } });
  });

  it('with oneCallPerMessage, writes each call in a message of its own followed by its result, the thought with the first', () => {
    const { messages } = sampleToTrl(multiTurn, { oneCallPerMessage: true });
    expect(messages.slice(1, 8)).toEqual([
      { role: 'assistant', content: THOUGHT, tool_calls: [call('call00001', 'GetFlight', { from: 'a' })] },
      result('call00001', 'GetFlight', '{"id":"F1"}'),
      { role: 'assistant', content: '', tool_calls: [call('call00002', 'GetFare', { from: 'a', flight: 'F1' })] },
      result('call00002', 'GetFare', '{"fare":20}'),
      { role: 'assistant', content: '', tool_calls: [call('call00003', 'GetFare', { from: 'a' })] },
      result('call00003', 'GetFare', '{"fare":10}'),
      { role: 'assistant', content: 'Flight F1 costs 20.' },
    ]);
    expect(messages).toHaveLength(12);
  });

  it('writes a reference to a call without a result as the row\'s id of that call and the field', () => {
    const nested = Sample.parse({
      ...multiTurn,
      id: 'n-1',
      dialogue: [{ role: 'user', content: 'Find the flight, then book it' }],
      expected: { calls: [{ id: 'call_0', tool: 'GetFlight', arguments: { from: 'a' } }, { id: 'call_1', tool: 'Book', arguments: { flight: { $ref: 'call_0.id' }, people: 1 } }] },
    });
    expect(sampleToTrl(nested).messages[1]).toEqual({ role: 'assistant', content: '', tool_calls: [call('call00001', 'GetFlight', { from: 'a' }), call('call00002', 'Book', { flight: 'call00001.id', people: 1 })] });
  });

  it('joins two assistant texts in a row into one reply, and writes labels as the answer of a sample without calls', () => {
    const twoTexts = Sample.parse({
      ...multiTurn,
      id: 'm-2',
      dialogue: [
        { role: 'user', content: 'Do it' },
        { role: 'assistant', content: '[Book(flight="F1")]' },
        { role: 'assistant', content: 'Book completed.' },
        { role: 'user', content: 'Thanks' },
      ],
      expected: {},
    });
    expect(sampleToTrl(twoTexts).messages).toEqual([
      { role: 'user', content: 'Do it' },
      { role: 'assistant', content: '[Book(flight="F1")]\n\nBook completed.' },
    ]);
    const labels = Sample.parse({ ...multiTurn, id: 'm-3', tools: [], dialogue: [{ role: 'user', content: 'Which tool?' }], expected: { labels: ['Book', 'GetFare'] } });
    expect(sampleToTrl(labels)).toMatchObject({ messages: [{ role: 'user', content: 'Which tool?' }, { role: 'assistant', content: 'Book, GetFare' }], tools: [] });
  });

  it('refuses a sample that makes no training row, naming it', () => {
    const noAnswer = Sample.parse({ ...multiTurn, id: 'm-4', dialogue: [{ role: 'user', content: 'Hello' }], expected: {} });
    expect(() => sampleToTrl(noAnswer)).toThrow('sample m-4 (split train) makes no training row: no assistant message');
  });

  it('renders through the Hermes, Mistral and (one call per message) Llama 3.1 templates with every call and result read back', () => {
    const row = sampleToTrl(multiTurn);
    const want = rowCallsAndResults(row);
    expect(want.calls).toHaveLength(4);
    expect(want.results).toEqual([{ id: 'F1' }, { fare: 20 }, { fare: 10 }]);
    expect(hermes.readBack(hermes.render(row))).toEqual(want);
    expect(mistral.readBack(mistral.render(row))).toEqual(want);
    expect(() => llama31Json.render(row)).toThrow('This model only supports single tool-calls at once!');
    const single = sampleToTrl(multiTurn, { oneCallPerMessage: true });
    expect(llama31Json.readBack(llama31Json.render(single))).toEqual(want);
    // String arguments (the OpenAI form) would be written quoted: the read-back sees text, not the call's object.
    const stringArgs = { ...row, messages: row.messages.map((m) => (m.tool_calls ? { ...m, tool_calls: m.tool_calls.map((c) => ({ ...c, function: { ...c.function, arguments: JSON.stringify(c.function.arguments) } })) } : m)) };
    expect(hermes.readBack(hermes.render(stringArgs as typeof row)).calls).not.toEqual(want.calls);
  });
});

describe('trl export', () => {
  const publish = () => {
    const store = new DatasetStore(tmp());
    const samples = [multiTurn, { ...multiTurn, id: 'm-5', split: 'task-awareness' }];
    return { store, ...store.publish({ name: 'demo', samples, tools: TOOLS, rejects: [], manifest: draftManifest('fp') }) };
  };

  it('writes Parquet and JSONL with the same rows, a card whose configs name each split, and the config', async () => {
    const { store, ref } = publish();
    const out = tmp();
    const notices: string[] = [];
    const files = await exportTrl(store.sampleSource(ref), store.tools(ref), out, ref, { notice: (line) => notices.push(line) });
    // The thought of the question back has no place in a row, and the export says so.
    expect(notices).toEqual(['trl: 2 thought(s) of turns without calls left out (a row carries a thought only as the text before calls)']);
    expect(files.map((f) => f.slice(out.length + 1))).toEqual([
      'data/task_awareness-00000-of-00001.parquet',
      'jsonl/task_awareness.jsonl',
      'data/train-00000-of-00001.parquet',
      'jsonl/train.jsonl',
      'toolkiln-config.json',
      'README.md',
    ]);
    const jsonl = readJsonl(join(out, 'jsonl/train.jsonl'));
    expect(jsonl).toEqual([JSON.parse(JSON.stringify(sampleToTrl(multiTurn)))]);
    const { rows, schema } = readParquetRows(join(out, 'data/train-00000-of-00001.parquet'));
    expect(schema).toContain('messages: List<Utf8>');
    // Each list element is a JSON value: parsed, the rows are the JSONL rows.
    const parsed = (rows as { messages: string[]; tools: string[] }[]).map((r) => ({ ...r, messages: r.messages.map((m) => JSON.parse(m)), tools: r.tools.map((t) => JSON.parse(t)) }));
    expect(parsed).toEqual(jsonl);
    const { header, body } = readDatasetCard(join(out, 'README.md'));
    expect(header.configs).toEqual([
      {
        config_name: 'demo-v1-trl',
        default: true,
        data_files: [
          { split: 'task_awareness', path: 'data/task_awareness-00000-of-00001.parquet' },
          { split: 'train', path: 'data/train-00000-of-00001.parquet' },
        ],
      },
    ]);
    expect(body).toContain('`messages`: roles `user`, `assistant`, `tool`');
    expect(body).toContain('npx toolkiln export demo@<version> --format trl --out <folder>');
    expect(body).not.toContain('--one-call-per-message');
    expect(JSON.parse(readFileSync(join(out, 'toolkiln-config.json'), 'utf8'))).toEqual({});
    const single = tmp();
    await exportTrl(store.sampleSource(ref), [], single, ref, { oneCallPerMessage: true });
    expect(readDatasetCard(join(single, 'README.md')).body).toContain('This export was written with `--one-call-per-message`');
    expect(readJsonl<{ messages: unknown[] }>(join(single, 'jsonl/train.jsonl'))[0].messages).toHaveLength(12);
  });

  it('needs the published version, and writes nothing of a split whose sample makes no row', async () => {
    const { store, ref } = publish();
    await expect(exportTrl(store.sampleSource(ref), [], tmp(), undefined)).rejects.toThrow('the trl format needs the published version');
    const refuse = trlExporter(() => ({ content: '' }));
    const bad = new DatasetStore(tmp());
    const { ref: badRef } = bad.publish({ name: 'bad', samples: [{ ...multiTurn, dialogue: [{ role: 'user', content: 'Hi' }], expected: {} }], tools: [], rejects: [], manifest: draftManifest('fp') });
    const out = tmp();
    await expect(refuse(bad.sampleSource(badRef), [], out, badRef)).rejects.toThrow('sample m-1 (split train) makes no training row');
    expect(() => readFileSync(join(out, 'jsonl/train.jsonl'))).toThrow();
  });

  it.skipIf(!pythonHasDatasets)('loads with datasets.load_dataset(<folder>) as List(Json()) columns, each message and tool as written (skipped without python3 with datasets)', async () => {
    const { store, ref } = publish();
    const out = tmp();
    await exportTrl(store.sampleSource(ref), store.tools(ref), out, ref);
    const loaded = loadRowsInPython(out);
    expect(loaded.features).toEqual({ id: "Value('string')", category: "Value('string')", messages: 'List(Json(decode=True))', tools: 'List(Json(decode=True))', items: 'List(Json(decode=True))' });
    expect(loaded.splits.train).toEqual(readJsonl(join(out, 'jsonl/train.jsonl')));
    expect(Object.keys(loaded.splits).sort()).toEqual(['task_awareness', 'train']);
  });
});

describe('toolkiln export --format trl --one-call-per-message', () => {
  it('writes one call per message only when asked, and only for trl', async () => {
    const home = tmp();
    new DatasetStore(home).publish({ name: 'demo', samples: [multiTurn], tools: TOOLS, rejects: [], manifest: { ...draftManifest('fp'), pipeline: 'mtu' } });
    const cli = async (...argv: string[]) => {
      const out: string[] = [];
      const err: string[] = [];
      const code = await main(argv, { out: (t) => out.push(t), err: (t) => err.push(t), home, cwd: home, env: {} });
      return { code, out: out.join('\n'), err: err.join('\n') };
    };
    const messages = async (...flags: string[]) => {
      const { code } = await cli('export', 'demo@v1', '--format', 'trl', '--out', `trl${flags.length}`, '--json', ...flags);
      expect(code).toBe(0);
      return readJsonl<{ messages: { tool_calls?: unknown[] }[] }>(join(home, `trl${flags.length}`, 'jsonl/train.jsonl'))[0].messages;
    };
    expect(Math.max(...(await messages()).map((m) => m.tool_calls?.length ?? 0))).toBe(2);
    expect(Math.max(...(await messages('--one-call-per-message')).map((m) => m.tool_calls?.length ?? 0))).toBe(1);
    const refused = await cli('export', 'demo@v1', '--format', 'sharegpt', '--out', 'sg', '--one-call-per-message');
    expect(refused.code).toBe(2);
    expect(refused.err).toContain('--one-call-per-message applies to --format trl only; drop it for "sharegpt"');
  }, 120_000);
});
