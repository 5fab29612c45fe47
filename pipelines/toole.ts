import { z } from 'zod';
import { EmbedderConfig } from '../core/embed/index.ts';
import { definePipeline, type ReleasedSamples } from '../core/pipeline.ts';
import { dedupNearStage } from '../stages/dedup-near.ts';
import { commonExporters } from '../stages/export/index.ts';
import { UserError } from '../core/errors.ts';
import { AUTO_MERGE_CHECK, AUTO_MERGE_TAG, MergeToolsMetatoolConfig, mergeToolsMetatoolStage, metatoolToolQuestions, withOverlapDecisions, type UndecidedProposal } from '../stages/merge-tools-metatool.ts';
import { loadMetatoolPluginsStage } from '../stages/sources/metatool-plugins.ts';
import { detailsHandler } from '../stages/toole/details.ts';
import { directHandler } from '../stages/toole/direct.ts';
import { emotionalHandler } from '../stages/toole/emotional.ts';
import { exportToolE } from '../stages/toole/export.ts';
import { filterQueriesStage } from '../stages/toole/filters.ts';
import { jobStage } from '../stages/toole/jobs.ts';
import { keywordExtractionHandler, keywordQueriesHandler } from '../stages/toole/keywords.ts';
import { multiToolStage } from '../stages/toole/multi-tool.ts';
import { reassignStage, withOverlapPlots } from '../stages/toole/overlap.ts';
import { planQueriesStage } from '../stages/toole/plan-queries.ts';
import { recheckToolESample } from '../stages/toole/recheck.ts';
import { releasedMetaTool, releasedMetaToolItems } from '../stages/toole/released.ts';
import { GENERATION_METHODS } from '../stages/toole/records.ts';
import { querySamplesStage } from '../stages/toole/samples.ts';
import { statisticsStage } from '../stages/toole/statistics.ts';
import { tooleScorer } from '../stages/toole/score.ts';
import { taskSetsStage } from '../stages/toole/task-sets.ts';
import { toolDescriptionsStage } from '../stages/toole/tool-descriptions.ts';

const DATA = '../shared/data';
const REFERENCE = `${DATA}/reference/metatool`;
const count = (value: number) => z.number().int().min(0).default(value);

/** The released MetaTool data: audited as samples, scored as task items drawn from its files, beside the run's statistics. */
export const RELEASED_METATOOL: ReleasedSamples = {
  name: 'metatool',
  path: REFERENCE,
  files: 'all_clean_data.csv, multi_tool_query_golden.json, plugin_des.json, big_tool_des.json, scenario/*.json',
  read: (dir) => releasedMetaTool(dir),
  items: (dir) => releasedMetaToolItems(dir),
};

/** Tool-retrieval plugins: they find other tools, which conflicts with the tasks (paper Appendix A.3). */
const TOOL_RETRIEVAL = ['plug_finder', 'Gate2AI', 'Pluginpedia', 'aitoolhunt', 'paxiai', 'theresanaiforthat'];

export const TooleConfig = z
  .object({
    source: z.object({ file: z.string().default(`${DATA}/sources/metatool/plugin_info.json`) }).strict().prefault({}),
    descriptions: z
      .object({
        /** A user-facing description with fewer meaningful words is unusable. */
        minWords: count(2),
        exclude: z.array(z.object({ tool: z.string(), reason: z.string() }).strict()).default(TOOL_RETRIEVAL.map((tool) => ({ tool, reason: 'tool retrieval tool (Appendix A.3)' }))),
      })
      .strict()
      .prefault({}),
    /** Queries per tool and method; defaults of Appendix A.5. A count of 0 turns a method off. */
    generation: z
      .object({
        direct: z.object({ rounds: count(2), perRound: count(10) }).strict().prefault({}),
        emotional: z.object({ emotions: z.array(z.string().min(1)).default(['happiness', 'excitement', 'anger', 'depression']), perEmotion: count(5) }).strict().prefault({}),
        keyword: z.object({ keywords: count(5) }).strict().prefault({}),
        details: z.object({ enabled: z.boolean().default(true) }).strict().prefault({}),
      })
      .strict()
      .prefault({}),
    filters: z
      .object({
        maxWords: z.number().int().min(1).default(150),
        maxChars: z.number().int().min(1).default(1200),
        chatgptReplacement: z.string().default('Chatbot'),
        calculationPattern: z.string().default(String.raw`\b(calculat\w*|arithmetic|mathemat\w*|math|equations?|formulas?)\b`),
        calculationTools: z.array(z.string()).default([]),
        simpleArithmetic: z.enum(['flag', 'reject']).default('flag'),
      })
      .strict()
      .prefault({}),
    /** Near-duplicate removal (Appendix A.3 "high repetition"), among the queries of one tool. */
    dedup: z.object({ ratio: z.number().gt(0).max(1).default(0.9), scope: z.enum(['label', 'all']).default('label') }).strict().prefault({}),
    /** Overlap resolution (Appendix A.1–A.2), by the shared MetaTool merging stage; ToolE's defaults. */
    overlap: MergeToolsMetatoolConfig.extend({
      threshold: z.number().min(0).max(2).default(0.45),
      /** Proposals no decision covers: merged (a dataset with merged tools, as the paper's, to review) or kept. */
      undecided: z.enum(['merge', 'keep']).default('merge'),
      silhouetteClusters: z.array(z.number().int().min(2)).default([10, 20, 30, 40, 50]),
      /** Cluster count the before/after plots are coloured by (the paper's Figure 9 uses 30). */
      plotClusters: z.number().int().min(1).default(30),
    }).prefault({}),
    multiTool: z.object({ topTools: count(15), perPair: count(5) }).strict().prefault({}),
    tasks: z
      .object({
        embedder: EmbedderConfig.default({ kind: 'lexical' }),
        awareness: z.object({ noToolFile: z.string().default('pipelines/data/toole-no-tool-queries.jsonl'), positives: z.number().int().min(0).optional() }).strict().prefault({}),
        similar: z.object({ perTool: count(5), candidates: z.number().int().min(2).default(10) }).strict().prefault({}),
        scenario: z
          .object({
            popularity: z.array(z.number().int().min(2)).default([5, 10, 15]),
            groups: z
              .array(z.union([z.string(), z.object({ name: z.string().min(1), tools: z.array(z.string()) }).strict()]))
              .default(['Software Engineer', 'elders', 'Finance Staff', 'Housewife', 'Students', 'artists&designers'].map((name) => `${REFERENCE}/scenario/${name}.json`)),
            perTool: count(20),
          })
          .strict()
          .prefault({}),
        reliability: z.object({ perTool: count(5), candidates: z.number().int().min(1).default(10), excludeSimilar: count(20) }).strict().prefault({}),
        multiTool: z.object({ candidates: z.number().int().min(2).default(10), excludeSimilar: count(20) }).strict().prefault({}),
      })
      .strict()
      .prefault({}),
    statistics: z.object({ reference: z.string().nullable().default(`${REFERENCE}/all_clean_data.csv`) }).strict().prefault({}),
  })
  .strict();
