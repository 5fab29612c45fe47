import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { groupBy } from '../../core/collections.ts';
import type { Sample, ToolSpec } from '../../core/records.ts';
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
export async function exportToolE(samples: Sample[], tools: ToolSpec[], outDir: string): Promise<string[]> {
  mkdirSync(outDir, { recursive: true });
  const written: string[] = [];
  const write = (name: string, text: string) => {
    const path = join(outDir, name);
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, text);
    written.push(path);
  };
  const bySplit = groupBy(samples, (s) => s.split);
  const query = (s: Sample) => s.dialogue.find((t) => t.role === 'user')?.content ?? '';

  const single = bySplit.get(SINGLE_TOOL_SPLIT) ?? [];
  write(
    'all_clean_data.csv',
    stringify(
      single.map((s) => [query(s), s.expected.labels?.[0] ?? '']),
      { header: true, columns: ['Query', 'Tool'], record_delimiter: 'unix', quoted_match: [/[\r\n]/, FORMULA_LEAD] },
    ),
  );
  const multi = bySplit.get(MULTI_TOOL_SPLIT) ?? [];
  write('multi_tool_query_golden.json', JSON.stringify(multi.map((s) => ({ query: query(s), tool: s.expected.labels ?? [] })), null, 2) + '\n');

  const descriptions = (list: ToolSpec[]) => Object.fromEntries(list.map((t) => [t.name, t.description]));
  write('plugin_des.json', JSON.stringify(descriptions(tools), null, 2) + '\n');
  // Merged tools are those whose queries were written for several plugins.
  const popular = popularity(samples);
  const merged = tools.filter((t) => (popular.get(t.name)?.plugins ?? 1) > 1);
  write('big_tool_des.json', JSON.stringify(descriptions(merged), null, 2) + '\n');

  const scenarios = new Map<string, string[]>();
  for (const task of TASKS) {
    const rows = bySplit.get(taskSplit(task)) ?? [];
    if (!rows.length) continue;
    const records = rows.map((s, index) => {
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
    write(join('tasks', `${task}.json`), JSON.stringify(records, null, 2) + '\n');
  }
  for (const [name, list] of scenarios) write(join('scenario', `${name.replace(/[\/\\]|^\.+/g, '_')}.json`), JSON.stringify({ Tools: list }, null, 2) + '\n');
  return written;
}
