import { describe, expect, it } from 'vitest';
import { OfflineGateway } from '../core/llm/offline.ts';
import { applyScanStage, standaloneContext } from '../core/stage.ts';
import { Sample } from '../core/records.ts';
import { pipelines } from '../pipelines/index.ts';
import { NesToolsConfig } from '../pipelines/nestools.ts';
import { TooleConfig } from '../pipelines/toole.ts';
import { dedupeStage } from '../stages/nestools/dedupe.ts';
import { computeStatistics, statisticsStage, viewOfSample } from '../stages/nestools/statistics.ts';

/**
 * Memory at scale: after the loader, no stage of ToolE or NesTools is handed its whole input as
 * one array (a batch stage); whole-set steps are scan stages that keep a projection.
 */
describe('whole-set stages keep a projection, not the records', () => {
  const batchStagesAfterLoader = (name: string, config: unknown) =>
    pipelines[name]
      .stages(config)
      .slice(1)
      .filter((stage) => stage.kind === 'batch')
      .map((stage) => stage.name);

  it('ToolE: every stage after the loader streams its input', () => {
    // It rejects queries it creates itself, which a scan stage cannot emit (yet).
    expect(batchStagesAfterLoader('toole', TooleConfig.parse({}))).toEqual([]);
  });

  it('NesTools: every stage after the loader streams its input', () => {
    expect(batchStagesAfterLoader('nestools', NesToolsConfig.parse({}))).toEqual([]);
    expect(batchStagesAfterLoader('nestools', NesToolsConfig.parse({ importFile: 'x.jsonl' }))).toEqual([]);
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
