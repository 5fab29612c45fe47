import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse/sync';
import { beforeAll, describe, expect, it } from 'vitest';
import { readJsonl } from '../core/jsonl.ts';
import { OfflineGateway } from '../core/llm/offline.ts';
import type { Rejection, Sample, StageStats } from '../core/records.ts';
import { runPipeline, type RunPipelineResult } from '../core/run.ts';
import { DatasetStore } from '../core/store.ts';
import { toolePipeline } from '../pipelines/toole.ts';
import { LLM_REASSIGNED_TAG } from '../stages/toole/overlap.ts';
import type { QueryItem } from '../stages/toole/records.ts';
import { containsName } from '../stages/toole/text.ts';
import { samplesInMemory } from '../core/sample-source.ts';
import { TOOLE_FIXTURE_CONFIG } from './helpers/toole-fixture.ts';
import { defaultRun } from './helpers/default-run.ts';
import { versionSamples, versionRejects } from './helpers/version.ts';

const projectDir = fileURLToPath(new URL('..', import.meta.url));
const FIXTURE_CONFIG = TOOLE_FIXTURE_CONFIG;

interface Run {
  home: string;
  result: RunPipelineResult;
  store: DatasetStore;
  samples: Sample[];
  rejects: Rejection[];
  runDir: string;
}

async function run(configOverrides: unknown, limit?: number): Promise<Run> {
  const home = mkdtempSync(join(tmpdir(), 'tk-toole-'));
  const result = await runPipeline({ pipeline: toolePipeline, configOverrides, llm: new OfflineGateway(42), home, projectDir, cwd: projectDir, limit, progress: { quiet: true } });
  const store = new DatasetStore(home);
  return { home, result, store, samples: versionSamples(store, result.ref!), rejects: versionRejects(store, result.ref!), runDir: join(home, '.toolkiln', 'runs', result.runId) };
}

/** Every stage accounts for its input: out + rejected − fanned = in, its rejects are on file, and it takes what the stage before gave. */
function expectAccounted(stats: StageStats[], rejects: Rejection[], samples: number): void {
  stats.forEach((stage, i) => {
    expect(stage.out + stage.rejected - stage.fanned, stage.stage).toBe(stage.in);
    expect(rejects.filter((r) => r.stage === stage.stage).length, stage.stage).toBe(stage.rejected);
    expect(Object.values(stage.rejectsByReason).reduce((a, b) => a + b, 0), stage.stage).toBe(stage.rejected);
    if (i > 0) expect(stage.in, stage.stage).toBe(stats[i - 1].out);
  });
  // Stages that neither create nor fold records.
  for (const name of ['toole-tool-descriptions', 'toole-filter-queries', 'dedup-near', 'merge-tools-metatool', 'toole-reassign']) {
    const stage = stats.find((s) => s.stage === name);
    if (stage) expect(stage.fanned, name).toBe(0);
  }
  expect(stats.at(-1)!.out).toBe(samples);
}

