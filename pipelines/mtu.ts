import { z } from 'zod';
import { describeKeys } from '../core/config-doc.ts';
import { EMBEDDER_CHOICES } from '../core/embed/index.ts';
import { definePipeline, exporterOnCall, type ReleasedSamples } from '../core/pipeline.ts';
import { MERGE_CONFLICT_TAG, mergeToolsMtuStage, MTU_MERGE_CHECK, mtuToolQuestions, withMtuDecisions, type MergeConflict } from '../stages/merge-tools-mtu.ts';
import { commonExporters, trlExporterOnCall } from '../stages/export/index.ts';
import { candidateToolsStage, mtuToolLibrary } from '../stages/mtu/candidates.ts';
import { composeStage } from '../stages/mtu/compose.ts';
import { ImportedDialogues, MtuConfig as MtuConfigSchema } from '../stages/mtu/config.ts';
import { createToolsStage } from '../stages/mtu/create-tools.ts';
import { mtuScorer, releasedMtuItems } from '../stages/mtu/score.ts';
import { hardSetStage } from '../stages/mtu/hard.ts';
import { loadSourcesStage, mtuSourceFiles } from '../stages/mtu/load-sources.ts';
import { importedToolsStage, observationsIntoTurns, planImportedDialoguesStage, writeImportedDialoguesStage } from '../stages/mtu/imported.ts';
import { libraryLoader } from '../stages/mtu/library.ts';
import { executeCallsStage } from '../stages/execute-calls.ts';
import { simulateCallsStage } from '../stages/simulate-calls.ts';
import { qualityFilterStage } from '../stages/mtu/quality.ts';
import { synthesizeReactStage } from '../stages/mtu/react.ts';
import { assignSplitsStage } from '../stages/mtu/splits.ts';
import { statisticsStage } from '../stages/mtu/stats.ts';
import { mtuAudits } from '../stages/mtu/audit.ts';
import { releasedMtuSamples } from '../stages/mtu/released.ts';
import { steerCompositionStage } from '../stages/mtu/steer.ts';
import { documentToolsStage } from '../stages/mtu/tool-docs.ts';
import { unifyToolSpecsStage } from '../stages/mtu/unify-tool-specs.ts';
import { RECIPE_SUMMARIES } from './summaries.ts';

/**
 * The MTU config (kept beside its stages, which read it) with a line of help on every key, as
 * `toolkiln run mtu --help` lists them.
 */
