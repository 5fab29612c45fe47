import type { Call, Sample, ToolSpec } from '../../core/records.ts';
import type { ScanStage } from '../../core/stage.ts';
import { besideReleased, statisticsBesideReleased, type ReleasedPlace, type Tally } from '../released-statistics.ts';
import { taskOf } from './import-export.ts';
import { valueMentions, type Presence } from './query-values.ts';
import { chainStructure, type StructureKind } from './structure.ts';

/**
 * Figures of a NesTools-style set (§3.4, §5.2, §5.3): calls per sample, nesting depth, share of
 * nested arguments, dependency structures, tool sizes, and how plainly tasks state their values;
 * printed beside the same figures of the released set.
 */

export interface NesToolsStatistics {
  samples: number;
  nestedSamples: number;
  toolEntries: number;
  distinctTools: number;
  paramsPerTool: number;
  requiredPerTool: number;
  returnsPerTool: number;
  callsPerSample: number;
  callsDistribution: Record<string, number>;
  depth: number;
  depthDistribution: Record<string, number>;
  args: number;
  nestedArgs: number;
  structures: Record<StructureKind, number>;
  /** Samples with a call that neither feeds nor is fed while others are nested. */
  withIsolatedCalls: number;
  topShapes: [string, number][];
  values: Record<Presence, number>;
}

function bucket(value: number, cap: number): string {
  return value >= cap ? `${cap}+` : String(value);
}

function bump(counts: Record<string, number>, key: string): void {
  counts[key] = (counts[key] ?? 0) + 1;
}

/** What the figures are computed from: a chain's tools, calls and task (a Sample, or a checked program). */
export interface ChainView {
  tools: ToolSpec[];
  calls: Call[];
  task: string;
}

export function viewOfSample(sample: Sample): ChainView {
  return { tools: sample.tools, calls: sample.expected.calls ?? [], task: taskOf(sample) };
}

export function computeStatistics(samples: Iterable<ChainView>): NesToolsStatistics {
  const figures = new StatisticsTally();
  for (const sample of samples) figures.add(sample);
  return figures.result();
}

/** The figures counted chain by chain, so a whole set need not be in memory. */
export class StatisticsTally {
  private readonly stats: NesToolsStatistics = {
    samples: 0,
    nestedSamples: 0,
    toolEntries: 0,
    distinctTools: 0,
    paramsPerTool: 0,
    requiredPerTool: 0,
    returnsPerTool: 0,
    callsPerSample: 0,
    callsDistribution: {},
    depth: 0,
    depthDistribution: {},
    args: 0,
    nestedArgs: 0,
    structures: { single: 0, independent: 0, chain: 0, 'fan-out': 0, 'fan-in': 0, mixed: 0 },
    withIsolatedCalls: 0,
    topShapes: [],
    values: { exact: 0, normalised: 0, loose: 0, missing: 0 },
  };
  private readonly names = new Set<string>();
  private readonly shapes: Record<string, number> = {};
  private params = 0;
  private required = 0;
  private returns = 0;
  private calls = 0;
  private depth = 0;

  add(sample: ChainView): void {
    const stats = this.stats;
    stats.samples++;
    for (const tool of sample.tools) {
      this.names.add(tool.name);
      this.params += Object.keys(tool.parameters.properties).length;
      this.required += tool.parameters.required.length;
      this.returns += Object.keys(tool.returns.properties).length;
    }
    stats.toolEntries += sample.tools.length;
    const chain = sample.calls;
    const structure = chainStructure(chain);
    this.calls += structure.calls;
    this.depth += structure.depth;
    bump(stats.callsDistribution, bucket(structure.calls, 6));
    bump(stats.depthDistribution, bucket(structure.depth, 4));
    stats.args += structure.args;
    stats.nestedArgs += structure.nestedArgs;
    if (structure.nestedArgs) stats.nestedSamples++;
    stats.structures[structure.kind]++;
    if (structure.isolated) stats.withIsolatedCalls++;
    if (structure.shape) bump(this.shapes, structure.shape);
    for (const mention of valueMentions(sample.task, chain)) stats.values[mention.presence]++;
  }

  result(): NesToolsStatistics {
    const stats = structuredClone(this.stats);
    const n = Math.max(1, stats.samples);
    const entries = Math.max(1, stats.toolEntries);
    stats.distinctTools = this.names.size;
    stats.paramsPerTool = this.params / entries;
    stats.requiredPerTool = this.required / entries;
    stats.returnsPerTool = this.returns / entries;
    stats.callsPerSample = this.calls / n;
    stats.depth = this.depth / n;
    stats.topShapes = Object.entries(this.shapes)
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .slice(0, 8);
    return stats;
  }
}

