import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse/sync';
import { beforeAll, describe, expect, it } from 'vitest';
import { OfflineGateway } from '../core/llm/offline.ts';
import type { Sample } from '../core/records.ts';
import { runPipeline, type RunPipelineResult } from '../core/run.ts';
import { samplesInMemory } from '../core/sample-source.ts';
import { DatasetStore } from '../core/store.ts';
import { toolePipeline } from '../pipelines/toole.ts';
import { exportToolE } from '../stages/toole/export.ts';
import { thoughtPrompt } from '../stages/toole/metatool-prompts.ts';
import { SINGLE_TOOL_SPLIT } from '../stages/toole/records.ts';
import { tempDirs } from './helpers/files.ts';
import { TOOLE_FIXTURE_CONFIG, tooleFixture } from './helpers/toole-fixture.ts';

const PROJECT = fileURLToPath(new URL('..', import.meta.url));
const REFERENCE = fileURLToPath(new URL('../../shared/data/reference/metatool/', import.meta.url));
const SOURCE_PLUGINS = fileURLToPath(new URL('../../shared/data/sources/metatool/plugin_info.json', import.meta.url));
const tmp = tempDirs('tk-toole-export-');
const json = (path: string) => JSON.parse(readFileSync(path, 'utf8'));

/**
 * The keys of each task file of MetaTool's release (dataset/tmp_dataset/ in its repository), in
 * order; Task1 leaves `tool` out for a query that needs none. Task2-Subtask2 is written by the
 * builder's combine_json, which adds `scenario`.
 */
const RELEASED_TASK_KEYS: Record<string, string[][]> = {
  'Task1.json': [['thought_prompt', 'label', 'tool', 'query'], ['thought_prompt', 'label', 'query']],
  'Task2-Subtask1.json': [['action_prompt', 'thought_prompt', 'tool', 'query', 'index']],
  'Task2-Subtask2.json': [['action_prompt', 'thought_prompt', 'tool', 'query', 'index', 'scenario']],
  'Task2-Subtask3.json': [['action_prompt', 'thought_prompt', 'tool', 'query', 'index']],
  'Task2-Subtask4.json': [['action_prompt', 'thought_prompt', 'tool', 'query']],
};

describe("ToolE export in MetaTool's layout", () => {
  let r: RunPipelineResult;
  let out: string;
  beforeAll(async () => {
    const home = tmp();
    // The fixture plugins, with the default scenarios (the three popularity lists and the released groups).
    const { scenario: _scenario, ...tasks } = TOOLE_FIXTURE_CONFIG.tasks;
    const config = { ...TOOLE_FIXTURE_CONFIG, tasks };
    r = await runPipeline({ pipeline: toolePipeline, configOverrides: config, llm: new OfflineGateway(42), home, projectDir: PROJECT, cwd: PROJECT, progress: { quiet: true } });
    const store = new DatasetStore(home);
    out = join(home, 'export');
    await exportToolE(store.sampleSource(r.ref!), store.tools(r.ref!), out, r.ref!);
  }, 300_000);

  it('writes every scenario list the release has, under the release names', () => {
    expect(readdirSync(join(out, 'dataset', 'scenario')).sort()).toEqual(readdirSync(join(REFERENCE, 'scenario')).sort());
    const top5 = json(join(out, 'dataset', 'scenario', 'TopTool_top5.json'));
    expect(Object.keys(top5)).toEqual(['Tools']);
    expect(top5.Tools.length).toBeGreaterThan(0);
  });

  it("writes plugin_info.json in the released shape: a record for every tool that is not merged, with the plugin's own model description", () => {
    const released = json(SOURCE_PLUGINS) as Record<string, string>[];
    const info = json(join(out, 'dataset', 'plugin_info.json')) as Record<string, string>[];
    for (const record of info) expect(Object.keys(record)).toEqual(Object.keys(released[0]));
    const merged = Object.keys(json(join(out, 'dataset', 'big_tool_des.json')));
    const single = Object.keys(json(join(out, 'dataset', 'plugin_des.json'))).filter((t) => !merged.includes(t));
    expect(info.map((p) => p.name_for_model).sort()).toEqual(single.sort());
    const source = json(tooleFixture('plugins.json')) as Record<string, string>[];
    const kept = info.filter((p) => source.some((s) => s.name_for_model === p.name_for_model));
    expect(kept.length).toBeGreaterThan(0);
    for (const record of kept) expect(record).toEqual(source.find((s) => s.name_for_model === record.name_for_model));
  });

  it("writes the release's task files with the fields MetaTool's runner reads, and prompts its builder would write", () => {
    const dir = join(out, 'dataset', 'tmp_dataset');
    expect(readdirSync(dir).sort()).toEqual(Object.keys(RELEASED_TASK_KEYS).sort());
    const info = json(join(out, 'dataset', 'plugin_info.json')) as { name_for_model: string; description_for_human: string }[];
    const bigTools = json(join(out, 'dataset', 'big_tool_des.json')) as Record<string, string>;
    for (const [file, shapes] of Object.entries(RELEASED_TASK_KEYS)) {
      const records = json(join(dir, file)) as Record<string, unknown>[];
      expect(records.length, file).toBeGreaterThan(0);
      for (const record of records) {
        expect(shapes.map((keys) => keys.join())).toContain(Object.keys(record).join());
        expect(record.thought_prompt).toBe(thoughtPrompt(record.query as string));
        if (!record.action_prompt) continue;
        // Every listed tool's description is what the builder looks up in big_tool_des.json or plugin_info.json.
        const lines = [...(record.action_prompt as string).matchAll(/^\d+\. tool name: (.*?), tool description: (.*)$/gm)];
        expect(lines.length).toBeGreaterThan(0);
        for (const [, tool, description] of lines) {
          const expected = bigTools[tool] ?? `[${info.filter((p) => p.name_for_model === tool).map((p) => `'${p.description_for_human}'`).join(', ')}]`;
          expect(description, `${file}: ${tool}`).toBe(expected);
        }
      }
    }
  });
});

describe("ToolE's CSV", () => {
  it('writes a (Query, Tool) pair that several queries share once', async () => {
    const sample = (id: string, query: string, tool: string): Sample => ({
      id,
      benchmark: 'toole',
      category: 'toole/direct',
      split: SINGLE_TOOL_SPLIT,
      tools: [],
      dialogue: [{ role: 'user', content: query }],
      expected: { labels: [tool] },
      meta: { lineage: [], checks: [], tags: [], generatedFor: id },
    });
    const out = tmp();
    await exportToolE(samplesInMemory([sample('a', 'Find flights to Oslo.', 'TripTool'), sample('b', 'Find flights to Oslo.', 'TripTool'), sample('c', 'Find flights to Oslo.', 'HotelTool')]), [], out);
    const rows = parse(readFileSync(join(out, 'dataset', 'data', 'all_clean_data.csv'), 'utf8'), { columns: true });
    expect(rows).toEqual([
      { Query: 'Find flights to Oslo.', Tool: 'TripTool' },
      { Query: 'Find flights to Oslo.', Tool: 'HotelTool' },
    ]);
  });
});
