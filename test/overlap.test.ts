import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { main } from '../bin/cli.ts';
import { plantReleased, releasedSamples } from '../bench/lib/overlap-plants.ts';
import { pooled, scorePlants } from '../bench/lib/overlap-scores.ts';
import { cosine, createEmbedder, lexicalEmbedder } from '../core/embed/index.ts';
import { sampleToLine } from '../core/line-form.ts';
import { OfflineGateway } from '../core/llm/offline.ts';
import { callSignatures } from '../core/overlap/calls.ts';
import { OverlapConfig } from '../core/overlap/config.ts';
import { OverlapAtPublishing, overlapForPublishing, type OverlapSummary } from '../core/overlap/gate.ts';
import { Postings } from '../core/overlap/postings.ts';
import { measureOverlap, type OverlapHit } from '../core/overlap/measure.ts';
import { ngramHashes, words } from '../core/overlap/text.ts';
import { definePipeline, type ReleasedSamples } from '../core/pipeline.ts';
import { Sample, type Call, type Json, type Rejection, type ToolSpec } from '../core/records.ts';
import { DistinctTools, runPipeline } from '../core/run.ts';
import { scanStage, sourceStage } from '../core/stage.ts';
import { DatasetStore, SampleFiles } from '../core/store.ts';
import { commonExporters } from '../stages/export/index.ts';
import { listTally, statisticsBesideReleased } from '../stages/released-statistics.ts';
import { readDatasetCard } from './helpers/dataset-card.ts';
import { versionRejects, versionSamples } from './helpers/version.ts';

/**
 * Overlap with test sets: the canonical call signatures and the n-grams they rest on, the
 * measurement (each hit naming its reference sample), the measured precision and recall on known
 * overlaps planted in the released test sets (the targets of docs/overlap.md), `toolkiln datasets
 * overlap`, and the gate at publishing in both modes with the dataset card's table.
 */

const PROJECT = new URL('..', import.meta.url).pathname;
const HAVE_RELEASED = existsSync(join(PROJECT, '../shared/data/reference/acebench'));

const tool = (name: string, properties: Record<string, Record<string, Json>>): ToolSpec => ({
  name,
  description: `${name} tool`,
  parameters: { type: 'object', properties: properties as ToolSpec['parameters']['properties'], required: [] },
  returns: { type: 'object', properties: {}, required: [] },
});
const weather = tool('GetWeather', { city: { type: 'string' }, unit: { type: 'string', enum: ['Celsius', 'Fahrenheit'] }, days: { type: 'integer' } });
const hotel = tool('BookHotel', { city: { type: 'string' }, nights: { type: 'integer' } });
const call = (id: string, name: string, args: Record<string, unknown>): Call => ({ id, tool: name, arguments: args as Call['arguments'] });

function sample(id: string, text: string, calls: Call[], options: { tools?: ToolSpec[]; split?: string; category?: string } = {}): Sample {
  return Sample.parse({
    id,
    benchmark: 'planted',
    category: options.category ?? 'c',
    split: options.split ?? 'test',
    tools: options.tools ?? [weather, hotel],
    dialogue: [{ role: 'user', content: text }],
    expected: { calls },
    meta: { source: { dataset: 'planted', id } },
  });
}

describe('call signatures', () => {
  const base = sample('a', 'x', [call('c1', 'GetWeather', { city: 'Oslo', unit: 'Celsius', days: 3 })]);
  const exactOf = (s: Sample) => callSignatures(s).exact;
  const nearOf = (s: Sample) => callSignatures(s).near;

  it('canonicalise key order, numbers written as text and the case of enum values (exact)', () => {
    const same = sample('b', 'y', [call('other-id', 'GetWeather', { days: '3', unit: 'celsius', city: ' Oslo ' })]);
    expect(exactOf(same)).toBe(exactOf(base));
    expect(exactOf(base)).not.toBeNull();
  });

  it('tell a free text in another case, another value or another tool set apart (exact) but not the loose form (near)', () => {
    const otherCase = sample('b', 'y', [call('c1', 'GetWeather', { city: 'OSLO', unit: 'Celsius', days: 3 })]);
    const otherTools = sample('b', 'y', [call('c1', 'GetWeather', { city: 'Oslo', unit: 'Celsius', days: 3 })], { tools: [weather] });
    const otherValue = sample('b', 'y', [call('c1', 'GetWeather', { city: 'Bergen', unit: 'Celsius', days: 3 })]);
    const otherSpelling = sample('b', 'y', [call('c1', 'get_weather', { City: 'oslo', UNIT: 'CELSIUS', days: 3.0 })], { tools: [{ ...weather, name: 'get_weather' }] });
    for (const other of [otherCase, otherTools, otherSpelling]) {
      expect(exactOf(other)).not.toBe(exactOf(base));
      expect(nearOf(other)).toEqual(nearOf(base));
    }
    expect(exactOf(otherValue)).not.toBe(exactOf(base));
    expect(nearOf(otherValue)).not.toEqual(nearOf(base));
  });

  it('name a reference to an earlier call by its position, and leave calls without arguments out', () => {
    const chain = (first: string) => sample('c', 'z', [call(first, 'GetWeather', { city: 'Oslo' }), call('x', 'BookHotel', { city: { $ref: `${first}.city` }, nights: 2 })]);
    expect(exactOf(chain('call_0'))).toBe(exactOf(chain('h5_0')));
    const choice = sample('d', 'z', [call('c1', 'GetWeather', {})]);
    expect(callSignatures(choice)).toEqual({ exact: null, near: [] });
  });
});

