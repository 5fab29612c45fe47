import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { OfflineGateway } from '../core/llm/offline.ts';
import { Sample, type Rejection } from '../core/records.ts';
import { runPipeline, type RunPipelineResult } from '../core/run.ts';
import { DatasetStore } from '../core/store.ts';
import { mtuPipeline } from '../pipelines/mtu.ts';
import { sampleToChat } from '../stages/export/openai-chat.ts';
import { exportMtu } from '../stages/mtu/export.ts';
import { parseMtuRecord } from '../stages/mtu/mtu-format.ts';
import { allCalls, assistantIndexes, categoryOf, mtuMeta, turnCalls } from '../stages/mtu/sample.ts';
import { loadMtuSources } from '../stages/mtu/load-sources.ts';
import { MtuConfig } from '../stages/mtu/config.ts';
import { fromFixtures } from './fixtures/mtu/paths.ts';
import { samplesInMemory } from '../core/sample-source.ts';
import { versionSamples, versionRejects } from './helpers/version.ts';

const PROJECT = new URL('..', import.meta.url).pathname;

/** A small run over every kind of source: ATIS valid, SGD dev, MultiWOZ and plain-dialogue fixtures (SNIPS has its loader test). */
const overrides = {
  sources: {
    snips: { enabled: false },
    atis: { splits: ['valid'] },
    sgd: { splits: ['dev'] },
    multiwoz: { dialogues: fromFixtures('multiwoz/dialogues'), splits: ['test'] },
    generic: [{ name: 'shop', file: fromFixtures('generic/dialogues.jsonl'), domain: 'Restaurants' }],
  },
  splits: { mode: 'random', testFraction: 0.3, oodDomains: ['Weather', 'RideSharing'] },
  hard: { nonsensicalNameRate: 0.2, noSuitableToolRate: 0.2 },
  compose: { chainRate: 1 },
};

async function run(home: string): Promise<RunPipelineResult> {
  return runPipeline({ pipeline: mtuPipeline, configOverrides: overrides, llm: new OfflineGateway(42), home, projectDir: PROJECT, cwd: PROJECT, progress: { quiet: true } });
}

