import { Sample, type ToolSpec } from '../../core/records.ts';
import { scanStage, type RejectReason, type ScanStage, type StageContext } from '../../core/stage.ts';
import multiToolPrompt from '../../prompts/toole-multi-tool.ts';
import { dedupEntry, DedupNearConfig, findRepeats, reportRepeats } from '../dedup-near.ts';
import { filterContext, filterQuery, filterToolOf, queryOfSample, withQuery, type FilterOptions } from './filters.ts';
import { mostPopular } from './popularity.ts';
import { queryItem } from './records.ts';
import { querySample, SampleInput, toolLibrary } from './samples.ts';

/**
 * Multi-tool queries (paper §2.2.1 "Multi-tool queries generation"): after overlap resolution the
 * most popular tools (popularity.ts) are paired every way, and each pair gets queries that need
 * both tools, used in parallel or causally, without naming them; each query keeps both labels.
 * The new queries then pass the same filters as single-tool ones and the shared near-duplicate
 * stage (among the queries of one pair). One scan stage: the ~100 requests run concurrently in
 * `collect` (the gateway's limits apply), a failed one is rejected as its pair with the reason.
 */
export interface MultiToolOptions {
  /** How many of the most popular tools are paired (15). */
  topTools: number;
  /** Queries asked for per pair (5). */
  perPair: number;
  filters: FilterOptions;
  /** Levenshtein ratio of the near-duplicate check. */
  dedupRatio: number;
}

type Rejected = RejectReason & { record: unknown };

async function pairQueries(pair: [ToolSpec, ToolSpec], count: number, ctx: StageContext): Promise<Sample[] | Rejected> {
  const [first, second] = pair;
  const key = `pair:${first.name}+${second.name}`;
  const answer = await ctx.tryAsk(multiToolPrompt, { firstName: first.name, firstDescription: first.description, secondName: second.name, secondDescription: second.description, count }, { key });
  if (!answer.ok) return { reason: answer.reason, detail: answer.detail, recordId: key, record: { pair: [first.name, second.name], count } };
  const tools = new Map(pair.map((t) => [t.name, t]));
  return answer.value.queries.slice(0, count).map((q, index) =>
    querySample(
      queryItem({ text: q.query.trim(), tool: first.name, tools: [first.name, second.name], method: 'multi-tool', ...(q.usage && { usage: q.usage }), generatedFor: first.name, checks: [], tags: [], lineage: [answer.lineage] }, { job: key, index }),
      tools,
    ),
  );
}

interface MultiToolState {
  kept: Sample[];
  rejects: Rejected[];
}

export function multiToolStage(options: MultiToolOptions): ScanStage<Sample, Sample, MultiToolState> {
  const dedup = DedupNearConfig.parse({ ratio: options.dedupRatio, scope: 'label' });
  return scanStage({
    name: 'toole-multi-tool',
    version: 1,
    fanOut: true,
    input: SampleInput,
    // The input samples were validated by the stages before: only the new ones are parsed (in finish).
    output: SampleInput,
    prompts: [multiToolPrompt],
    // Two passes hold the tool library and the popularity counts, not the samples.
    collect: async (samples, ctx) => {
      const library = toolLibrary(samples);
      const top = mostPopular(samples).filter((t) => library.has(t.tool)).slice(0, options.topTools);
      const pairs: [ToolSpec, ToolSpec][] = [];
      if (options.perPair > 0) for (let a = 0; a < top.length; a++) for (let b = a + 1; b < top.length; b++) pairs.push([library.get(top[a].tool)!, library.get(top[b].tool)!]);

      const rejects: Rejected[] = [];
      const generated: Sample[] = [];
      for (const result of await Promise.all(pairs.map((pair) => pairQueries(pair, options.perPair, ctx)))) {
        if (Array.isArray(result)) generated.push(...result);
        else rejects.push(result);
      }
      // The filters of Appendix A.3, as for single-tool queries.
      const filter = filterContext([...library.values()].map(filterToolOf), options.filters);
      const passed: Sample[] = [];
      for (const sample of generated) {
        const outcome = filterQuery(queryOfSample(sample), filter);
        if ('reject' in outcome) rejects.push({ ...outcome.reject, recordId: sample.id, record: sample });
        else passed.push(withQuery(sample, outcome.query));
      }
      // Near-duplicates among the queries of one pair.
      const repeats = findRepeats(passed.map((sample) => dedupEntry(sample, dedup)), dedup);
      for (const [i, why] of repeats.rejects) rejects.push({ ...why, record: passed[i] });
      reportRepeats(ctx, dedup, passed.length, repeats.rejects.values(), repeats.comparisons, '.multiTool');
      const kept = passed.filter((_, i) => !repeats.rejects.has(i));

      ctx.report('toole.multiTool', {
        popularTools: top.map((t) => ({ tool: t.tool, mergedTools: t.plugins, queries: t.queries })),
        pairs: pairs.length,
        requested: pairs.length * options.perPair,
        generated: generated.length,
        kept: kept.length,
      });
      ctx.log(`${top.length} most popular tools → ${pairs.length} pairs → ${generated.length} queries, ${kept.length} kept`);
      return { kept, rejects };
    },
    // Every sample stays; the multi-tool queries follow them.
    run: (sample) => sample,
    finish: ({ kept, rejects }) => ({ out: kept.map((sample) => Sample.parse(sample)), rejects }),
  });
}
