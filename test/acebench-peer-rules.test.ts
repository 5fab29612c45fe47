import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { defaultRun } from './helpers/default-run.ts';
import { ArgumentValidator, describeProblems } from '../core/json-schema.ts';
import type { Json } from '../core/records.ts';
import { exportAceBench } from '../stages/acebench/export.ts';
import { ACEBENCH_CLASS_TABLE, errorParamProblems, normalCheckProblems, rangesIn, readLines, unloadableClasses } from './helpers/acebench-peer.ts';
import { tempDirs } from './helpers/files.ts';
import { hasPeer, peerFiles, pythonHas } from './helpers/peer-code.ts';

/**
 * The default offline ACEBench version, exported in the native format, held to the rules of
 * ACEBench's own evaluation code with the gold answers as the predictions: every rule that rejected
 * or could not run a record, written again in TypeScript (test/helpers/acebench-peer.ts), and the
 * repository's Python itself where python3 and a checkout of it are at hand.
 */

const PROJECT = new URL('..', import.meta.url).pathname;
type Obj = Record<string, Json>;
type Line = { id: string; [key: string]: Json };

const tmp = tempDirs('tk-ace-peer-');
let exportDir = '';
let extendedDir = '';
const notices: string[] = [];
let agentSamples = 0;
let financeSamples = 0;

/** The export's record pairs of one kind of category: `{category, data, answer}`. */
function records(prefix: string): { category: string; data: Line; answer: Line }[] {
  const dir = join(exportDir, 'data_en');
  return readdirSync(dir)
    .filter((name) => name.startsWith(`data_${prefix}`) && name.endsWith('.json'))
    .flatMap((name) => {
      const answers = new Map(readLines<Line>(join(dir, 'possible_answer', name)).map((line) => [line.id, line]));
      return readLines<Line>(join(dir, name)).map((data) => ({ category: name.slice(5, -5), data, answer: answers.get(data.id)! }));
    });
}

/** The gold calls of a normal record (the first accepted answer), each with its function. */
function goldCalls(data: Line, answer: Line): { fn: Obj; args: Obj }[] {
  const truth = answer.ground_truth;
  const first = (Array.isArray(truth) ? truth[0] : truth) as Obj;
  const functions = data.function as Obj[];
  return Object.entries(first).map(([key, args]) => ({ fn: functions.find((f) => f.name === key) ?? functions.find((f) => f.name === key.replace(/_\d+$/, ''))!, args: args as Obj }));
}

const run = defaultRun('acebench');
beforeAll(async () => {
  const { store, scratch: home, ref } = run;
  exportDir = join(home, 'export');
  extendedDir = join(home, 'export-extended');
  await exportAceBench(store.sampleSource(ref), store.tools(ref), exportDir, ref, { notice: (line) => notices.push(line) });
  await exportAceBench(store.sampleSource(ref), store.tools(ref), extendedDir, ref, { keepExtensions: true });
  for (const sample of store.sampleSource(ref).all()) {
    if (!sample.category.startsWith('agent_')) continue;
    agentSamples++;
    if (JSON.stringify((sample.meta as { acebench?: { fields?: Obj } }).acebench?.fields?.involved_classes ?? []).includes('"Finance"')) financeSamples++;
  }
}, 600_000);

