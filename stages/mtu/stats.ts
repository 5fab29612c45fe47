import { existsSync } from 'node:fs';
import type { Call, Sample } from '../../core/records.ts';
import type { ScanStage } from '../../core/stage.ts';
import { formatTable } from '../../core/table.ts';
import { statisticsBesideReleased, type ReleasedPlace, type Tally } from '../released-statistics.ts';
import { SETTINGS, type MtuConfig, type Setting } from './config.ts';
import { INSTRUCTIONS_REPORT, loadInstructionTemplates } from './instructions.ts';
import { releasedMtuSamples } from './released.ts';
import { assistantIndexes, refsIn, turnCalls, type MtuMeta } from './sample.ts';

/**
 * MTU-Bench statistics, ours beside the released MTU-Eval files where comparable: dialogues and
 * records (one per answered user turn) per setting and split, calls and parameters, turns per
 * dialogue, share of no-call records, and the tool counts before and after clustering; then the
 * composition (each setting's share of the test records, and its no-call share) beside the
 * config's targets and the released files.
 */

export interface SetFigures {
  dialogues: number;
  records: number;
  noCallRecords: number;
  calls: number;
  /** Calls taking an earlier call's result (`Tool.field`). */
  dependentCalls: number;
  arguments: number;
  /** User turns over multi-turn dialogues (for the mean). */
  multiTurnDialogues: number;
  multiTurnUserTurns: number;
  tools: string[];
}

function emptyFigures(): SetFigures {
  return { dialogues: 0, records: 0, noCallRecords: 0, calls: 0, dependentCalls: 0, arguments: 0, multiTurnDialogues: 0, multiTurnUserTurns: 0, tools: [] };
}

/** What one answered user turn (a record) holds of its calls. */
interface RecordCalls {
  calls: { tool: string; args: number; dependent: boolean }[];
}

function add(figures: SetFigures, records: RecordCalls[]): void {
  figures.dialogues++;
  figures.records += records.length;
  if (records.length > 1) {
    figures.multiTurnDialogues++;
    figures.multiTurnUserTurns += records.length;
  }
  let added: string[] | undefined;
  for (const record of records) {
    if (!record.calls.length) figures.noCallRecords++;
    for (const call of record.calls) {
      figures.calls++;
      if (call.dependent) figures.dependentCalls++;
      figures.arguments += call.args;
      if (!figures.tools.includes(call.tool) && !added?.includes(call.tool)) (added ??= []).push(call.tool);
    }
  }
  if (added) figures.tools = [...figures.tools, ...added].sort();
}

/** What one sample adds to the figures: records of one dialogue, by split and setting (`ood` pools its settings, as MTU-Eval's OOD file does). */
export interface SampleFigures {
  split: string;
  setting: string;
  /** The dialogue a released record belongs to (its records are counted together); null: the sample is the whole dialogue. */
  dialogue: string | null;
  hard: boolean;
  records: RecordCalls[];
}

const recordCalls = (calls: readonly Call[]): RecordCalls => ({
  calls: calls.map((c) => {
    let args = 0;
    let dependent = false;
    for (const key in c.arguments) {
      if (!Object.hasOwn(c.arguments, key)) continue;
      args++;
      dependent ||= refsIn(c.arguments[key]).length > 0;
    }
    return { tool: c.tool, args, dependent };
  }),
});

/** A generated sample: a whole dialogue, a record per assistant turn that answers a user turn. */
export function sampleFigures(sample: Sample): SampleFigures {
  const records: RecordCalls[] = [];
  for (const i of assistantIndexes(sample)) if (sample.dialogue[i - 1]?.role === 'user') records.push(recordCalls(turnCalls(sample, i)));
  // Samples the pipeline checked where it made them: the one field is read, not the whole meta parsed again.
  const hard = (sample.meta as { mtu?: Pick<MtuMeta, 'hard'> }).mtu?.hard;
  return { split: sample.split, setting: sample.split === 'ood' ? 'OOD' : sample.category, dialogue: null, hard: !!hard?.length, records };
}