export type TooleConfig = z.infer<typeof TooleConfig>;

/**
 * ToolE (MetaTool, Huang et al.): user queries that need a tool, generated from tool descriptions.
 *  1. Tool descriptions from the OpenAI plugin records (user-facing one definitive).
 *  2. Single-tool queries: emotional, keyword, direct diverse and details generation.
 *  3. Filters of the human validation guidelines (A.3); the queries become canonical samples;
 *     near-duplicates removed (shared dedup stage).
 *  4. Overlap resolution (shared MetaTool merging stage): proposals from description clusters,
 *     merge / decompose decisions, LLM-written descriptions, silhouette before/after; 2-D plots;
 *     an LLM classifier for decomposed tools' queries no decision assigned.
 *  5. Multi-tool queries for every pair of the most popular tools, filtered and de-duplicated.
 *  6. Statistics beside the released CSV, and the MetaTool task sets.
 */
export const toolePipeline = definePipeline<TooleConfig>({
  name: 'toole',
  benchmark: 'toole',
  description: 'ToolE / MetaTool: plugin descriptions → four generation methods → filters → overlap resolution → multi-tool queries → task sets',
  configSchema: TooleConfig,
  sourceFiles: (config) => [
    config.source.file,
    config.tasks.awareness.noToolFile,
    ...config.tasks.scenario.groups.filter((g): g is string => typeof g === 'string'),
    ...(typeof config.overlap.decisions === 'string' ? [config.overlap.decisions] : []),
    ...(config.statistics.reference ? [config.statistics.reference] : []),
  ],
  stages: (config) => {
    const { plotClusters, ...merge } = config.overlap;
    return [
      loadMetatoolPluginsStage(config.source),
      toolDescriptionsStage(config.descriptions),
      planQueriesStage(config.generation),
      // Emotional, keyword-extraction and direct requests, then what their answers call for.
      jobStage({ name: 'toole-generate', version: 1, handlers: { emotional: emotionalHandler, 'keyword-extract': keywordExtractionHandler, direct: directHandler({ details: config.generation.details.enabled }) } }),
      jobStage({ name: 'toole-generate-followups', version: 1, handlers: { keyword: keywordQueriesHandler, details: detailsHandler } }),
      filterQueriesStage(config.filters, { name: 'toole-filter-queries', methods: GENERATION_METHODS }),
      querySamplesStage(),
      dedupNearStage({ ratio: config.dedup.ratio, scope: config.dedup.scope }),
      withOverlapPlots(mergeToolsMetatoolStage(merge), { embedder: merge.embedder, linkage: merge.linkage, clusters: plotClusters }),
      // Only decisions decompose tools: without a decisions file there is nothing to reassign.
      ...(config.overlap.decisions ? [reassignStage()] : []),
      multiToolStage({ ...config.multiTool, filters: config.filters, dedupRatio: config.dedup.ratio }),
      taskSetsStage(config.tasks),
      statisticsStage({ released: { set: RELEASED_METATOOL, path: config.statistics.reference, setting: 'statistics.reference' } }),
    ];
  },
  exports: { toole: exportToolE, ...commonExporters },
  scorer: tooleScorer,
  // Merge proposals nobody decided: one tool-sheet row each, not a queue item per relabelled query.
  toolReview: {
    checks: [AUTO_MERGE_CHECK],
    tags: [AUTO_MERGE_TAG],
    questions: (manifest) => metatoolToolQuestions(manifest.stats.toolMergeMetatool as { undecided?: UndecidedProposal[] } | undefined),
    withDecisions: (config, decisions) => {
      const given = config.overlap.decisions;
      if (typeof given === 'string') throw new UserError(`this version was made with the overlap decisions file ${given}: add the tool sheet's decisions to that file and run the recipe again`);
      return { ...config, overlap: { ...config.overlap, decisions: withOverlapDecisions(given, decisions) } };
    },
  },
  recheck: (sample, tools) => recheckToolESample(sample, tools, TooleConfig.parse({}).filters),
  released: [RELEASED_METATOOL],
});
