import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../bin/cli.ts';
import { ArgumentValidator } from '../core/json-schema.ts';
import type { Sample } from '../core/records.ts';
import { OfflineGateway } from '../core/llm/offline.ts';
import { applyScanStage, standaloneContext } from '../core/stage.ts';
import { DatasetStore } from '../core/store.ts';
import { ToolsConfig } from '../core/tool-source.ts';
import { ImportedConversation, executeImportedCallsStage } from '../stages/tooltalk/imported.ts';
import { versionRejects, versionSamples } from './helpers/version.ts';

/**
 * ToolTalk over an imported tool library: scenarios and conversations over the tools of a live MCP
 * server (test/fixtures/mcp/notes-server.mjs), the calls executed on it — a server killed mid-run,
 * a tool that throws, one that hangs — and over files (an OpenAPI document and a function list)
 * with the results simulated; each version exported in ToolTalk's shape and scored by the oracle.
 */

const PROJECT = new URL('..', import.meta.url).pathname;
const notes = (env: Record<string, string>) => ({ kind: 'mcp-stdio', name: 'notes', command: process.execPath, args: ['test/fixtures/mcp/notes-server.mjs'], env });

async function cli(home: string, ...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (t) => out.push(t), err: (t) => err.push(t), home, cwd: PROJECT });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** Runs tooltalk with this config (offline unless told), as the CLI does; the published version's records. */
async function run(home: string, name: string, config: unknown, ...flags: string[]) {
  const file = join(home, `${name}.json`);
  writeFileSync(file, JSON.stringify(config));
  const result = await cli(home, 'run', 'tooltalk', '--config', file, '--name', name, '--quiet', '--json', ...flags);
  expect(result.code, result.err).toBe(0);
  const store = new DatasetStore(home);
  const ref = store.resolve(`${name}@${JSON.parse(result.out).dataset.split('@')[1]}`);
  return { manifest: store.manifest(ref), samples: versionSamples(store, ref), rejects: versionRejects(store, ref), tools: store.tools(ref) };
}

const executionOf = (sample: Sample) => sample.meta.execution as { mode: string; cached?: boolean; servers?: string[]; reason?: string };

async function oracleScores(home: string, ref: string): Promise<Record<string, number>> {
  const result = await cli(home, 'eval', ref, '--model', 'oracle', '--json');
  expect(result.code, result.err).toBe(0);
  return JSON.parse(result.out).metrics;
}

const PERFECT = { precision: 1, recall: 1, action_precision: 1, incorrect_action_rate: 0, success_rate: 1 };