describe('postings', () => {
  /** A key's values as the postings hold them. */
  const valuesOf = (postings: Postings, key: number) => {
    const slot = postings.slot(key);
    return slot < 0 ? [] : [...postings.sorted.subarray(postings.starts[slot], postings.starts[slot + 1])];
  };

  it("find a key's values, ascending, from where they start to where the next key's start; a key without values has no slot", () => {
    const postings = new Postings();
    // Added as an index adds them (reference sample after reference sample): a common key among rare ones.
    for (let ref = 0; ref < 3000; ref++) {
      postings.add(2 ** 40 + 7, ref);
      if (ref % 1000 === 0) postings.add(ref + 0.5, ref);
    }
    postings.add(-3, 2999);
    postings.freeze();
    expect(postings.size).toBe(3004);
    expect(valuesOf(postings, 2 ** 40 + 7)).toEqual(Array.from({ length: 3000 }, (_, ref) => ref));
    expect(valuesOf(postings, 1000.5)).toEqual([1000]);
    expect(valuesOf(postings, -3)).toEqual([2999]);
    expect(postings.slot(1000)).toBe(-1);
    expect(postings.slot(2 ** 41)).toBe(-1);
    // One slot per distinct key, in ascending order of the keys.
    expect([-3, 0.5, 1000.5, 2000.5, 2 ** 40 + 7].map((key) => postings.slot(key))).toEqual([0, 1, 2, 3, 4]);
    expect(postings.starts.length).toBe(6);
  });

  it('hold each key\'s values ascending whatever order they were added in', () => {
    const postings = new Postings();
    for (const [key, value] of [[5, 9], [2, 4], [5, 1], [2, 3], [5, 4], [9, 0]]) postings.add(key, value);
    postings.freeze();
    expect([2, 5, 9].map((key) => valuesOf(postings, key))).toEqual([[3, 4], [1, 4, 9], [0]]);
  });
});

describe('the lexical embedder fitted on a corpus', () => {
  it('gives a text one vector whatever it is embedded with, so batches compare with the corpus', () => {
    const corpus = ['book a hotel in Oslo', 'weather in Bergen tomorrow', 'play jazz in the kitchen'];
    const lexical = lexicalEmbedder();
    const fitted = lexical.fit!(corpus) as ReturnType<typeof lexicalEmbedder>;
    const [alone] = fitted.embedSync(['book a hotel in Bergen']);
    const [inBatch] = fitted.embedSync(['book a hotel in Bergen', 'book a flight', 'a hotel in Bergen again']);
    expect(Array.from(inBatch)).toEqual(Array.from(alone));
    // Unfitted, its weights follow the texts of each call.
    expect(Array.from(lexical.embedSync(['book a hotel in Bergen', 'a hotel in Oslo'])[0])).not.toEqual(Array.from(lexical.embedSync(['book a hotel in Bergen'])[0]));
    expect(cosine(fitted.embedSync(['book a hotel in Oslo'])[0], lexical.embedSync(corpus)[0])).toBeCloseTo(1, 5);
  });
});

