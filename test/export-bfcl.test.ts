import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { groupBy } from '../core/collections.ts';
import { Sample, type Call } from '../core/records.ts';
import { samplesInMemory } from '../core/sample-source.ts';
import { pipelines } from '../pipelines/index.ts';
import { exportBfcl, type BfclReport } from '../stages/export/bfcl.ts';
import { astChecker, goldCallsOf, goldOutput, parsePy, pyJson, pyType, readBfclExport, type BfclEntry, type Py } from './helpers/bfcl-checker.ts';
import { defaultRun } from './helpers/default-run.ts';
import { hasPeer, peerFiles, pythonHas } from './helpers/peer-code.ts';

const PROJECT = new URL('..', import.meta.url).pathname;
const tmp = () => mkdtempSync(join(tmpdir(), 'tk-bfcl-'));
const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8'));
const lines = (path: string) => readFileSync(path, 'utf8').split('\n').filter(Boolean);

// BFCL's own Python (its checker and data loading only): skipped without python3 (with filelock) or a mirror of ShishirPatil/gorilla.
const peerPaths = ['__init__.py', 'constants', 'eval_checker/__init__.py', 'eval_checker/ast_eval', 'utils.py'].map((p) => `berkeley-function-call-leaderboard/bfcl_eval/${p}`);
const peer = pythonHas(['filelock']) && hasPeer('ShishirPatil/gorilla');
const peerNote = `python3 with filelock and the ShishirPatil/gorilla mirror: ${peer ? 'found' : 'missing, skipped'}`;
let peerSource: string | undefined;

type CheckerReport = { splits: Record<string, Record<string, { entries: number; valid: number }>>; failures: unknown[]; unscored_outputs: number };

