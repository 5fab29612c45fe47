import type { Sample } from '../../core/records.ts';
import { SINGLE_TOOL_SPLIT } from './records.ts';

/**
 * A tool's popularity (paper Table 9): how many tools were merged into it. Each single-tool query
 * remembers the plugin it was generated for (`meta.generatedFor`), so a tool's popularity is the
 * number of distinct plugins among its queries — 1 for a tool left alone, more for a merged tool
 * or one that took over queries of a decomposed tool.
 */
export function popularity(samples: readonly Sample[]): Map<string, { plugins: number; queries: number }> {
  const plugins = new Map<string, Set<string>>();
  const queries = new Map<string, number>();
  for (const sample of samples) {
    if (sample.split !== SINGLE_TOOL_SPLIT) continue;
    const label = sample.expected.labels?.[0];
    if (!label) continue;
    const from = String(sample.meta.generatedFor ?? label);
    (plugins.get(label) ?? plugins.set(label, new Set()).get(label)!).add(from);
    queries.set(label, (queries.get(label) ?? 0) + 1);
  }
  return new Map([...plugins].map(([tool, set]) => [tool, { plugins: set.size, queries: queries.get(tool)! }]));
}

/** Tool names by popularity: merged-plugin count, then query count, then name. */
export function mostPopular(samples: readonly Sample[]): { tool: string; plugins: number; queries: number }[] {
  return [...popularity(samples)]
    .map(([tool, p]) => ({ tool, ...p }))
    .sort((a, b) => b.plugins - a.plugins || b.queries - a.queries || (a.tool < b.tool ? -1 : a.tool > b.tool ? 1 : 0));
}
