import type { Json, Sample } from '../../core/records.ts';
import type { ScanStage } from '../../core/stage.ts';
import { besideReleased, listTally, statisticsBesideReleased, type ReleasedPlace, type Tally } from '../released-statistics.ts';
import { aceExpectedOf, aceMetaOf } from './format.ts';
import { ACE_CATEGORIES, ACE_LANGUAGES, ATOM_KINDS, atomKindsOf, type AtomKind } from './record.ts';

/**
 * Statistics beside the released set's: records per category and language; turns per dialogue and
 * arguments per gold call (the paper's Figure 4; agent records hold an instruction, not a dialogue,
 * and count for neither); candidate functions per instance; and for the atom categories the mix of
 * parameter kinds: the share of records whose functions offer a top-level parameter of each kind,
 * and of records whose gold call fills one. Reported in the manifest (`stats.acebench`), printed in
 * the run log and attached as `reports/acebench-statistics.md`.
 */

/** The figures of one record (all the statistics need). */
export interface RecordFigures {
  language: string;
  category: string;
  /** Dialogue turns; null for an agent's instruction. */
  turns: number | null;
  /** Arguments of each gold call (the first accepted answer). */
  argumentsPerCall: number[];
  candidates: number;
  offered: AtomKind[];
  filled: AtomKind[];
}

export interface AceStatistics {
  records: number;
  /** category → language → records. */
  byCategory: Record<string, Record<string, number>>;
  /** Turns → dialogues with that many. */
  turns: Record<string, number>;
  meanTurns: number;
  /** Arguments → gold calls with that many. */
  argumentsPerCall: Record<string, number>;
  meanArguments: number;
  candidates: { mean: number; min: number; max: number; histogram: Record<string, number> };
  /** Atom category → kind → share of its records offering / filling a parameter of that kind. */
  atomKinds: Record<string, Record<AtomKind, { offered: number; filled: number }>>;
}

export function figuresOfSample(sample: Sample): RecordFigures {
  const meta = aceMetaOf(sample);
  const calls = aceExpectedOf(sample).calls ?? [];
  const byName = new Map(sample.tools.map((tool) => [tool.name, tool]));
  const offered = new Set(sample.tools.flatMap((tool) => Object.values(tool.parameters.properties).flatMap((schema) => [...atomKindsOf(schema as Json)])));
  const filled = new Set(calls.flatMap((call) => Object.keys(call.arguments).flatMap((name) => [...atomKindsOf(byName.get(call.tool)?.parameters.properties[name] as Json | undefined)])));
  return {
    language: meta.language,
    category: sample.category,
    turns: meta.questionKind === 'instruction' ? null : sample.dialogue.length,
    argumentsPerCall: calls.map((call) => Object.keys(call.arguments).length),
    candidates: sample.tools.length,
    offered: ATOM_KINDS.filter((kind) => offered.has(kind)),
    filled: ATOM_KINDS.filter((kind) => filled.has(kind)),
  };
}

const round = (x: number) => Math.round(x * 100) / 100;
const mean = (xs: readonly number[]) => (xs.length ? round(xs.reduce((s, x) => s + x, 0) / xs.length) : 0);

function histogram(values: readonly number[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const value of [...values].sort((a, b) => a - b)) out[value] = (out[value] ?? 0) + 1;
  return out;
}

export function summarise(figures: readonly RecordFigures[]): AceStatistics {
  const byCategory: Record<string, Record<string, number>> = {};
  for (const f of figures) {
    const row = (byCategory[f.category] ??= {});
    row[f.language] = (row[f.language] ?? 0) + 1;
  }
  const turns = figures.flatMap((f) => (f.turns === null ? [] : [f.turns]));
  const args = figures.flatMap((f) => f.argumentsPerCall);
  const candidates = figures.map((f) => f.candidates);
  const atomKinds: AceStatistics['atomKinds'] = {};
  for (const category of ACE_CATEGORIES.filter((c) => c.startsWith('normal_atom_'))) {
    const records = figures.filter((f) => f.category === category);
    if (!records.length) continue;
    const share = (has: (f: RecordFigures) => boolean) => round(records.filter(has).length / records.length);
    atomKinds[category] = Object.fromEntries(ATOM_KINDS.map((kind) => [kind, { offered: share((f) => f.offered.includes(kind)), filled: share((f) => f.filled.includes(kind)) }])) as Record<AtomKind, { offered: number; filled: number }>;
  }
  return {
    records: figures.length,
    byCategory,
    turns: histogram(turns),
    meanTurns: mean(turns),
    argumentsPerCall: histogram(args),
    meanArguments: mean(args),
    candidates: { mean: mean(candidates), min: candidates.length ? Math.min(...candidates) : 0, max: candidates.length ? Math.max(...candidates) : 0, histogram: histogram(candidates) },
    atomKinds,
  };
}

