import { describe, expect, it } from 'vitest';
import { OfflineGateway } from '../core/llm/offline.ts';
import { applyScanStage, standaloneContext } from '../core/stage.ts';
import { Sample } from '../core/records.ts';
import { pipelines } from '../pipelines/index.ts';
import { NesToolsConfig } from '../pipelines/nestools.ts';
import { dedupeStage } from '../stages/nestools/dedupe.ts';
import { computeStatistics, statisticsStage, viewOfSample } from '../stages/nestools/statistics.ts';

/**
 * Memory at scale: every recipe starts from a source and no later stage is handed its input as one
 * array (there is no such stage kind): whole-set steps are scan stages that keep a projection.
 */
describe('every recipe: one source, then per-record and scan stages', () => {
  for (const name of Object.keys(pipelines)) {
    it(name, () => {
      const kinds = pipelines[name].stages(pipelines[name].configSchema.parse({})).map((stage) => stage.kind);
      expect(kinds[0]).toBe('source');
      expect(kinds.slice(1).filter((kind) => kind !== 'map' && kind !== 'scan')).toEqual([]);
    });
  }
  it('NesTools importing a file starts from a source too', () => {
    expect(pipelines.nestools.stages(NesToolsConfig.parse({ importFile: 'x.jsonl' }))[0].kind).toBe('source');
  });
});

describe('NesTools whole-set stages as scans', () => {
  const ctx = () => standaloneContext({ llm: new OfflineGateway(42), runDir: '/nonexistent' });
  const call = (tool: string, value: string) => ({ id: 'c1', tool, arguments: { q: value } });
  const sample = (id: string, task: string, value: string): Sample =>
    Sample.parse({
      id,
      benchmark: 'nestools',
      category: 'nestools',
      split: 'test',
      tools: [{ name: 'find', description: 'finds', parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] }, returns: { type: 'object', properties: {}, required: [] } }],
      dialogue: [{ role: 'user', content: task }],
      expected: { calls: [call('find', value)] },
      meta: { source: { dataset: 'nestools' }, lineage: [], checks: [], tags: [] },
    });

  it('dedupe rejects a repeated id and a repeated task over the same calls, naming the first', async () => {
    const samples = [sample('a', 'Find x', 'x'), sample('a', 'Find y', 'y'), sample('b', 'find X', 'x'), sample('c', 'Find x', 'z')];
    const { out, rejects } = await applyScanStage(dedupeStage(), samples, ctx());
    expect(out.map((s) => s.id)).toEqual(['a', 'c']);
    expect(rejects.map((r) => [r.recordId, r.reason, r.duplicateOf])).toEqual([
      ['a', 'duplicate', 'a'],
      ['b', 'duplicate', 'a'],
    ]);
  });

  it('statistics pass the samples through and report the figures of the whole set', async () => {
    const samples = [sample('a', 'Find x', 'x'), sample('b', 'Find y', 'nothing')];
    const context = ctx();
    const { out } = await applyScanStage(statisticsStage({}), samples, context);
    expect(out).toEqual(samples);
    expect(context.reports['nestools.statistics']).toEqual({ generated: computeStatistics(samples.map(viewOfSample)) });
    expect((context.reports['nestools.statistics'] as { generated: { samples: number; values: { exact: number; missing: number } } }).generated).toMatchObject({ samples: 2, values: { exact: 1, missing: 1 } });
  });
});
