import { formatTable } from '../table.ts';
import type { OverlapLevel } from './config.ts';
import type { LevelCounts, OverlapReport } from './measure.ts';

/**
 * The overlap table, one per reference set: a row per split and category and one for all samples,
 * a column per level (samples at or over its threshold, and their share) and one for any level.
 * As plain text (the CLI) and as Markdown (the dataset card, the README).
 */

/** What the tables need of a report (a manifest's `stats.testOverlap` holds this much). */
export type OverlapTable = Pick<OverlapReport, 'samples' | 'levels' | 'rows' | 'total'> & { references: { name: string; kind: string; path: string; samples: number }[] };

const cell = (count: number | undefined, of: number) => `${count ?? 0} (${of ? (((count ?? 0) / of) * 100).toFixed(1) : '0.0'}%)`;

/** The header and rows of one reference set's table. */
export function overlapRows(table: OverlapTable, reference: string): { header: string[]; rows: string[][] } {
  const levels = table.levels.map((l) => l.level);
  const counts = (c: LevelCounts | undefined, of: number) => [...levels.map((level: OverlapLevel) => cell(c?.[level], of)), cell(c?.any, of)];
  return {
    header: ['split', 'category', 'samples', ...levels, 'any'],
    rows: [
      ...table.rows.map((row) => [row.split, row.category, String(row.samples), ...counts(row.overlap[reference], row.samples)]),
      ['all', '', String(table.samples), ...counts(table.total[reference], table.samples)],
    ],
  };
}

/** The thresholds in a line: `ngram-8 ≥ 0.5, …`. */
export function describeThresholds(table: Pick<OverlapTable, 'levels'>): string {
  return table.levels.map(({ level, threshold }) => `${level} ≥ ${threshold}`).join(', ');
}

export function formatOverlap(subject: string, table: OverlapTable): string {
  const sections = table.references.map((reference) => {
    const { header, rows } = overlapRows(table, reference.name);
    return [`against ${reference.name} (${reference.kind}, ${reference.samples} samples, ${reference.path}):`, formatTable(header, rows)].join('\n');
  });
  return [`${subject}: ${table.samples} samples; a sample overlaps at a level when its score reaches ${describeThresholds(table)}`, ...sections].join('\n\n');
}

const mdCell = (text: string) => text.replaceAll('|', '\\|');

export function overlapMarkdown(table: OverlapTable): string {
  return table.references
    .map((reference) => {
      const { header, rows } = overlapRows(table, reference.name);
      return [
        `Against \`${mdCell(reference.name)}\` (${reference.kind}, ${reference.samples} samples):`,
        '',
        `| ${header.join(' | ')} |`,
        `|${header.map((_, i) => (i < 2 ? '---' : '---:')).join('|')}|`,
        ...rows.map((row) => `| ${row.map(mdCell).join(' | ')} |`),
      ].join('\n');
    })
    .join('\n\n');
}
