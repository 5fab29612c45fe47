import type { Sample } from '../../core/records.ts';
import { SINGLE_TOOL_SPLIT } from './records.ts';

/** What popularity needs of a single-tool sample: its label and the plugin it was generated for. */
export interface PopularityRow {
  label: string;
  from: string;
}

/** The popularity row of a sample, or null for a sample that does not count (not single-tool, no label). */
export function popularityRow(sample: Sample): PopularityRow | null {
  if (sample.split !== SINGLE_TOOL_SPLIT) return null;
  const label = sample.expected.labels?.[0];
  return label ? { label, from: String(sample.meta.generatedFor ?? label) } : null;
}

/**
 * A tool's popularity (paper Table 9): how many tools were merged into it. Each single-tool query
 * remembers the plugin it was generated for (`meta.generatedFor`), so a tool's popularity is the
 * number of distinct plugins among its queries — 1 for a tool left alone, more for a merged tool
 * or one that took over queries of a decomposed tool. Counted incrementally, so a whole-set stage
 * keeps only these counts.
 */
export class Popularity {
  private readonly plugins = new Map<string, Set<string>>();
  private readonly queries = new Map<string, number>();

  add(row: PopularityRow | null): void {
    if (!row) return;
    (this.plugins.get(row.label) ?? this.plugins.set(row.label, new Set()).get(row.label)!).add(row.from);
    this.queries.set(row.label, (this.queries.get(row.label) ?? 0) + 1);
  }

  byTool(): Map<string, { plugins: number; queries: number }> {
    return new Map([...this.plugins].map(([tool, set]) => [tool, { plugins: set.size, queries: this.queries.get(tool)! }]));
  }

  /** Tool names by popularity: merged-plugin count, then query count, then name. */
  ranked(): { tool: string; plugins: number; queries: number }[] {
    return [...this.byTool()]
      .map(([tool, p]) => ({ tool, ...p }))
      .sort((a, b) => b.plugins - a.plugins || b.queries - a.queries || (a.tool < b.tool ? -1 : a.tool > b.tool ? 1 : 0));
  }
}

export function popularity(samples: Iterable<Sample>): Map<string, { plugins: number; queries: number }> {
  const counts = new Popularity();
  for (const sample of samples) counts.add(popularityRow(sample));
  return counts.byTool();
}

/** Tool names by popularity: merged-plugin count, then query count, then name. */
export function mostPopular(samples: Iterable<Sample>): { tool: string; plugins: number; queries: number }[] {
  const counts = new Popularity();
  for (const sample of samples) counts.add(popularityRow(sample));
  return counts.ranked();
}
