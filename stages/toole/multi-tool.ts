import { countBy } from '../../core/collections.ts';
import type { BatchStage } from '../../core/stage.ts';
import multiToolPrompt from '../../prompts/toole-multi-tool.ts';
import { generate, queriesOf, type JobHandler } from './jobs.ts';
import { TooleItem, briefOf, jobItem, type TooleTool } from './records.ts';

/**
 * Multi-tool queries (paper §2.2.1 "Multi-tool queries generation"): after overlap resolution, the
 * most popular tools — popularity being how many plugins were merged into a tool (Table 9), ties
 * broken by query count, then name — are paired every way, and each pair gets queries that need
 * both tools, in parallel or causally, without naming them. Each query keeps both labels.
 */
export interface MultiToolOptions {
  /** How many of the most popular tools are paired (15). */
  topTools: number;
  /** Queries asked for per pair (5). */
  perPair: number;
}

/** Tools by popularity: merged-plugin count, then query count, then name. */
export function popularTools(tools: TooleTool[], queryCounts: Record<string, number>): TooleTool[] {
  return [...tools].sort((a, b) => b.members.length - a.members.length || (queryCounts[b.name] ?? 0) - (queryCounts[a.name] ?? 0) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

export function planMultiToolStage(options: MultiToolOptions): BatchStage<TooleItem, TooleItem> {
  return {
    kind: 'batch',
    name: 'toole-plan-multi-tool',
    version: 1,
    cardinality: 'fan-out',
    input: TooleItem,
    output: TooleItem,
    run: async (items, ctx) => {
      const tools = items.flatMap((item) => (item.kind === 'tool' ? [item.tool] : []));
      const counts = countBy(items.flatMap((item) => (item.kind === 'query' ? [item.query.tool] : [])));
      // A tool with no query left cannot be popular with users of the dataset.
      const top = popularTools(tools.filter((t) => (counts[t.name] ?? 0) > 0), counts).slice(0, options.topTools);
      const jobs: TooleItem[] = [];
      if (options.perPair > 0) {
        for (let a = 0; a < top.length; a++) {
          for (let b = a + 1; b < top.length; b++) jobs.push(jobItem({ method: 'multi-tool', tools: [briefOf(top[a]), briefOf(top[b])], count: options.perPair }));
        }
      }
      ctx.report('toole.popularTools', top.map((t) => ({ tool: t.name, mergedTools: t.members.length, queries: counts[t.name] ?? 0 })));
      ctx.log(`${top.length} most popular tools → ${jobs.length} pairs`);
      return { out: [...items, ...jobs] };
    },
  };
}

export const multiToolHandler: JobHandler = {
  prompts: [multiToolPrompt],
  run: async (job, item, ctx, stage) => {
    const [first, second] = job.tools;
    const answer = await generate(ctx, stage, multiToolPrompt, { firstName: first.name, firstDescription: first.description, secondName: second.name, secondDescription: second.description, count: job.count });
    if (!answer.ok) return answer.rejection;
    const found = answer.value.queries.map((q) => ({ text: q.query, fields: { tools: [first.name, second.name], usage: q.usage ?? undefined } }));
    return queriesOf(item, found, 'multi-tool', answer.lineage);
  },
};