/** A released sample (stages/mtu/released.ts): one record, its dialogue named by its id's first two parts (`M-M_3`). */
export function releasedRecordFigures(sample: Sample): SampleFigures {
  return { split: sample.split, setting: sample.category, dialogue: sample.id.split('_').slice(0, 2).join('_'), hard: false, records: [recordCalls(sample.expected.calls ?? [])] };
}

/** Figures by split and setting (and `hard`, the hard variants by setting). */
export type SplitFigures = Record<string, Record<string, SetFigures>>;

/** Adds a whole dialogue at once; a released record waits for the others of its dialogue. */
export function figuresTally(): Tally<SampleFigures, SplitFigures> {
  const out: SplitFigures = {};
  const dialogues = new Map<string, SampleFigures>();
  const addTo = (f: SampleFigures) => {
    add(((out[f.split] ??= {})[f.setting] ??= emptyFigures()), f.records);
    if (f.hard) add(((out.hard ??= {})[f.setting] ??= emptyFigures()), f.records);
  };
  return {
    add: (f) => {
      if (f.dialogue === null) return addTo(f);
      const key = `${f.split}\u0000${f.setting}\u0000${f.dialogue}`;
      const open = dialogues.get(key);
      if (open) open.records.push(...f.records);
      else dialogues.set(key, { ...f, records: [...f.records] });
    },
    result: () => {
      for (const f of dialogues.values()) addTo(f);
      dialogues.clear();
      return out;
    },
  };
}

/** Figures of the released files (`<setting>_eval.jsonl`, `OOD_eval.jsonl`) by setting, or null when the folder is absent. */
export function releasedFigures(dir: string): Record<string, SetFigures> | null {
  if (!existsSync(dir)) return null;
  const tally = figuresTally();
  for (const sample of releasedMtuSamples(dir)) tally.add(releasedRecordFigures(sample));
  return tally.result().test ?? {};
}

const mean = (a: number, b: number) => (b ? (a / b).toFixed(2) : '-');
const share = (a: number, b: number) => (b ? `${Math.round((a / b) * 100)}%` : '-');

export interface ToolFigures {
  /** Tools as created, by plugin and name. */
  created?: number;
  /** Distinct tool names before and after clustering. */
  namesBefore?: number;
  namesAfter?: number;
  /** Documented tools, by plugin and name. */
  documented?: number;
}

export function formatMtuStatistics(ours: Record<string, Record<string, SetFigures>>, released: Record<string, SetFigures> | null, tools: ToolFigures): string {
  const cell = (f: SetFigures | undefined) => (f ? `${f.dialogues} / ${f.records}` : '0 / 0');
  const rows = [...SETTINGS, 'OOD'].map((setting) => {
    const mine = setting === 'OOD' ? ours.ood?.OOD : ours.test?.[setting];
    const theirs = released?.[setting];
    return [
      setting,
      setting === 'OOD' ? '-' : cell(ours.train?.[setting]),
      cell(mine),
      setting === 'OOD' ? '-' : cell(ours.hard?.[setting]),
      theirs ? cell(theirs) : '-',
      mean(mine?.arguments ?? 0, mine?.calls ?? 0),
      theirs ? mean(theirs.arguments, theirs.calls) : '-',
      mean(mine?.multiTurnUserTurns ?? 0, mine?.multiTurnDialogues ?? 0),
      theirs ? mean(theirs.multiTurnUserTurns, theirs.multiTurnDialogues) : '-',
      share(mine?.noCallRecords ?? 0, mine?.records ?? 0),
      theirs ? share(theirs.noCallRecords, theirs.records) : '-',
      String(mine?.dependentCalls ?? 0),
      theirs ? String(theirs.dependentCalls) : '-',
      String(mine?.tools.length ?? 0),
      theirs ? String(theirs.tools.length) : '-',
    ];
  });
  const table = formatTable(
    ['setting', 'train dlg/rec', 'test dlg/rec', 'hard dlg/rec', 'MTU-Eval dlg/rec', 'args/call', 'MTU-Eval', 'turns/dlg', 'MTU-Eval', 'no-call', 'MTU-Eval', 'dependent calls', 'MTU-Eval', 'tools called', 'MTU-Eval'],
    rows,
  );
  const ratio = tools.namesBefore && tools.namesAfter ? ` (${(tools.namesBefore / tools.namesAfter).toFixed(2)}:1)` : '';
  return [
    table,
    '(test and OOD columns compare with MTU-Eval; dlg = dialogues, rec = records, one per answered user turn)',
    `tools: ${tools.created ?? '-'} created (${tools.namesBefore ?? '-'} names) → ${tools.namesAfter ?? '-'} names after clustering${ratio}; ${tools.documented ?? '-'} documented (by service and name)`,
  ].join('\n');
}

