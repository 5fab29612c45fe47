import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { UserError } from '../core/errors.ts';
import { OfflineGateway } from '../core/llm/offline.ts';
import type { Sample } from '../core/records.ts';
import { resolveConfig, runPipeline, type RunPipelineResult } from '../core/run.ts';
import { DatasetStore } from '../core/store.ts';
import { mtuPipeline } from '../pipelines/mtu.ts';
import { categoryOf } from '../stages/mtu/sample.ts';
import { capacity, choose, steerCompositionStage, trimmedLength, trimSample } from '../stages/mtu/steer.ts';
import { applyScanStage } from '../core/stage.ts';
import { isRef } from '../core/records.ts';
import { stageContext } from './fixtures/mtu/context.ts';
import { call, handSample, round, tool } from './fixtures/mtu/samples.ts';
import { fromFixtures } from './fixtures/mtu/paths.ts';
import { versionSamples, versionRejects } from './helpers/version.ts';

const PROJECT = new URL('..', import.meta.url).pathname;

/** ATIS valid (single-turn) and SGD dev (multi-turn) with a random test split; no hard variants, so the test split is what the steering chose. */
const base = {
  sources: { snips: { enabled: false }, atis: { splits: ['valid'] }, sgd: { splits: ['dev'] }, multiwoz: { enabled: false } },
  splits: { mode: 'random', testFraction: 0.3, oodDomains: ['Weather', 'RideSharing'] },
  hard: { nonsensicalNameRate: 0, noSuitableToolRate: 0 },
};
const targets = { mix: { 'S-S': 0.2, 'S-M': 0.15, 'M-S': 0.4, 'M-M': 0.25 }, noCall: { 'S-S': 0, 'S-M': 0, 'M-S': 0.6, 'M-M': 0.6 } };
/** How far a steered run's shares may land from their targets (a setting's last dialogue holds several records). */
const TOLERANCE = 0.02;

interface Composition {
  mix: Record<string, number>;
  noCall: Record<string, number>;
}
interface Steering {
  ours: Composition;
  reference: Composition;
  before: Composition;
  built: Record<string, number>;
  builtDependentCalls: number;
  trimmed: { samples: number; records: number };
  rejected: Record<string, number>;
  unreachable: string[];
}

async function run(overrides: unknown): Promise<{ result: RunPipelineResult; store: DatasetStore }> {
  const home = mkdtempSync(join(tmpdir(), 'tk-mtu-steer-'));
  const result = await runPipeline({ pipeline: mtuPipeline, configOverrides: overrides, llm: new OfflineGateway(42), home, projectDir: PROJECT, cwd: PROJECT, progress: { quiet: true } });
  return { result, store: new DatasetStore(home) };
}

/** Records (answered user turns) of a sample. */
const recordsOf = (s: Sample) => s.dialogue.filter((t, i) => t.role === 'assistant' && s.dialogue[i - 1]?.role === 'user').length;

