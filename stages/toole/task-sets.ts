import { readdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { z } from 'zod';
import { createEmbedder, type EmbedderConfig } from '../../core/embed/index.ts';
import { UserError } from '../../core/errors.ts';
import { readJsonl } from '../../core/jsonl.ts';
import { Sample, sampleId, type ToolSpec, type Turn } from '../../core/records.ts';
import type { Rng } from '../../core/rng.ts';
import type { ScanStage } from '../../core/stage.ts';
import { Popularity, popularityRow } from './popularity.ts';
import { multiToolCandidates, reliabilityCandidates, similarCandidates, similarityRanking } from './candidates.ts';
import { MULTI_TOOL_SPLIT, SINGLE_TOOL_SPLIT } from './records.ts';
import { goldCalls, SampleInput } from './samples.ts';
import { readSourceText } from '../../core/source-files.ts';

/**
 * MetaTool's evaluation task sets (paper §2.3), built from the finished ToolE queries:
 *  - awareness of tool usage: ToolE queries (need a tool: "yes") against queries that need none
 *    ("no") from a file the user provides;
 *  - tool selection with similar choices: the gold tool among its most similar tools;
 *  - in specific scenarios: the tool list of a scenario (the most popular tools, or a group's list);
 *  - with reliability issues: the gold tool and its most similar tools removed, random others shown;
 *  - multi-tool selection: the two gold tools among tools similar to neither.
 * Each task sample offers its candidate list as `tools` and holds the gold answer in `expected`.
 */
export interface ScenarioSpec {
  name: string;
  tools: string[];
}

export interface TaskSetOptions {
  embedder: EmbedderConfig;
  awareness: { noToolFile: string; positives?: number };
  similar: { perTool: number; candidates: number };
  scenario: { popularity: number[]; groups: (string | ScenarioSpec)[]; perTool: number };
  reliability: { perTool: number; candidates: number; excludeSimilar: number };
  multiTool: { candidates: number; excludeSimilar: number };
}

/** The attachment (under the version's reports/) listing every scenario's known tools: `[{name, tools}]`. */
export const SCENARIOS_REPORT = 'toole-scenarios.json';

export const TASKS = ['awareness', 'similar', 'scenario', 'reliability', 'multi-tool'] as const;
export type Task = (typeof TASKS)[number];
export const taskSplit = (task: Task) => `task-${task}`;

const NoToolQuery = z.object({ query: z.string().trim().min(1, 'the query is empty'), source: z.string().optional() }).passthrough();

/** A JSONL file of queries an LLM answers without any tool: `{"query": "...", "source"?: "..."}` per line. */
export function readNoToolQueries(path: string, shown = path): { query: string; source?: string }[] {
  let rows: unknown[];
  try {
    rows = readJsonl(path);
  } catch (error) {
    if (error instanceof UserError) throw error;
    throw new UserError(`no-tool query file not readable: ${shown} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); set tasks.awareness.noToolFile in the config`);
  }
  if (!rows.length) throw new UserError(`${shown}: no queries; the awareness task needs queries that need no tool, one {"query": "..."} per line`);
  return rows.map((row, i) => {
    const parsed = NoToolQuery.safeParse(row);
    if (!parsed.success) throw new UserError(`${shown}: record ${i + 1}: ${parsed.error.issues[0].message} (expected {"query": "...", "source"?: "..."})`);
    return parsed.data;
  });
}

/** Scenario tool lists: inline, or JSON files `{"Tools": [...]}` (MetaTool's scenario files), or folders of them. */
export function readScenarios(groups: (string | ScenarioSpec)[], resolvePath: (p: string) => string): ScenarioSpec[] {
  const out: ScenarioSpec[] = [];
  for (const group of groups) {
    if (typeof group !== 'string') {
      out.push(group);
      continue;
    }
    const path = resolvePath(group);
    let files: string[];
    try {
      files = statSync(path).isDirectory() ? readdirSync(path).filter((f) => f.endsWith('.json')).sort().map((f) => join(path, f)) : [path];
    } catch {
      throw new UserError(`scenario file not found: ${group}; fix tasks.scenario.groups in the config`);
    }
    for (const file of files) {
      const text = readSourceText(file);
      let json: { Tools?: unknown; tools?: unknown; name?: unknown };
      try {
        json = JSON.parse(text);
      } catch (error) {
        throw new UserError(`${file}: not valid JSON (${(error as Error).message})`);
      }
      const tools = json.Tools ?? json.tools;
      if (!Array.isArray(tools) || !tools.every((t) => typeof t === 'string')) throw new UserError(`${file}: expected {"Tools": ["tool name", ...]}`);
      out.push({ name: typeof json.name === 'string' ? json.name : basename(file, '.json'), tools });
    }
  }
  return out;
}

/** What a task sample keeps of the ToolE sample it is built from. */
interface Base {
  id: string;
  query: string;
  labels: string[];
  lineage: Sample['meta']['lineage'];
}

function baseOf(sample: Sample): Base {
  return { id: sample.id, query: sample.dialogue[0].content, labels: sample.expected.labels!, lineage: sample.meta.lineage };
}

interface Built {
  task: Task;
  query: string;
  /** The base sample the query comes from (absent for awareness negatives). */
  base?: Base;
  candidates: ToolSpec[];
  labels: string[];
  assistant: Turn;
  meta: Record<string, unknown>;
}

function taskSample(built: Built): Sample {
  const origin = { task: built.task, base: built.base?.id ?? built.query, scenario: built.meta.scenario ?? null };
  return {
    id: sampleId('toole', origin),
    benchmark: 'toole',
    category: `toole/task/${built.task}`,
    split: taskSplit(built.task),
    tools: built.candidates,
    dialogue: [{ role: 'user', content: built.query }, built.assistant],
    expected: { labels: built.labels, ...(built.assistant.calls && { calls: built.assistant.calls }) },
    meta: {
      source: built.base ? { dataset: 'toole', id: built.base.id } : { dataset: 'no-tool-queries' },
      lineage: built.base?.lineage ?? [],
      checks: [],
      tags: [],
      task: built.task,
      ...built.meta,
    },
  };
}

function selection(task: Task, base: Base, candidates: ToolSpec[], gold: string[], meta: Record<string, unknown> = {}): Built {
  const offered = gold.filter((g) => candidates.some((c) => c.name === g));
  const assistant: Turn = offered.length ? { role: 'assistant', content: '', calls: goldCalls(offered) } : { role: 'assistant', content: 'None' };
  return { task, query: base.query, base, candidates, labels: offered, assistant, meta: { goldTools: gold, ...meta } };
}

/** Samples needing review (a failed soft check) make poor test items; they are left out of task sets. */
const clean = (s: Sample) => s.meta.checks.every((c) => c.pass);

interface TaskSetsState {
  /** The task samples, emitted after the last input sample. */
  tasks: Sample[];
  /** Input samples left before the last one. */
  left: number;
}

/**
 * A whole-set step on a projection: `collect` keeps of each sample only what the task samples need
 * (id, query, labels, lineage; the tool library) and builds the task samples, and `run` passes the
 * samples through, the task samples after the last one.
 */
export function taskSetsStage(options: TaskSetOptions): ScanStage<Sample, Sample, TaskSetsState> {
  return {
    kind: 'scan',
    name: 'toole-task-sets',
    version: 3,
    fanOut: true,
    input: SampleInput,
    output: Sample,
    collect: async (samples, ctx) => {
      const library = new Map<string, ToolSpec>();
      const popularity = new Popularity();
      const byTool = new Map<string, Base[]>();
      const multi: Base[] = [];
      let count = 0;
      for (const sample of samples) {
        count++;
        for (const tool of sample.tools) if (!library.has(tool.name)) library.set(tool.name, tool);
        popularity.add(popularityRow(sample));
        if (!clean(sample)) continue;
        if (sample.split === SINGLE_TOOL_SPLIT) {
          const label = sample.expected.labels![0];
          (byTool.get(label) ?? byTool.set(label, []).get(label)!).push(baseOf(sample));
        } else if (sample.split === MULTI_TOOL_SPLIT) multi.push(baseOf(sample));
      }
      const names = [...library.keys()].sort();
      const specs = (list: string[]) => list.map((n) => library.get(n)!);
      const embedder = createEmbedder(options.embedder, { gateway: ctx.llm, stage: ctx.stage.name, resolvePath: ctx.resolvePath });
      const ranking = names.length ? similarityRanking(names, await embedder.embed(names.map((n) => library.get(n)!.description))) : new Map<string, string[]>();
      const pick = (tool: string, n: number, rng: Rng) => rng.sample(byTool.get(tool) ?? [], n);
      const built: Built[] = [];
      const skipped: Record<string, number> = {};
      const skip = (task: Task) => (skipped[task] = (skipped[task] ?? 0) + 1);

      // Awareness: balanced positives from across the tools, negatives from the no-tool file.
      const negatives = readNoToolQueries(ctx.resolvePath(options.awareness.noToolFile), options.awareness.noToolFile);
      const positives = roundRobin([...byTool.keys()].sort(), (tool) => ctx.rng('awareness', tool).shuffle(byTool.get(tool)!), options.awareness.positives ?? negatives.length);
      for (const base of positives) {
        built.push({ task: 'awareness', query: base.query, base, candidates: [], labels: ['yes'], assistant: { role: 'assistant', content: 'yes' }, meta: { label: 'positive', tool: base.labels[0] } });
      }
      for (const negative of negatives) {
        built.push({ task: 'awareness', query: negative.query, candidates: [], labels: ['no'], assistant: { role: 'assistant', content: 'no' }, meta: { label: 'negative', ...(negative.source && { origin: negative.source }) } });
      }

      for (const tool of names) {
        for (const base of pick(tool, options.similar.perTool, ctx.rng('similar', tool))) {
          const list = similarCandidates(tool, ranking, options.similar.candidates, ctx.rng('similar', base.id));
          if (list) built.push(selection('similar', base, specs(list), [tool]));
          else skip('similar');
        }
        for (const base of pick(tool, options.reliability.perTool, ctx.rng('reliability', tool))) {
          const list = reliabilityCandidates(tool, ranking, names, options.reliability.candidates, options.reliability.excludeSimilar, ctx.rng('reliability', base.id));
          if (list) built.push(selection('reliability', base, specs(list), [tool]));
          else skip('reliability');
        }
      }

      // Scenarios: the most popular tools (merged-plugin count) among those with queries to ask
      // (a merged tool's queries may all wait for review), and the configured groups.
      const popular = popularity
        .ranked()
        .map((t) => t.tool)
        .filter((tool) => byTool.has(tool));
      // Named as MetaTool's scenario files are (`TopTool_top5.json`).
      const scenarios: ScenarioSpec[] = [...options.scenario.popularity.map((k) => ({ name: `TopTool_top${k}`, tools: popular.slice(0, k) })), ...readScenarios(options.scenario.groups, ctx.resolvePath)];
      const scenarioReport: Record<string, { tools: number; unknown: string[]; samples: number }> = {};
      for (const scenario of scenarios) {
        const known = scenario.tools.filter((t) => library.has(t));
        const unknown = scenario.tools.filter((t) => !library.has(t));
        const before = built.length;
        if (known.length >= 2) {
          for (const tool of known) {
            for (const base of pick(tool, options.scenario.perTool, ctx.rng('scenario', scenario.name, tool))) {
              built.push(selection('scenario', base, specs(ctx.rng('scenario', scenario.name, base.id).shuffle(known)), [tool], { scenario: scenario.name }));
            }
          }
        }
        scenarioReport[scenario.name] = { tools: known.length, unknown, samples: built.length - before };
      }
      // Every scenario's tool list, for the export's scenario folder (a list too small for samples included).
      ctx.attach(SCENARIOS_REPORT, `${JSON.stringify(scenarios.map((s) => ({ name: s.name, tools: s.tools.filter((t) => library.has(t)) })), null, 2)}\n`);

      for (const base of multi) {
        const gold = base.labels;
        const list = multiToolCandidates(gold, ranking, names, options.multiTool.candidates, options.multiTool.excludeSimilar, ctx.rng('multi-tool', base.id));
        if (list) built.push(selection('multi-tool', base, specs(list), gold));
        else skip('multi-tool');
      }

      const tasks = built.map(taskSample);
      ctx.report('toole.taskSets', {
        counts: Object.fromEntries(TASKS.map((t) => [t, tasks.filter((s) => s.meta.task === t).length])),
        skippedForSmallLibrary: skipped,
        scenarios: scenarioReport,
        embedder: embedder.id,
      });
      if (!count && tasks.length) ctx.log(`no ToolE samples: the ${tasks.length} task samples (awareness negatives) have no sample to follow and are left out`);
      return { tasks, left: count };
    },
    run: (sample, ctx) => (--ctx.state.left === 0 ? [sample, ...ctx.state.tasks] : [sample]),
  };
}

/** Up to `limit` items taken one per group in turn (groups in the given order), so every group is represented. */
function roundRobin<T>(groups: string[], itemsOf: (group: string) => T[], limit: number): T[] {
  const queues = groups.map(itemsOf);
  const out: T[] = [];
  for (let round = 0; out.length < limit && queues.some((q) => q.length > round); round++) {
    for (const queue of queues) {
      if (out.length >= limit) break;
      if (round < queue.length) out.push(queue[round]);
    }
  }
  return out;
}
