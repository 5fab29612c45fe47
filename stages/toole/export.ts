import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { mapIterable } from '../../core/collections.ts';
import { csvRecord } from '../../core/csv.ts';
import { AtomicJsonlFile, writeFileAtomic, writeJsonArrayAtomic } from '../../core/jsonl.ts';
import type { Sample, ToolSpec } from '../../core/records.ts';
import type { SampleSource } from '../../core/sample-source.ts';
import { actionPrompt, thoughtPrompt, toolDescription, toolListText } from './metatool-prompts.ts';
import { Popularity, popularityRow } from './popularity.ts';
import { MULTI_TOOL_SPLIT, SINGLE_TOOL_SPLIT, queryText } from './records.ts';
import { SCENARIOS_REPORT, taskSplit, type ScenarioSpec, type Task } from './task-sets.ts';
import { PLUGIN_INFO_REPORT } from './tool-descriptions.ts';

/** One record of MetaTool's `plugin_info.json`. */
export interface PluginInfo {
  name_for_model: string;
  name_for_human: string;
  description_for_model: string;
  description_for_human: string;
}

/** The task files of MetaTool's release (`dataset/tmp_dataset/`), by toolkiln task. */
export const TASK_FILES: Record<Task, string> = {
  awareness: 'Task1.json',
  similar: 'Task2-Subtask1.json',
  scenario: 'Task2-Subtask2.json',
  reliability: 'Task2-Subtask3.json',
  'multi-tool': 'Task2-Subtask4.json',
};

/**
 * ToolE in the layout of MetaTool's repository, so that its prompt builder and runner read the
 * export where they read the release (copy `dataset/` into a MetaTool checkout):
 *   dataset/data/all_clean_data.csv             `Query,Tool`, one row per distinct single-tool query and tool
 *   dataset/data/multi_tool_query_golden.json   `[{"query", "tool": [a, b]}]`
 *   dataset/plugin_des.json                     `{tool: description}` for the whole library
 *   dataset/big_tool_des.json                   `{tool: description}` for the merged tools
 *   dataset/plugin_info.json                    the plugin records behind the tools (`name_for_model`, …)
 *   dataset/scenario/<name>.json                `{"Tools": [...]}` for every scenario of the task sets
 *   dataset/tmp_dataset/Task1.json              awareness: `{thought_prompt, label, tool?, query}`
 *   dataset/tmp_dataset/Task2-Subtask1..4.json  similar, scenario, reliability, multi-tool:
 *                                               `{action_prompt, thought_prompt, tool, query, index?}`
 * The prompts are the builder's (metatool-prompts.ts), its tool descriptions from these files.
 */