describe('ToolTalk over a live MCP server', () => {
  it('every conversation executed on the server (real ids in later calls), exported in ToolTalk shape, oracle 100; a re-run and --llm replay call nothing', async () => {
    const home = mkdtempSync(join(tmpdir(), 'tooltalk-live-'));
    const config = { conversations: 30, tools: { sources: [notes({ NOTES_TOOLS: 'create_note,get_note,notes.search,word_count' })] } };
    const first = await run(home, 'notes-talk', config);
    expect(first.samples.length).toBeGreaterThan(4);
    expect(new Set(first.samples.map((s) => s.category))).toEqual(new Set(['easy', 'tooltalk']));
    for (const sample of first.samples) expect(executionOf(sample)).toEqual({ mode: 'executed', servers: ['notes'], cached: false });
    expect(first.manifest.stages.map((s) => s.stage)).toContain('execute-imported-calls');
    // A value taken from an earlier result is the server's own: the note id create_note gave.
    const created = first.samples.flatMap((s) => s.dialogue.flatMap((turn) => (turn.calls ?? []).filter((c) => c.tool === 'create_note').map((c) => (turn.observations![c.id] as { response: { note_id: string } }).response.note_id)));
    expect(created.length).toBeGreaterThan(0);
    for (const id of created) expect(id).toMatch(/^note-\d+$/);
    // Nothing lost: what the server refused is a reject with the tool's own words.
    const refused = first.rejects.filter((r) => r.stage === 'execute-imported-calls');
    for (const reject of refused) expect(reject.reason).toBe('tool_error');
    expect(first.manifest.stats.execution).toMatchObject({ executed: first.samples.length, cached: 0 });

    const out = join(home, 'export');
    expect((await cli(home, 'export', 'notes-talk@v1', '--format', 'tooltalk', '--out', out)).code).toBe(0);
    expect(existsSync(join(out, 'databases'))).toBe(false);
    expect(JSON.parse(readFileSync(join(out, 'tools.json'), 'utf8')).map((t: { name: string }) => t.name).sort()).toEqual(['create_note', 'get_note', 'notes_search_a1c7aa90', 'word_count']);
    const files = readdirSync(join(out, 'tooltalk'));
    expect(files.length + readdirSync(join(out, 'easy')).length).toBe(first.samples.length);
    const file = JSON.parse(readFileSync(join(out, 'tooltalk', files[0]), 'utf8'));
    expect(Object.keys(file)).toEqual(['name', 'conversation_id', 'suites_used', 'apis_used', 'scenario', 'user', 'metadata', 'conversation']);
    expect(file.suites_used).toEqual(['notes']);
    expect(await oracleScores(home, 'notes-talk@v1')).toEqual(PERFECT);

    // Again, forced: every conversation's calls answered from the result cache.
    const again = await run(home, 'notes-talk', config, '--force');
    expect(again.samples.map((s) => executionOf(s).cached)).toEqual(first.samples.map(() => true));
    expect(again.samples.map((s) => s.dialogue)).toEqual(first.samples.map((s) => s.dialogue));
    expect(again.manifest.stats.execution).toMatchObject({ executed: first.samples.length, cached: first.samples.length });

    // Under --llm replay the stage calls nothing: a conversation the cache holds is answered from it, another one is a replay_miss.
    const runDir = join(home, '.toolkiln', 'runs', readdirSync(join(home, '.toolkiln', 'runs'))[0]);
    const draftsDir = readdirSync(join(runDir, 'stages')).find((name) => name.endsWith('draft-imported-conversation'))!;
    const drafts = readFileSync(join(runDir, 'stages', draftsDir, 'out.jsonl'), 'utf8').trim().split('\n').map((line) => ImportedConversation.parse(JSON.parse(line)));
    const llm = new OfflineGateway(42);
    Object.defineProperty(llm, 'backend', { value: 'replay' });
    const changed = { ...drafts[0], turns: drafts[0].turns.map((turn) => ({ ...turn, calls: turn.calls.map((call) => ({ ...call, parameters: { ...call.parameters, unheard: 'of' } })) })) };
    const replayed = await applyScanStage(executeImportedCallsStage(ToolsConfig.parse(config.tools)), [...drafts, changed], standaloneContext({ llm, runDir }));
    expect(replayed.out).toHaveLength(first.samples.length);
    for (const conversation of replayed.out) expect(conversation.execution).toMatchObject({ mode: 'executed', cached: true });
    expect(replayed.rejects.filter((r) => r.reason === 'tool_error')).toHaveLength(refused.length);
    expect(replayed.rejects.filter((r) => r.reason === 'replay_miss')).toHaveLength(1);
  }, 300_000);

  it('a server killed mid-run is started again and the conversation sent again; with no restarts left it is rejected with the reason', async () => {
    const home = mkdtempSync(join(tmpdir(), 'tooltalk-crash-'));
    const crashing = (marker: string, restarts: number) => ({ conversations: 4, tools: { sources: [notes({ NOTES_TOOLS: 'create_note,word_count,crash_once', CRASH_MARKER: marker })], execute: { restarts } } });
    const marker = join(home, 'crashed');
    const restarted = await run(home, 'crash-talk', crashing(marker, 1));
    // A home of its own: the results of the first run are cached by the calls, and would answer the second.
    const other = mkdtempSync(join(tmpdir(), 'tooltalk-crash-'));
    expect(existsSync(marker)).toBe(true);
    expect(restarted.manifest.stats.execution).toMatchObject({ restarts: 1 });
    expect(restarted.rejects.filter((r) => r.stage === 'execute-imported-calls')).toEqual([]);
    expect(restarted.samples.some((s) => s.dialogue.some((turn) => turn.calls?.some((c) => c.tool === 'crash_once')))).toBe(true);
    for (const sample of restarted.samples) expect(executionOf(sample).mode).toBe('executed');

    const gaveUp = await run(other, 'crash-talk-0', crashing(join(other, 'crashed'), 0));
    const exited = gaveUp.rejects.filter((r) => r.reason === 'server_exited');
    expect(exited).toHaveLength(1);
    expect(exited[0].detail).toMatch(/MCP server "notes" exited during crash_once .*gave up after 0 restart\(s\)/);
  }, 300_000);

  it('a tool that throws and one that hangs reject their conversations with the reason; the others are executed', async () => {
    const home = mkdtempSync(join(tmpdir(), 'tooltalk-failing-'));
    const { samples, rejects } = await run(home, 'failing-talk', { conversations: 3, tools: { sources: [notes({ NOTES_TOOLS: 'create_note,word_count,fail,hang' })], execute: { timeoutMs: 1500 } } });
    const execution = rejects.filter((r) => r.stage === 'execute-imported-calls');
    const thrown = execution.filter((r) => r.reason === 'tool_error' && /failing on purpose/.test(r.detail ?? ''));
    const hung = execution.filter((r) => r.reason === 'tool_timeout' && /notes\.hang did not answer within 1500 ms/.test(r.detail ?? ''));
    expect(thrown.length).toBeGreaterThan(0);
    expect(hung.length).toBeGreaterThan(0);
    expect(samples.length).toBeGreaterThan(0);
    for (const sample of samples) {
      expect(executionOf(sample).mode).toBe('executed');
      expect(sample.dialogue.flatMap((turn) => turn.calls ?? []).some((c) => c.tool === 'fail' || c.tool === 'hang')).toBe(false);
    }
  }, 300_000);
});