/** Markdown tables: this version's figures, and the released set's beside them when known. */
export function statisticsTables(ours: AceStatistics, released: AceStatistics | null): string {
  const header = (first: string, columns: string[]) => `| ${first} | ${columns.join(' | ')} |\n|---|${columns.map(() => '---:').join('|')}|`;
  const sides = released ? ['this version', 'released'] : ['this version'];
  const keys = (a: Record<string, unknown>, b?: Record<string, unknown>) => [...new Set([...Object.keys(a), ...Object.keys(b ?? {})])].sort((x, y) => Number(x) - Number(y));
  const summaryRow = (label: string, a: number | string, b?: number | string) => `| ${label} | ${a} |${released ? ` ${b} |` : ''}`;
  /** A titled histogram (value → count) and its summary figures. */
  const histogramSection = (title: string, value: string, a: Record<string, number>, b: Record<string, number> | undefined, summaries: [string, number, number | undefined][]) => [
    `## ${title}`,
    '',
    [header(value, sides), ...keys(a, b).map((k) => summaryRow(k, a[k] ?? 0, b?.[k] ?? 0))].join('\n'),
    '',
    [header('', sides), ...summaries.map(([label, x, y]) => summaryRow(label, x, y))].join('\n'),
    '',
  ];
  const languageColumns = ACE_LANGUAGES.flatMap((language) => (released ? [`${language}`, `${language} released`] : [language]));
  const categories = ACE_CATEGORIES.filter((c) => ours.byCategory[c] || released?.byCategory[c]);
  const categoryRows = categories.map(
    (c) => `| ${c} | ${ACE_LANGUAGES.flatMap((language) => [ours.byCategory[c]?.[language] ?? 0, ...(released ? [released.byCategory[c]?.[language] ?? 0] : [])]).join(' | ')} |`,
  );
  const percent = (x: number | undefined) => (x === undefined ? '–' : `${Math.round(x * 100)}%`);
  const atomCategories = [...new Set([...Object.keys(ours.atomKinds), ...Object.keys(released?.atomKinds ?? {})])];
  const atomRows = atomCategories.flatMap((c) =>
    [['this version', ours.atomKinds[c]] as const, ...(released ? [['released', released.atomKinds[c]] as const] : [])].map(
      ([side, kinds]) => `| ${c} (${side}) | ${ATOM_KINDS.map((kind) => `${percent(kinds?.[kind].offered)} / ${percent(kinds?.[kind].filled)}`).join(' | ')} |`,
    ),
  );
  return [
    '## Records per category and language',
    '',
    header('category', languageColumns),
    ...categoryRows,
    `| **records** | ${ACE_LANGUAGES.flatMap((language) => [languageTotal(ours, language), ...(released ? [languageTotal(released, language)] : [])]).join(' | ')} |`,
    '',
    ...histogramSection('Turns per dialogue (Figure 4; agent instructions not counted)', 'turns', ours.turns, released?.turns, [['mean turns', ours.meanTurns, released?.meanTurns]]),
    ...histogramSection('Arguments per gold call (Figure 4)', 'arguments', ours.argumentsPerCall, released?.argumentsPerCall, [['mean arguments', ours.meanArguments, released?.meanArguments]]),
    ...histogramSection('Candidate functions per instance', 'candidates', ours.candidates.histogram, released?.candidates.histogram, [
      ['mean', ours.candidates.mean, released?.candidates.mean],
      ['min', ours.candidates.min, released?.candidates.min],
      ['max', ours.candidates.max, released?.candidates.max],
    ]),
    '## Parameter kinds of the atom categories',
    '',
    'Share of records whose functions offer a top-level parameter of the kind / whose gold call fills one.',
    '',
    header('category', [...ATOM_KINDS]),
    ...atomRows,
  ].join('\n');
}

function languageTotal(statistics: AceStatistics, language: string): number {
  return Object.values(statistics.byCategory).reduce((sum, row) => sum + (row[language] ?? 0), 0);
}

/** The main figures, this version's beside the released set's, for the run log. */
function logTable(ours: AceStatistics, released: AceStatistics | null): string {
  const rows: [string, number | string, (number | string | null)?][] = [
    ['records', ours.records, released?.records],
    ...ACE_LANGUAGES.map((language): [string, number, number | null] => [`  ${language}`, languageTotal(ours, language), released && languageTotal(released, language)]),
    ...ACE_CATEGORIES.filter((c) => ours.byCategory[c] || released?.byCategory[c]).map((c): [string, number, number | null] => [`  ${c}`, categoryTotal(ours, c), released && categoryTotal(released, c)]),
    ['turns per dialogue (mean)', ours.meanTurns, released?.meanTurns],
    ['arguments per gold call (mean)', ours.meanArguments, released?.meanArguments],
    ['candidate functions: mean / min / max', candidates(ours), released && candidates(released)],
  ];
  return besideReleased(rows, released && 'ACEBench');
}

const categoryTotal = (statistics: AceStatistics, category: string) => Object.values(statistics.byCategory[category] ?? {}).reduce((sum, n) => sum + n, 0);
const candidates = (statistics: AceStatistics) => `${statistics.candidates.mean} / ${statistics.candidates.min} / ${statistics.candidates.max}`;

export interface StatisticsOptions {
  /** The released set whose figures are shown beside this version's. */
  released?: ReleasedPlace;
}

export function statisticsStage(options: StatisticsOptions): ScanStage<Sample, Sample, Tally<RecordFigures, AceStatistics>> {
  return statisticsBesideReleased({
    version: 1,
    title: 'ACEBench statistics',
    figures: figuresOfSample,
    tally: listTally(summarise),
    released: options.released,
    close: (ours, released) => ({
      reports: { acebench: { version: ours, ...(released ? { released } : {}) } },
      table: logTable(ours, released),
      attach: { 'acebench-statistics.md': `# ACEBench statistics\n\n${statisticsTables(ours, released)}\n` },
    }),
  });
}
