import { join } from 'node:path';
import { stringify, type Options } from 'csv-stringify/sync';
import { mapIterable } from '../../core/collections.ts';
import { AtomicJsonlFile, writeFileAtomic, writeJsonArrayAtomic } from '../../core/jsonl.ts';
import type { Sample, ToolSpec } from '../../core/records.ts';
import type { SampleSource } from '../../core/sample-source.ts';
import { popularity } from './popularity.ts';
import { MULTI_TOOL_SPLIT, SINGLE_TOOL_SPLIT } from './records.ts';
import { TASKS, taskSplit } from './task-sets.ts';

/**
 * A cell a spreadsheet may run as a formula. It is quoted, which keeps the text exact for CSV readers
 * and makes importers that honour quotes (LibreOffice's "quoted field as text") take it as text.
 */
const FORMULA_LEAD = /^[=+\-@\t\r]/;

/**
 * ToolE's released shapes:
 *   all_clean_data.csv             `Query,Tool`, one row per single-tool query
 *   multi_tool_query_golden.json   `[{"query", "tool": [a, b]}]`
 *   plugin_des.json                `{tool: description}` for the whole library
 *   big_tool_des.json              `{tool: description}` for the merged tools
 *   scenario/<name>.json           `{"Tools": [...]}` for each scenario of the task sets
 *   tasks/<task>.json              `[{"index", "query", "tool", "tool_list", ...}]` per task set
 */
export async function exportToolE(samples: SampleSource, tools: ToolSpec[], outDir: string): Promise<string[]> {
  const written: string[] = [];
  const path = (name: string) => {
    written.push(join(outDir, name));
    return join(outDir, name);
  };
  const query = (s: Sample) => s.dialogue.find((t) => t.role === 'user')?.content ?? '';

  const csv = new AtomicJsonlFile(path('all_clean_data.csv'));
  try {
    const options: Options = { record_delimiter: 'unix', quoted_match: [/[\r\n]/, FORMULA_LEAD] };
    // One row at a time: each row's text does not depend on the others.
    csv.writeText(stringify([['Query', 'Tool']], options).slice(0, -1));
    for (const s of samples.inSplit(SINGLE_TOOL_SPLIT)) csv.writeText(stringify([[query(s), s.expected.labels?.[0] ?? '']], options).slice(0, -1));
  } catch (error) {
    csv.discard();
    throw error;
  }
  csv.commit();
  writeJsonArrayAtomic(path('multi_tool_query_golden.json'), mapIterable(samples.inSplit(MULTI_TOOL_SPLIT), (s) => ({ query: query(s), tool: s.expected.labels ?? [] })));

  const descriptions = (list: ToolSpec[]) => Object.fromEntries(list.map((t) => [t.name, t.description]));
  writeFileAtomic(path('plugin_des.json'), JSON.stringify(descriptions(tools), null, 2) + '\n');
  // Merged tools are those whose queries were written for several plugins.
  const popular = popularity(samples.inSplit(SINGLE_TOOL_SPLIT));
  const merged = tools.filter((t) => (popular.get(t.name)?.plugins ?? 1) > 1);
  writeFileAtomic(path('big_tool_des.json'), JSON.stringify(descriptions(merged), null, 2) + '\n');

  const scenarios = new Map<string, string[]>();
  for (const task of TASKS) {
    if (!samples.splits.includes(taskSplit(task))) continue;
    const records = mapIterable(samples.inSplit(taskSplit(task)), (s, index) => {
      const names = s.tools.map((t) => t.name);
      const gold = (s.meta.goldTools as string[] | undefined) ?? [];
      if (task === 'awareness') return { index, query: query(s), label: s.meta.label, ...(s.meta.tool !== undefined && { tool: s.meta.tool }) };
      if (task === 'scenario') {
        const name = String(s.meta.scenario);
        if (!scenarios.has(name)) scenarios.set(name, [...names].sort());
        return { index, query: query(s), tool: gold[0], tool_list: names, scenario: name };
      }
      return { index, query: query(s), tool: task === 'multi-tool' ? gold : gold[0], tool_list: names, answer: s.expected.labels ?? [] };
    });
    writeJsonArrayAtomic(path(join('tasks', `${task}.json`)), records);
  }
  for (const [name, list] of scenarios) writeFileAtomic(path(join('scenario', `${name.replace(/[\/\\]|^\.+/g, '_')}.json`)), JSON.stringify({ Tools: list }, null, 2) + '\n');
  return written;
}