describe('a full offline MTU run', () => {
  let home: string;
  let result: RunPipelineResult;
  let samples: Sample[];
  let rejects: Rejection[];
  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), 'tk-mtu-run-'));
    result = await run(home);
    const store = new DatasetStore(home);
    samples = versionSamples(store, result.ref!);
    rejects = versionRejects(store, result.ref!);
  });

  it('accounts for every input: each stage takes what the one before gave, in = out + rejected − fanned', () => {
    expect(result.status).toBe('published');
    const stats = result.stats;
    expect(stats.map((s) => s.stage)).toEqual([
      'load-sources', 'create-tools', 'unify-tool-specs', 'merge-tools-mtu', 'document-tools', 'assign-splits',
      'compose-multi-tool', 'synthesize-react', 'quality-filter', 'categorize-hard', 'statistics', 'candidate-tools',
    ]);
    expect(stats[0].out).toBe(500 + 128 + 2 + 3);
    for (let i = 1; i < stats.length; i++) {
      expect(stats[i].in, stats[i].stage).toBe(stats[i - 1].out);
      expect(stats[i].out + stats[i].rejected - stats[i].fanned, stats[i].stage).toBe(stats[i].in);
      // Only the composition and the hard set add records; no stage loses one without a reason.
      if (!['compose-multi-tool', 'categorize-hard'].includes(stats[i].stage)) expect(stats[i].fanned, stats[i].stage).toBe(0);
      expect(Object.values(stats[i].rejectsByReason).reduce((a, b) => a + b, 0)).toBe(stats[i].rejected);
    }
    const manifest = result.manifest!;
    const made = manifest.stats.composition as { made: Record<string, number> };
    expect(stats.find((s) => s.stage === 'compose-multi-tool')!.fanned).toBe(Object.values(made.made).reduce((a, b) => a + b, 0));
    // The publish gate (shared invariants) rejects after the last stage.
    const gated = rejects.filter((r) => r.stage === 'invariants').length;
    expect(samples).toHaveLength(stats.at(-1)!.out - gated);
    expect(rejects).toHaveLength(stats.reduce((n, s) => n + s.rejected, 0) + gated);
    expect(manifest.counts.samples).toBe(samples.length);
  });

  it('traces every loaded dialogue to a published sample or a rejection with its reason', () => {
    const config = MtuConfig.parse(overrides);
    const loaded = [...loadMtuSources(config, (p) => (p.startsWith('/') ? p : join(PROJECT, p)))];
    const published = new Set(samples.map((s) => `${s.meta.source?.dataset}/${s.meta.source?.id}`));
    const rejected = new Set(
      rejects.map((r) => {
        const record = r.record as { source?: string; id?: string; meta?: { source?: { dataset: string; id: string } } };
        return record.meta?.source ? `${record.meta.source.dataset}/${record.meta.source.id}` : `${record.source}/${record.id}`;
      }),
    );
    const lost = loaded.filter((d) => !published.has(`${d.source}/${d.id}`) && !rejected.has(`${d.source}/${d.id}`));
    expect(lost).toEqual([]);
    for (const r of rejects) expect(r.reason).toMatch(/^[a-z_]+$/);
  });

  it('publishes valid samples in every setting, with their gold tools among the candidates', () => {
    const categories = new Set(samples.map((s) => s.category));
    expect([...categories].sort()).toEqual(['M-M', 'M-S', 'S-M', 'S-S']);
    expect(new Set(samples.map((s) => s.split))).toEqual(new Set(['train', 'test', 'ood']));
    for (const sample of samples) {
      expect(Sample.safeParse(sample).success).toBe(true);
      expect(sample.category).toBe(categoryOf(sample));
      const names = sample.tools.map((t) => t.name);
      for (const call of allCalls(sample)) expect(names, sample.id).toContain(call.tool);
      for (const i of assistantIndexes(sample)) {
        const turn = sample.dialogue[i];
        expect(turn.response, sample.id).toBeTruthy();
        expect(turn.thought, sample.id).toBeTruthy();
        for (const call of turnCalls(sample, i)) expect(turn.observations?.[call.id], `${sample.id} ${call.id}`).toBeDefined();
      }
      if (sample.meta.tags.includes('hard')) expect(sample.split).toBe('test');
    }
    expect(samples.some((s) => mtuMeta(s).hard?.includes('no-suitable-tool'))).toBe(true);
    expect(samples.some((s) => s.meta.tags.includes('composed:independent'))).toBe(true);
    expect(samples.some((s) => s.meta.tags.includes('composed:multi-turn'))).toBe(true);
  });

  it('observes MultiWOZ calls in its databases and plain dialogues through LLM-made tools', () => {
    const multiwoz = samples.filter((s) => s.meta.source?.dataset === 'multiwoz');
    expect(multiwoz.map((s) => s.meta.source?.id).sort()).toEqual(['test/FIX0001.json', 'test/FIX0002.json']);
    const observed = (sample: Sample, tool: string) => {
      for (const i of assistantIndexes(sample)) for (const c of turnCalls(sample, i)) if (c.tool === tool) return sample.dialogue[i].observations?.[c.id] as Record<string, unknown>;
      return undefined;
    };
    const hotels = multiwoz.find((s) => s.meta.source?.id === 'test/FIX0001.json')!;
    expect(observed(hotels, 'FindHotel')).toMatchObject({ name: 'city centre north b and b', area: 'north', pricerange: 'cheap' });
    expect(observed(hotels, 'BookHotel')).toMatchObject({ name: 'worth house', reference: expect.stringMatching(/^[A-Z0-9]{8}$/) });
    // The plain dialogues' LLM-made tools include a FindRestaurant too: each is named by its source.
    expect(observed(hotels, 'FindRestaurantMultiwoz')).toMatchObject({ food: 'italian', area: 'centre', pricerange: 'expensive' });
    const trains = multiwoz.find((s) => s.meta.source?.id === 'test/FIX0002.json')!;
    expect(observed(trains, 'FindTrain')).toMatchObject({ trainID: 'TR7075' });
    expect(observed(trains, 'BookTaxi')).toMatchObject({ phone: expect.stringMatching(/^\d{10}$/) });

    // LLM-made tools of a plain-dialogue source; one the publish gate rejected (a tool name the library also has with other parameters) is still looked at.
    const gated = rejects.filter((r) => r.stage === 'invariants').map((r) => r.record as Sample);
    const shop = [...samples, ...gated].filter((s) => s.meta.source?.dataset === 'shop');
    expect(shop.length).toBeGreaterThan(0);
    for (const sample of shop) {
      const situations = mtuMeta(sample).situations;
      for (const i of assistantIndexes(sample)) expect(situations[String(i)] === 'api_call').toBe(turnCalls(sample, i).length > 0 || mtuMeta(sample).variantOf !== undefined);
    }
    expect(rejects.find((r) => (r.record as { id?: string }).id === 'shop-3')).toMatchObject({ stage: 'create-tools', reason: 'no_tool_call' });
  });

  it('reports statistics beside the released MTU-Eval figures', () => {
    const stats = result.manifest!.stats.mtuStatistics as { ours: Record<string, Record<string, { dialogues: number }>>; released: Record<string, { records: number; dialogues: number }>; tools: { created: number } };
    expect(stats.released['S-S']).toMatchObject({ records: 104, dialogues: 104 });
    expect(stats.released['M-S']).toMatchObject({ records: 473, dialogues: 85 });
    const ours = Object.values(stats.ours.test ?? {}).reduce((n, f) => n + f.dialogues, 0) + Object.values(stats.ours.train ?? {}).reduce((n, f) => n + f.dialogues, 0) + (stats.ours.ood?.OOD?.dialogues ?? 0);
    expect(ours).toBe(samples.length + rejects.filter((r) => r.stage === 'invariants').length);
    expect(stats.tools.created).toBeGreaterThanOrEqual(25);
    const printed = readFileSync(join(result.ref!.dir, 'reports', 'mtu-statistics.txt'), 'utf8');
    expect(printed).toMatch(/^setting +train dlg\/rec +test dlg\/rec/);
    expect(printed).toContain('104 / 104'); // MTU-Eval S-S: dialogues / records
  });

  it('exports MTU records that parse to the gold calls, and OpenAI chat records with tool calls', async () => {
    const out = mkdtempSync(join(tmpdir(), 'tk-mtu-run-export-'));
    const files = await exportMtu(samplesInMemory(samples), [], out);
    const index = readFileSync(join(out, 'index.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { id: string; file: string; sample: string });
    const byId = new Map(samples.map((s) => [s.id, s]));
    let records = 0;
    for (const file of files.filter((f) => !f.endsWith('index.jsonl'))) {
      const rows = readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
      for (const row of rows) {
        const parsed = parseMtuRecord(row);
        const entry = index.find((e) => e.id === row.id && file.endsWith(e.file))!;
        const sample = byId.get(entry.sample)!;
        expect(parsed.tools.map((t) => t.name)).toEqual(sample.tools.map((t) => t.name));
        expect(Object.keys(row.answer).filter((tool) => tool !== '').length).toBe(parsed.calls.length); // {"": {}} is no call
        records++;
      }
    }
    expect(records).toBe(index.length);
    const chat = sampleToChat(samples.find((s) => s.category === 'S-M')!);
    expect(chat.messages.some((m) => m.tool_calls && m.tool_calls.length > 1)).toBe(true);
  });

  it('gives the same bytes on a second run', async () => {
    const again = await run(mkdtempSync(join(tmpdir(), 'tk-mtu-run-again-')));
    expect(again.manifest!.files).toEqual(result.manifest!.files);
    expect(again.fingerprint).toBe(result.fingerprint);
  });
});
