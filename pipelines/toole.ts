import { z } from 'zod';
import { EMBEDDER_CHOICES, EmbedderConfig } from '../core/embed/index.ts';
import { OverlapConfig } from '../core/overlap/config.ts';
import { definePipeline, type ReleasedSamples } from '../core/pipeline.ts';
import { dedupNearStage } from '../stages/dedup-near.ts';
import { commonExporters, trlExporterOnCall } from '../stages/export/index.ts';
import { UserError } from '../core/errors.ts';
import { AUTO_MERGE_CHECK, AUTO_MERGE_TAG, MergeToolsMetatoolConfig, mergeToolsMetatoolStage, metatoolToolQuestions, withOverlapDecisions, type UndecidedProposal } from '../stages/merge-tools-metatool.ts';
import { importedPluginsStage, loadMetatoolPluginsStage } from '../stages/sources/metatool-plugins.ts';
import { ToolsConfigField, toolSourceFiles } from '../core/tool-source.ts';
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
import { RECIPE_SUMMARIES } from './summaries.ts';

const DATA = '../shared/data';
const REFERENCE = `${DATA}/reference/metatool`;
const count = (value: number, what: string) => z.number().int().min(0).default(value).describe(what);
const PER_TOOL = 'queries taken per tool (seeded; fewer when a tool has fewer)';

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

/** The keys ToolE takes from the shared MetaTool merging stage, described for ToolE's overlap section. */
const shared = MergeToolsMetatoolConfig.shape;

