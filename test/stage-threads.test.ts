import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { OfflineGateway } from '../core/llm/offline.ts';
import { definePipeline } from '../core/pipeline.ts';
import { runPipeline } from '../core/run.ts';
import { Sample } from '../core/records.ts';
import { sourceStage, type MapStage } from '../core/stage.ts';
import { DatasetStore } from '../core/store.ts';
import { nestoolsPipeline } from '../pipelines/nestools.ts';
import { Done, Item, threadedStage } from './fixtures/core/threaded-stage.ts';
import { tempDirs } from './helpers/files.ts';
import { versionSamples, versionRejects } from './helpers/version.ts';

const PROJECT = new URL('..', import.meta.url).pathname;
const tempHome = tempDirs('tk-threads-');

function pipelineWith(stage: MapStage<z.infer<typeof Item>, z.infer<typeof Done>>, count = 60) {
  return definePipeline({
    name: 'threads',
    benchmark: 'threads',
    description: 'a pure-computation stage run on worker threads',
    configSchema: z.object({}),
    sourceFiles: () => [],
    stages: () => [
      sourceStage({ name: 'make', version: 1, output: Item, load: () => Array.from({ length: count }, (_, n) => ({ id: `i-${n}`, n })) }),
      stage,
      {
        kind: 'map',
        name: 'to-sample',
        version: 1,
        input: Done,
        output: Sample,
        run: async (done) => ({ id: done.id, benchmark: 'threads', category: done.thread === 0 ? 'main' : 'thread', split: 'test', tools: [], dialogue: [{ role: 'user' as const, content: String(done.square) }], expected: {}, meta: { lineage: [], checks: [], tags: [] } }),
      } satisfies MapStage<z.infer<typeof Done>, Sample>,
    ],
    exports: {},
  });
}

describe('worker threads for pure-computation stages', () => {
  it('runs records of a stage that declares threads on a worker thread, in input order, the same outputs as on the main thread', async () => {
    const home = tempHome();
    const logs: string[] = [];
    const result = await runPipeline({ pipeline: pipelineWith(threadedStage({ rejectOn: 5 })), llm: new OfflineGateway(42), home, projectDir: PROJECT, progress: { quiet: true }, threads: { count: 1, from: 0 }, log: (m) => logs.push(m) });
    const samples = versionSamples(new DatasetStore(home), result.ref!);
    expect(samples.map((s) => s.dialogue[0].content)).toEqual(Array.from({ length: 60 }, (_, n) => n).filter((n) => n !== 5).map((n) => String(n * n)));
    // Records wait for the thread to start rather than run here.
    expect(samples.every((s) => s.category === 'thread')).toBe(true);
    expect(versionRejects(new DatasetStore(home), result.ref!)).toMatchObject([{ stage: 'square', reason: 'odd_one', detail: 'n=5', record: { id: 'i-5', n: 5 } }]);
    expect(logs.filter((m) => m.includes('worker thread'))).toEqual([]);
  }, 120_000);

  it('starts no thread for an input smaller than `from`, nor with count 0', async () => {
    for (const threads of [{ count: 1, from: 1000 }, { count: 0, from: 0 }]) {
      const home = tempHome();
      const result = await runPipeline({ pipeline: pipelineWith(threadedStage({})), llm: new OfflineGateway(42), home, projectDir: PROJECT, progress: { quiet: true }, threads });
      expect(versionSamples(new DatasetStore(home), result.ref!).every((s) => s.category === 'main')).toBe(true);
    }
  }, 120_000);

  it('fails the stage naming the record when its work throws on a thread, or when it reaches for the LLM there', async () => {
    for (const [options, message] of [
      [{ failOn: 29 }, /stage square failed on record i-29: n=29 cannot be squared/],
      [{ askLlmOn: 29 }, /stage square failed on record i-29: stage square: the LLM is not available to a stage run on a worker thread/],
    ] as const) {
      const home = tempHome();
      await expect(runPipeline({ pipeline: pipelineWith(threadedStage(options)), llm: new OfflineGateway(42), home, projectDir: PROJECT, progress: { quiet: true }, threads: { count: 1, from: 0 } })).rejects.toThrow(message);
    }
  }, 180_000);

  it('runs the records on the main thread, and says so, when the thread cannot make the stage again', async () => {
    const home = tempHome();
    const logs: string[] = [];
    // The factory makes a stage of another name than the one the run has.
    const result = await runPipeline({ pipeline: pipelineWith(threadedStage({ name: 'renamed' })), llm: new OfflineGateway(42), home, projectDir: PROJECT, progress: { quiet: true }, threads: { count: 1, from: 0 }, log: (m) => logs.push(m) });
    expect(versionSamples(new DatasetStore(home), result.ref!).every((s) => s.category === 'main')).toBe(true);
    expect(logs.join('\n')).toMatch(/\[renamed\] its worker thread could not start \(.*does not make stage renamed v1\); records run on the main thread/);
  }, 120_000);

  it('stops a thread still starting when the run fails before it is ready: the process ends', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(PROJECT, 'test/fixtures/core/threads-stopped-early.ts')], { cwd: PROJECT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    // A thread left running would keep the process alive: then the test fails at its time limit.
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(out).toMatch(/failed: stage breaks failed on record i-0: the first stage fails at once/);
    expect(code).toBe(1);
  }, 120_000);

  it('publishes the same NesTools bytes whether programs are checked on a thread or not', async () => {
    const published = [];
    const logs: string[] = [];
    for (const threads of [{ count: 0 }, { count: 1, from: 0 }]) {
      const home = tempHome();
      const result = await runPipeline({ pipeline: nestoolsPipeline, configOverrides: { count: 150 }, llm: new OfflineGateway(42), home, projectDir: PROJECT, cwd: PROJECT, progress: { quiet: true }, threads, log: (m) => logs.push(m) });
      expect(versionSamples(new DatasetStore(home), result.ref!).length).toBeGreaterThan(100);
      published.push(result.manifest!.files);
    }
    expect(published[1]).toEqual(published[0]);
    // The second run did check its programs on the thread (a thread that cannot start falls back, and says so).
    expect(logs.filter((m) => m.includes('worker thread'))).toEqual([]);
  }, 300_000);
});
