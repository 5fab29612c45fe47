import { z } from 'zod';
import { EMBEDDER_CHOICES, EmbedderConfig } from '../core/embed/index.ts';
import { OverlapConfig } from '../core/overlap/config.ts';
import { definePipeline, exporterOnCall, type ReleasedSamples } from '../core/pipeline.ts';
import { agentTasksStage } from '../stages/acebench/agent-tasks.ts';
import { contextTreeStage } from '../stages/acebench/api-tree.ts';
import { checkApisStage } from '../stages/acebench/api-check.ts';
import { synthesiseApisStage } from '../stages/acebench/api-synthesis.ts';
import { candidatesStage, RELEASED_INSTANCES } from '../stages/acebench/candidates.ts';
import { aceGoldReply } from '../stages/acebench/chat-answer.ts';
import { writeDialoguesStage } from '../stages/acebench/dialogues.ts';
import { exportAceBench } from '../stages/acebench/export.ts';
import { acebenchAudits } from '../stages/acebench/audit.ts';
import { importAceFolder, importStage } from '../stages/acebench/import.ts';
import { importedApisStage } from '../stages/acebench/imported-apis.ts';
import { ToolsConfigField, toolSourceFiles } from '../core/tool-source.ts';
import { ACE_CATEGORIES, ACE_LANGUAGES } from '../stages/acebench/record.ts';
import { asSamplesStage } from '../stages/acebench/samples.ts';
import { acebenchScorer } from '../stages/acebench/score.ts';
import { statisticsStage } from '../stages/acebench/statistics.ts';
import { translateStage } from '../stages/acebench/translate.ts';
import { judgeStage, ruleCheckStage } from '../stages/acebench/verify.ts';
import { commonExporters, trlExporterOnCall } from '../stages/export/index.ts';
import { RECIPE_SUMMARIES } from './summaries.ts';

/**
 * ACEBench (Chen et al.), §3.1: a context tree domain → subdomain → functionality grown step by
 * step (optionally from the user's documents), APIs synthesised for each functionality, checked and
 * de-duplicated; 3–6 candidate APIs per instance (random, similar, graph-linked); dialogues written
 * by a single template-based generator or, for multi-turn categories, by user / assistant / tool
 * agents; agent tasks over executable sandboxes whose final state is executed, not written; then
 * the multi-stage verification (rules, then a vote of k judges; what fails goes to review), the
 * translation into the other language, and the statistics beside the release's.
 * With `importDir` set, a folder laid out like the release is imported instead.
 */
const language = z.enum(ACE_LANGUAGES);
export const AceBenchConfig = z
  .object({
    language: language.default('en').describe(`the language the records are generated in: ${ACE_LANGUAGES.join(' or ')}`),
    translate: z.array(language).default([]).describe('languages each record is also published in, by translation (e.g. ["zh"]); agent tasks are built in each'),
    scale: z.number().min(0).default(1).describe('× the released instance count of every category (1 ≈ 1,000 records per language)'),
    counts: z
      .partialRecord(z.enum(ACE_CATEGORIES), z.number().int().min(0))
      .default({})
      .describe('instances per category instead of the scaled released count, e.g. {"normal_atom_bool": 10, "agent_multi_step": 0}'),
    documents: z.array(z.string()).default([]).describe('text / Markdown files or folders whose content guides the context tree: a folder\'s documents (any depth) are a new domain named after it, a file joins its folder\'s domain'),
    tree: z
      .object({
        domains: z.number().int().min(1).default(60).describe('domains taken from the domain lists (seeded); the documents\' domains come on top'),
        subdomainsPerDomain: z.number().int().min(1).default(3).describe('subdomains grown under each domain'),
        functionalitiesPerSubdomain: z.number().int().min(1).default(3).describe('functionalities grown under each subdomain'),
        rounds: z.number().int().min(1).default(2).describe('proposal steps per node, each asking for part of what is still missing given what exists'),
        fieldsFile: z.string().default('../shared/data/sources/nestools/fields.json').describe('domain list: a JSON list of "Domain/Subdomain" strings (NesTools fields.json); "" skips it'),
        sealFieldsFile: z.string().default('../shared/data/sources/seal-tools/field.jsonl').describe('domain list: JSONL of {"Domain": ["Subdomain", …]} (Seal-Tools field.jsonl); "" skips it'),
      })
      .strict()
      .prefault({})
      .describe('the API context tree domain → subdomain → functionality (§3.1.1), grown step by step'),
    apisPerFunctionality: z.number().int().min(1).default(2).describe('APIs synthesised for each functionality of the tree'),
    dedupRatio: z.number().gt(0).max(1).default(0.9).describe('Levenshtein ratio of two APIs\' "name: description" at or above which they count as the same API (the later one is dropped)'),
    embedder: EmbedderConfig.default({ kind: 'lexical' }).describe(`how APIs are embedded to find a target's nearest ones (normal_similar_api): ${EMBEDDER_CHOICES}`),
    judges: z.number().int().min(0).default(3).describe('LLM judges voting on each record (§3.1.2); more than half against sends it to review; 0 skips the vote'),
    referenceDir: z.string().default('../shared/data/reference/acebench').describe('the released ACEBench folder (data_en/, data_zh/) the statistics are compared with ("" to skip)'),
    tools: ToolsConfigField,
    importDir: z.string().default('').describe('instead of generating: import this folder laid out like the release (data_en/, data_zh/ with data_<category>.json files and possible_answer/)'),
    testOverlap: OverlapConfig,
  })
  .strict();