describe("ACEBench's own checks over the default version's native export, gold answers as predictions", () => {
  it("normal: every gold call survives eval_main's whitespace removal and checker.py's string normalisation", () => {
    const normal = records('normal_');
    expect(normal.length).toBeGreaterThan(800);
    const problems = normal.flatMap(({ data, answer }) => goldCalls(data, answer).flatMap(({ fn, args }) => normalCheckProblems(fn, args).map((p) => `${data.id}: ${p}`)));
    expect(problems.slice(0, 5), `${problems.length} of the gold calls' values fail`).toEqual([]);
  });

  it("special_error_param: every wrong value is text, as eval_main's `value in answer` needs", () => {
    const records_ = records('special_error_param');
    expect(records_.length).toBeGreaterThan(0);
    const problems = records_.flatMap(({ data, answer }) => errorParamProblems(answer.ground_truth).map((p) => `${data.id}: ${p}`));
    expect(problems, `${problems.length} wrong values are not strings`).toEqual([]);
    // The text is what the question states.
    for (const { data, answer } of records_) for (const values of Object.values(answer.ground_truth as Obj)) for (const value of values as string[]) expect(data.question as string).toContain(value);
  });

  it("agent: every exported record uses only classes of ACEBench's class table; the others are counted, told and written with keepExtensions", () => {
    const agent = records('agent_');
    const outside = agent.filter(({ data }) => unloadableClasses(data).length).map(({ data }) => `${data.id}: ${unloadableClasses(data).join(', ')}`);
    expect(outside, `records over classes outside ${ACEBENCH_CLASS_TABLE.join(', ')}`).toEqual([]);
    expect(financeSamples).toBeGreaterThan(0);
    expect(agent.length).toBe(agentSamples - financeSamples);
    expect(notices).toEqual([expect.stringContaining(`${financeSamples} agent record(s) left out`)]);
    const extended = ['data_agent_multi_step.json', 'data_agent_multi_turn.json'].flatMap((name) => readLines<Line>(join(extendedDir, 'data_en', name)));
    expect(extended.length).toBe(agentSamples);
  });

  it('ranges: no end before its start (dates, date-times, times, numbers), and every gold value valid against its schema', () => {
    const validator = new ArgumentValidator();
    const normal = records('normal_');
    const ranges = normal.flatMap(({ data, answer }) => rangesIn(answer.ground_truth, data.id));
    expect(ranges.length).toBeGreaterThan(300);
    const unordered = ranges.filter((range) => !range.ordered).map((range) => `${range.where} (${range.kind})`);
    expect(unordered.slice(0, 5), `${unordered.length} of ${ranges.length} ranges end before they start`).toEqual([]);
    const invalid = normal.flatMap(({ data, answer }) => goldCalls(data, answer).flatMap(({ fn, args }) => {
      const problems = validator.validate(fn.parameters, args);
      return problems.length ? [`${data.id} ${String(fn.name)}: ${describeProblems(problems)}`] : [];
    }));
    expect(invalid.slice(0, 5), `${invalid.length} gold calls break their schema`).toEqual([]);
  });

  // ACEBench's own Python: skipped without python3 (with pandas and openpyxl) or a checkout of the repository (test/helpers/peer-code.ts).
  const peer = pythonHas(['pandas', 'openpyxl']) && hasPeer('ACEBench/ACEBench');
  it.skipIf(!peer)(`eval_main.py scores the gold answers 100 % in every category and the agent harness executes each mile_stone to the exported state (python3 and ACEBench's checkout: ${peer ? 'found' : 'missing, skipped'})`, () => {
    const work = tmp();
    const source = peerFiles('ACEBench/ACEBench', [])!;
    const out = join(work, 'report.json');
    const run = spawnSync('python3', [join(PROJECT, 'test/helpers/acebench_gold_eval.py'), '--peer', source, '--export', exportDir, '--language', 'en', '--work', join(work, 'run'), '--out', out], { encoding: 'utf8', maxBuffer: 64 << 20 });
    expect(run.status, run.stderr.slice(-2000)).toBe(0);
    const report = JSON.parse(readFileSync(out, 'utf8')) as { categories: Record<string, { records: number; accuracy?: number; process_accuracy?: number; correct?: number; error?: string }>; agent: { records: number; executed_as_exported: number; not_executed: unknown[]; differs: string[] }; eval_main_errors?: string[] };
    expect(report.eval_main_errors ?? []).toEqual([]);
    expect(Object.keys(report.categories)).toHaveLength(17);
    for (const [category, entry] of Object.entries(report.categories)) {
      expect({ category, accuracy: entry.accuracy, correct: entry.correct, error: entry.error }).toEqual({ category, accuracy: 1, correct: entry.records, error: undefined });
      if (entry.process_accuracy !== undefined) expect({ category, process: entry.process_accuracy }).toEqual({ category, process: 1 });
    }
    expect(report.agent.not_executed).toEqual([]);
    expect(report.agent.differs).toEqual([]);
    expect(report.agent.executed_as_exported).toBe(agentSamples - financeSamples);
  }, 600_000);
});