export const MtuConfig = describeKeys(MtuConfigSchema, {
  sources: [
    'the datasets read (paper step 1, data collection); each annotated source can be turned off',
    {
      snips: [
        'SNIPS: single-turn utterances with intent and slot annotations (7 intents)',
        {
          enabled: 'read SNIPS',
          dir: 'SNIPS folder: train_<Intent>.json and validate_<Intent>.json segment files ({"<Intent>": [{"data": [{"text", "entity"?}]}]})',
          splits: 'which of its files to read: train, validate or both (source splits, mapped by splits.map)',
        },
      ],
      atis: [
        'ATIS: single-turn flight requests with intents and BIO slot tags',
        {
          enabled: 'read ATIS',
          dir: 'ATIS folder: one sub-folder per split, each with seq.in (tokens), seq.out (BIO tags) and label (intents), one utterance per line',
          splits: 'ATIS sub-folders to read (source splits, mapped to train / test by splits.map)',
          lenientBio: 'read an I-x tag with no B-x before it as B-x (conlleval\'s reading); unset or false: such a tag is an error naming its file and line',
        },
      ],
      sgd: [
        'Schema-Guided Dialogue: multi-turn dialogues with service schemas and the service calls made',
        {
          enabled: 'read SGD',
          dir: 'SGD folder: one sub-folder per split, each with schema.json and dialogues_NNN.json files',
          splits: 'SGD sub-folders to read (source splits, mapped to train / test by splits.map)',
        },
      ],
      multiwoz: [
        'MultiWOZ 2.2: its schema and databases give tools and observations; its dialogues only if you have them',
        {
          enabled: 'read MultiWOZ',
          dir: 'MultiWOZ folder: schema.json (SGD format) and db/<domain>_db.json databases',
          dialogues: 'folder of SGD-format MultiWOZ 2.2 dialogues, <split>/dialogues_NNN.json; unset: none read (none shipped)',
          splits: 'sub-folders of the dialogues folder to read (source splits, mapped by splits.map)',
        },
      ],
      generic: [
        'plain dialogue files (JSONL, one {"id"?, "domain"?, "split"?, "turns": [{"role": "user"|"assistant", "content"}]} per line) whose tools the LLM creates',
        {
          name: 'source name (lower-case letters, digits, - or _): the tools\' plugin and the samples\' source dataset',
          file: 'the JSONL file of dialogues',
          domain: 'topic of every dialogue that names none itself (default: General)',
          split: 'source split of every dialogue that names none itself (mapped by splits.map)',
        },
      ],
    },
  ],
  tools: 'an imported tool library as the domain (MCP servers, OpenAPI documents, OpenAI tool lists; docs/sources.md): single- and multi-tool dialogues are synthesised for its tools and sources is not read; unset: the dialogue datasets of sources',
  importedDialogues: [
    'dialogues synthesised for an imported library (read only with tools; unset: one of each setting per tool)',
    {
      perTool: [
        'dialogues planned per tool and setting (a multi-tool one pairs the tool with another of its server, else of its domain)',
        {
          'S-S': 'one request, one call',
          'S-M': 'one request, two calls (a parameter takes the first call\'s result field of the same name and type where one exists)',
          'M-S': 'a request missing a required value, the assistant asking for it, then the call (or a closing round when nothing is required)',
          'M-M': 'as M-S, with two calls in the round that makes them',
        },
      ],
    },
  ],
  excludeIntents: 'intents not suited to tool calls, as their source names them (e.g. atis_abbreviation): their dialogues are rejected',
  splits: [
    'train / test / ood assignment (MTU-Eval §2.2.1)',
    {
      mode: 'source: each source split goes where splits.map says; random: testFraction of each source goes to test (seeded)',
      map: 'source split name → train or test (mode source); a source split missing here is an error',
      testFraction: 'share of samples drawn into test (mode random)',
      oodDomains: 'topics (SGD topic names, e.g. Weather) held out whole as the out-of-distribution split ood',
    },
  ],
  clustering: [
    'tool clustering (paper step 3): synonymous tools merged into their cluster\'s representative',
    {
      embedder: `how tool names and parameter names are embedded: ${EMBEDDER_CHOICES}`,
      linkage: 'hierarchical clustering linkage: single, complete or average',
      threshold: 'cosine distance at or below which tools join one cluster',
      nameWeight: 'share of the tool name in the similarity; the rest is its parameter names',
      parameterThreshold: 'cosine distance (lexical) at or below which two parameter names count as the same parameter',
      decisions: [
        'tool review decisions (a tool sheet\'s, written here by review import); unset: every merge is the clustering\'s',
        {
          merge: ['tools made one under a new name, overruling the cluster\'s checks', { tools: 'the tools to merge (two or more)', into: 'the merged tool\'s name' }],
          keepApart: 'groups of tools left as they are and no longer flagged, whatever the clustering says',
          rename: ['tools kept apart under a new name', { tool: 'the tool', into: 'its new name' }],
        },
      ],
    },
  ],
  documentation: [
    'tool documentation (paper step 4): parameter types, formats and enums inferred from the observed values',
    {
      minConformity: 'share of a parameter\'s observed values a type or format must fit to be documented',
      enumMaxValues: 'a string parameter with at most this many distinct values …',
      enumMinObservations: '… over at least this many observations is documented as a closed set (enum)',
      listShare: 'share of a parameter\'s values that must be several values (a repeated slot) for it to be documented as a list',
      requiredShare: 'share of a data-derived tool\'s calls that must fill a parameter for it to be required',
    },
  ],
  compose: [
    'multi-tool composition (S-M, M-M): requests joined within one split, worded by the LLM',
    {
      singleTurnRate: 'independent S-M samples made by joining single-tool requests, per single-turn sample of a split',
      minTools: 'fewest requests joined into one independent S-M sample',
      maxTools: 'most requests joined into one independent S-M sample',
      chainRate: 'share of dialogues with a result-dependent call sequence turned into one chained S-M request',
      multiTurnRate: 'share of multi-turn dialogues given an extra, independent request in one turn (M-M)',
      chainMultiTurnRate: 'share of multi-turn dialogues with a result-dependent call sequence whose two requests are asked in one turn (M-M)',
      linkRate: 'in joined requests, share of calls whose parameter is named like an earlier call\'s result field that take that result (Tool.field)',
    },
  ],
  quality: ['quality filters (Appendix B): undefined tools, fabricated parameters, invalid values, … are rejected', { verify: 'also the paper\'s LLM check of every assistant turn (re-deriving its calls)' }],
  hard: [
    'the hard set (MTU-Eval Appendix D): test samples meeting a hard rule are tagged hard',
    {
      maxParameters: 'a call with more arguments than this is extensive-parameters',
      maxToolsPerTurn: 'a turn calling more tools than this is many-tools',
      nonsensicalNameRate: 'share of test samples that get a variant with a called tool renamed to letters that mean nothing',
      noSuitableToolRate: 'share of single-tool test samples that get a variant whose tool list lacks the needed tool (answer: no call)',
    },
  ],
  candidates: [
    'the tool list each sample offers',
    {
      max: 'most tools a sample offers (its gold tools always among them)',
      distractors: 'tools of other services added to every list as distractors',
    },
  ],
  export: [
    'the native export (toolkiln export … --format mtu)',
    { instructions: 'JSON file {"S-S": "…", "S-M": "…", "M-S": "…", "M-M": "…"} replacing the instruction text opening each setting\'s questions ({today} becomes the date); unset: toolkiln\'s wording' },
  ],
  targets: [
    'the test split\'s composition, as fractions; unset: the released MTU-Eval figures (from reference); reported by the statistics, steered toward with steer',
    {
      mix: 'each setting\'s share of the test records, {"S-S": 0.4, …} summing to 1 (a setting left out gets none)',
      noCall: 'share of a setting\'s records that call no tool, {"S-S": 0.1, …, "OOD": …} (OOD: the ood split)',
      steer: 'build and drop test and ood samples until their composition meets the targets',
    },
  ],
  reference: 'folder of the released MTU-Eval files (S-S_eval.jsonl, S-M_eval.jsonl, M-S_eval.jsonl, M-M_eval.jsonl, OOD_eval.jsonl) the statistics are compared with; skipped when absent',
  today: 'the date (YYYY-MM-DD) the prompts and the export call today (SGD\'s dialogues are set around 2019-03-01)',
});
export type MtuConfig = z.infer<typeof MtuConfig>;