describe('steering the test split toward targets.mix / targets.noCall', () => {
  let plain: Awaited<ReturnType<typeof run>>;
  let steered: Awaited<ReturnType<typeof run>>;
  let again: Awaited<ReturnType<typeof run>>;
  beforeAll(async () => {
    plain = await run({ ...base, targets });
    steered = await run({ ...base, targets: { ...targets, steer: true } });
    again = await run({ ...base, targets: { ...targets, steer: true } });
  }, 600_000);

  it('reaches the mix and the no-call shares within the stated tolerance, measured on the published test split', () => {
    const report = steered.result.manifest!.stats.mtuSteering as Steering;
    // The fixture's ood dialogues all call no tool in most turns: the released 29 % cannot be met there, and says so.
    expect(report.unreachable).toEqual(['OOD: no-call target 29 %, but no ood records can be brought to it; they are kept as they are']);
    const test = versionSamples(steered.store, steered.result.ref!).filter((s) => s.split === 'test');
    const total = test.reduce((n, s) => n + recordsOf(s), 0);
    for (const [setting, share] of Object.entries(targets.mix)) {
      const records = test.filter((s) => categoryOf(s) === setting).reduce((n, s) => n + recordsOf(s), 0);
      expect(Math.abs(records / total - share), setting).toBeLessThanOrEqual(TOLERANCE);
      expect(Math.abs(report.ours.mix[setting] - share), setting).toBeLessThanOrEqual(TOLERANCE);
    }
    for (const [setting, share] of Object.entries(targets.noCall)) if (setting !== 'OOD') expect(Math.abs(report.ours.noCall[setting] - share), setting).toBeLessThanOrEqual(TOLERANCE);
    // The run without steering is far from the same targets: the steering made the difference.
    const before = plain.result.manifest!.stats.mtuComposition as { ours: Composition };
    expect(Math.abs(before.ours.mix['S-S'] - targets.mix['S-S'])).toBeGreaterThan(0.1);
    expect(report.reference.mix).toEqual(targets.mix);
  });

  it('rejects every dropped sample with the target it exceeds, and accounts for every record', () => {
    const stage = steered.result.stats.find((s) => s.stage === 'steer-composition')!;
    expect(stage.out + stage.rejected - stage.fanned).toBe(stage.in);
    const rejects = versionRejects(steered.store, steered.result.ref!).filter((r) => r.stage === 'steer-composition');
    expect(rejects.length).toBe(stage.rejected);
    expect(rejects.length).toBeGreaterThan(0);
    for (const r of rejects) expect(r.reason).toMatch(/^(category mix target: (S-S|S-M|M-S|M-M) above its \d+ % share|no-call target: (S-S|S-M|M-S|M-M|OOD) no-call records (above|below) its \d+ % share|no-call target: trailing no-call turns trimmed)$/);
    expect(rejects.some((r) => r.reason === 'category mix target: S-S above its 20 % share')).toBe(true);
    // Every test sample that went in is published (as it was, or trimmed under a new id) or rejected.
    const published = versionSamples(steered.store, steered.result.ref!);
    const kept = new Set(published.flatMap((s) => [s.id, String((s.meta as { mtu?: { trimmedFrom?: string } }).mtu?.trimmedFrom ?? '')]));
    const dropped = new Set(rejects.filter((r) => !r.reason.endsWith('trimmed')).map((r) => r.recordId));
    const plainTest = versionSamples(plain.store, plain.result.ref!).filter((s) => s.split === 'test' && !s.meta.tags.includes('steer:built'));
    for (const s of plainTest.filter((x) => !x.meta.tags.some((t) => t.startsWith('composed:')))) expect(kept.has(s.id) || dropped.has(s.id), s.id).toBe(true);
    const report = steered.result.manifest!.stats.mtuSteering as Steering;
    expect(Object.values(report.rejected).reduce((a, b) => a + b, 0)).toBe(rejects.filter((r) => !r.reason.endsWith('trimmed')).length);
    expect(report.trimmed.samples).toBe(rejects.filter((r) => r.reason.endsWith('trimmed')).length);
  });

  it('builds the M-M and S-M dialogues the targets want more of, and trims trailing no-call turns', () => {
    const report = steered.result.manifest!.stats.mtuSteering as Steering;
    expect(report.built['M-M']).toBeGreaterThan(0);
    expect(report.built['S-M']).toBeGreaterThan(0);
    expect(report.trimmed.records).toBeGreaterThan(0);
    const published = versionSamples(steered.store, steered.result.ref!);
    expect(published.filter((s) => s.meta.tags.includes('steer:built')).length).toBe(report.built['M-M'] + report.built['S-M']);
    for (const s of published.filter((x) => x.meta.tags.includes('steer:trimmed'))) expect(s.dialogue.at(-1)!.role).toBe('assistant');
  });

  it('gives the same bytes for the same seed', () => {
    expect(again.result.manifest!.files).toEqual(steered.result.manifest!.files);
    expect(again.result.fingerprint).toBe(steered.result.fingerprint);
  });
});