describe('ToolTalk over tool files, no live server', () => {
  it('results simulated and valid against each tool\'s result schema, marked simulated; exported; oracle 100', async () => {
    const home = mkdtempSync(join(tmpdir(), 'tooltalk-files-'));
    const { samples, tools, manifest } = await run(home, 'clinic-talk', { conversations: 4, tools: { sources: ['docs/examples/tools/clinic.yaml', 'docs/examples/tools/functions.json'] } });
    expect(manifest.stages.map((s) => s.stage)).not.toContain('execute-imported-calls');
    expect(samples.filter((s) => s.category === 'easy')).toHaveLength(tools.length);
    expect(samples.some((s) => s.category === 'tooltalk')).toBe(true);
    const validator = new ArgumentValidator();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    for (const sample of samples) {
      expect(executionOf(sample)).toMatchObject({ mode: 'simulated' });
      for (const turn of sample.dialogue) {
        for (const call of turn.calls ?? []) {
          const observed = turn.observations![call.id] as { response: unknown; exception: unknown };
          expect(observed.exception).toBeNull();
          expect(validator.validate(byName.get(call.tool)!.returns, observed.response), `${sample.id} ${call.tool}`).toEqual([]);
          expect(validator.validate(byName.get(call.tool)!.parameters, call.arguments), `${sample.id} ${call.tool}`).toEqual([]);
        }
      }
    }
    expect((await cli(home, 'export', 'clinic-talk@v1', '--format', 'tooltalk', '--out', join(home, 'export'))).code).toBe(0);
    expect(existsSync(join(home, 'export', 'tools.json'))).toBe(true);
    expect(await oracleScores(home, 'clinic-talk@v1')).toEqual(PERFECT);
  }, 300_000);
});