/** The released MTU-Eval files: audited as samples, scored from their own records, beside the run's statistics. */
export const RELEASED_MTU_EVAL: ReleasedSamples = {
  name: 'mtu-bench',
  path: '../shared/data/reference/mtu-bench',
  files: 'MTU-Eval S-S, S-M, M-S, M-M and OOD _eval.jsonl',
  read: (dir) => ({ samples: () => releasedMtuSamples(dir) }),
  items: (dir) => releasedMtuItems(dir),
};

/**
 * MTU-Bench (Wang et al.), §2.1 and Appendix B: task-oriented dialogue datasets turned into
 * multi-granularity tool-use samples.
 *  1. data collection: SNIPS, ATIS, SGD, MultiWOZ and plain dialogue files, per the config;
 *  2. tool creation: grammar-based (intents, slots, schemas, service calls) or LLM-based;
 *  3. tool clustering: synonymous tool and parameter names merged to one standard name;
 *  4. tool documentation: structure from the data, prose from the LLM;
 *  5. tool-use synthesis: train / test / OOD splits, multi-tool composition, ReAct turns
 *     (thought, action, action input, observation, response), quality filters, settings (S-S,
 *     S-M, M-S, M-M) and the hard set, statistics beside MTU-Eval's, candidate tool lists; with
 *     `targets.steer`, the test set sampled toward a composition (the released one by default).
 * From documentation on, samples carry tool references; the last stage writes the full entries.
 */
