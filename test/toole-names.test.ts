import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { collectItems } from '../eval/run.ts';
import { tooleScorer } from '../stages/toole/score.ts';
import { TASK_FILES } from '../stages/toole/export.ts';
import { PLUGIN_INFO_REPORT } from '../stages/toole/tool-descriptions.ts';
import { defaultRun, type DefaultRun } from './helpers/default-run.ts';
import { peerFiles, pythonHas, runPython, wholeVersionPeerRuns } from './helpers/peer-code.ts';

const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8'));

/** Names that are equal without regard to case, grouped (none when every name is unique that way). */
function caselessClashes(names: Iterable<string>): string[][] {
  const groups = new Map<string, Set<string>>();
  for (const name of names) groups.set(name.toLowerCase(), (groups.get(name.toLowerCase()) ?? new Set()).add(name));
  return [...groups.values()].filter((group) => group.size > 1).map((group) => [...group]);
}

/** The candidate names of a MetaTool action prompt (`N. tool name: X, tool description: …` lines). */
const candidatesOf = (prompt: string) => [...prompt.matchAll(/^\d+\. tool name: (.*?), tool description: /gm)].map((m) => m[1]);

/** Every tool name the version's library, plugin records, samples and MetaTool export use, with what is wrong. */
async function nameProblems(run: DefaultRun): Promise<string[]> {
  const problems: string[] = [];
  const library = run.store.tools(run.ref).map((t) => t.name);
  const plugins = (readJson(join(run.ref.dir, 'reports', PLUGIN_INFO_REPORT)) as { name_for_model: string }[]).map((p) => p.name_for_model);
  for (const clash of caselessClashes(new Set([...library, ...plugins]))) problems.push(`version: tools named alike in other letter case: ${clash.join(', ')}`);
  const known = new Set(library);
  for (const sample of run.store.sampleSource(run.ref).all()) {
    const candidates = sample.tools.map((t) => t.name);
    for (const clash of caselessClashes(candidates)) problems.push(`sample ${sample.id}: candidates named alike: ${clash.join(', ')}`);
    for (const name of [...candidates, ...(sample.expected.labels ?? [])]) if (!known.has(name) && !['yes', 'no'].includes(name)) problems.push(`sample ${sample.id}: ${name} is not a tool of the library`);
  }
  // The export, as MetaTool's prompt builder finds a tool's description: big_tool_des.json, else plugin_info.json.
  const dataset = join(await run.exportAs('toole'), 'dataset');
  const described = new Set([...Object.keys(readJson(join(dataset, 'big_tool_des.json'))), ...(readJson(join(dataset, 'plugin_info.json')) as { name_for_model: string }[]).map((p) => p.name_for_model)]);
  for (const clash of caselessClashes(described)) problems.push(`export: tools named alike: ${clash.join(', ')}`);
  for (const file of Object.values(TASK_FILES).filter((f) => f !== TASK_FILES.awareness)) {
    (readJson(join(dataset, 'tmp_dataset', file)) as { action_prompt: string; tool: string | string[] }[]).forEach((record, i) => {
      const candidates = candidatesOf(record.action_prompt);
      for (const clash of caselessClashes(candidates)) problems.push(`${file}[${i}]: candidates named alike: ${clash.join(', ')}`);
      for (const name of [...candidates, ...[record.tool].flat()]) if (!described.has(name)) problems.push(`${file}[${i}]: MetaTool has no description of ${name}`);
    });
  }
  return problems;
}

describe('ToolE: tool names are unique within a version without regard to case', () => {
  const run = defaultRun('toole');

  it('default version: library, plugin records, candidate lists, answers and the MetaTool export name each tool once in any letter case, and only tools that exist', async () => {
    expect(await nameProblems(run)).toEqual([]);
    // MetaTool's "Weather" and Tomorrow.io's "weather" are two plugins: the later one is renamed, its provenance keeping its name.
    const renamed = run.store.tools(run.ref).find((t) => t.name === 'weather_2');
    expect(renamed?.provenance).toMatchObject({ source: 'metatool', id: 'weather' });
  }, 600_000);
});

describe('ToolE with --limit 200 (where "Weather" and "weather" both stay unmerged)', () => {
  const run = defaultRun('toole', { limit: 200 });

  it('the oracle scores every metric at its best, and no tool name clashes', async () => {
    const samples = run.store.sampleSource(run.ref);
    const items = collectItems(tooleScorer, samples, undefined, { dir: run.ref.dir, samples });
    const report = tooleScorer.score(items.map((item) => ({ item, output: tooleScorer.oracle(item) })));
    // Partial multi-tool answers (one of two tools) are shares a perfect model has none of.
    const best = (metric: string) => (['multi-tool_1/1', 'multi-tool_1/2'].includes(metric) ? 0 : 1);
    for (const table of [report.metrics, ...Object.values(report.byCategory)]) for (const [metric, value] of Object.entries(table)) expect([metric, value]).toEqual([metric, best(metric)]);
    expect(await nameProblems(run)).toEqual([]);
  }, 600_000);

  const peer = wholeVersionPeerRuns && pythonHas(['pandas', 'numpy']) ? peerFiles('HowieHwong/MetaTool', ['src']) : null;
  it.skipIf(!peer)("MetaTool's own prompt builder rebuilds every exported prompt and its runner, answering with the gold, reads back every answer (npm run test:peers; skipped without python3, pandas or a MetaTool checkout)", async () => {
    const dataset = join(await run.exportAs('toole'), 'dataset');
    const out = runPython(readFileSync(new URL('./peer/metatool_gold.py', import.meta.url), 'utf8'), [peer!, dataset, join(run.scratch, 'metatool-work')], { cwd: run.scratch, pythonPath: [] });
    const summary = JSON.parse(out.trim().split('\n').at(-1)!).summary as { read_back: Record<string, string>; problems: number };
    expect(summary.problems, out.slice(-3000)).toBe(0);
    for (const [task, figure] of Object.entries(summary.read_back)) {
      const [right, all] = figure.split('/');
      expect([task, right]).toEqual([task, all]);
    }
  }, 600_000);
});