/** test/helpers/bfcl_gold_check.py on an export, each entry answered with the output given for it. */
function runBfclChecker(dir: string, outputs: { entry: BfclEntry; output: unknown }[]): CheckerReport {
  peerSource ??= peerFiles('ShishirPatil/gorilla', peerPaths)!;
  const file = join(tmp(), 'outputs.jsonl');
  writeFileSync(file, outputs.map(({ entry, output }) => `${pyJson({ split: entry.split, id: entry.id, output } as unknown as Py)}\n`).join(''));
  const ran = spawnSync('python3', [join(PROJECT, 'test/helpers/bfcl_gold_check.py'), join(peerSource, 'berkeley-function-call-leaderboard'), dir, file], { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (ran.status !== 0) throw new Error(`bfcl_gold_check.py exited ${ran.status}: ${ran.stderr.slice(-2000)}`);
  return JSON.parse(ran.stdout) as CheckerReport;
}

/** Entries and valid entries per split and category, all valid. */
function allValid(entries: BfclEntry[]): CheckerReport['splits'] {
  const splits: CheckerReport['splits'] = {};
  for (const e of entries) {
    const counts = ((splits[e.split] ??= {})[e.category] ??= { entries: 0, valid: 0 });
    counts.entries++;
    counts.valid++;
  }
  return splits;
}

const weather = {
  name: 'get_weather',
  description: 'Weather of a city.',
  parameters: {
    type: 'object',
    properties: {
      city: { type: 'string', description: 'City.' },
      days: { type: 'integer', description: 'Days ahead.', default: 1, minimum: 1 },
      threshold: { type: 'number', description: 'Rain threshold.', default: 0.5 },
      tags: { type: 'array', description: 'Tags.' },
      note: { type: ['string', 'null'] },
      window: { type: 'object', description: 'Hours.', properties: { from: { type: 'number' }, to: { type: 'number' } } },
      stops: { type: 'array', description: 'Stops.', items: { type: 'object', properties: { name: { type: 'string' } } } },
    },
    required: ['city'],
  },
};
const clock = { name: 'get_time', description: 'Time in a city.', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };

function sample(id: string, fields: { tools?: unknown[]; dialogue?: unknown[]; expected: Record<string, unknown>; split?: string }): Sample {
  return Sample.parse({
    id,
    benchmark: 'demo',
    category: 'demo',
    split: fields.split ?? 'test',
    tools: fields.tools ?? [weather, clock],
    dialogue: fields.dialogue ?? [{ role: 'user', content: `question ${id}` }],
    expected: fields.expected,
    meta: {},
  });
}
const call = (id: string, tool: string, args: Record<string, unknown>): Call => ({ id, tool, arguments: args as Call['arguments'] });

describe('bfcl export of hand-made samples', () => {
  const samples = [
    sample('simple', { tools: [weather], expected: { calls: [call('c1', 'get_weather', { city: 'Paris', threshold: 2, window: { from: 8, to: 9.5 }, stops: [{ name: 'A' }] })] } }),
    sample('multiple', { expected: { calls: [call('c1', 'get_weather', { city: 'Oslo', days: 1 })] } }),
    sample('parallel', { tools: [clock], expected: { calls: [call('c1', 'get_time', { city: 'Rome' }), call('c2', 'get_time', { city: 'Lima' })] } }),
    sample('parallel-multiple', { expected: { calls: [call('c1', 'get_time', { city: 'Rome' }), call('c2', 'get_weather', { city: 'Rome', tags: [2, 3, 'x'] })] } }),
    sample('irrelevant', { dialogue: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'None' }], expected: { labels: [] } }),
    sample('refusal', { expected: { calls: [], refusal: 'I cannot.' } }),
    // A conversation whose one call turn comes after text turns and before a closing one.
    sample('history', {
      dialogue: [
        { role: 'user', content: 'weather?' },
        { role: 'assistant', content: 'Where?', thought: 'ask' },
        { role: 'user', content: 'Oslo' },
        { role: 'assistant', content: 'Sunny.', calls: [call('c1', 'get_weather', { city: 'Oslo' })], observations: { c1: { sky: 'sun' } } },
        { role: 'user', content: 'thanks' },
        { role: 'assistant', content: 'Bye.' },
      ],
      expected: { calls: [call('c1', 'get_weather', { city: 'Oslo' })], turns: { '1': [], '3': [call('c1', 'get_weather', { city: 'Oslo' })], '5': [] } },
    }),
    sample('two-turns', {
      dialogue: [
        { role: 'user', content: 'a' },
        { role: 'assistant', content: '', calls: [call('c1', 'get_time', { city: 'A' })] },
        { role: 'user', content: 'b' },
        { role: 'assistant', content: '', calls: [call('c2', 'get_time', { city: 'B' })] },
      ],
      expected: { calls: [call('c1', 'get_time', { city: 'A' }), call('c2', 'get_time', { city: 'B' })] },
    }),
    sample('nested', { expected: { calls: [call('c1', 'get_time', { city: 'Rome' }), call('c2', 'get_weather', { city: { $ref: 'c1.city' } })] } }),
    sample('agent', { expected: { finalState: [{ Api: { on: true } }], milestones: [['[f()]']] } }),
    sample('labels', { tools: [], expected: { labels: ['yes'] } }),
    sample('no-tools', { tools: [], expected: { calls: [] } }),
    sample('unknown', { expected: { calls: [call('c1', 'get_news', {})] } }),
    sample('missing', { expected: { calls: [call('c1', 'get_time', {})] } }),
    sample('undeclared', { expected: { calls: [call('c1', 'get_time', { city: 'Rome', zone: 'CET' })] } }),
    sample('mistyped', { expected: { calls: [call('c1', 'get_weather', { city: 'Rome', days: '2' })] } }),
    // Items of no declared type: BFCL's nested check takes strings and the first item's type only.
    sample('mixed-items', { expected: { calls: [call('c1', 'get_weather', { city: 'Rome', tags: ['x', 1] })] } }),
    sample('other-split', { split: 'train', expected: { calls: [call('c1', 'get_time', { city: 'Kyiv' })] } }),
  ];
  let out: string;
  let files: string[];
  const notices: string[] = [];
  beforeAll(async () => {
    out = tmp();
    files = await exportBfcl(samplesInMemory(samples), [], out, undefined, { notice: (line) => notices.push(line) });
  });

  it("writes BFCL's layout per split: BFCL_v4_<category>.json, possible_answer/ (none for irrelevance), ids <category>_<n>, and which sample each entry is", () => {
    expect(files.map((f) => f.slice(out.length + 1)).sort()).toEqual([
      'report.json',
      'test/BFCL_v4_irrelevance.json',
      'test/BFCL_v4_multiple.json',
      'test/BFCL_v4_parallel.json',
      'test/BFCL_v4_parallel_multiple.json',
      'test/BFCL_v4_simple_python.json',
      'test/possible_answer/BFCL_v4_multiple.json',
      'test/possible_answer/BFCL_v4_parallel.json',
      'test/possible_answer/BFCL_v4_parallel_multiple.json',
      'test/possible_answer/BFCL_v4_simple_python.json',
      'test/toolkiln_ids.jsonl',
      'train/BFCL_v4_multiple.json',
      'train/possible_answer/BFCL_v4_multiple.json',
      'train/toolkiln_ids.jsonl',
    ]);
    expect(lines(join(out, 'test/toolkiln_ids.jsonl')).map((l) => JSON.parse(l))).toEqual([
      { id: 'simple_python_0', sample: 'simple' },
      { id: 'multiple_0', sample: 'multiple' },
      { id: 'parallel_0', sample: 'parallel' },
      { id: 'parallel_multiple_0', sample: 'parallel-multiple' },
      { id: 'irrelevance_0', sample: 'irrelevant' },
      { id: 'irrelevance_1', sample: 'refusal' },
      { id: 'multiple_1', sample: 'history' },
    ]);
    expect(lines(join(out, 'train/toolkiln_ids.jsonl')).map((l) => JSON.parse(l))).toEqual([{ id: 'multiple_0', sample: 'other-split' }]);
    // Lines as Python's json.dumps writes them.
    expect(lines(join(out, 'test/possible_answer/BFCL_v4_parallel.json'))).toEqual(['{"id": "parallel_0", "ground_truth": [{"get_time": {"city": ["Rome"]}}, {"get_time": {"city": ["Lima"]}}]}']);
  });

  it('asks the dialogue up to the answer as user and assistant text; a no-call answer replies to the last user message', () => {
    const question = (file: string, id: string) => (lines(join(out, file)).map((l) => JSON.parse(l)).find((e) => e.id === id) as { question: unknown }).question;
    expect(question('test/BFCL_v4_multiple.json', 'multiple_1')).toEqual([
      [
        { role: 'user', content: 'weather?' },
        { role: 'assistant', content: 'Where?' },
        { role: 'user', content: 'Oslo' },
      ],
    ]);
    expect(question('test/BFCL_v4_irrelevance.json', 'irrelevance_0')).toEqual([[{ role: 'user', content: 'hi' }]]);
  });

  it("maps JSON-Schema types to BFCL's (number → float, object → dict, nullable → its type, no items → any) and writes floats with their decimal point", () => {
    const entry = parsePy(lines(join(out, 'test/BFCL_v4_simple_python.json'))[0]) as { function: { parameters: Record<string, Py> }[] };
    const parameters = entry.function[0].parameters as { type: string; properties: Record<string, Record<string, Py>>; required: string[] };
    expect(parameters.type).toBe('dict');
    expect(parameters.required).toEqual(['city']);
    const types = Object.fromEntries(Object.entries(parameters.properties).map(([name, p]) => [name, p.type]));
    expect(types).toEqual({ city: 'string', days: 'integer', threshold: 'float', tags: 'array', note: 'string', window: 'dict', stops: 'array' });
    const { threshold, tags, note, window, stops, days } = parameters.properties;
    expect(pyType(threshold.default)).toBe('float');
    expect(tags.items).toEqual({ type: 'any' });
    // Every property has a description: BFCL's handlers append to it.
    expect(note.description).toBe('');
    expect(days.minimum).toBe(1);
    expect(window.properties).toEqual({ from: { type: 'float', description: '' }, to: { type: 'float', description: '' } });
    expect(stops.items).toEqual({ type: 'dict', properties: { name: { type: 'string', description: '' } } });
    const line = lines(join(out, 'test/possible_answer/BFCL_v4_simple_python.json'))[0];
    // Given values; dicts key by key with acceptable values; an optional one left out: "" (and its default).
    expect(line).toBe(
      '{"id": "simple_python_0", "ground_truth": [{"get_weather": {"city": ["Paris"], "days": ["", 1], "threshold": [2.0], "tags": [""], "note": [""], "window": [{"from": [8.0], "to": [9.5]}], "stops": [[{"name": ["A"]}]]}}]}',
    );
    // An optional parameter given its default may be left out.
    expect(lines(join(out, 'test/possible_answer/BFCL_v4_multiple.json'))[0]).toContain('"days": [1, ""]');
  });

  it('counts every sample it cannot express by reason in report.json and in one notice per reason', () => {
    const report = readJson(join(out, 'report.json')) as BfclReport;
    expect({ samples: report.samples, entries: report.entries }).toEqual({ samples: samples.length, entries: 8 });
    expect(report.bySplit).toEqual({ test: { simple_python: 1, multiple: 2, parallel: 1, parallel_multiple: 1, irrelevance: 2 }, train: { multiple: 1 } });
    const leftOut = Object.fromEntries(Object.entries(report.leftOut).map(([reason, entry]) => [reason, entry!.samples.map((s) => `${s.id}: ${s.detail}`)]));
    expect(leftOut).toEqual({
      'multi-turn-calls': ['two-turns: calls in turns 1, 3'],
      'nested-call': ['nested: c1.city'],
      'not-calls': ['agent: expected holds finalState, milestones'],
      labels: ['labels: yes'],
      'no-candidate-tools': ['no-tools: '],
      'unknown-tool': ['unknown: get_news'],
      'missing-required': ['missing: get_time: city'],
      'undeclared-parameter': ['undeclared: get_time(zone)'],
      'value-type': ['mistyped: get_weather.days: integer, given "2"', 'mixed-items: get_weather.tags: array, given ["x",1]'],
    });
    expect(report.notCarried).toEqual({ 'expected.refusal': 1, 'turns after the answer': 1 });
    expect(notices).toHaveLength(11);
    expect(notices).toContain("bfcl: 1 sample(s) left out (nested-call): an argument takes an earlier call's result ($ref): BFCL's possible answers hold literal values only");
    expect(notices).toContain("bfcl: 1 entry does not carry the sample's expected.refusal");
  });

  it("BFCL's AST rules accept each entry's gold and refuse a wrong value, a missing call and a wrong tool", () => {
    const entries = readBfclExport(out);
    const byId = new Map(samples.map((s) => [s.id, s]));
    for (const entry of entries.filter((e) => e.groundTruth)) {
      const output = goldOutput(entry, byId.get(entry.sample)!);
      expect(astChecker(entry.function, output, entry.groundTruth!, entry.category), `${entry.split}/${entry.id}`).toEqual({ valid: true, error: [] });
    }
    const simple = entries.find((e) => e.id === 'simple_python_0')!;
    const gold = goldOutput(simple, byId.get('simple')!);
    const withCity = (city: string) => [{ get_weather: { ...gold[0].get_weather, city } }];
    // Strings compare without case, spaces and punctuation, as BFCL compares them.
    expect(astChecker(simple.function, withCity('pa-ris'), simple.groundTruth!, 'simple_python').valid).toBe(true);
    expect(astChecker(simple.function, withCity('Lyon'), simple.groundTruth!, 'simple_python').error_type).toBe('value_error:string');
    expect(astChecker(simple.function, [], simple.groundTruth!, 'simple_python').error_type).toBe('simple_function_checker:wrong_count');
    const parallel = entries.find((e) => e.id === 'parallel_multiple_0')!;
    const both = goldOutput(parallel, byId.get('parallel-multiple')!);
    expect(astChecker(parallel.function, [...both].reverse(), parallel.groundTruth!, 'parallel_multiple').valid).toBe(true);
    expect(astChecker(parallel.function, [both[0], both[0]], parallel.groundTruth!, 'parallel_multiple').error_type).toBe('parallel_function_checker_no_order:cannot_find_match');
  });

  it.skipIf(!peer)(`BFCL's own checker agrees: every gold valid, every entry with a changed value or a missing call refused (${peerNote})`, () => {
    const entries = readBfclExport(out);
    const byId = new Map(samples.map((s) => [s.id, s]));
    const gold = entries.map((entry) => ({ entry, output: goldOutput(entry, byId.get(entry.sample)!) }));
    const report = runBfclChecker(out, gold);
    expect(report.failures).toEqual([]);
    expect(report.splits).toEqual(allValid(entries));
    // A call where none is expected, a call dropped, the first string changed: the TypeScript rules refuse each too.
    const spoiled = gold.map(({ entry, output }) => {
      if (!entry.groundTruth) return { entry, output: [{ get_time: { city: 'Rome' } }] };
      if (output.length > 1) return { entry, output: output.slice(1) };
      const [name, args] = Object.entries(output[0])[0];
      const key = Object.keys(args).find((k) => typeof args[k] === 'string')!;
      return { entry, output: [{ [name]: { ...args, [key]: `${args[key] as string} Street` } }] };
    });
    for (const { entry, output } of spoiled.filter(({ entry }) => entry.groundTruth)) expect(astChecker(entry.function, output, entry.groundTruth!, entry.category).valid, entry.id).toBe(false);
    const refused = runBfclChecker(out, spoiled);
    expect(Object.values(refused.splits).flatMap((categories) => Object.values(categories).map((c) => c.valid))).toEqual(Object.values(refused.splits).flatMap((categories) => Object.values(categories).map(() => 0)));
  });
});