export type AceBenchConfig = z.infer<typeof AceBenchConfig>;

/** The released ACEBench files: audited and scored as samples, beside the run's statistics. */
export const RELEASED_ACEBENCH: ReleasedSamples = {
  name: 'acebench',
  path: '../shared/data/reference/acebench',
  files: 'data_en/ and data_zh/ with possible_answer/',
  read: (dir) => ({ samples: () => importAceFolder(dir) }),
};

export const acebenchPipeline = definePipeline<AceBenchConfig>({
  name: 'acebench',
  benchmark: 'acebench',
  description: RECIPE_SUMMARIES.acebench.description,
  configSchema: AceBenchConfig,
  sourceFiles: (config) => (config.tools ? [...toolSourceFiles(config.tools), config.importDir, config.referenceDir] : [config.tree.fieldsFile, config.tree.sealFieldsFile, ...config.documents, config.importDir, config.referenceDir]).filter(Boolean),
  stages: (config) => {
    const statistics = statisticsStage({ released: { set: RELEASED_ACEBENCH, path: config.referenceDir, setting: 'referenceDir' } });
    if (config.importDir) return [importStage({ importDir: config.importDir }), statistics];
    // An imported tool library is the API pool: no context tree, no synthesis.
    const pool = config.tools
      ? [importedApisStage({ tools: config.tools, language: config.language })]
      : [contextTreeStage({ ...config.tree, documents: config.documents }), synthesiseApisStage({ languages: [config.language], apisPerFunctionality: config.apisPerFunctionality, documents: config.documents })];
    const languages = [config.language];
    const agentCount = (category: 'agent_multi_step' | 'agent_multi_turn') => config.counts[category] ?? Math.round(RELEASED_INSTANCES[category] * config.scale);
    return [
      ...pool,
      checkApisStage({ ratio: config.dedupRatio }),
      candidatesStage({ scale: config.scale, counts: config.counts, languages, embedder: config.embedder }),
      writeDialoguesStage(),
      // Agent tasks are built in every published language (each has its own sandboxes), not translated.
      agentTasksStage({ languages: [...new Set([config.language, ...config.translate])], counts: { agent_multi_step: agentCount('agent_multi_step'), agent_multi_turn: agentCount('agent_multi_turn') } }),
      asSamplesStage(),
      ruleCheckStage(),
      ...(config.judges > 0 ? [judgeStage({ judges: config.judges })] : []),
      ...(config.translate.some((to) => to !== config.language) ? [translateStage({ into: config.translate })] : []),
      statistics,
    ];
  },
  exports: {
    ...commonExporters,
    'openai-chat': exporterOnCall(async () => (await import('../stages/export/openai-chat.ts')).openAIChatExporter(aceGoldReply)),
    trl: trlExporterOnCall(aceGoldReply, acebenchScorer),
    sharegpt: exporterOnCall(async () => (await import('../stages/export/sharegpt.ts')).shareGptExporter(aceGoldReply)),
    acebench: exportAceBench,
  },
  scorer: acebenchScorer,
  // An import publishes the released records as they are: what breaks an invariant is counted, not dropped.
  invariants: { gate: (config) => (config.importDir ? 'record' : 'reject') },
  audits: () => acebenchAudits(),
  released: [RELEASED_ACEBENCH],
  testOverlap: (config) => config.testOverlap,
});

export default acebenchPipeline;
