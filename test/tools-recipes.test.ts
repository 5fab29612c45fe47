import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { OfflineGateway } from '../core/llm/offline.ts';
import { runPipeline } from '../core/run.ts';
import { DatasetStore } from '../core/store.ts';
import { pipelines } from '../pipelines/index.ts';
import { importTools } from '../stages/sources/tools/import.ts';
import { versionRejects, versionSamples } from './helpers/version.ts';

/**
 * Recipes over an imported tool library (the `tools` block): ToolE's queries and overlap merging
 * over tools of several MCP servers, NesTools' chains over the tools of a live server, executed on
 * it (observations recorded, failures rejected with the reason, results cached for a re-run).
 */

const PROJECT = new URL('..', import.meta.url).pathname;
const SERVERS = '../shared/data/sources/mcp/servers';
const NOTES = { kind: 'mcp-stdio', name: 'notes', command: process.execPath, args: ['test/fixtures/mcp/notes-server.mjs'] };
/** ToolE's task sets sized for a library of a few tools. */
const SMALL_TASKS = {
  similar: { candidates: 2, perTool: 2 },
  scenario: { popularity: [2], groups: [], perTool: 2 },
  reliability: { candidates: 1, excludeSimilar: 0, perTool: 2 },
  multiTool: { candidates: 2, excludeSimilar: 0 },
};

async function run(recipe: string, config: unknown, options: { force?: boolean; home?: string } = {}) {
  const home = options.home ?? mkdtempSync(join(tmpdir(), `tools-${recipe}-`));
  const result = await runPipeline({ pipeline: pipelines[recipe], configOverrides: config, llm: new OfflineGateway(42), home, projectDir: PROJECT, cwd: PROJECT, force: options.force, allowEmpty: true, progress: { quiet: true } });
  const store = new DatasetStore(home);
  return { home, result, manifest: result.manifest!, samples: versionSamples(store, result.ref!), tools: store.tools(result.ref!), rejects: versionRejects(store, result.ref!) };
}

describe('ToolE over imported tools', () => {
  it('a live stdio server: its tools get queries, a tool without a description is rejected with the reason', async () => {
    const { manifest, samples, tools, rejects } = await run('toole', { tools: { sources: [NOTES] }, tasks: SMALL_TASKS, multiTool: { topTools: 3, perPair: 1 } });
    expect(manifest.stats.toolsImport).toMatchObject({ imported: 7, refused: 0 });
    expect(tools.find((t) => t.name === 'create_note')?.provenance).toMatchObject({ source: 'mcp', server: 'notes', originalName: 'create_note' });
    expect(rejects.filter((r) => r.stage === 'toole-tool-descriptions').map((r) => r.reason)).toEqual(['empty_description']);
    const labels = new Set(samples.filter((s) => s.split === 'single-tool').map((s) => (s.expected as { labels: string[] }).labels[0]));
    expect([...labels].sort()).toEqual(['crash_once', 'create_note', 'fail', 'get_note', 'hang', 'notes_search_a1c7aa90'].sort());
  }, 300_000);

  it('TOUCAN server files: tools of the same name on two servers are kept apart, then proposed for merging across the servers', async () => {
    const files = ['0623.@keygray_reference-servers_labeled.json', '1066.@chuanmingliu_servers_labeled.json'].map((file) => ({ kind: 'mcp', path: `${SERVERS}/${file}` }));
    const { manifest } = await run('toole', { tools: { sources: files }, tasks: SMALL_TASKS, multiTool: { topTools: 3, perPair: 1 } });
    const imported = manifest.stats.toolsImport as { imported: number; notes: Record<string, number> };
    expect(imported.notes['renamed-across-servers']).toBeGreaterThanOrEqual(4);
    const merges = (manifest.stats.toolMergeMetatool as { merges: { members: string[] }[] }).merges;
    const servers = (name: string) => name.split('__')[0];
    const across = merges.filter((m) => new Set(m.members.map(servers)).size > 1);
    expect(across.length).toBeGreaterThan(0);
    expect(across.some((m) => m.members.some((name) => name.endsWith('__echo')))).toBe(true);
  }, 300_000);
});