function percent(part: number, whole: number): string {
  return whole ? `${((100 * part) / whole).toFixed(1)}%` : '–';
}

function fixed(value: number): string {
  return value.toFixed(2);
}

/** Rows of one figure for each set (`generated`, then any others such as `reference`). */
export function statisticsRows(sets: NesToolsStatistics[]): [string, ...string[]][] {
  const row = (label: string, fn: (s: NesToolsStatistics) => string): [string, ...string[]] => [label, ...sets.map(fn)];
  const valueTotal = (s: NesToolsStatistics) => s.values.exact + s.values.normalised + s.values.loose + s.values.missing;
  const kinds: StructureKind[] = ['chain', 'fan-out', 'fan-in', 'mixed', 'independent', 'single'];
  const shapes = [...new Set(sets.flatMap((s) => s.topShapes.map(([shape]) => shape)))].slice(0, 8);
  const callBuckets = [...new Set(sets.flatMap((s) => Object.keys(s.callsDistribution)))].sort();
  const depthBuckets = [...new Set(sets.flatMap((s) => Object.keys(s.depthDistribution)))].sort();
  return [
    row('samples', (s) => String(s.samples)),
    row('nested samples', (s) => `${s.nestedSamples} (${percent(s.nestedSamples, s.samples)})`),
    row('tool entries / distinct tools', (s) => `${s.toolEntries} / ${s.distinctTools}`),
    row('params per tool (required)', (s) => `${fixed(s.paramsPerTool)} (${fixed(s.requiredPerTool)})`),
    row('returns per tool', (s) => fixed(s.returnsPerTool)),
    row('calls per sample', (s) => fixed(s.callsPerSample)),
    ...callBuckets.map((b) => row(`  samples with ${b} calls`, (s) => percent(s.callsDistribution[b] ?? 0, s.samples))),
    row('nesting depth (mean)', (s) => fixed(s.depth)),
    ...depthBuckets.map((b) => row(`  depth ${b}`, (s) => percent(s.depthDistribution[b] ?? 0, s.samples))),
    row('nested arguments', (s) => `${s.nestedArgs} / ${s.args} (${percent(s.nestedArgs, s.args)})`),
    ...kinds.map((k) => row(`structure: ${k}`, (s) => percent(s.structures[k], s.samples))),
    row('  with an unlinked call', (s) => percent(s.withIsolatedCalls, s.samples)),
    ...shapes.map((shape) => row(`  shape ${shape}`, (s) => percent(s.topShapes.find(([x]) => x === shape)?.[1] ?? 0, s.samples))),
    row('values stated verbatim', (s) => percent(s.values.exact, valueTotal(s))),
    row('values stated normalised', (s) => percent(s.values.normalised, valueTotal(s))),
    row('values stated loosely', (s) => percent(s.values.loose, valueTotal(s))),
    row('values not found in task', (s) => percent(s.values.missing, valueTotal(s))),
  ];
}

/** A markdown table: one column per named set. */
export function formatStatistics(sets: { name: string; stats: NesToolsStatistics }[]): string {
  const header = ['figure', ...sets.map((s) => s.name)];
  const rows = statisticsRows(sets.map((s) => s.stats));
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map((_, i) => (i === 0 ? '---' : '---:'))), ...rows.map(line)].join('\n');
}

export interface StatisticsOptions {
  /** The released set to compare with. */
  released?: ReleasedPlace;
}

/**
 * Passes samples through; reports the figures (and the released set's) into the manifest and the
 * log. Keeps only the running figures.
 */
export function statisticsStage(options: StatisticsOptions): ScanStage<Sample, Sample, Tally<ChainView, NesToolsStatistics>> {
  return statisticsBesideReleased({
    version: 1,
    title: 'NesTools statistics',
    figures: viewOfSample,
    tally: () => new StatisticsTally(),
    released: options.released,
    close: (ours, released) => ({
      reports: { 'nestools.statistics': { generated: ours, ...(released ? { reference: released } : {}) } },
      table: besideReleased(
        statisticsRows(released ? [ours, released] : [ours]).map(([figure, generated, reference]) => [figure, generated, reference]),
        released && 'NesTools',
      ),
    }),
  });
}
