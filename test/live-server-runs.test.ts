import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { OfflineGateway } from '../core/llm/offline.ts';
import { definePipeline } from '../core/pipeline.ts';
import { runPipeline } from '../core/run.ts';
import { Sample } from '../core/records.ts';
import { runStages } from '../core/runner.ts';
import { scanStage, sourceStage } from '../core/stage.ts';
import { ToolsConfig, ToolsConfigField } from '../core/tool-source.ts';
import { executeCallsStage } from '../stages/execute-calls.ts';
import { makeSamples } from './fixtures/core/samples.ts';

/**
 * Runs over a live MCP server. A run that fails while the live server is up must not leave the server's process behind: the
 * execute stage's state (the executor and its child processes) is released when the run fails, not
 * only in `finish`. Before, the failed run returned its error and the server process lived on,
 * holding the CLI open (it never exited).
 */

const SERVER = 'test/fixtures/mcp/notes-server.mjs';

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const pidsOf = (file: string): number[] => (existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map(Number) : []);

let started: number[] = [];
afterEach(() => {
  for (const pid of started) if (alive(pid)) process.kill(pid, 'SIGKILL');
  started = [];
});

/** Waits until none of the pids is alive, or gives up (the processes are then left for afterEach). */
async function exited(pids: number[], rounds = 300): Promise<boolean> {
  for (let i = 0; i < rounds; i++) {
    if (!pids.some(alive)) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

describe('execute-calls on a run that fails', () => {
  it('stops the live server when a later stage throws while the server is up', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'execute-dispose-'));
    const pidFile = join(dir, 'pids');
    const tools = ToolsConfig.parse({ sources: [{ kind: 'mcp-stdio', name: 'notes', command: process.execPath, args: [SERVER], env: { PID_FILE: pidFile } }] });
    const samples = makeSamples(2).map((sample, i) => Sample.parse({ ...sample, expected: { calls: [{ id: 'call_0', tool: 'create_note', arguments: { title: `t${i}`, body: 'b' } }] } }));
    const pipeline = definePipeline({
      name: 'execute-dispose-test',
      benchmark: 'test',
      description: 'test',
      configSchema: z.object({}),
      sourceFiles: () => [],
      stages: () => [
        sourceStage({ name: 'samples', version: 1, output: Sample, load: () => samples }),
        executeCallsStage(tools),
        scanStage<Sample, Sample, object>({
          name: 'throws',
          version: 1,
          input: Sample,
          output: Sample,
          begin: () => ({}),
          run: () => {
            throw new Error('boom after the first call');
          },
        }),
      ],
      exports: {},
    });
    const runDir = join(dir, 'home', '.toolkiln', 'runs', 'r1');
    await expect(runStages({ pipeline, config: {}, seed: 1, llm: new OfflineGateway(1), runDir, resolvePath: (p) => p, progress: { quiet: true } })).rejects.toThrow(/boom after the first call/);
    started = pidsOf(pidFile);
    expect(started.length).toBeGreaterThan(0);
    expect(await exited(started)).toBe(true);
  }, 90_000);
});

describe('a live server in the fingerprint', () => {
  it('a server whose tools changed is a changed input: the next run publishes a new version', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'live-fingerprint-'));
    // A copy of the server beside it, where its imports resolve (the project's node_modules).
    const script = join(process.cwd(), 'test', 'fixtures', 'mcp', `.fingerprint-${process.pid}.mjs`);
    copyFileSync(SERVER, script);
    try {
      const Config = z.object({ tools: ToolsConfigField });
      const pipeline = definePipeline({
        name: 'live-fingerprint-test',
        benchmark: 'test',
        description: 'test',
        configSchema: Config,
        sourceFiles: () => [],
        stages: () => [sourceStage({ name: 'samples', version: 1, output: Sample, load: () => makeSamples(1) })],
        exports: {},
      });
      const config = { tools: { sources: [{ kind: 'mcp-stdio', name: 'notes', command: process.execPath, args: [script] }] } };
      const run = () => runPipeline({ pipeline, configOverrides: config, llm: new OfflineGateway(1), home: dir, projectDir: process.cwd(), progress: { quiet: true } });
      const first = await run();
      expect(first.status).toBe('published');
      expect(first.manifest!.sources['mcp-stdio:notes']).toMatch(/^[0-9a-f]+$/);
      expect((await run()).status).toBe('existing');
      // The same command and arguments, a server that now describes a tool otherwise.
      writeFileSync(script, readFileSync(script, 'utf8').replace('Read one note by its id.', 'Read one note, given its id.'));
      const changed = await run();
      expect(changed.status).toBe('published');
      expect(changed.fingerprint).not.toBe(first.fingerprint);
      expect(changed.ref!.version).toBe('v2');
    } finally {
      rmSync(script, { force: true });
    }
  }, 120_000);
});