describe('NesTools over imported tools', () => {
  it('chains over a live server are executed on it: observations recorded, failing chains rejected with the reason, a re-run answered from the cache', async () => {
    const config = { count: 12, tools: { sources: [NOTES] } };
    const first = await run('nestools', config);
    const executed = first.samples.filter((s) => (s.meta.execution as { mode: string }).mode === 'executed');
    expect(executed.length).toBeGreaterThan(0);
    expect(executed.length).toBe(first.samples.length);
    const chained = executed.find((s) => s.expected.calls!.some((c) => JSON.stringify(c.arguments).includes('"$ref":"call_0.note_id"')));
    expect(chained).toBeDefined();
    const observations = chained!.meta.observations as Record<string, Record<string, unknown>>;
    expect(observations.call_0.note_id).toMatch(/^note-\d+$/);
    expect(observations.call_1).toMatchObject({ title: chained!.expected.calls![0].arguments.title });
    const execution = first.rejects.filter((r) => r.stage === 'execute-calls');
    expect(execution.length + first.samples.length).toBeGreaterThanOrEqual(1);
    for (const reject of execution) expect(reject.reason).toMatch(/^(tool_error|tool_timeout|server_exited|unresolved_reference)$/);
    expect(first.manifest.stats.execution).toMatchObject({ executed: expect.any(Number), cached: 0 });

    const again = await run('nestools', config, { force: true, home: first.home });
    expect((again.manifest.stats.execution as { cached: number }).cached).toBe(executed.length);
    expect(again.samples.map((s) => s.meta.observations)).toEqual(first.samples.map((s) => s.meta.observations));
  }, 300_000);

  it('TOUCAN files (no live server): chains over the imported tools that pass the program check, nothing executed, no nesting without result schemas', async () => {
    const { samples, manifest, rejects } = await run('nestools', { count: 20, tools: { sources: [SERVERS] } });
    expect(manifest.stats['nestools.domains']).toMatchObject({ tools: 724 });
    // Every program over the imported stubs parses and passes (descriptions holding their own Args:/Returns: sections are cut to their summary).
    expect(rejects.filter((r) => r.stage === 'check-program')).toEqual([]);
    expect(samples.length).toBeGreaterThanOrEqual(18);
    expect(manifest.stages.map((s) => s.stage)).not.toContain('execute-calls');
    expect(samples.every((s) => s.meta.execution === undefined)).toBe(true);
    // TOUCAN's tools declare no output schema: each returns its text as `result`, which links to no parameter.
    expect(samples.every((s) => s.category === 'non-nested' && s.tools.every((t) => Object.keys(t.returns.properties).join() === 'result'))).toBe(true);
  }, 300_000);
});

describe('ACEBench over imported tools', () => {
  it('the TOUCAN tools are the API pool: every normal and special category made over them, tools the pool gate refuses rejected with the reason', async () => {
    const { samples, rejects, manifest } = await run('acebench', { scale: 0.1, tools: { sources: [SERVERS] } });
    expect(manifest.stages.map((s) => s.stage).slice(0, 2)).toEqual(['load-imported-apis', 'check-apis']);
    const categories = new Set(samples.map((s) => s.category));
    for (const category of ['normal_atom_bool', 'normal_single_turn_single_function', 'normal_single_turn_parallel_function', 'normal_multi_turn_user_adjust', 'normal_similar_api', 'normal_preference', 'special_incomplete', 'special_error_param', 'special_irrelevant']) {
      expect([...categories].some((c) => c.endsWith(category)), category).toBe(true);
    }
    // The APIs offered are the imported tools, by their library names.
    const library = new Set((await importTools([{ kind: 'auto', path: SERVERS }])).tools.map((t) => t.name));
    const normal = samples.filter((s) => s.category.includes('normal_single_turn_single_function'));
    expect(normal.length).toBeGreaterThan(0);
    expect(normal.every((s) => s.tools.length > 0 && s.tools.every((t) => library.has(t.name)))).toBe(true);
    const refused = rejects.filter((r) => r.stage === 'check-apis' && r.reason === 'invalid_api');
    expect(refused.length).toBeGreaterThan(0);
    expect(refused[0].detail).toMatch(/parameters\.properties\.\S+\.description: is missing or empty|is missing or empty/);
  }, 300_000);
});