export async function exportToolE(samples: SampleSource, tools: ToolSpec[], outDir: string, version?: { dir: string }): Promise<string[]> {
  const written: string[] = [];
  const path = (name: string) => {
    const full = join(outDir, 'dataset', name);
    written.push(full);
    return full;
  };

  // One pass over the single-tool queries: the CSV rows, and what the other files need of them.
  const popularity = new Popularity();
  const csvTools = new Set<string>();
  const seenRows = new Set<string>();
  const csv = new AtomicJsonlFile(path('data/all_clean_data.csv'));
  try {
    // One row at a time: each row's text does not depend on the others. A cell a spreadsheet could
    // run as a formula gets a leading ' (core/csv.ts), which toolkiln's readers of this file undo.
    csv.writeText(csvRecord(['Query', 'Tool']));
    for (const s of samples.inSplit(SINGLE_TOOL_SPLIT)) {
      popularity.add(popularityRow(s));
      const row = [queryText(s), s.expected.labels?.[0] ?? ''];
      // Queries written for two plugins that merging made one tool can repeat a row exactly; it is written once.
      const key = createHash('sha256').update(JSON.stringify(row)).digest('base64');
      if (seenRows.has(key)) continue;
      seenRows.add(key);
      csvTools.add(row[1]);
      csv.writeText(csvRecord(row));
    }
  } catch (error) {
    csv.discard();
    throw error;
  }
  csv.commit();
  writeJsonArrayAtomic(path('data/multi_tool_query_golden.json'), mapIterable(samples.inSplit(MULTI_TOOL_SPLIT), (s) => ({ query: queryText(s), tool: s.expected.labels ?? [] })));

  const descriptions = (list: ToolSpec[]) => Object.fromEntries(list.map((t) => [t.name, t.description]));
  const writeJson = (name: string, value: unknown) => writeFileAtomic(path(name), JSON.stringify(value, null, 2) + '\n');
  writeJson('plugin_des.json', descriptions(tools));
  // Merged tools are those whose queries were written for several plugins.
  const byTool = popularity.byTool();
  const merged = tools.filter((t) => (byTool.get(t.name)?.plugins ?? 1) > 1);
  writeJson('big_tool_des.json', descriptions(merged));
  const pluginInfo = pluginInfoOf(tools, merged, version);
  writeJson('plugin_info.json', pluginInfo);

  // Scenario lists hold only tools with queries in the CSV: the builder samples each tool's queries from it.
  for (const scenario of scenarioLists(samples, version)) {
    writeJson(join('scenario', `${scenario.name.replace(/[\/\\]|^\.+/g, '_')}.json`), { Tools: scenario.tools.filter((t) => csvTools.has(t)) });
  }

  const mergedDescriptions = new Map(merged.map((t) => [t.name, t.description]));
  const pluginDescriptions = new Map<string, string[]>();
  for (const p of pluginInfo) (pluginDescriptions.get(p.name_for_model) ?? pluginDescriptions.set(p.name_for_model, []).get(p.name_for_model)!).push(p.description_for_human);
  const toolList = (s: Sample) => toolListText(s.tools.map((t) => t.name), (tool) => toolDescription(tool, mergedDescriptions, pluginDescriptions));
  const scenarioIndex = new Map<string, number>();
  for (const [task, file] of Object.entries(TASK_FILES) as [Task, string][]) {
    if (!samples.splits.includes(taskSplit(task))) continue;
    const records = mapIterable(samples.inSplit(taskSplit(task)), (s, index) => {
      const q = queryText(s);
      const gold = (s.meta.goldTools as string[] | undefined) ?? [];
      if (task === 'awareness') return { thought_prompt: thoughtPrompt(q), label: s.meta.label, ...(s.meta.tool !== undefined && { tool: s.meta.tool }), query: q };
      const prompts = { action_prompt: actionPrompt(q, toolList(s), task === 'multi-tool'), thought_prompt: thoughtPrompt(q) };
      if (task === 'multi-tool') return { ...prompts, tool: gold, query: q };
      if (task !== 'scenario') return { ...prompts, tool: gold[0], query: q, index };
      // The builder numbers each scenario's queries from 0 and names the scenario on each.
      const name = String(s.meta.scenario);
      const at = scenarioIndex.get(name) ?? 0;
      scenarioIndex.set(name, at + 1);
      return { ...prompts, tool: gold[0], query: q, index: at, scenario: name };
    });
    writeJsonArrayAtomic(path(join('tmp_dataset', file)), records);
  }
  return written;
}

/**
 * The plugin records behind the library: those the recipe kept (its tool-descriptions attachment)
 * for tools that are not merged, then, for such a tool the attachment lacks (a dataset published
 * before it existed, a tool made by a decision), one from the tool itself.
 */
function pluginInfoOf(tools: ToolSpec[], merged: ToolSpec[], version?: { dir: string }): PluginInfo[] {
  const attached = version ? join(version.dir, 'reports', PLUGIN_INFO_REPORT) : '';
  const recorded = attached && existsSync(attached) ? (JSON.parse(readFileSync(attached, 'utf8')) as PluginInfo[]) : [];
  const mergedNames = new Set(merged.map((t) => t.name));
  const single = tools.filter((t) => !mergedNames.has(t.name));
  const wanted = new Set(single.map((t) => t.name));
  const out = recorded.filter((p) => wanted.has(p.name_for_model));
  const have = new Set(out.map((p) => p.name_for_model));
  for (const tool of single) {
    if (have.has(tool.name)) continue;
    out.push({ name_for_model: tool.name, name_for_human: tool.plugin ?? tool.name, description_for_model: tool.description, description_for_human: tool.description });
  }
  return out;
}

/** Every scenario's tool list: from the task-sets attachment, else the lists the scenario samples show. */
function scenarioLists(samples: SampleSource, version?: { dir: string }): ScenarioSpec[] {
  const attached = version ? join(version.dir, 'reports', SCENARIOS_REPORT) : '';
  if (attached && existsSync(attached)) return JSON.parse(readFileSync(attached, 'utf8')) as ScenarioSpec[];
  const lists = new Map<string, string[]>();
  for (const s of samples.inSplit(taskSplit('scenario'))) {
    const name = String(s.meta.scenario);
    if (!lists.has(name)) lists.set(name, s.tools.map((t) => t.name).sort());
  }
  return [...lists].map(([name, tools]) => ({ name, tools }));
}