export const mtuPipeline = definePipeline<MtuConfig>({
  name: 'mtu',
  benchmark: 'mtu',
  description: RECIPE_SUMMARIES.mtu.description,
  configSchema: MtuConfig,
  sourceFiles: mtuSourceFiles,
  stages: (config) => [
    ...(config.tools ? importedStages(config) : convertedStages(config)),
    ...synthesisStages(config),
  ],
  exports: { ...commonExporters, trl: trlExporterOnCall(undefined, mtuScorer), mtu: exporterOnCall(async () => (await import('../stages/mtu/export.ts')).exportMtu) },
  toolLibrary: mtuToolLibrary,
  // A hard-set variant renames one tool to a meaningless name: that name is left out of the library on purpose.
  invariants: { offeredOutsideLibrary: (sample) => Object.keys((sample.meta as { mtu?: { renamed?: Record<string, string> } }).mtu?.renamed ?? {}) },
  audits: () => mtuAudits(),
  released: [RELEASED_MTU_EVAL],
  testOverlap: (config) => config.testOverlap,
  scorer: mtuScorer,
  // Clusters the merge stage could not merge blindly: one tool-sheet row each, not a queue item per sample.
  toolReview: {
    checks: [MTU_MERGE_CHECK],
    tags: [MERGE_CONFLICT_TAG],
    questions: (manifest) => mtuToolQuestions(manifest.stats.toolMerge as { conflicts?: MergeConflict[] } | undefined),
    withDecisions: (config, decisions) => ({ ...config, clustering: { ...config.clustering, decisions: withMtuDecisions(config.clustering.decisions, decisions) } }),
  },
});

/** Paper steps 1–4 over the dialogue datasets: collection, tool creation, clustering, documentation. */
function convertedStages(config: MtuConfig) {
  return [loadSourcesStage(config), createToolsStage({ excludeIntents: config.excludeIntents }), unifyToolSpecsStage(), mergeToolsMtuStage(config.clustering), documentToolsStage(config.documentation)];
}

/** Over an imported library: its tools documented where they lack prose, dialogues planned per tool and setting and written for them. */
function importedStages(config: MtuConfig) {
  return [
    importedToolsStage(config.tools!),
    planImportedDialoguesStage({ perTool: ImportedDialogues.parse(config.importedDialogues ?? {}).perTool, testFraction: config.splits.testFraction }),
    writeImportedDialoguesStage({ today: config.today }),
  ];
}

/** Step 5, tool-use synthesis: splits, composition, observations (executed or simulated for an imported library), ReAct turns, filters, hard set, statistics, candidate lists. */
function synthesisStages(config: MtuConfig) {
  const live = config.tools && config.tools.execute.enabled && config.tools.sources.some((source) => source.kind === 'mcp-stdio');
  const library = libraryLoader();
  return [
    assignSplitsStage(config.splits),
    composeStage(config.compose),
    // Opt-in (targets.steer): the test set sampled toward the targets' composition.
    ...(config.targets.steer ? [steerCompositionStage({ targets: config.targets, reference: config.reference, compose: config.compose })] : []),
    // An imported library's calls run on its live server where there is one; the others' results are simulated within the tools' result schemas.
    ...(live ? [executeCallsStage(config.tools!)] : []),
    ...(config.tools ? [simulateCallsStage({ today: config.today, toolsOf: (sample, ctx) => library(ctx.runDir).resolve(sample), place: observationsIntoTurns })] : []),
    synthesizeReactStage({ today: config.today, multiwozDir: config.sources.multiwoz.dir }),
    qualityFilterStage(config.quality),
    hardSetStage(config.hard),
    statisticsStage({ released: { set: RELEASED_MTU_EVAL, path: config.reference, setting: 'reference' }, targets: config.targets, instructions: config.export.instructions }),
    candidateToolsStage(config.candidates),
  ];
}
