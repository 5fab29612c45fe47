import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../bin/cli.ts';
import { ResponseCache } from '../core/llm/cache.ts';
import { McpStdioServer, ToolExecutor } from '../core/tool-server.ts';
import type { StdioToolSource } from '../core/tool-source.ts';
import { importTools } from '../stages/sources/tools/import.ts';

/**
 * A live MCP server (test/fixtures/mcp/notes-server.mjs, the SDK's server side over stdio) spawned
 * for real: tools imported through tools/list, calls executed with state, a tool that throws, one
 * that hangs, a server that dies mid-run and is restarted, results cached and replayed.
 */

const SERVER = 'test/fixtures/mcp/notes-server.mjs';
const notes = (env: Record<string, string> = {}): StdioToolSource => ({ kind: 'mcp-stdio', name: 'notes', command: process.execPath, args: [SERVER], env });
const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((o) => o.close()));
});

describe('a live MCP server over stdio', () => {
  it('imports its tools through tools/list: output schemas as returns, annotations as isAction, a dotted name made valid', async () => {
    const { tools, lines } = await importTools([notes()]);
    expect(tools.map((t) => t.provenance?.originalName)).toEqual(['create_note', 'get_note', 'notes.search', 'word_count', 'fail', 'hang', 'crash_once']);
    const create = tools[0];
    expect(create).toMatchObject({ name: 'create_note', isAction: true, domain: 'notes', provenance: { source: 'mcp', server: 'notes' } });
    expect(create.parameters.required).toEqual(['title', 'body']);
    expect(Object.keys(create.returns.properties)).toEqual(['note_id', 'title']);
    expect(tools[1].isAction).toBe(false);
    expect(tools[2].name).toMatch(/^notes_search_[0-9a-f]{8}$/);
    expect(lines.find((l) => l.tool === 'word_count')!.notes).toContain('no-description');
  }, 60_000);

  it('tools import --command writes the library', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tools-stdio-'));
    const out: string[] = [];
    const code = await main(['tools', 'import', '--command', process.execPath, '--arg', SERVER, '--name', 'notes', '--out', join(dir, 'notes.jsonl'), '--json'], { out: (t) => out.push(t), err: () => {} });
    expect(code).toBe(0);
    expect(JSON.parse(out[0])).toMatchObject({ imported: 7, refused: 0, openAiShare: 1 });
    expect(readFileSync(join(dir, 'notes.jsonl'), 'utf8').trim().split('\n')).toHaveLength(7);
  }, 60_000);

  it('executes a chain with state, a reference resolved from the earlier result; re-runs and replays come from the cache', async () => {
    const cacheDir = mkdtempSync(join(tmpdir(), 'tools-cache-'));
    const executor = new ToolExecutor([notes()], { timeoutMs: 20_000, restarts: 0 }, ResponseCache.open(cacheDir));
    open.push(executor);
    const calls = [
      { id: 'call_0', server: 'notes', tool: 'create_note', arguments: { title: 'Groceries', body: 'milk eggs bread' } },
      { id: 'call_1', server: 'notes', tool: 'get_note', arguments: { note_id: { $ref: 'call_0.note_id' } } },
    ];
    const first = await executor.run(calls);
    expect(first).toEqual({
      ok: true,
      cached: false,
      results: [
        { value: { note_id: 'note-1', title: 'Groceries' }, isError: false },
        { value: { title: 'Groceries', body: 'milk eggs bread', words: 3 }, isError: false },
      ],
    });
    const again = await executor.run(calls);
    expect(again).toMatchObject({ ok: true, cached: true, results: first.ok ? first.results : [] });
    await executor.close();
    // Replay: the cache answers, no process is started; a sequence never run is a miss, not a request.
    const replay = new ToolExecutor([notes()], { timeoutMs: 20_000, restarts: 0 }, ResponseCache.open(cacheDir), true);
    open.push(replay);
    expect(await replay.run(calls)).toMatchObject({ ok: true, cached: true });
    expect(await replay.run([{ id: 'call_0', server: 'notes', tool: 'word_count', arguments: { text: 'a b' } }])).toMatchObject({ ok: false, reason: 'replay_miss' });
    expect(replay.server('notes')!.starts).toBe(0);
  }, 60_000);

  it('a tool that throws answers as an error result; a reference into a missing field is refused', async () => {
    const executor = new ToolExecutor([notes()], { timeoutMs: 20_000, restarts: 0 }, undefined);
    open.push(executor);
    const outcome = await executor.run([{ id: 'c0', server: 'notes', tool: 'fail', arguments: { reason: 'test' } }]);
    expect(outcome.ok && outcome.results[0].isError).toBe(true);
    expect(JSON.stringify(outcome.ok && outcome.results[0].value)).toContain('failing on purpose: test');
    const missing = await executor.run([
      { id: 'c0', server: 'notes', tool: 'word_count', arguments: { text: 'one two' } },
      { id: 'c1', server: 'notes', tool: 'get_note', arguments: { note_id: { $ref: 'c0.note_id' } } },
    ]);
    expect(missing).toMatchObject({ ok: false, index: 1, reason: 'unresolved_reference' });
  }, 60_000);

  it('a tool that hangs times out, and the next call gets a fresh process', async () => {
    const server = new McpStdioServer(notes(), { timeoutMs: 5000, restarts: 0 });
    open.push(server);
    expect(await server.call('hang', {})).toMatchObject({ ok: false, reason: 'tool_timeout' });
    expect(await server.call('word_count', { text: 'still here' })).toEqual({ ok: true, value: { words: 2 }, isError: false, text: '{"words":2}' });
    expect(server.starts).toBe(2);
  }, 60_000);

  it('a server killed mid-run is started again and the call retried; with no restarts left it is rejected with the reason', async () => {
    const marker = join(mkdtempSync(join(tmpdir(), 'tools-crash-')), 'crashed');
    const restarting = new McpStdioServer(notes({ CRASH_MARKER: marker }), { timeoutMs: 20_000, restarts: 1 });
    open.push(restarting);
    expect(await restarting.call('crash_once', {})).toEqual({ ok: true, value: { ok: true }, isError: false, text: '{"ok":true}' });
    expect(existsSync(marker)).toBe(true);
    expect(restarting.restarts).toBe(1);

    const marker2 = join(mkdtempSync(join(tmpdir(), 'tools-crash-')), 'crashed');
    const giving = new McpStdioServer(notes({ CRASH_MARKER: marker2 }), { timeoutMs: 20_000, restarts: 0 });
    open.push(giving);
    const outcome = await giving.call('crash_once', {});
    expect(outcome).toMatchObject({ ok: false, reason: 'server_exited' });
    expect(!outcome.ok && outcome.detail).toMatch(/MCP server "notes" exited during crash_once/);
  }, 60_000);

  it('a server killed in the middle of a record is started again and the whole record sent again, so the state its earlier calls made is there', async () => {
    const calls = [
      { id: 'call_0', server: 'notes', tool: 'create_note', arguments: { title: 'Plan', body: 'one two' } },
      { id: 'call_1', server: 'notes', tool: 'crash_once', arguments: {} },
      { id: 'call_2', server: 'notes', tool: 'get_note', arguments: { note_id: { $ref: 'call_0.note_id' } } },
    ];
    const marker = join(mkdtempSync(join(tmpdir(), 'tools-crash-')), 'crashed');
    const executor = new ToolExecutor([notes({ CRASH_MARKER: marker })], { timeoutMs: 20_000, restarts: 1 }, undefined);
    open.push(executor);
    const outcome = await executor.run(calls);
    expect(outcome).toEqual({
      ok: true,
      cached: false,
      results: [
        { value: { note_id: 'note-1', title: 'Plan' }, isError: false },
        { value: { ok: true }, isError: false },
        { value: { title: 'Plan', body: 'one two', words: 2 }, isError: false },
      ],
    });
    expect(executor.restarts).toBe(1);

    const marker2 = join(mkdtempSync(join(tmpdir(), 'tools-crash-')), 'crashed');
    const giving = new ToolExecutor([notes({ CRASH_MARKER: marker2 })], { timeoutMs: 20_000, restarts: 0 }, undefined);
    open.push(giving);
    const failed = await giving.run(calls);
    expect(failed).toMatchObject({ ok: false, index: 1, reason: 'server_exited' });
    expect(!failed.ok && failed.detail).toMatch(/MCP server "notes" exited during crash_once .*the record was sent 1 time\(s\), gave up after 0 restart\(s\)/);
  }, 60_000);

  it('results are cached per server setup: the same calls to a server started with another environment are sent to it', async () => {
    const cacheDir = mkdtempSync(join(tmpdir(), 'tools-cache-'));
    const calls = [{ id: 'call_0', server: 'notes', tool: 'word_count', arguments: { text: 'a b c' } }];
    const executor = new ToolExecutor([notes({ NOTES_TOOLS: 'word_count' })], { timeoutMs: 20_000, restarts: 0 }, ResponseCache.open(cacheDir));
    open.push(executor);
    expect(await executor.run(calls)).toMatchObject({ ok: true, cached: false });
    expect(await executor.run(calls)).toMatchObject({ ok: true, cached: true });
    const other = new ToolExecutor([notes({ NOTES_TOOLS: 'word_count,create_note' })], { timeoutMs: 20_000, restarts: 0 }, ResponseCache.open(cacheDir));
    open.push(other);
    expect(await other.run(calls)).toMatchObject({ ok: true, cached: false });
  }, 60_000);

  it('a server that cannot start is one clear line', async () => {
    const broken: StdioToolSource = { kind: 'mcp-stdio', name: 'nothing', command: process.execPath, args: ['-e', 'process.exit(1)'], env: {} };
    await expect(importTools([broken])).rejects.toThrow(/^MCP server "nothing" \(.+\) did not start: /);
  }, 60_000);
});