/** Each setting's share of the test records and of its records that call no tool, as fractions. */
export interface Composition {
  mix: Partial<Record<Setting, number>>;
  noCall: Partial<Record<Setting | 'OOD', number>>;
}

/** The composition of a set of figures by setting (`OOD` counts for no-call only). */
export function compositionOf(figures: Partial<Record<string, Pick<SetFigures, 'records' | 'noCallRecords'>>>): Composition {
  const total = SETTINGS.reduce((n, s) => n + (figures[s]?.records ?? 0), 0);
  const ratio = (a: number, b: number) => (b ? Math.round((a / b) * 1000) / 1000 : 0);
  return {
    mix: Object.fromEntries(SETTINGS.map((s) => [s, ratio(figures[s]?.records ?? 0, total)])),
    noCall: Object.fromEntries([...SETTINGS, 'OOD'].filter((s) => figures[s]).map((s) => [s, ratio(figures[s]!.noCallRecords, figures[s]!.records)])),
  };
}

/**
 * The composition a run is compared with (and steered toward): `targets.mix` as given (a setting it
 * leaves out has no share), else the released files'; `targets.noCall` over the released files'.
 * Null when there is neither.
 */
export function resolveTargets(targets: MtuConfig['targets'], released: Composition | null): Composition | null {
  if (!released && !targets.mix && !targets.noCall) return null;
  const given = targets.mix;
  return {
    mix: given ? Object.fromEntries(SETTINGS.map((s) => [s, given[s] ?? 0])) : { ...released?.mix },
    noCall: { ...released?.noCall, ...targets.noCall },
  };
}

/** Ours (test split, OOD) beside the target and the released files: category mix and no-call share. */
export function formatComposition(ours: Composition, target: Composition | null, released: Composition | null): string {
  const pct = (x: number | undefined) => (x === undefined ? '-' : `${Math.round(x * 100)}%`);
  const rows = [...SETTINGS, 'OOD'].map((s) => [
    s,
    s === 'OOD' ? '-' : pct(ours.mix[s as Setting]),
    s === 'OOD' ? '-' : pct(target?.mix[s as Setting]),
    s === 'OOD' ? '-' : pct(released?.mix[s as Setting]),
    pct(ours.noCall[s as Setting]),
    pct(target?.noCall[s as Setting]),
    pct(released?.noCall[s as Setting]),
  ]);
  return formatTable(['setting', 'share of test records', 'target', 'MTU-Eval', 'no-call records', 'target', 'MTU-Eval'], rows);
}

/** What the steering stage (stages/mtu/steer.ts) reports under `stats.mixSteering`. */
export interface SteeringReport {
  targets: Composition;
  /** The test and ood splits as they came in, and as chosen (before the ReAct synthesis, quality filter and hard variants). */
  before: Composition;
  chosen: Composition;
  built: Record<string, number>;
  /** Calls of the built samples kept that take an earlier call's result. */
  builtDependentCalls: number;
  buildFailures: Record<string, number>;
  trimmed: { samples: number; records: number };
  rejected: Record<string, number>;
  /** Targets the data cannot meet, each with why. */
  unreachable: string[];
}