describe('toole pipeline on hand-made plugins with a decisions file', () => {
  let r: Run;
  beforeAll(async () => {
    r = await run(FIXTURE_CONFIG);
  }, 60_000);

  it('accounts for every record at every stage', () => {
    expect(r.result.status).toBe('published');
    expectAccounted(r.result.stats, r.rejects, r.samples.length);
  });

  it('accounts for every generated query exactly once: a sample or a reject', () => {
    const generated = readJsonl<{ kind: string; id: string }>(join(r.runDir, 'stages', '05-toole-generate-followups', 'out.jsonl')).filter((item) => item.kind === 'query');
    expect(generated.length).toBeGreaterThan(100);
    const seen = new Map<string, number>();
    const note = (id: string) => seen.set(id, (seen.get(id) ?? 0) + 1);
    for (const sample of r.samples) if (sample.split === 'single-tool') note(String(sample.meta.queryId));
    for (const reject of r.rejects) {
      const record = reject.record as Partial<QueryItem & Sample>;
      if (record.kind === 'query') note(record.id!);
      else if (record.split === 'single-tool') note(String(record.meta!.queryId));
    }
    for (const item of generated) expect(seen.get(item.id), item.id).toBe(1);
    expect(seen.size).toBe(generated.length);
  });

  it('rejects unusable and duplicate plugins and excluded tools with their reasons', () => {
    const reasons = Object.fromEntries(r.rejects.filter((x) => x.stage === 'toole-tool-descriptions').map((x) => [(x.record as { nameForModel: string }).nameForModel, x.reason]));
    expect(reasons).toEqual({ blank_tool: 'empty_description', recipe_box: 'duplicate_plugin', plugin_search: 'excluded_tool' });
  });

  it('relabels merged tools and decomposed tools\' queries so that each query has exactly one label', () => {
    const single = r.samples.filter((s) => s.split === 'single-tool');
    const gone = ['weather_now', 'forecaster', 'sky_report', 'hotel_deals', 'stay_finder', 'travel_all', 'flight_status'];
    for (const sample of single) {
      expect(sample.expected.labels).toHaveLength(1);
      expect(gone).not.toContain(sample.expected.labels![0]);
      expect(sample.tools.map((t) => t.name)).toEqual(sample.expected.labels);
      expect(sample.expected.calls!.map((c) => c.tool)).toEqual(sample.expected.labels);
    }
    const labelsOf = (plugin: string) => new Set(single.filter((s) => s.meta.generatedFor === plugin).map((s) => s.expected.labels![0]));
    for (const plugin of ['weather_now', 'forecaster', 'sky_report']) expect(labelsOf(plugin)).toEqual(new Set(['WeatherTool']));
    for (const plugin of ['hotel_deals', 'stay_finder']) expect(labelsOf(plugin)).toEqual(new Set(['HotelTool']));
    // One target: every query moves there, no question asked.
    expect(labelsOf('flight_status')).toEqual(new Set(['flight_finder']));
    for (const sample of single.filter((s) => s.meta.generatedFor === 'flight_status')) expect(sample.meta.tags).not.toContain(LLM_REASSIGNED_TAG);
    // Two targets, no assignment: the LLM classifier chose, and the choice goes to review.
    const travel = single.filter((s) => s.meta.generatedFor === 'travel_all');
    expect(travel.length).toBeGreaterThan(0);
    for (const sample of travel) {
      expect(['flight_finder', 'HotelTool']).toContain(sample.expected.labels![0]);
      expect(sample.meta.tags).toContain(LLM_REASSIGNED_TAG);
      expect(sample.meta.checks).toContainEqual(expect.objectContaining({ name: 'llm_reassigned', pass: false, soft: true }));
    }
    for (const plugin of ['calculator', 'flight_finder']) expect([...labelsOf(plugin)]).toEqual([plugin]);
  });

  it('gives merged tools the decided names, the given or an LLM-written description, and records the silhouette before and after', () => {
    const tools = Object.fromEntries(r.store.tools(r.result.ref!).map((t) => [t.name, t]));
    expect(tools.HotelTool.description).toBe('Find and book hotels, motels, apartments and hostels.');
    expect(tools.WeatherTool.description.length).toBeGreaterThan(10);
    expect(Object.keys(tools)).not.toContain('forecaster');
    const stats = r.result.manifest!.stats as Record<string, any>;
    expect(stats.toolMergeMetatool.silhouette.before.byClusters).toHaveProperty('2');
    expect(stats.toolMergeMetatool.silhouette.after.byClusters).toHaveProperty('3');
    // The plots are published with the version under reports/.
    expect(existsSync(join(r.result.ref!.dir, 'reports', stats['toole.overlapPlots'].before))).toBe(true);
    expect(readFileSync(join(r.result.ref!.dir, 'reports', stats['toole.overlapPlots'].after), 'utf8')).toContain('<svg');
  });

  it('pairs the most popular tools (most merged plugins first) for multi-tool queries that keep both labels', () => {
    const stats = r.result.manifest!.stats as Record<string, any>;
    expect(stats['toole.multiTool'].popularTools.map((t: { tool: string }) => t.tool).slice(0, 2)).toEqual(['WeatherTool', 'HotelTool']);
    const multi = r.samples.filter((s) => s.split === 'multi-tool');
    expect(multi.length).toBeGreaterThan(0);
    for (const sample of multi) {
      expect(sample.expected.labels).toHaveLength(2);
      expect(sample.category).toBe('toole/multi-tool');
      expect(['parallel', 'causal']).toContain(sample.meta.usage);
    }
  });

  it('builds the task sets: gold present or absent as each task requires, no repeated candidates', () => {
    const tasks = (task: string) => r.samples.filter((s) => s.split === `task-${task}`);
    expect(tasks('awareness').filter((s) => s.expected.labels![0] === 'no').map((s) => s.dialogue[0].content)).toHaveLength(3);
    expect(tasks('awareness').filter((s) => s.expected.labels![0] === 'yes')).toHaveLength(3);
    for (const s of tasks('similar')) {
      expect(s.tools).toHaveLength(3);
      expect(s.tools.map((t) => t.name)).toContain(s.meta.goldTools && (s.meta.goldTools as string[])[0]);
    }
    for (const s of tasks('reliability')) {
      expect(s.tools.map((t) => t.name)).not.toContain((s.meta.goldTools as string[])[0]);
      expect(s.expected.labels).toEqual([]);
    }
    for (const s of tasks('multi-tool')) expect(s.tools.map((t) => t.name)).toEqual(expect.arrayContaining(s.expected.labels!));
    for (const s of r.samples.filter((x) => x.split.startsWith('task-'))) expect(new Set(s.tools.map((t) => t.name)).size).toBe(s.tools.length);
    const scenario = (r.result.manifest!.stats as Record<string, any>)['toole.taskSets'].scenarios.travellers;
    expect(scenario).toEqual(expect.objectContaining({ tools: 3, unknown: ['no_such_tool'] }));
  });

  it('exports the released shapes', async () => {
    const out = join(r.home, 'export');
    await toolePipeline.exports.toole(samplesInMemory(r.samples), r.store.tools(r.result.ref!), out, r.result.ref!);
    const dataset = join(out, 'dataset');
    const rows = parse(readFileSync(join(dataset, 'data', 'all_clean_data.csv'), 'utf8'), { columns: true }) as { Query: string; Tool: string }[];
    expect(Object.keys(rows[0])).toEqual(['Query', 'Tool']);
    expect(rows).toHaveLength(new Set(r.samples.filter((s) => s.split === 'single-tool').map((s) => JSON.stringify([s.dialogue[0].content, s.expected.labels![0]]))).size);
    const golden = JSON.parse(readFileSync(join(dataset, 'data', 'multi_tool_query_golden.json'), 'utf8'));
    expect(golden[0]).toEqual({ query: expect.any(String), tool: [expect.any(String), expect.any(String)] });
    expect(Object.keys(JSON.parse(readFileSync(join(dataset, 'big_tool_des.json'), 'utf8'))).sort()).toEqual(['HotelTool', 'WeatherTool', 'flight_finder']);
    const similar = JSON.parse(readFileSync(join(dataset, 'tmp_dataset', 'Task2-Subtask1.json'), 'utf8'));
    expect(similar[0]).toEqual({ action_prompt: expect.any(String), thought_prompt: expect.any(String), tool: expect.any(String), query: expect.any(String), index: 0 });
    expect(JSON.parse(readFileSync(join(dataset, 'scenario', 'travellers.json'), 'utf8')).Tools).toEqual(['flight_finder', 'HotelTool', 'WeatherTool']);
    // And the common formats.
    expect(Object.keys(toolePipeline.exports)).toEqual(expect.arrayContaining(['toole', 'canonical', 'openai-chat']));
  });

  it('rechecks an edited query with the recipe filters', () => {
    const tools = r.store.tools(r.result.ref!);
    const sample = r.samples.find((s) => s.split === 'single-tool' && s.expected.labels![0] === 'flight_finder')!;
    const edited = { ...sample, dialogue: [{ role: 'user' as const, content: 'Use Flight Finder to get me to Oslo.' }, sample.dialogue[1]] };
    expect(toolePipeline.recheck!(edited, tools)).toContainEqual(expect.objectContaining({ name: 'names_tool', pass: false }));
    expect(toolePipeline.recheck!(sample, tools).every((c) => c.pass || c.soft)).toBe(true);
  });

  it('gives the same dataset for the same inputs', async () => {
    const again = await run(FIXTURE_CONFIG);
    expect(again.result.fingerprint).toBe(r.result.fingerprint);
    expect(again.samples).toEqual(r.samples);
    expect(again.rejects).toEqual(r.rejects);
  }, 60_000);
});