/** Each gold value's Python type is the one its parameter's BFCL type names (floats written as floats): problems, one line each. */
function typeProblems(entry: BfclEntry, output: ReturnType<typeof goldOutput>): string[] {
  const pythonType: Record<string, string> = { string: 'str', integer: 'int', float: 'float', boolean: 'bool', array: 'list', tuple: 'list', dict: 'dict' };
  return output.flatMap((call) =>
    Object.entries(call).flatMap(([tool, args]) => {
      const properties = entry.function.find((fn) => fn.name === tool)!.parameters.properties as Record<string, { type: string; items?: { type: string } }>;
      return Object.entries(args).flatMap(([name, value]) => {
        const { type, items } = properties[name];
        const fits = (v: Py, t: string) => (t === 'any' ? v !== null : pyType(v) === pythonType[t]);
        const ok = fits(value, type) && (!items || (value as Py[]).every((item) => fits(item, items.type)));
        return ok ? [] : [`${entry.split}/${entry.id} ${tool}.${name}: ${type}${items ? ` of ${items.type}` : ''}, given ${pyJson(value)}`];
      });
    }),
  );
}


for (const name of Object.keys(pipelines)) {
  describe(`bfcl export of the default ${name} version`, () => {
    const run = defaultRun(name);
    let dir: string;
    let entries: BfclEntry[];
    let samples: Map<string, Sample>;
    beforeAll(async () => {
      dir = await run.exportAs('bfcl');
      entries = readBfclExport(dir);
      samples = new Map([...run.store.sampleSource(run.ref).all()].map((s) => [s.id, s]));
    }, 600_000);

    it('gives every sample an entry or a reason in report.json, never both, never twice', () => {
      const report = readJson(join(dir, 'report.json')) as BfclReport;
      const leftOut = Object.values(report.leftOut).flatMap((entry) => entry!.samples.map((s) => s.id));
      const placed = entries.map((e) => e.sample);
      expect([...placed, ...leftOut].sort()).toEqual([...samples.keys()].sort());
      expect(report.samples).toBe(samples.size);
      expect(report.entries).toBe(entries.length);
      for (const [reason, entry] of Object.entries(report.leftOut)) expect(entry!.count, reason).toBe(entry!.samples.length);
      // Ids count from 0 in each file, in file order.
      const byFile = groupBy(entries, (e) => `${e.split}/${e.category}`);
      for (const [file, inFile] of byFile) expect(inFile.map((e) => e.id), file).toEqual(inFile.map((e, i) => `${e.category}_${i}`));
    });

    it("scores 100 % under BFCL's AST rules with the gold answers, each entry in the category its gold's shape names, every gold value of its parameter's type", () => {
      const failures: string[] = [];
      const misplaced: string[] = [];
      const mistyped: string[] = [];
      for (const entry of entries) {
        const sample = samples.get(entry.sample)!;
        const calls = goldCallsOf(sample);
        const shape = calls.length === 0 ? 'irrelevance' : calls.length === 1 ? (entry.function.length === 1 ? 'simple_python' : 'multiple') : entry.function.length === 1 ? 'parallel' : 'parallel_multiple';
        if (shape !== entry.category || entry.function.length !== sample.tools.length) misplaced.push(`${entry.split}/${entry.id}: ${calls.length} call(s) among ${entry.function.length} function(s)`);
        if (!entry.groundTruth) continue;
        const output = goldOutput(entry, sample);
        const result = astChecker(entry.function, output, entry.groundTruth, entry.category);
        if (!result.valid) failures.push(`${entry.split}/${entry.id}: ${result.error_type} ${result.error.join(' ')}`);
        mistyped.push(...typeProblems(entry, output));
      }
      expect(entries.length).toBeGreaterThan(0);
      expect(failures.slice(0, 5), `${failures.length} of ${entries.length} entries`).toEqual([]);
      expect(misplaced.slice(0, 5), `${misplaced.length} entries`).toEqual([]);
      expect(mistyped.slice(0, 5), `${mistyped.length} values`).toEqual([]);
    });

    it.skipIf(!peer)(`BFCL's own ast_checker scores every entry of every file 100 % with the gold answers (${peerNote})`, () => {
      const report = runBfclChecker(dir, entries.map((entry) => ({ entry, output: goldOutput(entry, samples.get(entry.sample)!) })));
      expect(report.failures).toEqual([]);
      expect(report.unscored_outputs).toBe(0);
      expect(report.splits).toEqual(allValid(entries));
    }, 600_000);
  });
}

// The files a split folder holds are BFCL's own names only, so its loader (which globs *.json and reads the category from the name) finds nothing else.
it('leaves no other .json file in a split folder than BFCL_v4_<category>.json', async () => {
  const out = tmp();
  await exportBfcl(samplesInMemory([sample('one', { expected: { calls: [call('c1', 'get_time', { city: 'Rome' })] } })]), [], out);
  expect(readdirSync(join(out, 'test')).filter((f) => f.endsWith('.json'))).toEqual(['BFCL_v4_multiple.json']);
});
