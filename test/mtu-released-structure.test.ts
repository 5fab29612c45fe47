import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { OfflineGateway } from '../core/llm/offline.ts';
import { runPipeline } from '../core/run.ts';
import { DatasetStore } from '../core/store.ts';
import { mtuPipeline } from '../pipelines/mtu.ts';
import { exportMtu } from '../stages/mtu/export.ts';
import { parsePythonLiteral, readPythonLiteral } from '../core/python-literal.ts';
import { fromData, fromFixtures } from './fixtures/mtu/paths.ts';

/**
 * The exported MTU-Eval files read the way the released ones do, and show nothing the released
 * file of the same setting does not: the same record keys and id shape, the tool list in the same
 * notation with entries of the same shapes, the same line grammar in the history (which line may
 * follow which), the same no-call answer, argument values of the same types. The reading below is
 * written for this test from the released files and MTU-Eval's cal_score.py / util.py, not shared
 * with the exporter, so that the exporter cannot agree with itself.
 */

const PROJECT = new URL('..', import.meta.url).pathname;
const MARKER = 'The following is a list of APIs and their parameters that you can use:';
const FILES = ['S-S', 'S-M', 'M-S', 'M-M', 'OOD'] as const;

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
interface Row {
  id: string;
  question: string;
  answer: Record<string, Json>;
}

const readRows = (path: string): Row[] =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as Row);

/**
 * The style of a tool entry: `schema` (parameter names, optional ones as name → default, as SGD
 * intents are written) or `parameters` (lists of parameter objects); an empty list fits either.
 */
function entryStyle(entry: Record<string, Json>): string {
  const isList = (v: Json | undefined, item: (x: Json) => boolean) => Array.isArray(v) && v.every(item);
  const isName = (x: Json) => typeof x === 'string';
  const isObject = (x: Json) => x !== null && typeof x === 'object' && !Array.isArray(x) && typeof x.name === 'string';
  const optional = entry.optional_parameters;
  if (isList(entry.required_parameters, isName) && isList(entry.result_parameters, isName) && optional !== null && typeof optional === 'object' && !Array.isArray(optional)) return 'schema';
  if (isList(entry.required_parameters, isObject) && isList(entry.optional_parameters, isObject) && isList(entry.result_parameters, isObject)) return 'parameters';
  return 'other';
}