describe('text n-grams', () => {
  it('normalise case and punctuation, split Chinese into characters, and take a short text whole from four words', () => {
    expect(words('Book a table, PLEASE!')).toEqual(['book', 'a', 'table', 'please']);
    expect(words('我需要计划')).toEqual(['我', '需', '要', '计', '划']);
    expect(ngramHashes(words('what is the weather in Oslo today'), 8)).toHaveLength(1);
    expect(ngramHashes(words('Thanks a lot'), 8)).toEqual([]);
    expect(ngramHashes(words('one two three four five six seven eight nine'), 8)).toHaveLength(2);
  });
});

describe('measureOverlap', () => {
  const reference = [
    sample('ref-weather', 'What will the weather be like in Oslo for the next three days, in Celsius please?', [call('c1', 'GetWeather', { city: 'Oslo', unit: 'Celsius', days: 3 })]),
    sample('ref-hotel', 'I need a hotel room in Bergen for two nights starting on Friday next week.', [call('c1', 'BookHotel', { city: 'Bergen', nights: 2 })]),
  ];
  const checked = [
    sample('copy', 'What will the weather be like in Oslo for the next three days, in Celsius please?', [], { split: 'train', category: 'copies' }),
    sample('same-call', 'Forecast for the capital of Norway, three days, metric.', [call('c9', 'GetWeather', { city: 'OSLO', days: '3', unit: 'CELSIUS' })], { split: 'train', category: 'calls' }),
    sample('unrelated', 'Play some jazz in the kitchen while I cook dinner for my family tonight.', [], { split: 'train', category: 'copies' }),
  ];

  it('counts per split and category the samples at or over each threshold, each hit naming the reference sample', async () => {
    const hits: OverlapHit[] = [];
    const report = await measureOverlap(checked, [{ name: 'planted', kind: 'released', path: '-', samples: () => reference }], {
      config: OverlapConfig.parse({}),
      embedder: createEmbedder(OverlapConfig.parse({}).embedder, { stage: 'test' }),
      onSample: (_s, h) => hits.push(...h),
    });
    expect(report.samples).toBe(3);
    expect(report.rows.map((r) => [r.split, r.category, r.samples, r.overlap.planted.any])).toEqual([
      ['train', 'calls', 1, 1],
      ['train', 'copies', 2, 1],
    ]);
    expect(report.total.planted).toMatchObject({ 'ngram-8': 1, 'ngram-13': 1, 'call-exact': 0, 'call-near': 1, embedding: 1, any: 2 });
    expect(hits.filter((h) => h.sample === 'copy').map((h) => [h.level, h.score, h.match])).toEqual([
      ['ngram-8', 1, 'ref-weather'],
      ['ngram-13', 1, 'ref-weather'],
      ['embedding', 1, 'ref-weather'],
    ]);
    expect(hits.filter((h) => h.sample === 'same-call').map((h) => [h.level, h.match])).toEqual([['call-near', 'ref-weather']]);
    expect(hits.some((h) => h.sample === 'unrelated')).toBe(false);
  });
});

describe.skipIf(!HAVE_RELEASED)('precision and recall on overlaps planted in the released test sets (needs ../shared/data)', () => {
  it('finds ≥ 95 % of verbatim, call and translation plants and ≥ 80 % of paraphrases, flagging ≤ 5 % of clean look-alikes', async () => {
    const config = OverlapConfig.parse({});
    const sets = plantReleased({ perKind: 40, lookAlikes: 120, seed: 23 });
    const all = pooled(await scorePlants(sets, config, createEmbedder(config.embedder, { stage: 'test' })));
    const share = (kind: string) => {
      const s = all.find((x) => x.kind === kind)!;
      return s.found / s.plants;
    };
    expect(all.map((s) => s.kind)).toEqual(['verbatim', 'paraphrase', 'call', 'translation', 'look-alike']);
    expect(share('verbatim')).toBeGreaterThanOrEqual(0.95);
    expect(share('call')).toBeGreaterThanOrEqual(0.95);
    expect(share('translation')).toBeGreaterThanOrEqual(0.95);
    expect(share('paraphrase')).toBeGreaterThanOrEqual(0.8);
    expect(share('look-alike')).toBeLessThanOrEqual(0.05);
  }, 900_000);
});

const usage = { requests: 0, cached: 0, promptTokens: 0, completionTokens: 0, costUsd: null };

function publish(at: string, name: string, samples: Sample[], pipeline = 'planted'): void {
  new DatasetStore(at).publish({
    name,
    samples,
    tools: [],
    rejects: [],
    manifest: { pipeline, config: {}, fingerprint: name, parent: null, stages: [], usage: { total: usage, byStage: {}, byModel: {} }, models: [], prompts: {}, sources: {}, stats: {} },
  });
}

