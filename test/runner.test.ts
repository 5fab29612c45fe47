import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { definePipeline } from '../core/pipeline.ts';
import { Sample } from '../core/records.ts';
import { reject, sourceStage, type MapStage, type ScanStage } from '../core/stage.ts';
import { OfflineGateway } from '../core/llm/offline.ts';
import { runPipeline } from '../core/run.ts';
import { evenlySpaced } from '../core/runner.ts';
import { DatasetStore } from '../core/store.ts';
import { slowPipeline } from './fixtures/core/slow-pipeline.ts';
import { versionSamples, versionRejects } from './helpers/version.ts';

const script = new URL('./fixtures/core/run-slow.ts', import.meta.url).pathname;

function startRun(home: string, resume?: string, flags: string[] = []) {
  const child = spawn(process.execPath, ['--import', 'tsx', script, home, ...(resume ? [resume] : []), ...flags], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { child, done };
}

function runDirOf(home: string): string {
  const runs = join(home, '.toolkiln', 'runs');
  const [runId] = readdirSync(runs);
  return join(runs, runId);
}

function journalLines(home: string, stage = '02-score-slowly'): string[] {
  const runs = join(home, '.toolkiln', 'runs');
  if (!existsSync(runs) || !readdirSync(runs).length) return [];
  const path = join(runDirOf(home), 'stages', stage, 'journal.jsonl');
  return existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : [];
}

/** The second per-record stage's journal: each record of the first stage's output once, made for that record. */
function expectCheckJournalComplete(home: string): void {
  const entries = journalLines(home, '03-check-slowly').map((line) => JSON.parse(line) as { i: number; k: string });
  const scored = readFileSync(join(runDirOf(home), 'stages', '02-score-slowly', 'out.jsonl'), 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as { id: string; part: number });
  const last = new Map(entries.map((e) => [e.i, e.k]));
  expect([...last.keys()].sort((a, b) => a - b)).toEqual(scored.map((_, i) => i));
  for (const [i, key] of last) expect(key).toBe(`${scored[i].id}/${scored[i].part}`);
}

function dataFiles(dir: string): Record<string, string | null> {
  const files: Record<string, string | null> = {};
  // A version without rejects has no rejects.jsonl (null here, the same on both sides of a comparison).
  for (const name of ['tools.jsonl', 'rejects.jsonl', 'reports/summary/scores.txt', ...readdirSync(join(dir, 'data')).map((f) => `data/${f}`)]) files[name] = existsSync(join(dir, name)) ? readFileSync(join(dir, name), 'utf8') : null;
  return files;
}

describe('runner', () => {
  it('resumes a run SIGKILLed mid-stage to the same bytes as an uninterrupted run, recomputing nothing journalled', async () => {
    const home = mkdtempSync(join(tmpdir(), 'tk-resume-'));
    const first = startRun(home);
    const deadline = Date.now() + 30_000;
    while (journalLines(home).length < 15 && Date.now() < deadline) await sleep(20);
    first.child.kill('SIGKILL');
    const killed = await first.done;
    expect(killed.signal).toBe('SIGKILL');

    const runDir = runDirOf(home);
    const journalled = journalLines(home).map((line) => JSON.parse(line).i as number);
    expect(journalled.length).toBeGreaterThanOrEqual(15);
    expect(journalled.length).toBeLessThan(60); // really cut off mid-stage
    expect(new DatasetStore(home).versions('slow')).toEqual([]);

    const second = startRun(home, runDir.split('/').pop());
    const resumed = await second.done;
    expect(resumed.stderr).toBe('');
    expect(resumed.code).toBe(0);
    expect(JSON.parse(resumed.stdout).version).toBe('v1');

    // Nothing journalled before the kill ran again after it.
    const calls = readFileSync(join(runDir, 'calls.log'), 'utf8').split('\n').filter(Boolean);
    const afterResume = new Set(calls.slice(calls.indexOf('--resume') + 1));
    for (const i of journalled) expect(afterResume.has(`item-${i}`)).toBe(false);
    // Every record was journalled exactly once.
    const finalIndexes = journalLines(home).map((line) => JSON.parse(line).i as number);
    expect(finalIndexes.length).toBe(60);
    expect(new Set(finalIndexes).size).toBe(60);
    expectCheckJournalComplete(home);
    // Nothing the second stage journalled before the kill ran again either.
    const checkedBefore = new Set(calls.slice(0, calls.indexOf('--resume')).filter((c) => c.startsWith('check:')));
    const checkedAfter = calls.slice(calls.indexOf('--resume') + 1).filter((c) => c.startsWith('check:'));
    expect(checkedAfter.filter((c) => checkedBefore.has(c)).length).toBeLessThanOrEqual(4); // at most those in flight at the kill

    const cleanHome = mkdtempSync(join(tmpdir(), 'tk-clean-'));
    const clean = await runPipeline({ pipeline: slowPipeline, llm: new OfflineGateway(42), home: cleanHome, projectDir: process.cwd(), progress: { quiet: true } });
    expect(clean.status).toBe('published');
    const store = new DatasetStore(home);
    const cleanStore = new DatasetStore(cleanHome);
    expect(dataFiles(store.resolve('slow@v1').dir)).toEqual(dataFiles(cleanStore.resolve('slow@v1').dir));
    expect(store.manifest(store.resolve('slow@v1')).fingerprint).toBe(clean.fingerprint);
  });

  it('survives repeated kill -9 at any moment (soak): nothing lost, duplicated or changed', async () => {
    const home = mkdtempSync(join(tmpdir(), 'tk-soak-'));
    let runId: string | undefined;
    // Kill points move through the stage: early, middle, late; the last run is left to finish.
    for (const after of [5, 25, 45]) {
      const run = startRun(home, runId);
      const deadline = Date.now() + 30_000;
      while (journalLines(home).length < after && Date.now() < deadline) await sleep(10);
      run.child.kill('SIGKILL');
      const ended = await run.done;
      runId ??= runDirOf(home).split('/').pop();
      if (ended.code === 0) break; // finished before the kill landed (a fast machine): nothing left to soak
      expect(ended.signal).toBe('SIGKILL');
      expect(readdirSync(join(home, '.toolkiln', 'runs'))).toEqual([runId]);
    }
    const last = await startRun(home, runId).done;
    expect(last.code, last.stderr).toBe(0);
    const indexes = journalLines(home).map((line) => JSON.parse(line).i as number);
    expect(new Set(indexes).size).toBe(60);
    expect(indexes.length).toBe(60);
    expectCheckJournalComplete(home);

    const cleanHome = mkdtempSync(join(tmpdir(), 'tk-soak-clean-'));
    await runPipeline({ pipeline: slowPipeline, llm: new OfflineGateway(42), home: cleanHome, projectDir: process.cwd(), progress: { quiet: true } });
    expect(dataFiles(new DatasetStore(home).resolve('slow@v1').dir)).toEqual(dataFiles(new DatasetStore(cleanHome).resolve('slow@v1').dir));
  }, 60_000);

  it('with pruneStageFiles removes each stage\'s records once the next is complete, and a run killed mid-way resumes to the same bytes', async () => {
    const home = mkdtempSync(join(tmpdir(), 'tk-prune-'));
    const first = startRun(home, undefined, ['--prune']);
    const deadline = Date.now() + 30_000;
    while (journalLines(home, '03-check-slowly').length < 15 && Date.now() < deadline) await sleep(20);
    first.child.kill('SIGKILL');
    expect((await first.done).signal).toBe('SIGKILL');
    const runDir = runDirOf(home);
    const second = await startRun(home, runDir.split('/').pop(), ['--prune']).done;
    expect(second.code, second.stderr).toBe(0);

    const cleanHome = mkdtempSync(join(tmpdir(), 'tk-prune-clean-'));
    await runPipeline({ pipeline: slowPipeline, llm: new OfflineGateway(42), home: cleanHome, projectDir: process.cwd(), progress: { quiet: true } });
    expect(dataFiles(new DatasetStore(home).resolve('slow@v1').dir)).toEqual(dataFiles(new DatasetStore(cleanHome).resolve('slow@v1').dir));
    // Every stage's records are gone (the last one's once published); what the stages counted, rejected and attached stays.
    const stages = readdirSync(join(runDir, 'stages'));
    expect(stages).toHaveLength(4);
    for (const stage of stages) {
      const files = readdirSync(join(runDir, 'stages', stage));
      expect(files.filter((f) => f === 'out.jsonl' || f === 'journal.jsonl'), stage).toEqual([]);
      expect(files).toEqual(expect.arrayContaining(['stats.json', 'rejects.jsonl']));
    }
    // Without the option every stage keeps them.
    for (const stage of readdirSync(join(runDirOf(cleanHome), 'stages'))) expect(existsSync(join(runDirOf(cleanHome), 'stages', stage, 'out.jsonl'))).toBe(true);
  }, 60_000);

  it('runs a scan stage: one pass to collect, one per record, then finish; rejects keep their record', async () => {
    const Item = z.object({ id: z.string(), n: z.number() });
    const pipeline = definePipeline({
      name: 'scan',
      benchmark: 'scan',
      description: 'test pipeline with a scan stage',
      configSchema: z.object({}),
      sourceFiles: () => [],
      stages: () => [
        sourceStage({ name: 'make', version: 1, output: Item, load: () => Array.from({ length: 6 }, (_, n) => ({ id: `i-${n}`, n })) }),
        {
          kind: 'scan',
          name: 'share',
          version: 1,
          input: Item,
          output: Sample,
          collect: (items) => {
            let total = 0;
            for (const item of items) total += item.n;
            return { total, kept: 0 };
          },
          run: (item, ctx) => {
            if (item.n % 2) return reject('odd', `n=${item.n}`);
            ctx.state.kept++;
            return { id: item.id, benchmark: 'scan', category: 'even', split: 'test', tools: [], dialogue: [{ role: 'user' as const, content: `${item.n} of ${ctx.state.total}` }], expected: {}, meta: { lineage: [], checks: [], tags: [] } };
          },
          finish: (state, ctx) => ctx.report('kept', state.kept),
        } satisfies ScanStage<z.infer<typeof Item>, Sample, { total: number; kept: number }>,
      ],
      exports: {},
    });
    const home = mkdtempSync(join(tmpdir(), 'tk-scan-'));
    const result = await runPipeline({ pipeline, llm: new OfflineGateway(42), home, projectDir: process.cwd(), progress: { quiet: true } });
    expect(result.stats[1]).toMatchObject({ stage: 'share', in: 6, out: 3, rejected: 3, fanned: 0, rejectsByReason: { odd: 3 } });
    const store = new DatasetStore(home);
    expect(versionSamples(store, result.ref!).map((s) => s.dialogue[0].content)).toEqual(['0 of 15', '2 of 15', '4 of 15']);
    expect(versionRejects(store, result.ref!)[0]).toMatchObject({ stage: 'share', reason: 'odd', recordId: 'i-1', record: { id: 'i-1', n: 1 } });
    expect(result.manifest!.stats.kept).toBe(3);
  });

  it('streams a loading stage as it yields, and with --limit keeps the records evenlySpaced picks; a scan stage may read its input twice, make records in finish, and not call the LLM per record', async () => {
    const Item = z.object({ id: z.string(), n: z.number() });
    const asSample = (id: string, content: string): Sample => ({ id, benchmark: 'scan', category: 'c', split: 'test', tools: [], dialogue: [{ role: 'user', content }], expected: {}, meta: { lineage: [], checks: [], tags: [] } });
    let yielded = 0;
    const pipeline = (llmInRun: boolean) =>
      definePipeline({
        name: 'stream',
        benchmark: 'scan',
        description: 'test pipeline with a generator source and a two-pass scan stage',
        configSchema: z.object({}),
        sourceFiles: () => [],
        stages: () => [
          sourceStage({
            name: 'make',
            version: 1,
            output: Item,
            *load() {
              for (let n = 0; n < 10; n++, yielded++) yield { id: `i-${n}`, n };
            },
          }),
          {
            kind: 'scan',
            name: 'pairs',
            version: 1,
            fanOut: true,
            input: Item,
            output: Sample,
            collect: (items) => {
              const first = [...items].map((i) => i.n);
              const second = [...items].map((i) => i.n);
              return { sum: first.reduce((a, b) => a + b, 0), same: JSON.stringify(first) === JSON.stringify(second) };
            },
            run: async (item, ctx) => {
              if (llmInRun) await ctx.llm.embed(['x'], { stage: 'pairs' });
              return asSample(item.id, `${item.n}/${ctx.state.sum}/${ctx.state.same}`);
            },
            finish: (state) => ({ out: [asSample('made', `total ${state.sum}`)], rejects: [{ reason: 'not_kept', detail: 'made, then dropped', recordId: 'dropped', record: { id: 'dropped' } }] }),
          } satisfies ScanStage<z.infer<typeof Item>, Sample, { sum: number; same: boolean }>,
        ],
        exports: {},
      });
    const home = mkdtempSync(join(tmpdir(), 'tk-stream-'));
    const result = await runPipeline({ pipeline: pipeline(false), limit: 3, llm: new OfflineGateway(42), home, projectDir: process.cwd(), progress: { quiet: true } });
    expect(yielded).toBe(10);
    const picked = evenlySpaced(Array.from({ length: 10 }, (_, n) => n), 3);
    expect(versionSamples(new DatasetStore(home), result.ref!).map((s) => s.dialogue[0].content)).toEqual([...picked.map((n) => `${n}/${3 + 6}/true`), `total ${3 + 6}`]);
    expect(result.stats.map((s) => [s.stage, s.in, s.out, s.rejected])).toEqual([['make', 0, 3, 0], ['pairs', 3, 4, 1]]);
    expect(versionRejects(new DatasetStore(home), result.ref!)).toEqual([{ stage: 'pairs', reason: 'not_kept', detail: 'made, then dropped', recordId: 'dropped', record: { id: 'dropped' } }]);
    await expect(runPipeline({ pipeline: pipeline(true), llm: new OfflineGateway(42), home: mkdtempSync(join(tmpdir(), 'tk-stream-')), projectDir: process.cwd(), progress: { quiet: true } })).rejects.toThrow(/calls the LLM only in collect/);
  });

  it('runs consecutive per-record stages together: the second takes a record as soon as the first has finished it and every one before it', async () => {
    const Item = z.object({ id: z.string(), n: z.number() });
    // The first stage's last record waits until the second stage has seen the first record: run one after the other, it never finishes.
    let secondSawFirst!: () => void;
    const seen = new Promise<void>((resolve) => (secondSawFirst = resolve));
    const order: string[] = [];
    const pipeline = definePipeline({
      name: 'piped',
      benchmark: 'scan',
      description: 'two per-record stages',
      configSchema: z.object({}),
      sourceFiles: () => [],
      stages: () => [
        sourceStage({ name: 'make', version: 1, output: Item, load: () => Array.from({ length: 8 }, (_, n) => ({ id: `i-${n}`, n })) }),
        {
          kind: 'map',
          name: 'first',
          version: 1,
          input: Item,
          output: Item,
          run: async (item) => {
            if (item.n === 7) {
              const waited = await Promise.race([seen.then(() => 'seen'), sleep(20_000).then(() => 'not piped')]);
              if (waited !== 'seen') return reject('not_piped');
            }
            order.push(`first ${item.n}`);
            return item;
          },
        } satisfies MapStage<z.infer<typeof Item>, z.infer<typeof Item>>,
        {
          kind: 'map',
          name: 'second',
          version: 1,
          input: Item,
          output: Sample,
          run: async (item) => {
            order.push(`second ${item.n}`);
            if (item.n === 0) secondSawFirst();
            return { id: item.id, benchmark: 'scan', category: 'c', split: 'test', tools: [], dialogue: [{ role: 'user' as const, content: String(item.n) }], expected: {}, meta: { lineage: [], checks: [], tags: [] } };
          },
        } satisfies MapStage<z.infer<typeof Item>, Sample>,
      ],
      exports: {},
    });
    const home = mkdtempSync(join(tmpdir(), 'tk-piped-'));
    const result = await runPipeline({ pipeline, llm: new OfflineGateway(42), home, projectDir: process.cwd(), progress: { quiet: true } });
    expect(result.stats.map((s) => [s.stage, s.out, s.rejected])).toEqual([['make', 8, 0], ['first', 8, 0], ['second', 8, 0]]);
    expect(order.indexOf('second 0')).toBeLessThan(order.indexOf('first 7'));
    // Still in input order in the published version.
    expect(versionSamples(new DatasetStore(home), result.ref!).map((s) => s.dialogue[0].content)).toEqual(['0', '1', '2', '3', '4', '5', '6', '7']);
  }, 60_000);

  it('keeps a per-record stage close behind the next one, which takes its records in memory as made (the same objects), not parsed again', async () => {
    const Item = z.object({ id: z.string(), n: z.number() });
    let started = 0;
    let taken = 0;
    let ahead = 0;
    const made = new WeakSet<object>();
    let sameObjects = 0;
    const pipeline = definePipeline({
      name: 'ahead',
      benchmark: 'scan',
      description: 'a fast per-record stage before a slow one',
      configSchema: z.object({}),
      sourceFiles: () => [],
      stages: () => [
        sourceStage({ name: 'make', version: 1, output: Item, load: () => Array.from({ length: 1200 }, (_, n) => ({ id: `i-${n}`, n })) }),
        {
          kind: 'map',
          name: 'fast',
          version: 1,
          input: Item,
          output: Item,
          run: async (item) => {
            ahead = Math.max(ahead, ++started - taken);
            const out = { ...item, n: item.n + 1 };
            made.add(out);
            return out;
          },
        } satisfies MapStage<z.infer<typeof Item>, z.infer<typeof Item>>,
        {
          kind: 'map',
          name: 'slow',
          version: 1,
          input: Item,
          output: Sample,
          concurrency: 2,
          run: async (item) => {
            taken++;
            if (made.has(item)) sameObjects++;
            await sleep(1);
            return { id: item.id, benchmark: 'scan', category: 'c', split: 'test', tools: [], dialogue: [{ role: 'user' as const, content: String(item.n) }], expected: {}, meta: { lineage: [], checks: [], tags: [] } };
          },
        } satisfies MapStage<z.infer<typeof Item>, Sample>,
      ],
      exports: {},
    });
    const home = mkdtempSync(join(tmpdir(), 'tk-ahead-'));
    const result = await runPipeline({ pipeline, llm: new OfflineGateway(42), home, projectDir: process.cwd(), progress: { quiet: true } });
    expect(result.stats.map((s) => [s.stage, s.out])).toEqual([['make', 1200], ['fast', 1200], ['slow', 1200]]);
    // Never far ahead (256 records, and those in flight), however much faster it is.
    expect(ahead).toBeLessThanOrEqual(256 + 16 + 2);
    expect(sameObjects).toBe(1200);
    expect(versionSamples(new DatasetStore(home), result.ref!).map((s) => s.dialogue[0].content)).toEqual(Array.from({ length: 1200 }, (_, n) => String(n + 1)));
  }, 60_000);

  it('runs scan stages that need no pass over their input behind the per-record stage before them, chained, to the same files as one after the other', async () => {
    const Item = z.object({ id: z.string(), n: z.number() });
    const asSample = (item: { id: string; n: number }, text: string): Sample => ({ id: item.id, benchmark: 'scan', category: 'c', split: 'test', tools: [], dialogue: [{ role: 'user', content: text }], expected: {}, meta: { lineage: [], checks: [], tags: [] } });
    const order: string[] = [];
    // The per-record stage's last record waits until the first scan stage has seen record 0: run one after the other, it never finishes.
    let scanSawFirst!: () => void;
    const seen = new Promise<void>((resolve) => (scanSawFirst = resolve));
    const pipeline = (streaming: boolean) =>
      definePipeline({
        name: streaming ? 'chained' : 'apart',
        benchmark: 'scan',
        description: 'a per-record stage, then two scan stages',
        configSchema: z.object({}),
        sourceFiles: () => [],
        stages: () => [
          sourceStage({ name: 'make', version: 1, output: Item, load: () => Array.from({ length: 8 }, (_, n) => ({ id: `i-${n % 6}`, n })) }),
          {
            kind: 'map',
            name: 'double',
            version: 1,
            input: Item,
            output: Item,
            run: async (item) => {
              if (streaming && item.n === 7) {
                const waited = await Promise.race([seen.then(() => 'seen'), sleep(20_000).then(() => 'not streamed')]);
                if (waited !== 'seen') return reject('not_streamed');
              }
              order.push(`double ${item.n}`);
              return { ...item, n: item.n * 2 };
            },
          } satisfies MapStage<z.infer<typeof Item>, z.infer<typeof Item>>,
          {
            kind: 'scan',
            name: 'first-of-id',
            version: 1,
            input: Item,
            output: Item,
            fanOut: true,
            ...(streaming ? { begin: () => new Set<string>() } : { collect: () => new Set<string>() }),
            run: (item, ctx) => {
              order.push(`first-of-id ${item.n}`);
              if (streaming && item.n === 0) scanSawFirst();
              if (ctx.state.has(item.id)) return reject('repeat', `${item.id} again`);
              ctx.state.add(item.id);
              return item;
            },
            // A record of its own, after the others: the next stage takes it too.
            finish: (state) => [{ id: 'i-last', n: state.size }],
          } satisfies ScanStage<z.infer<typeof Item>, z.infer<typeof Item>, Set<string>>,
          {
            kind: 'scan',
            name: 'running-sum',
            version: 1,
            input: Item,
            output: Sample,
            ...(streaming ? { begin: () => ({ sum: 0 }) } : { collect: () => ({ sum: 0 }) }),
            run: (item, ctx) => asSample(item, `${item.n}, sum ${(ctx.state.sum += item.n)}`),
            finish: (state, ctx) => ctx.report('sum', state.sum),
          } satisfies ScanStage<z.infer<typeof Item>, Sample, { sum: number }>,
        ],
        exports: {},
      });
    const runOf = async (streaming: boolean) => {
      const home = mkdtempSync(join(tmpdir(), 'tk-chain-'));
      const result = await runPipeline({ pipeline: pipeline(streaming), llm: new OfflineGateway(42), home, projectDir: process.cwd(), progress: { quiet: true } });
      const store = new DatasetStore(home);
      return { result, samples: versionSamples(store, result.ref!), rejects: versionRejects(store, result.ref!) };
    };
    const apart = await runOf(false);
    order.length = 0;
    const chained = await runOf(true);
    expect(order.indexOf('first-of-id 0')).toBeLessThan(order.indexOf('double 7'));
    for (const run of [apart, chained]) {
      expect(run.result.stats.map((s) => [s.stage, s.in, s.out, s.rejected])).toEqual([['make', 0, 8, 0], ['double', 8, 8, 0], ['first-of-id', 8, 7, 2], ['running-sum', 7, 7, 0]]);
      expect(run.samples.map((s) => s.dialogue[0].content)).toEqual(['0, sum 0', '2, sum 2', '4, sum 6', '6, sum 12', '8, sum 20', '10, sum 30', '6, sum 36']);
      expect(run.result.manifest!.stats.sum).toBe(36);
      expect(run.rejects.map((r) => [r.stage, r.reason, r.record])).toEqual([['first-of-id', 'repeat', { id: 'i-0', n: 12 }], ['first-of-id', 'repeat', { id: 'i-1', n: 14 }]]);
    }
  }, 60_000);

  it('stops the per-record stage before a scan chain when a stage of the chain fails, and reports that failure', async () => {
    const Item = z.object({ id: z.string(), n: z.number() });
    let doubled = 0;
    const pipeline = definePipeline({
      name: 'chain-fails',
      benchmark: 'scan',
      description: 'a per-record stage, then a scan stage that fails on record 3',
      configSchema: z.object({}),
      sourceFiles: () => [],
      stages: () => [
        sourceStage({ name: 'make', version: 1, output: Item, load: () => Array.from({ length: 400 }, (_, n) => ({ id: `i-${n}`, n })) }),
        {
          kind: 'map',
          name: 'slow',
          version: 1,
          input: Item,
          output: Item,
          concurrency: 1,
          run: async (item) => {
            await sleep(5);
            doubled++;
            return item;
          },
        } satisfies MapStage<z.infer<typeof Item>, z.infer<typeof Item>>,
        {
          kind: 'scan',
          name: 'breaks',
          version: 1,
          input: Item,
          output: Sample,
          begin: () => null,
          run: (item) => {
            if (item.n === 3) throw new Error('record 3 cannot be read');
            return { id: item.id, benchmark: 'scan', category: 'c', split: 'test', tools: [], dialogue: [{ role: 'user' as const, content: 'x' }], expected: {}, meta: { lineage: [], checks: [], tags: [] } };
          },
        } satisfies ScanStage<z.infer<typeof Item>, Sample, null>,
      ],
      exports: {},
    });
    const home = mkdtempSync(join(tmpdir(), 'tk-chain-fails-'));
    await expect(runPipeline({ pipeline, llm: new OfflineGateway(42), home, projectDir: process.cwd(), progress: { quiet: true } })).rejects.toThrow(/record 3 cannot be read/);
    // The per-record stage stopped instead of finishing its 400 records.
    expect(doubled).toBeLessThan(400);
  }, 60_000);

  it("starts a later stage's prepare when the run starts, while the stages before it work, and not again for a stage a resume finds complete", async () => {
    const Item = z.object({ id: z.string(), n: z.number() });
    let prepared!: () => void;
    const preparedSeen = new Promise<void>((resolve) => (prepared = resolve));
    let prepares = 0;
    const pipeline = definePipeline({
      name: 'prepared',
      benchmark: 'scan',
      description: 'a per-record stage that waits for the last stage to have started preparing',
      configSchema: z.object({}),
      sourceFiles: () => [],
      stages: () => [
        sourceStage({ name: 'make', version: 1, output: Item, load: () => Array.from({ length: 3 }, (_, n) => ({ id: `i-${n}`, n })) }),
        {
          kind: 'map',
          name: 'wait',
          version: 1,
          input: Item,
          output: Sample,
          run: async (item) => {
            // Called only when the last stage runs (after this one), prepare would never come.
            const waited = await Promise.race([preparedSeen.then(() => 'prepared'), sleep(20_000).then(() => 'not prepared')]);
            if (waited !== 'prepared') return reject('not_prepared');
            return { id: item.id, benchmark: 'scan', category: 'c', split: 'test', tools: [], dialogue: [{ role: 'user' as const, content: String(item.n) }], expected: {}, meta: { lineage: [], checks: [], tags: [] } };
          },
        } satisfies MapStage<z.infer<typeof Item>, Sample>,
        {
          kind: 'scan',
          name: 'count',
          version: 1,
          input: Sample,
          output: Sample,
          prepare: (ctx) => {
            prepares++;
            expect(ctx.resolvePath('x')).toMatch(/x$/);
            prepared();
          },
          run: (sample) => sample,
        } satisfies ScanStage<Sample, Sample>,
      ],
      exports: {},
    });
    const home = mkdtempSync(join(tmpdir(), 'tk-prepared-'));
    const result = await runPipeline({ pipeline, llm: new OfflineGateway(42), home, projectDir: process.cwd(), progress: { quiet: true } });
    expect(result.stats.map((s) => [s.stage, s.out, s.rejected])).toEqual([['make', 3, 0], ['wait', 3, 0], ['count', 3, 0]]);
    expect(prepares).toBe(1);
    await runPipeline({ pipeline, llm: new OfflineGateway(42), home, projectDir: process.cwd(), progress: { quiet: true }, resume: result.runId, force: true });
    expect(prepares).toBe(1);
  }, 60_000);

  it('stops every stage running together when one fails, and reports that one', async () => {
    const Item = z.object({ id: z.string(), n: z.number() });
    const pipeline = definePipeline({
      name: 'piped-fail',
      benchmark: 'scan',
      description: 'two per-record stages, the first failing',
      configSchema: z.object({}),
      sourceFiles: () => [],
      stages: () => [
        sourceStage({ name: 'make', version: 1, output: Item, load: () => Array.from({ length: 40 }, (_, n) => ({ id: `i-${n}`, n })) }),
        { kind: 'map', name: 'first', version: 1, input: Item, output: Item, run: async (item) => { if (item.n === 30) throw new Error('broken record'); return item; } } satisfies MapStage<z.infer<typeof Item>, z.infer<typeof Item>>,
        { kind: 'map', name: 'second', version: 1, input: Item, output: Item, run: async (item) => item } satisfies MapStage<z.infer<typeof Item>, z.infer<typeof Item>>,
        { kind: 'map', name: 'third', version: 1, input: Item, output: Sample, run: async (item) => ({ id: item.id, benchmark: 'scan', category: 'c', split: 'test', tools: [], dialogue: [{ role: 'user' as const, content: String(item.n) }], expected: {}, meta: { lineage: [], checks: [], tags: [] } }) } satisfies MapStage<z.infer<typeof Item>, Sample>,
      ],
      exports: {},
    });
    const home = mkdtempSync(join(tmpdir(), 'tk-piped-fail-'));
    await expect(runPipeline({ pipeline, llm: new OfflineGateway(42), home, projectDir: process.cwd(), progress: { quiet: true } })).rejects.toThrow(/stage first failed on record i-30: broken record/);
    expect(new DatasetStore(home).versions('piped-fail')).toEqual([]);
    for (const stage of ['02-first', '03-second', '04-third']) expect(existsSync(join(runDirOf(home), 'stages', stage, 'stats.json'))).toBe(false);
  }, 60_000);

  it('accounts every input: in = out + rejected − fanned, per stage', async () => {
    const home = mkdtempSync(join(tmpdir(), 'tk-acct-'));
    const result = await runPipeline({ pipeline: slowPipeline, configOverrides: { items: 40, delayMs: 0 }, llm: new OfflineGateway(42), home, projectDir: process.cwd(), progress: { quiet: true } });
    const byStage = Object.fromEntries(result.stats.map((s) => [s.stage, s]));
    expect(byStage['make-items']).toMatchObject({ in: 0, out: 40, rejected: 0, fanned: 40 });
    // n % 7 == 3 rejected (6 of 40); n % 5 == 0 doubled unless rejected (7 of 40: 10 is rejected)
    expect(byStage['score-slowly']).toMatchObject({ in: 40, out: 34 + 7, rejected: 6, fanned: 7, rejectsByReason: { divisible_rest_3: 6 } });
    for (const s of result.stats) expect(s.in).toBe(s.out + s.rejected - s.fanned);
    expect(readFileSync(join(result.ref!.dir, 'reports', 'summary', 'scores.txt'), 'utf8').split('\n')).toHaveLength(41);
    expect(result.manifest!.files['reports/summary/scores.txt']).toMatch(/^[0-9a-f]{64}$/);
    const rejects = versionRejects(new DatasetStore(home), result.ref!);
    expect(rejects).toHaveLength(6);
    expect(rejects[0]).toMatchObject({ stage: 'score-slowly', reason: 'divisible_rest_3', recordId: 'item-3', record: { id: 'item-3', n: 3 } });
  });

  it('gives the same dataset for the same seed whatever the concurrency, and another for another seed', async () => {
    const run = async (seed: number, concurrency: number) => {
      const home = mkdtempSync(join(tmpdir(), 'tk-seed-'));
      const r = await runPipeline({ pipeline: slowPipeline, configOverrides: { items: 30, delayMs: 1 }, seed, concurrency, llm: new OfflineGateway(seed), home, projectDir: process.cwd(), progress: { quiet: true } });
      return dataFiles(r.ref!.dir);
    };
    const a = await run(7, 1);
    expect(await run(7, 8)).toEqual(a);
    expect(await run(8, 1)).not.toEqual(a);
  });

  it('--limit takes records spread evenly over what the loader emits, in order', async () => {
    expect(evenlySpaced([0, 1, 2, 3, 4, 5, 6, 7, 8, 9], 3)).toEqual([0, 3, 6]);
    expect(evenlySpaced([0, 1, 2], 5)).toEqual([0, 1, 2]);
    const home = mkdtempSync(join(tmpdir(), 'tk-limit-'));
    const result = await runPipeline({ pipeline: slowPipeline, configOverrides: { items: 40, delayMs: 0 }, limit: 4, llm: new OfflineGateway(42), home, projectDir: process.cwd(), progress: { quiet: true } });
    expect(result.stats[0]).toMatchObject({ out: 4 });
    expect(result.stats[1]).toMatchObject({ in: 4, rejected: 1 }); // item 10 (10 % 7 == 3)
    const store = new DatasetStore(home);
    const texts = versionSamples(store, result.ref!).map((s) => s.dialogue[0].content.split(' ')[1]);
    expect(new Set(texts)).toEqual(new Set(['0', '20', '30']));
    expect(versionRejects(store, result.ref!).map((r) => r.recordId)).toEqual(['item-10']);
  });
});
