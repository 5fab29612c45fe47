import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { OfflineGateway } from '../core/llm/offline.ts';
import type { ReleasedSamples } from '../core/pipeline.ts';
import type { Sample } from '../core/records.ts';
import { compareWithReference } from '../core/reference-compare.ts';
import { pathResolver } from '../core/run.ts';
import { applyScanStage, standaloneContext, type ScanStage } from '../core/stage.ts';
import { pipelines } from '../pipelines/index.ts';
import { RELEASED_TOOLTALK } from '../pipelines/tooltalk.ts';
import { releasedFigures } from '../stages/mtu/stats.ts';
import { listTally, statisticsBesideReleased } from '../stages/released-statistics.ts';
import { statisticsStage as tooltalkStatistics } from '../stages/tooltalk/statistics.ts';

const PROJECT = new URL('..', import.meta.url).pathname;
const resolvePath = pathResolver(PROJECT, PROJECT);

function context(log: string[] = []) {
  return standaloneContext({ llm: new OfflineGateway(42), runDir: mkdtempSync(join(tmpdir(), 'tk-released-stats-')), resolvePath, log: (line) => log.push(line) });
}

/** The first `n` samples of a recipe's own released set, read by the reader its pipeline declares. */
function releasedSamples(name: string, n: number): Sample[] {
  const entry = pipelines[name].released![0];
  const out: Sample[] = [];
  for (const sample of entry.read(resolvePath(entry.path), resolvePath).samples()) {
    if (out.length === n) break;
    out.push(sample);
  }
  return out;
}

describe('statistics beside the released benchmark', () => {
  it.each([
    ['mtu', 'MTU-Bench statistics'],
    ['toole', 'ToolE statistics'],
    ['nestools', 'NesTools statistics'],
    ['tooltalk', 'ToolTalk statistics'],
    ['acebench', 'ACEBench statistics'],
  ])('%s: its closing statistics stage reads the released set its pipeline declares, reports both sides and prints them in the run log', async (name, title) => {
    const pipeline = pipelines[name];
    const stage = pipeline.stages(pipeline.configSchema.parse({})).find((s) => s.name === 'statistics') as ScanStage<Sample, Sample>;
    // Released records stand for the run's samples (an MTU sample carries its recipe's meta).
    const samples = releasedSamples(name, 30).map((s) => (name === 'mtu' ? { ...s, meta: { ...s.meta, mtu: { services: [], domains: [], sourceSplit: 'test' } } } : s));
    const log: string[] = [];
    const ctx = context(log);
    const { out } = await applyScanStage(stage, samples, ctx);
    expect(out).toEqual(samples);
    // What `datasets show --compare-reference` lists: figures found on both sides of a report.
    expect(compareWithReference(ctx.reports).length).toBeGreaterThan(3);
    const printed = log.find((line) => line.startsWith(`${title}\n`));
    expect(printed, `the run log of ${name}`).toBeDefined();
    // A table of core/table.ts: its header underlined column by column.
    expect(printed!.split('\n').some((line) => /^-+( +-+)+$/.test(line))).toBe(true);
  }, 120_000);

  it('the released set is read from when the run starts (prepare), once', async () => {
    const reads: string[] = [];
    const set: ReleasedSamples = {
      ...RELEASED_TOOLTALK,
      read: (path, resolve) => (reads.push(path), RELEASED_TOOLTALK.read(path, resolve)),
    };
    const stage = tooltalkStatistics({ released: { set, path: '../shared/data/reference/tooltalk', setting: 'referenceDir' } });
    stage.prepare!({ resolvePath });
    expect(reads).toEqual([resolvePath('../shared/data/reference/tooltalk')]);
    const ctx = context();
    await applyScanStage(stage, releasedSamples('tooltalk', 5), ctx);
    expect(reads).toHaveLength(1);
    expect((ctx.reports.tooltalk as { released: { conversations: number } }).released.conversations).toBe(78);
  });

  it("counts the samples the run's read of the set kept (the overlap gate's) when it is prepared, holding none of them while the stages run", () => {
    const samples = releasedSamples('tooltalk', 60);
    let counted = 0;
    const stage = statisticsBesideReleased<number, number>({
      version: 1,
      title: 'counted',
      figures: () => (counted++, 1),
      tally: listTally((figures) => figures.length),
      released: { set: RELEASED_TOOLTALK, path: '../shared/data/reference/tooltalk', setting: 'referenceDir' },
      close: () => ({ reports: {}, table: '' }),
    });
    stage.prepare!({ resolvePath, readReleased: () => samples });
    expect(counted).toBe(60);
  });

  it('a released set that is not there stops the run when it starts, naming the setting; an empty setting compares with nothing', async () => {
    const stage = tooltalkStatistics({ released: { set: RELEASED_TOOLTALK, path: '/nonexistent/tooltalk', setting: 'referenceDir' } });
    expect(() => stage.prepare!({ resolvePath })).toThrow(/^referenceDir: released tooltalk not found at \/nonexistent\/tooltalk; put its files \(the conversation files of easy\/ and tooltalk\/\) there, or set referenceDir to "" to leave the comparison out$/);
    const none = tooltalkStatistics({ released: { set: RELEASED_TOOLTALK, path: '', setting: 'referenceDir' } });
    const log: string[] = [];
    const ctx = context(log);
    await applyScanStage(none, releasedSamples('tooltalk', 3), ctx);
    expect(ctx.reports.tooltalk).not.toHaveProperty('released');
    expect(log[0].split('\n')[1]).toMatch(/^figure +this run$/);
  });

  it('counts each side with its own figures when the recipe says so, and leaves out the samples it does not count', async () => {
    const numbers = (values: number[]): Sample[] => values.map((n) => ({ id: `s${n}`, split: n % 2 ? 'odd' : 'even' }) as unknown as Sample);
    const set: ReleasedSamples = { name: 'digits', path: '.', files: 'none', read: () => ({ samples: () => numbers([1, 2, 3, 4, 5, 6, 7]) }) };
    const stage = statisticsBesideReleased<number, number>({
      version: 1,
      title: 'sums',
      figures: (sample) => (sample.split === 'odd' ? Number(sample.id.slice(1)) : null),
      tally: listTally((values) => values.reduce((a, b) => a + b, 0)),
      released: { set, path: '.', setting: 'x', figures: (sample) => Number(sample.id.slice(1)) },
      close: (ours, released) => ({ reports: { sums: { ours, released } }, table: `${ours} ${released}` }),
    });
    const log: string[] = [];
    const ctx = context(log);
    await applyScanStage(stage, numbers([1, 2, 3]), ctx);
    expect(ctx.reports.sums).toEqual({ ours: 4, released: 28 });
    expect(log).toEqual(['sums\n4 28']);
  });

  it("MTU-Eval's dependent calls count a reference inside a list (M-M: recurrence [get_user_appointments.appointment_date], twice)", () => {
    const figures = releasedFigures(resolvePath('../shared/data/reference/mtu-bench'))!;
    expect(figures['M-M']).toMatchObject({ dialogues: 79, records: 266, calls: 197, dependentCalls: 71 });
    expect(figures['S-M']).toMatchObject({ dialogues: 94, records: 94, calls: 315, dependentCalls: 126 });
  });
});