async function cli(at: string, ...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (t) => out.push(t), err: (t) => err.push(t), home: at, cwd: at, env: {} });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('toolkiln datasets overlap', () => {
  const reference = [
    sample('ref-weather', 'What will the weather be like in Oslo for the next three days, in Celsius please?', [call('c1', 'GetWeather', { city: 'Oslo', unit: 'Celsius', days: 3 })]),
    sample('ref-hotel', 'I need a hotel room in Bergen for two nights starting on Friday next week.', [call('c1', 'BookHotel', { city: 'Bergen', nights: 2 })]),
  ];
  const version = [
    sample('copy', 'What will the weather be like in Oslo for the next three days, in Celsius please?', [], { split: 'train' }),
    sample('fresh', 'Play some jazz in the kitchen while I cook dinner for my family tonight.', [], { split: 'train' }),
  ];

  it('measures a version against a file and another version, writes every hit, and prints a table per reference (--json)', async () => {
    const at = mkdtempSync(join(tmpdir(), 'tk-overlap-'));
    publish(at, 'training', version);
    publish(at, 'test-set', reference);
    writeFileSync(join(at, 'reference.jsonl'), reference.map((s) => JSON.stringify(sampleToLine(s))).join('\n') + '\n');
    const result = await cli(at, 'datasets', 'overlap', 'training@v1', '--against', 'reference.jsonl', '--against', 'test-set@v1', '--threshold', 'embedding=off', '--json');
    expect(result.err).toBe('');
    expect(result.code).toBe(0);
    const report = JSON.parse(result.out);
    expect(report.references.map((r: { name: string; kind: string; samples: number }) => [r.name, r.kind, r.samples])).toEqual([
      ['reference.jsonl', 'file', 2],
      ['test-set@v1', 'version', 2],
    ]);
    expect(report.levels.map((l: { level: string }) => l.level)).toEqual(['ngram-8', 'ngram-13', 'call-exact', 'call-near']);
    expect(report.total['test-set@v1']).toEqual({ 'ngram-8': 1, 'ngram-13': 1, 'call-exact': 0, 'call-near': 0, any: 1 });
    const hits = readFileSync(report.hitsFile, 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    expect(hits.map((h: OverlapHit) => [h.sample, h.reference, h.level, h.match])).toEqual([
      ['copy', 'reference.jsonl', 'ngram-8', 'ref-weather'],
      ['copy', 'reference.jsonl', 'ngram-13', 'ref-weather'],
      ['copy', 'test-set@v1', 'ngram-8', 'ref-weather'],
      ['copy', 'test-set@v1', 'ngram-13', 'ref-weather'],
    ]);
    const text = await cli(at, 'datasets', 'overlap', 'training', '--against', 'test-set@v1', '--show', '1');
    expect(text.out).toContain('against test-set@v1 (version, 2 samples');
    expect(text.out).toMatch(/all\s+2\s+1 \(50\.0%\)\s+1 \(50\.0%\)\s+0 \(0\.0%\)\s+0 \(0\.0%\)\s+1 \(50\.0%\)\s+1 \(50\.0%\)/);
    expect(text.out).toContain('  copy (train/c): ngram-8 1 with test-set@v1 ref-weather');
  });

  it('refuses what it cannot compare with, in one line', async () => {
    const at = mkdtempSync(join(tmpdir(), 'tk-overlap-'));
    publish(at, 'training', version);
    const none = await cli(at, 'datasets', 'overlap', 'training@v1');
    expect(none).toMatchObject({ code: 2, err: 'toolkiln: training@v1 is of recipe planted, which reads no released set: name what to compare with (--against released, a released set, <name>@<version> or a file)' });
    const unknown = await cli(at, 'datasets', 'overlap', 'training@v1', '--against', 'no-such-thing');
    expect(unknown).toMatchObject({ code: 2, err: 'toolkiln: "no-such-thing" is neither a released set (released, mtu-bench, nestools, seal-tools, metatool, tooltalk, acebench), a dataset version (<name>@<version>) nor an existing file' });
    writeFileSync(join(at, 'bad.jsonl'), '{"id": "x"}\n');
    const bad = await cli(at, 'datasets', 'overlap', 'training@v1', '--against', 'bad.jsonl');
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/^toolkiln: .*bad\.jsonl:1: not a canonical sample \(.*\); a reference file holds one sample a line/);
    const threshold = await cli(at, 'datasets', 'overlap', 'training@v1', '--against', 'released', '--threshold', 'embedding=2');
    expect(threshold).toMatchObject({ code: 2, err: 'toolkiln: --threshold embedding=2: the threshold is a number from 0 to 1, or off' });
    expect(threshold.err.split('\n')).toHaveLength(1);
  });
});