describe('targets the data cannot meet, and invalid targets', () => {
  it('reports a setting with nothing to build it from, and keeps the others at their shares relative to each other', async () => {
    // ATIS alone: single-turn requests only, so no M-S or M-M dialogue exists or can be composed.
    const { result } = await run({ ...base, sources: { ...base.sources, sgd: { enabled: false } }, targets: { mix: { 'S-S': 0.5, 'S-M': 0.25, 'M-S': 0.1, 'M-M': 0.15 }, steer: true } });
    const report = result.manifest!.stats.mtuSteering as Steering;
    expect(report.unreachable.join('\n')).toMatch(/^M-S: target 10 % of the test records, but the test split has no M-S dialogue/m);
    expect(report.unreachable.join('\n')).toMatch(/^M-M: target 15 % of the test records, but the test split has no M-M dialogue and none could be built \(no multi-turn dialogue to compose from\)/m);
    // S-S : S-M stays 2 : 1.
    expect(Math.abs(report.ours.mix['S-S'] / report.ours.mix['S-M'] - 2)).toBeLessThan(0.15);
  }, 600_000);

  it('refuses shares that do not sum to 1 and unknown settings, naming the config key', () => {
    const resolve = (t: unknown) => () => resolveConfig(mtuPipeline, { targets: t }, 'steer.json');
    expect(resolve({ mix: { 'S-S': 0.5, 'M-S': 0.2 } })).toThrow(UserError);
    expect(resolve({ mix: { 'S-S': 0.5, 'M-S': 0.2 } })).toThrow(/steer\.json: invalid mtu config: targets\.mix: the shares sum to 0\.7, not 1/);
    expect(resolve({ mix: { 'S-S': 0.5, 'X-Y': 0.5 } })).toThrow(/targets\.mix: Unrecognized key: "X-Y"/);
    expect(resolve({ noCall: { 'S-S': 1.5 } })).toThrow(/targets\.noCall\.S-S/);
    expect(resolve({ mix: { 'S-S': 0.25, 'S-M': 0.25, 'M-S': 0.25, 'M-M': 0.255 }, steer: true })).not.toThrow();
  });
});

describe('the steering steps', () => {
  const turn = (role: 'user' | 'assistant', content: string, call?: boolean) => ({ role, content, ...(call ? { calls: [{ id: `c${content}`, tool: 'T', arguments: {} }] } : {}) });
  const dialogue = (pattern: string): Sample => {
    const turns = [...pattern].flatMap((c, i) => [turn('user', `u${i}`), turn('assistant', `${i}`, c === 'C')]);
    return { id: `s-${pattern}`, benchmark: 'mtu', category: 'M-S', split: 'test', tools: [], dialogue: turns, expected: { calls: [], turns: Object.fromEntries(turns.flatMap((t, i) => (t.role === 'assistant' ? [[String(i), t.calls ?? []]] : []))) }, meta: { lineage: [], checks: [], tags: [], mtu: { services: [], domains: [], sourceSplit: 'dev', situations: {} } } } as unknown as Sample;
  };

  it('trims only trailing no-call turns, keeping two user turns, and says which turns went', () => {
    expect(trimmedLength([true, false, true, true])).toBe(2);
    expect(trimmedLength([false, true, true, true])).toBe(2);
    expect(trimmedLength([true, true, false, false, true])).toBe(4);
    expect(trimmedLength([true, true, true])).toBe(2);
    const { sample, dropped } = trimSample(dialogue('NCNN'), 2, { stage: 'steer-composition', version: 1 });
    expect(sample.dialogue.map((t) => t.content)).toEqual(['u0', '0', 'u1', '1']);
    expect(Object.keys(sample.expected.turns!)).toEqual(['1', '3']);
    expect(dropped.map((t) => t.content)).toEqual(['u2', '2', 'u3', '3']);
    expect(sample.id).not.toBe('s-NCNN');
  });

  it('keeps the most records a no-call share allows, chosen toward that share', () => {
    const item = (id: string, noCall: boolean[]) => ({ id, group: 'M-S' as const, records: noCall.length, noCall, composedSource: false });
    const items = [item('a', [true, true, true, false]), item('b', [true, false]), item('c', [false, false]), item('d', [true, true, false])];
    // 11 records, 6 no-call; at most 50 %: c, b, d (7 records, 3 no-call) — adding a goes over.
    expect(capacity(items, 0.5)).toBe(7);
    expect(capacity(items, undefined)).toBe(11);
    const chosen = choose(items, 7, 0.5);
    const picked = items.filter((i) => chosen.has(i.id));
    expect(picked.reduce((n, i) => n + i.noCall.length, 0)).toBeLessThanOrEqual(7);
    expect(picked.flatMap((i) => i.noCall).filter(Boolean).length / picked.flatMap((i) => i.noCall).length).toBeLessThanOrEqual(0.5);
  });
});