describe('toole pipeline on the real plugin list with the shipped defaults', () => {
  it('runs offline on the first plugins and accounts for every record', async () => {
    const r = await run({}, 25);
    expectAccounted(r.result.stats, r.rejects, r.samples.length);
    const stats = r.result.manifest!.stats as Record<string, any>;
    expect(stats['toole.statistics'].released.queries).toBe(20614);
    expect(Object.keys(stats['toole.statistics'].perMethod).sort()).toEqual(['details', 'direct', 'emotional', 'keyword', 'multi-tool']);
    expect(r.samples.filter((s) => s.split === 'task-awareness' && s.expected.labels![0] === 'no')).toHaveLength(100);
    // No published query names its tool, by model or human name, even where the name is an ordinary word.
    const byName = new Map(r.store.tools(r.result.ref!).map((tool) => [tool.name, tool]));
    const naming = r.samples.flatMap((sample) => {
      const query = sample.dialogue.find((turn) => turn.role === 'user')!.content;
      return (sample.expected.labels ?? []).filter((label) => [label, byName.get(label)?.plugin ?? label].some((name) => containsName(query, name))).map((label) => `${label}: ${query}`);
    });
    expect(naming).toEqual([]);
    expect(r.result.stats.find((s) => s.stage === 'toole-filter-queries')!.rejectsByReason.names_tool).toBeGreaterThan(0);
  }, 60_000);
});

describe('toole default version: the scenario task', () => {
  const run = defaultRun('toole');
  it('each popularity scenario (TopTool_top5/10/15) lists its k tools and has samples, though the most popular tools wait for review', () => {
    const scenarios = (run.manifest.stats['toole.taskSets'] as { scenarios: Record<string, { tools: number; samples: number }> }).scenarios;
    for (const k of [5, 10, 15]) expect(scenarios[`TopTool_top${k}`], `TopTool_top${k}`).toMatchObject({ tools: k, samples: expect.any(Number) });
    for (const k of [5, 10, 15]) expect(scenarios[`TopTool_top${k}`].samples).toBeGreaterThan(0);
  });
});
