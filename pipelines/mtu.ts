import { definePipeline, type ReleasedSamples } from '../core/pipeline.ts';
import { MERGE_CONFLICT_TAG, mergeToolsMtuStage, MTU_MERGE_CHECK, mtuToolQuestions, withMtuDecisions, type MergeConflict } from '../stages/merge-tools-mtu.ts';
import { commonExporters } from '../stages/export/index.ts';
import { candidateToolsStage, mtuToolLibrary } from '../stages/mtu/candidates.ts';
import { composeStage } from '../stages/mtu/compose.ts';
import { MtuConfig } from '../stages/mtu/config.ts';
import { createToolsStage } from '../stages/mtu/create-tools.ts';
import { mtuScorer, releasedMtuItems } from '../stages/mtu/score.ts';
import { exportMtu } from '../stages/mtu/export.ts';
import { hardSetStage } from '../stages/mtu/hard.ts';
import { loadSourcesStage, mtuSourceFiles } from '../stages/mtu/load-sources.ts';
import { qualityFilterStage } from '../stages/mtu/quality.ts';
import { synthesizeReactStage } from '../stages/mtu/react.ts';
import { assignSplitsStage } from '../stages/mtu/splits.ts';
import { statisticsStage } from '../stages/mtu/stats.ts';
import { mtuAudits } from '../stages/mtu/audit.ts';
import { releasedMtuSamples } from '../stages/mtu/released.ts';
import { steerCompositionStage } from '../stages/mtu/steer.ts';
import { documentToolsStage } from '../stages/mtu/tool-docs.ts';
import { unifyToolSpecsStage } from '../stages/mtu/unify-tool-specs.ts';

export { MtuConfig };

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
  description: 'MTU-Bench: dialogue datasets → tools → clustered, documented tool library → ReAct tool-use samples (S-S, S-M, M-S, M-M, OOD, hard)',
  configSchema: MtuConfig,
  sourceFiles: mtuSourceFiles,
  stages: (config) => [
    loadSourcesStage(config),
    createToolsStage({ excludeIntents: config.excludeIntents }),
    unifyToolSpecsStage(),
    mergeToolsMtuStage(config.clustering),
    documentToolsStage(config.documentation),
    assignSplitsStage(config.splits),
    composeStage(config.compose),
    // Opt-in (targets.steer): the test set sampled toward the targets' composition.
    ...(config.targets.steer ? [steerCompositionStage({ targets: config.targets, reference: config.reference, compose: config.compose })] : []),
    synthesizeReactStage({ today: config.today, multiwozDir: config.sources.multiwoz.dir }),
    qualityFilterStage(config.quality),
    hardSetStage(config.hard),
    statisticsStage({ released: { set: RELEASED_MTU_EVAL, path: config.reference, setting: 'reference' }, targets: config.targets, instructions: config.export.instructions }),
    candidateToolsStage(config.candidates),
  ],
  exports: { ...commonExporters, mtu: exportMtu },
  toolLibrary: mtuToolLibrary,
  // A hard-set variant renames one tool to a meaningless name: that name is left out of the library on purpose.
  invariants: { offeredOutsideLibrary: (sample) => Object.keys((sample.meta as { mtu?: { renamed?: Record<string, string> } }).mtu?.renamed ?? {}) },
  audits: () => mtuAudits(),
  released: [RELEASED_MTU_EVAL],
  scorer: mtuScorer,
  // Clusters the merge stage could not merge blindly: one tool-sheet row each, not a queue item per sample.
  toolReview: {
    checks: [MTU_MERGE_CHECK],
    tags: [MERGE_CONFLICT_TAG],
    questions: (manifest) => mtuToolQuestions(manifest.stats.toolMerge as { conflicts?: MergeConflict[] } | undefined),
    withDecisions: (config, decisions) => ({ ...config, clustering: { ...config.clustering, decisions: withMtuDecisions(config.clustering.decisions, decisions) } }),
  },
});