describe('M-M dialogues built with dependent calls first', () => {
  const search = tool('SearchHotel', { location: {} }, ['location'], ['place_name', 'location']);
  const reserve = tool('ReserveHotel', { place_name: {}, stay_length: {} }, ['place_name'], ['place_name']);
  const find = tool('FindCity', { country: {} }, ['country'], ['city'], 'cities');
  const weather = tool('GetWeather', { city: {} }, ['city'], ['temperature'], 'weather');
  const music = tool('PlayMusic', { song: {} }, [], [], 'music');

  it('turns a dialogue\'s own chain, then a call whose result a joined request takes, into M-M turns with a `Tool.field` argument', async () => {
    const booking = handSample('booking', [search, reserve], [
      round('Find me a hotel in Paris.', [call('call_0', 'SearchHotel', { location: 'Paris' })], { call_0: { place_name: 'Grand Hotel', location: 'Paris' } }),
      round('Book it for 2 nights.', [call('call_1', 'ReserveHotel', { place_name: 'Grand Hotel', stay_length: '2' })], { call_1: { place_name: 'Grand Hotel' } }),
      round('Thanks, that is all.'),
    ]);
    const cities = handSample('cities', [find], [
      round('Which city in France is biggest?', [call('call_0', 'FindCity', { country: 'France' })], { call_0: { city: 'Paris' } }),
      round('And in Spain?', [call('call_1', 'FindCity', { country: 'Spain' })], { call_1: { city: 'Madrid' } }),
    ]);
    const singles = [
      handSample('w1', [weather], [round('Weather in Paris?', [call('call_0', 'GetWeather', { city: 'Paris' })])]),
      handSample('m1', [music], [round('Play Yesterday.', [call('call_0', 'PlayMusic', { song: 'Yesterday' })])]),
    ];
    const stage = steerCompositionStage({
      targets: { mix: { 'S-S': 0.2, 'S-M': 0, 'M-S': 0.4, 'M-M': 0.4 }, steer: true },
      reference: '/nonexistent/mtu-eval',
      compose: { singleTurnRate: 0, minTools: 2, maxTools: 2, chainRate: 0, multiTurnRate: 0, chainMultiTurnRate: 0, linkRate: 1 },
    });
    const ctx = stageContext();
    const { out } = await applyScanStage(stage, [booking, cities, ...singles], ctx);
    const built = out.filter((s) => s.meta.tags.includes('steer:built'));
    expect(built.map((s) => s.meta.tags.find((t) => t.startsWith('composed:'))).sort()).toEqual(['composed:chained-multi-turn', 'composed:multi-turn']);
    for (const s of built) {
      expect(categoryOf(s)).toBe('M-M');
      // The message is this stage's answer: its lineage names it, not the composition stage.
      expect(s.meta.lineage.map((e) => [e.stage, e.prompt, e.model])).toEqual([['steer-composition', 'mtu/compose', 'offline-template']]);
      expect(s.expected.calls!.filter((c) => Object.values(c.arguments).some(isRef)), s.id).toHaveLength(1);
    }
    expect(ctx.reports.mixSteering).toMatchObject({ built: { 'M-M': 2 }, builtDependentCalls: 2, unreachable: [] });
  });
});