/** The lines under the composition table of a steered run: what was built, trimmed and rejected for the targets, and what could not be met. */
export function formatSteering(steering: SteeringReport): string {
  const list = (counts: Record<string, number>) => Object.entries(counts).map(([k, n]) => `${k}: ${n}`).join('; ') || 'none';
  return [
    'steered toward the targets (targets.steer):',
    `  built: ${list(steering.built)} (${steering.builtDependentCalls} calls taking an earlier result)${Object.keys(steering.buildFailures).length ? `; failed: ${list(steering.buildFailures)}` : ''}`,
    `  trimmed: ${steering.trimmed.records} trailing no-call records from ${steering.trimmed.samples} dialogues`,
    `  rejected: ${list(steering.rejected)}`,
    ...steering.unreachable.map((u) => `  not reachable: ${u}`),
  ].join('\n');
}

export interface StatisticsOptions {
  /** The released MTU-Eval files. */
  released?: ReleasedPlace;
  /** Targets of the composition; a part left unset is the released files' figure. */
  targets: MtuConfig['targets'];
  /** Instruction templates file of the export (config `export.instructions`), published with the version. */
  instructions?: string;
}

/**
 * Reports the statistics to the manifest (`stats.mtuStatistics`), prints them and publishes them
 * as `reports/mtu-statistics.txt`; records pass unchanged.
 */
export function statisticsStage(options: StatisticsOptions): ScanStage<Sample, Sample, Tally<SampleFigures, SplitFigures>> {
  return statisticsBesideReleased({
    version: 4,
    title: 'MTU-Bench statistics',
    figures: sampleFigures,
    tally: figuresTally,
    released: options.released && { ...options.released, figures: releasedRecordFigures },
    close: (ours, releasedSplits, ctx) => {
      const released = releasedSplits ? (releasedSplits.test ?? {}) : null;
      const summary = (f: SetFigures) => ({ ...f, tools: f.tools.length });
      const mapFigures = (m: Record<string, SetFigures>) => Object.fromEntries(Object.entries(m).map(([k, f]) => [k, summary(f)]));
      const earlier = ctx.reported();
      const created = earlier.toolsCreated as { tools?: number; names?: number } | undefined;
      const merge = earlier.toolMerge as { toolsBefore?: number; toolsAfter?: number } | undefined;
      const tools: ToolFigures = {
        created: created?.tools,
        namesBefore: merge?.toolsBefore ?? created?.names,
        namesAfter: merge?.toolsAfter,
        documented: (earlier.toolDocumentation as { tools?: number } | undefined)?.tools,
      };
      const ourComposition = compositionOf({ ...ours.test, ...(ours.ood?.OOD ? { OOD: ours.ood.OOD } : {}) });
      const releasedComposition = released ? compositionOf(released) : null;
      const target = resolveTargets(options.targets, releasedComposition);
      const steering = earlier.mixSteering as SteeringReport | undefined;
      const table = [formatMtuStatistics(ours, released, tools), formatComposition(ourComposition, target, releasedComposition), ...(steering ? [formatSteering(steering)] : [])].join('\n\n');
      return {
        reports: {
          mtuStatistics: {
            ours: Object.fromEntries(Object.entries(ours).map(([split, m]) => [split, mapFigures(m)])),
            released: released ? mapFigures(released) : null,
            tools: { ...tools, reductionRatio: tools.namesBefore && tools.namesAfter ? Math.round((tools.namesBefore / tools.namesAfter) * 100) / 100 : null },
          },
          mtuComposition: { ours: ourComposition, target, released: releasedComposition },
          // Target beside what the run achieved (after the ReAct synthesis, quality filter and hard variants), for `datasets show --compare-reference`.
          ...(steering ? { mtuSteering: { ours: ourComposition, reference: steering.targets, ...steering } } : {}),
        },
        table,
        attach: {
          'mtu-statistics.txt': `${table}\n`,
          // The export's instruction text travels with the version (see instructions.ts).
          [INSTRUCTIONS_REPORT]: `${JSON.stringify(loadInstructionTemplates(options.instructions && ctx.resolvePath(options.instructions)), null, 2)}\n`,
        },
      };
    },
  });
}