/** Kinds of the lines after the tool list: the history grammar of the released files. */
function lineKind(line: string): string {
  const literalKind = (text: string) => {
    try {
      JSON.parse(text);
      return 'json';
    } catch {
      try {
        parsePythonLiteral(text);
        return 'python';
      } catch {
        return 'unreadable'; // a few released lines are cut short
      }
    }
  };
  const rules: [RegExp, (m: RegExpExecArray) => string][] = [
    [/^History Dialog: $/, () => 'history'],
    [/^user: \S/, () => 'user:'],
    [/^User:  \S/, () => 'User:__'],
    [/^User: \S/, () => 'User:'],
    [/^function: $/, () => 'function:'],
    [/^Thought: \S/, () => 'Thought:'],
    [/^Action: [\w./-]+ $/, () => 'Action: name_'],
    [/^Action: [\w./-]+$/, () => 'Action: name'],
    [/^Action: (\{.*)$/, (m) => `Action: ${literalKind(m[1])}`],
    [/^Action Input: (\{.*)$/, (m) => `Action Input: ${literalKind(m[1])}`],
    [/^observation: : (.+)$/, (m) => `observation: : ${literalKind(m[1])}`],
    [/^observation: $/, () => 'observation: (empty)'],
    [/^assistant: : /, () => 'assistant: :'],
    [/^Assistant:  /, () => 'Assistant:__'],
    [/^$/, () => 'blank'],
  ];
  for (const [pattern, kind] of rules) {
    const m = pattern.exec(line);
    if (m) return kind(m);
  }
  return 'text';
}

/** A `"Tool.field"` value naming a tool of the record. */
const isChained = (value: Json, tools: Set<string>) => typeof value === 'string' && /^[A-Za-z_][\w-]*\.\w+$/.test(value) && tools.has(value.split('.')[0]);

function valueType(value: Json, tools: Set<string>): string {
  if (isChained(value, tools)) return 'chained';
  if (Array.isArray(value)) return 'list';
  if (value === null) return 'null';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'float';
  return typeof value === 'object' ? 'dict' : typeof value === 'string' ? 'str' : 'bool';
}

/** Every structural feature of one record, as `feature=value` strings. */
function features(row: Row): string[] {
  const out = [`keys=${Object.keys(row).join(',')}`, `id=${row.id.replace(/\d+/g, 'N')}`, `leading-newline=${row.question.startsWith('\n')}`];
  const at = row.question.indexOf(MARKER);
  expect(at, `${row.id}: no tool-list marker`).toBeGreaterThan(-1);
  let start = at + MARKER.length;
  out.push(`after-marker=${JSON.stringify(row.question[start] === '\n' ? '\n' : row.question[start])}`);
  if (row.question[start] === '\n') start++;
  // `[{'name': '` (Python str()), `[{"name": "` (json.dumps), `[{"name":"` (compact JSON) …
  out.push(`list-opening=${row.question.slice(start, start + 10)}`);
  const { value: list, end } = readPythonLiteral(row.question, start);
  const tools = new Set<string>();
  for (const entry of Array.isArray(list) ? list : [list]) {
    if (!entry || typeof entry !== 'object' || Array.isArray(entry)) continue;
    tools.add(String(entry.name));
    out.push(`entry=${Object.keys(entry).join(',')}|${entryStyle(entry)}`);
  }
  const lines = row.question.slice(end).split('\n');
  expect(lines[0], `${row.id}: text right after the tool list`).toBe('');
  let previous = 'tool-list';
  for (const line of lines.slice(1)) {
    const kind = lineKind(line);
    out.push(`line=${previous} -> ${kind}`);
    previous = kind;
  }
  out.push(`last-line=${previous}`);
  for (const tool of Object.keys(row.answer)) tools.add(tool.trim());
  const calls = Object.entries(row.answer).filter(([tool]) => tool !== '');
  if (!calls.length) out.push(`no-call-answer=${JSON.stringify(row.answer)}`);
  for (const [, args] of calls) {
    out.push(`arguments=${typeof args === 'string' ? 'json-string' : valueType(args, tools)}`);
    if (args && typeof args === 'object' && !Array.isArray(args)) for (const value of Object.values(args)) out.push(`value=${valueType(value, tools)}`);
  }
  return out;
}

/** The features of every record of a file, each with the first record that shows it. */
function featureSet(rows: Row[]): Map<string, string> {
  const seen = new Map<string, string>();
  for (const row of rows) for (const feature of features(row)) if (!seen.has(feature)) seen.set(feature, row.id);
  return seen;
}

/**
 * Features of `ours` the released file of the same setting never shows, with an example id. The
 * released OOD file holds records of every setting, so an OOD record may show what any released
 * file shows.
 */
function unreleasedFeatures(exportDir: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  const releasedOf = (file: string) => featureSet(readRows(fromData(`reference/mtu-bench/${file}_eval.jsonl`)));
  for (const file of FILES) {
    const released = file === 'OOD' ? new Map(FILES.flatMap((f) => [...releasedOf(f)])) : releasedOf(file);
    const ours = featureSet(readRows(join(exportDir, `${file}_eval.jsonl`)));
    out[file] = [...ours].filter(([feature]) => !released.has(feature)).map(([feature, id]) => `${feature} (${id})`);
  }
  return out;
}

describe('the mtu export against the released MTU-Eval files', () => {
  let dir: string;
  beforeAll(async () => {
    const home = mkdtempSync(join(tmpdir(), 'tk-mtu-structure-'));
    const result = await runPipeline({
      pipeline: mtuPipeline,
      configOverrides: {
        sources: {
          snips: { splits: ['validate'] },
          atis: { splits: ['valid'] },
          multiwoz: { dialogues: fromFixtures('multiwoz/dialogues'), splits: ['test'] },
        },
        splits: { mode: 'random', testFraction: 0.5, oodDomains: ['Weather', 'RideSharing'] },
        compose: { chainRate: 1, chainMultiTurnRate: 1 },
      },
      llm: new OfflineGateway(42),
      home,
      projectDir: PROJECT,
      cwd: PROJECT,
      progress: { quiet: true },
    });
    const store = new DatasetStore(home);
    dir = join(home, 'export');
    await exportMtu(store.sampleSource(result.ref!), [], dir, result.ref!);
  }, 600_000);

  it('writes the released file names, and records of every setting', () => {
    const files = readdirSync(dir).sort();
    for (const file of FILES) expect(files).toContain(`${file}_eval.jsonl`);
    expect(files.filter((f) => !/^(S-S|S-M|M-S|M-M)_(eval|train)\.jsonl$|^OOD_eval\.jsonl$|^index\.jsonl$/.test(f))).toEqual([]);
    for (const file of FILES) expect(readRows(join(dir, `${file}_eval.jsonl`)).length, file).toBeGreaterThan(0);
    for (const row of readRows(join(dir, 'OOD_eval.jsonl'))) expect(row.id).toMatch(/^OOD_\d+_\d+$/);
  });

  it('shows no record key, id shape, tool-list notation or entry shape, history line order, no-call answer or value type the released file of its setting lacks', () => {
    expect(unreleasedFeatures(dir)).toEqual({ 'S-S': [], 'S-M': [], 'M-S': [], 'M-M': [], OOD: [] });
  });

  it("never gives MTU's scorer an S-S or M-S answer without a key (cal_score reads list(reference.keys())[0])", () => {
    for (const file of ['S-S', 'M-S']) {
      for (const row of readRows(join(dir, `${file}_eval.jsonl`))) {
        const target = Object.keys(row.answer)[0];
        expect(target, row.id).toBeDefined();
        expect(typeof row.answer[target] === 'object' && !Array.isArray(row.answer[target]), row.id).toBe(true);
      }
    }
  });

  it('writes chained "Tool.field" values in S-M and M-M, and typed (non-string) values', () => {
    const count = (file: string, test: (feature: string) => boolean) => readRows(join(dir, `${file}_eval.jsonl`)).flatMap(features).filter(test).length;
    expect(count('S-M', (f) => f === 'value=chained')).toBeGreaterThan(0);
    expect(count('M-M', (f) => f === 'value=chained')).toBeGreaterThan(0);
    expect(FILES.reduce((n, file) => n + count(file, (f) => /^value=(int|bool|list)$/.test(f)), 0)).toBeGreaterThan(0);
  });
});
