import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { BenchmarkScorer, EvalItem, EvalReport } from '../core/eval.ts';
import type { Sample } from '../core/records.ts';
import { samplesInMemory, type SampleSource } from '../core/sample-source.ts';
import { releasedMetaToolItems } from '../stages/toole/released.ts';
import { collectItems, evaluate, type ModelChoice } from '../eval/run.ts';
import { acebenchScorer } from '../stages/acebench/score.ts';
import { importAceFolder } from '../stages/acebench/import.ts';
import { mtuScorer, releasedMtuItems } from '../stages/mtu/score.ts';
import { nestoolsScorer } from '../stages/nestools/score.ts';
import { loadNesToolsSamples } from '../stages/sources/nestools.ts';
import { tooleScorer } from '../stages/toole/score.ts';
import { conversationFiles } from '../stages/tooltalk/conversation-files.ts';
import { importConversationFile } from '../stages/tooltalk/import.ts';
import { tooltalkScorer } from '../stages/tooltalk/score.ts';
import { tempDirs } from './helpers/files.ts';

const tmp = tempDirs('tk-eval-stream-');
const REFERENCE_ROOT = fileURLToPath(new URL('../../shared/data/reference/', import.meta.url));

type Line = { id: string; category: string; figures: Record<string, number | boolean>; note?: string; output: string | null };
const linesOf = (dir: string): Line[] =>
  readFileSync(join(dir, 'items.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Line);

/** A sample source that counts the samples read from it and when. */
function counted(source: SampleSource): SampleSource & { read: number } {
  const counter = {
    read: 0,
    splits: source.splits,
    *all() {
      for (const sample of source.all()) {
        counter.read++;
        yield sample;
      }
    },
    inSplit: (split: string) => source.inSplit(split),
    located: () => source.located(),
    locatedIds: () => source.locatedIds(),
    readAt: (positions: Parameters<SampleSource['readAt']>[0]) => source.readAt(positions),
  };
  return counter;
}

/** The scorer with each `score` call's size, and how many samples had been read by the first call. */
function watched(scorer: BenchmarkScorer, source?: { read: number }) {
  const calls: number[] = [];
  let readAtFirstCall: number | undefined;
  const spy: BenchmarkScorer = {
    ...scorer,
    score(outputs) {
      calls.push(outputs.length);
      readAtFirstCall ??= source?.read;
      return scorer.score(outputs);
    },
  };
  return { spy, calls, readAtFirst: () => readAtFirstCall };
}

/** Each sample `copies` times under its own ids (a version a few times the size of the released set). */
const copied = (samples: Sample[], copies: number): Sample[] => Array.from({ length: copies }, (_, copy) => samples.map((s) => (copy ? { ...s, id: `${s.id}~${copy}` } : s))).flat();

/** What scoring every item at once gives for the outputs the streamed evaluation wrote. */
function scoredWhole(scorer: BenchmarkScorer, items: EvalItem[], lines: Line[]): EvalReport {
  const output = new Map(lines.map((l) => [l.id, l.output]));
  return scorer.score(items.map((item) => ({ item, output: output.get(item.id) ?? null })));
}

const noisy: ModelChoice = { kind: 'noisy-oracle', seed: 11 };

describe('eval streams the items: a window answered at a time, whole samples scored a few at a time, the results of scoring every item at once', () => {
  const versions: [string, BenchmarkScorer, () => Sample[]][] = [
    ['NesTools', nestoolsScorer, () => loadNesToolsSamples(join(REFERENCE_ROOT, 'nestools/test_data.jsonl'))],
    ['ACEBench (agent tasks in the loop)', acebenchScorer, () => [...importAceFolder(join(REFERENCE_ROOT, 'acebench'))]],
    ['ToolTalk (conversations in the loop)', tooltalkScorer, () => copied(conversationFiles(join(REFERENCE_ROOT, 'tooltalk')).map((file) => importConversationFile(join(REFERENCE_ROOT, 'tooltalk'), file)), 5)],
  ];

  it.each(versions)('%s: read as it is answered, scored in batches, same tables and item lines as one whole scoring', async (_name, scorer, read) => {
    const samples = read();
    const source = counted(samplesInMemory(samples));
    const { spy, calls, readAtFirst } = watched(scorer, source);
    const outDir = tmp();
    const result = await evaluate({ scorer: spy, samples: source, model: noisy, outDir, window: 8 });
    const items = collectItems(scorer, samplesInMemory(samples));
    const lines = linesOf(outDir);

    // Streamed: scored in several batches, the first before most samples were read.
    expect(calls.length).toBeGreaterThan(1);
    expect(Math.max(...calls)).toBeLessThan(items.length);
    expect(calls.reduce((a, b) => a + b, 0)).toBe(items.length);
    expect(readAtFirst()).toBeLessThan(samples.length / 2);
    // What is kept of each item is its compact form: no messages, no tools.
    expect(result.units.flat()).toHaveLength(items.length);
    expect(result.units.flat().every(({ item }) => item.messages.length === 0 && item.tools.length === 0)).toBe(true);

    // The same figures as scoring every item at once.
    const whole = scoredWhole(scorer, items, lines);
    expect(Object.values(whole.metrics).some((v) => v > 0 && v < 1)).toBe(true);
    expect(result.report).toEqual({ benchmark: whole.benchmark, items: whole.items, metrics: whole.metrics, byCategory: whole.byCategory });
    expect(lines.map(({ id, category, figures, note }) => ({ id, category, figures, ...(note === undefined ? {} : { note }) }))).toEqual(whole.details);
    expect(JSON.parse(readFileSync(join(outDir, 'report.json'), 'utf8'))).toMatchObject({ benchmark: whole.benchmark, items: whole.items, metrics: whole.metrics, byCategory: whole.byCategory });
  }, 300_000);

  const releasedItems: [string, BenchmarkScorer, () => EvalItem[]][] = [
    ['MTU-Eval', mtuScorer, () => releasedMtuItems(join(REFERENCE_ROOT, 'mtu-bench'))],
    ['MetaTool', tooleScorer, () => releasedMetaToolItems(join(REFERENCE_ROOT, 'metatool')).filter((_: EvalItem, i: number) => i % 10 === 0)],
  ];

  it.each(releasedItems)('%s items: scored in batches of whole samples, same tables and item lines as one whole scoring', async (_name, scorer, read) => {
    const items = read();
    const { spy, calls } = watched(scorer);
    const outDir = tmp();
    const result = await evaluate({ scorer: spy, items, model: noisy, outDir });
    const lines = linesOf(outDir);
    expect(calls.length).toBeGreaterThan(1);
    expect(Math.max(...calls)).toBeLessThan(items.length);
    const whole = scoredWhole(scorer, items, lines);
    expect(Object.values(whole.metrics).some((v) => v > 0 && v < 1)).toBe(true);
    expect(result.report).toEqual({ benchmark: whole.benchmark, items: whole.items, metrics: whole.metrics, byCategory: whole.byCategory });
    expect(lines.map(({ id, category, figures, note }) => ({ id, category, figures, ...(note === undefined ? {} : { note }) }))).toEqual(whole.details);
  }, 300_000);
});