describe('the gate at publishing', () => {
  const referenceSamples = [
    sample('ref-weather', 'What will the weather be like in Oslo for the next three days, in Celsius please?', [call('c1', 'GetWeather', { city: 'Oslo', unit: 'Celsius', days: 3 })]),
  ];
  const made = [
    sample('leaked', 'What will the weather be like in Oslo for the next three days, in Celsius please?', [call('c1', 'GetWeather', { city: 'Oslo', unit: 'Celsius', days: 3 })]),
    sample('fresh', 'Book me a hotel in Tromsø for four nights, starting on the first of March.', [call('c1', 'BookHotel', { city: 'Tromsø', nights: 4 })]),
  ];
  const pipelineWith = (mode: 'report' | 'reject', file: string, scanLast = false) =>
    definePipeline({
      name: 'overlapping',
      benchmark: 'planted',
      description: 'two samples, one a copy of a test item',
      configSchema: z.object({ testOverlap: OverlapConfig }),
      sourceFiles: () => [],
      // With a scan stage last, the early gate sees every sample as it is written.
      stages: () => [sourceStage({ name: 'make', version: 1, output: Sample, load: () => made }), ...(scanLast ? [scanStage({ name: 'pass', version: 1, input: Sample, output: Sample, run: (s: Sample) => s })] : [])],
      exports: commonExporters,
      testOverlap: (config) => ({ ...config.testOverlap, mode, against: [file] }),
    });

  it('reports by default: every sample published, the table in the manifest and on the dataset card', async () => {
    const at = mkdtempSync(join(tmpdir(), 'tk-overlap-gate-'));
    const file = join(at, 'test-set.jsonl');
    writeFileSync(file, referenceSamples.map((s) => JSON.stringify(s)).join('\n') + '\n');
    const logged: string[] = [];
    const result = await runPipeline({ pipeline: pipelineWith('report', file), llm: new OfflineGateway(42), home: at, cwd: at, projectDir: PROJECT, progress: { quiet: true }, log: (m) => logged.push(m) });
    const store = new DatasetStore(at);
    expect(versionSamples(store, result.ref!).map((s) => s.id)).toEqual(['leaked', 'fresh']);
    const summary = result.manifest!.stats.testOverlap as OverlapSummary;
    expect(summary).toMatchObject({ mode: 'report', rejected: 0, samples: 2, missing: [] });
    expect(summary.total[file]).toEqual({ 'ngram-8': 1, 'ngram-13': 1, 'call-exact': 1, 'call-near': 1, embedding: 1, any: 1 });
    expect(logged.find((line) => line.startsWith('test overlap:'))).toBe(`test overlap: of 2 samples, at or over a threshold (ngram-8 ≥ 0.5, ngram-13 ≥ 0.5, call-exact ≥ 1, call-near ≥ 1, embedding ≥ 0.8): ${file} 1; reported, none rejected`);
    const out = join(at, 'hf');
    await commonExporters.hf(store.sampleSource(result.ref!), store.tools(result.ref!), out, result.ref!);
    const { body } = readDatasetCard(join(out, 'README.md'));
    const section = body.slice(body.indexOf('## Overlap with test sets'), body.indexOf('## Sources'));
    expect(section).toContain('Samples at or over a threshold were published and counted here');
    expect(section).toContain('| split | category | samples | ngram-8 | ngram-13 | call-exact | call-near | embedding | any |');
    expect(section).toContain('| all |  | 2 | 1 (50.0%) | 1 (50.0%) | 1 (50.0%) | 1 (50.0%) | 1 (50.0%) | 1 (50.0%) |');
  });

  it('rejects a sample over a threshold with the reference sample it matches, when the config says reject', async () => {
    const at = mkdtempSync(join(tmpdir(), 'tk-overlap-gate-'));
    const file = join(at, 'test-set.jsonl');
    writeFileSync(file, referenceSamples.map((s) => JSON.stringify(s)).join('\n') + '\n');
    const result = await runPipeline({ pipeline: pipelineWith('reject', file), llm: new OfflineGateway(42), home: at, cwd: at, projectDir: PROJECT, progress: { quiet: true } });
    const store = new DatasetStore(at);
    expect(versionSamples(store, result.ref!).map((s) => s.id)).toEqual(['fresh']);
    expect(store.tools(result.ref!).map((t) => t.name)).toEqual(['BookHotel', 'GetWeather']);
    expect(versionRejects(store, result.ref!)).toEqual([
      {
        stage: 'test-overlap',
        reason: 'overlap_ngram_8',
        detail: `ngram-8 1 with ${file} ref-weather; ngram-13 1 with ${file} ref-weather; call-exact 1 with ${file} ref-weather; call-near 1 with ${file} ref-weather; embedding 1 with ${file} ref-weather`,
        recordId: 'leaked',
        duplicateOf: 'ref-weather',
        record: made[0],
      },
    ]);
    expect(result.manifest!.stats.testOverlap).toMatchObject({ mode: 'reject', rejected: 1 });
  });

  it('measures the samples as the gate writes them (in memory) as it measures them read back from its files: same summary, same rejects in the same order, same files kept', async () => {
    // Splits written side by side, with samples to reject in two of them: the kept files and the
    // rejects follow the data files' order (split after split), not the order the samples came in.
    const texts = ['I need a hotel room in Bergen for two nights starting on Friday next week.', 'Play some jazz in the kitchen while I cook dinner for my family tonight.', 'What will the weather be like in Oslo for the next three days, in Celsius please?', 'Remind me to call the dentist about my appointment on Thursday afternoon.'];
    const samples = Array.from({ length: 40 }, (_, i) =>
      sample(`s${i}`, `${texts[i % 4]}${i % 3 ? ` (${i})` : ''}`, i % 4 === 2 ? [call('c1', 'GetWeather', { city: 'Oslo', unit: 'Celsius', days: 3 })] : [call('c1', 'BookHotel', { city: `Town ${i}`, nights: i })], { split: ['train', 'test', 'ood'][i % 3], category: `k${i % 2}` }),
    );
    const references = [...referenceSamples, sample('ref-hotel', texts[0], [call('c1', 'BookHotel', { city: 'Bergen', nights: 2 })])];
    for (const mode of ['report', 'reject'] as const) {
      const outcomes: { summary: OverlapSummary; rejects: Rejection[]; kept: string[][]; tools?: string[] }[] = [];
      for (const inMemory of [false, true]) {
        const at = mkdtempSync(join(tmpdir(), 'tk-overlap-memory-'));
        const files = new SampleFiles(join(at, 'data'));
        for (const s of samples) files.add(s);
        const prepared = files.close();
        const options = {
          config: OverlapConfig.parse({ mode }),
          references: [{ name: 'planted', kind: 'file' as const, path: '-', samples: () => references }],
          missing: [],
          embedder: createEmbedder(OverlapConfig.parse({}).embedder, { stage: 'test' }),
          dir: join(at, 'publish'),
          toolLibrary: () => new DistinctTools(),
        };
        let result;
        if (inMemory) {
          const measuring = (await OverlapAtPublishing.start(options))!;
          for (const s of samples) measuring.add(s);
          result = await measuring.end(prepared);
        } else result = await overlapForPublishing(prepared, options);
        const kept = Object.keys(result.prepared.splits).map((split) => [split, readFileSync(join(result.prepared.dir, `${split}.jsonl`), 'utf8')]);
        outcomes.push({ summary: result.summary, rejects: [...result.rejects()], kept, tools: result.tools?.map((t) => t.name) });
      }
      expect(outcomes[1]).toEqual(outcomes[0]);
      expect(outcomes[0].summary.total.planted.any).toBeGreaterThan(10);
      if (mode === 'reject') {
        expect(outcomes[0].rejects.map((r) => r.recordId)).toEqual(
          ['train', 'test', 'ood'].flatMap((split) => outcomes[0].rejects.filter((r) => (r.record as Sample).split === split).map((r) => r.recordId)),
        );
        expect(new Set(outcomes[0].rejects.map((r) => (r.record as Sample).split)).size).toBeGreaterThan(1);
        expect(outcomes[0].rejects.length).toBe(outcomes[0].summary.rejected);
      }
    }
  });

  it('publishes after a resume, its last stage run in an earlier process and its files measured, what a run in one go publishes', async () => {
    const at = mkdtempSync(join(tmpdir(), 'tk-overlap-resume-'));
    const file = join(at, 'test-set.jsonl');
    writeFileSync(file, referenceSamples.map((s) => JSON.stringify(s)).join('\n') + '\n');
    const run = (home: string, more: Partial<Parameters<typeof runPipeline>[0]> = {}) => runPipeline({ pipeline: pipelineWith('reject', file, true), llm: new OfflineGateway(42), home, cwd: at, projectDir: PROJECT, progress: { quiet: true }, ...more });
    // Stopped after its last stage (too few samples for the yield asked), then resumed.
    const stopped = await run(join(at, 'resumed'), { minYield: 2 }).catch((error: Error) => error);
    const runId = /--resume (\S+)/.exec(String((stopped as Error).message))![1];
    const resumed = await run(join(at, 'resumed'), { resume: runId });
    const inOneGo = await run(join(at, 'one-go'));
    const published = (result: typeof inOneGo, home: string) => {
      const store = new DatasetStore(join(at, home));
      return { samples: versionSamples(store, result.ref!), rejects: versionRejects(store, result.ref!), tools: store.tools(result.ref!), overlap: result.manifest!.stats.testOverlap };
    };
    expect(published(resumed, 'resumed')).toEqual(published(inOneGo, 'one-go'));
    expect(published(resumed, 'resumed').rejects.map((r) => r.recordId)).toEqual(['leaked']);
  });

  it('reads a released set once for the run: the gate indexes the samples the statistics stage then counts', async () => {
    const at = mkdtempSync(join(tmpdir(), 'tk-overlap-released-'));
    const dir = join(at, 'released');
    mkdirSync(dir);
    const reads: string[] = [];
    const set: ReleasedSamples = { name: 'planted-set', path: dir, files: 'none', read: (path) => (reads.push(path), { samples: () => referenceSamples }) };
    const statistics = statisticsBesideReleased<number, number>({
      version: 1,
      title: 'counted',
      figures: () => 1,
      tally: listTally((figures) => figures.length),
      released: { set, path: dir, setting: 'reference' },
      close: (ours, released) => ({ reports: { counted: { ours, released } }, table: '' }),
    });
    const pipeline = definePipeline({
      name: 'released-once',
      benchmark: 'planted',
      description: 'two samples beside a released set of one',
      configSchema: z.object({ testOverlap: OverlapConfig }),
      sourceFiles: () => [],
      stages: () => [sourceStage({ name: 'make', version: 1, output: Sample, load: () => made }), statistics],
      exports: commonExporters,
      released: [set],
      testOverlap: (config) => ({ ...config.testOverlap, mode: 'report', against: [] }),
    });
    const result = await runPipeline({ pipeline, llm: new OfflineGateway(42), home: at, cwd: at, projectDir: PROJECT, progress: { quiet: true } });
    expect(reads).toEqual([dir]);
    expect(result.manifest!.stats.counted).toEqual({ ours: 2, released: 1 });
    expect((result.manifest!.stats.testOverlap as OverlapSummary).total['planted-set'].any).toBe(1);
  });

  it('stops before the run when a reference the config names is not there', async () => {
    const at = mkdtempSync(join(tmpdir(), 'tk-overlap-gate-'));
    await expect(runPipeline({ pipeline: pipelineWith('reject', 'missing@v1'), llm: new OfflineGateway(42), home: at, cwd: at, projectDir: PROJECT, progress: { quiet: true } })).rejects.toThrow('no dataset named "missing" in');
  });
});

describe.skipIf(!HAVE_RELEASED)('a released set as the reference (needs ../shared/data)', () => {
  it('finds every record of a released set in itself, at every level its records have', async () => {
    const samples = releasedSamples('tooltalk');
    const hits = new Map<string, Set<string>>();
    const report = await measureOverlap(samples, [{ name: 'tooltalk', kind: 'released', path: '-', samples: () => samples }], {
      config: OverlapConfig.parse({}),
      embedder: createEmbedder(OverlapConfig.parse({}).embedder, { stage: 'test' }),
      onSample: (s, h) => hits.set(s.id, new Set(h.map((x) => x.level))),
    });
    expect(report.total.tooltalk.any).toBe(samples.length);
    expect(report.total.tooltalk['ngram-8']).toBe(samples.length);
    expect(report.total.tooltalk.embedding).toBe(samples.length);
  }, 300_000);
});