export const TooleConfig = z
  .object({
    source: z
      .object({
        file: z
          .string()
          .default(`${DATA}/sources/metatool/plugin_info.json`)
          .describe('JSON list of OpenAI plugin records {"name_for_model", "name_for_human", "description_for_model", "description_for_human"} (MetaTool\'s plugin_info.json)'),
      })
      .strict()
      .prefault({})
      .describe('the plugin records the tools are made from'),
    tools: ToolsConfigField,
    descriptions: z
      .object({
        minWords: count(2, 'a user-facing description with fewer meaningful words is rejected as unusable'),
        exclude: z
          .array(z.object({ tool: z.string().describe('the plugin\'s model name (name_for_model)'), reason: z.string().describe('why: the reject reason\'s detail') }).strict())
          .default(TOOL_RETRIEVAL.map((tool) => ({ tool, reason: 'tool retrieval tool (Appendix A.3)' })))
          .describe('tools left out, each with why (A.3: tool-retrieval and all-in-one AI tools)'),
      })
      .strict()
      .prefault({})
      .describe('tool descriptions (§2.2.1): each plugin becomes a tool whose definitive description is the user-facing one'),
    generation: z
      .object({
        direct: z
          .object({ rounds: count(2, 'requests per tool'), perRound: count(10, 'queries asked for in each request') })
          .strict()
          .prefault({})
          .describe('direct diverse generation'),
        emotional: z
          .object({
            emotions: z.array(z.string().min(1)).default(['happiness', 'excitement', 'anger', 'depression']).describe('the emotions, one request per tool each'),
            perEmotion: count(5, 'queries asked for per emotion'),
          })
          .strict()
          .prefault({})
          .describe('emotional generation: queries written in an emotion'),
        keyword: z.object({ keywords: count(5, 'keywords extracted per tool, then one query asked for per keyword') }).strict().prefault({}).describe('keyword generation'),
        details: z.object({ enabled: z.boolean().default(true).describe('rewrite every direct query with details') }).strict().prefault({}).describe('details generation'),
      })
      .strict()
      .prefault({})
      .describe('single-tool queries per tool and method (defaults of Appendix A.5); a count of 0 turns a method off'),
    filters: z
      .object({
        maxWords: z.number().int().min(1).default(150).describe('a query with more words is rejected (overlong_query)'),
        maxChars: z.number().int().min(1).default(1200).describe('a query with more characters is rejected (overlong_query)'),
        chatgptReplacement: z.string().default('Chatbot').describe('what "ChatGPT" in a query becomes ("" leaves it)'),
        calculationPattern: z
          .string()
          .default(String.raw`\b(calculat\w*|arithmetic|mathemat\w*|math|equations?|formulas?)\b`)
          .describe('regular expression (case-insensitive) on a tool\'s name and description that makes it a calculation tool ("" for none)'),
        calculationTools: z.array(z.string()).default([]).describe('further calculation tools, by name'),
        simpleArithmetic: z.enum(['flag', 'reject']).default('flag').describe('simple arithmetic asked of a calculation tool: flag (soft check and tag, for review) or reject'),
      })
      .strict()
      .prefault({})
      .describe('query filters of the human validation guidelines (Appendix A.3), for single- and multi-tool queries'),
    dedup: z
      .object({
        ratio: z.number().gt(0).max(1).default(0.9).describe('Levenshtein ratio at or above which two queries are near-duplicates (the later one is rejected)'),
        scope: z.enum(['label', 'all']).default('label').describe('label: queries compared only with those of the same tool(s); all: across the whole set'),
      })
      .strict()
      .prefault({})
      .describe('near-duplicate removal (Appendix A.3 "high repetition") by the shared dedup stage'),
    overlap: MergeToolsMetatoolConfig.extend({
      embedder: shared.embedder.describe(`how tool descriptions are embedded for the proposals: ${EMBEDDER_CHOICES}`),
      linkage: shared.linkage.describe('hierarchical clustering linkage: single, complete or average'),
      threshold: z.number().min(0).max(2).default(0.45).describe('cosine distance at or below which tools are proposed for merging'),
      decisions: shared.decisions.describe(
        'merge / decompose / keep decisions: a .json file shaped as the proposals file a run writes, a .csv (columns decision, tool, into, query, description), or the decisions inline; unset: proposals only',
      ),
      undecided: z.enum(['merge', 'keep']).default('merge').describe('proposals no decision covers: merge (a dataset with merged tools, as the paper\'s, to review) or keep'),
      describe: shared.describe.describe('ask the LLM for a merged tool\'s description when the decision gives none (else the members\' joined)'),
      silhouetteClusters: z.array(z.number().int().min(2)).default([10, 20, 30, 40, 50]).describe('cluster counts at which the silhouette of the description embedding is compared before and after'),
      plotClusters: z.number().int().min(1).default(30).describe('cluster count the before / after plots are coloured by (the paper\'s Figure 9 uses 30)'),
    })
      .prefault({})
      .describe('overlap resolution (Appendix A.1–A.2) by the shared MetaTool merging stage: similar tools proposed for merging, decided, queries relabelled'),
    multiTool: z
      .object({ topTools: count(15, 'how many of the most popular tools are paired (every pair)'), perPair: count(5, 'queries asked for per pair') })
      .strict()
      .prefault({})
      .describe('multi-tool queries needing two tools, for every pair of the most popular tools'),
    tasks: z
      .object({
        embedder: EmbedderConfig.default({ kind: 'lexical' }).describe(`how tool descriptions are embedded to rank similar tools: ${EMBEDDER_CHOICES}`),
        awareness: z
          .object({
            noToolFile: z.string().default('pipelines/data/toole-no-tool-queries.jsonl').describe('queries that need no tool (the "no" side), JSONL of {"query", "source"?}'),
            positives: z.number().int().min(0).optional().describe('ToolE queries taken as the "yes" side, one per tool in turn; unset: as many as the no-tool queries'),
          })
          .strict()
          .prefault({})
          .describe('awareness of tool usage: queries that need a tool against queries that need none'),
        similar: z
          .object({ perTool: count(5, PER_TOOL), candidates: z.number().int().min(2).default(10).describe('tools offered: the gold tool and its most similar ones') })
          .strict()
          .prefault({})
          .describe('tool selection with similar choices'),
        scenario: z
          .object({
            popularity: z.array(z.number().int().min(2)).default([5, 10, 15]).describe('scenarios made of the k most popular tools (TopTool_top<k>), one per k'),
            groups: z
              .array(z.union([z.string(), z.object({ name: z.string().min(1), tools: z.array(z.string()) }).strict()]))
              .default(['Software Engineer', 'elders', 'Finance Staff', 'Housewife', 'Students', 'artists&designers'].map((name) => `${REFERENCE}/scenario/${name}.json`))
              .describe('scenario tool lists: MetaTool scenario files {"Tools": […]} or folders of them, or inline {"name", "tools"}'),
            perTool: count(20, PER_TOOL),
          })
          .strict()
          .prefault({})
          .describe('tool selection in specific scenarios: the tool list of a scenario'),
        reliability: z
          .object({
            perTool: count(5, PER_TOOL),
            candidates: z.number().int().min(1).default(10).describe('tools offered, drawn at random from those left (the answer: none of these)'),
            excludeSimilar: count(20, 'the gold tool\'s most similar tools, removed with it'),
          })
          .strict()
          .prefault({})
          .describe('tool selection with reliability issues: the gold tool and its most similar tools not offered'),
        multiTool: z
          .object({
            candidates: z.number().int().min(2).default(10).describe('tools offered, the two gold tools among them'),
            excludeSimilar: count(20, 'of each gold tool, its most similar tools never offered beside it'),
          })
          .strict()
          .prefault({})
          .describe('multi-tool selection: the gold tools among tools similar to neither'),
      })
      .strict()
      .prefault({})
      .describe('MetaTool\'s evaluation task sets (§2.3), built from the finished queries'),
    statistics: z
      .object({ reference: z.string().nullable().default(`${REFERENCE}/all_clean_data.csv`).describe('the released all_clean_data.csv (Query,Tool) the statistics are compared with; null skips the comparison') })
      .strict()
      .prefault({})
      .describe('the query statistics, beside the released set\'s'),
    testOverlap: OverlapConfig,
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
  description: RECIPE_SUMMARIES.toole.description,
  configSchema: TooleConfig,
  sourceFiles: (config) => [
    ...(config.tools ? toolSourceFiles(config.tools) : [config.source.file]),
    config.tasks.awareness.noToolFile,
    ...config.tasks.scenario.groups.filter((g): g is string => typeof g === 'string'),
    ...(typeof config.overlap.decisions === 'string' ? [config.overlap.decisions] : []),
    ...(config.statistics.reference ? [config.statistics.reference] : []),
  ],
  stages: (config) => {
    const { plotClusters, ...merge } = config.overlap;
    return [
      config.tools ? importedPluginsStage(config.tools) : loadMetatoolPluginsStage(config.source),
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
  exports: { toole: exportToolE, ...commonExporters, trl: trlExporterOnCall(undefined, tooleScorer) },
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
  testOverlap: (config) => config.testOverlap,
});
