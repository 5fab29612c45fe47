import { isJsonObject } from './records.ts';

/**
 * A version's statistics beside the released benchmark's, from what its statistics stage stored in
 * the manifest. Each recipe reports its own figures and the released set's under one stats key, as a
 * pair of sides (`generated`/`reference`, `version`/`released`, `ours`/`released`, `singleTool`/
 * `released`); every number found at the same path on both sides becomes a row.
 */

export interface ComparisonRow {
  /** The stats key the pair was stored under, e.g. `nestools.statistics`. */
  report: string;
  /** Dotted path of the figure inside each side, e.g. `callsPerSample` or `byCategory.easy`. */
  figure: string;
  generated: number;
  reference: number;
  /** generated / reference, or null when the reference is 0. */
  ratio: number | null;
}

const GENERATED_SIDES = ['generated', 'version', 'ours', 'singleTool'];
const REFERENCE_SIDES = ['reference', 'released'];

/** The rows of every stats entry that holds a generated side and a reference side. */
export function compareWithReference(stats: Record<string, unknown>): ComparisonRow[] {
  const rows: ComparisonRow[] = [];
  for (const [report, value] of Object.entries(stats)) {
    if (!isJsonObject(value)) continue;
    const referenceKey = REFERENCE_SIDES.find((key) => isJsonObject(value[key]));
    const generatedKey = GENERATED_SIDES.find((key) => isJsonObject(value[key]));
    if (!referenceKey || !generatedKey) continue;
    const reference = numbersOf(value[referenceKey]);
    let generated = numbersOf(value[generatedKey]);
    // A side kept per split (MTU: ours.test, ours.ood) is compared through its test split.
    if (![...generated.keys()].some((path) => reference.has(path))) generated = numbersOf((value[generatedKey] as Record<string, unknown>).test);
    for (const [figure, ours] of generated) {
      const theirs = reference.get(figure);
      if (theirs === undefined) continue;
      rows.push({ report, figure, generated: ours, reference: theirs, ratio: theirs === 0 ? null : ours / theirs });
    }
  }
  return rows;
}

/** Every finite number under a value, by dotted path (none for a value that is not an object). */
function numbersOf(value: unknown, prefix = '', out = new Map<string, number>()): Map<string, number> {
  if (!isJsonObject(value)) return out;
  for (const [key, item] of Object.entries(value)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (typeof item === 'number' && Number.isFinite(item)) out.set(path, item);
    else if (isJsonObject(item)) numbersOf(item, path, out);
  }
  return out;
}

/** The rows as a markdown table. */
export function formatComparison(rows: readonly ComparisonRow[]): string {
  const number = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(3));
  const lines = ['| report | figure | generated | reference | generated / reference |', '|---|---|---:|---:|---:|'];
  for (const row of rows) lines.push(`| ${row.report} | ${row.figure} | ${number(row.generated)} | ${number(row.reference)} | ${row.ratio === null ? '–' : row.ratio.toFixed(2)} |`);
  return lines.join('\n');
}
