import { z } from 'zod';
import { OverlapConfig } from '../core/overlap/config.ts';
import { definePipeline, type ReleasedSamples } from '../core/pipeline.ts';
import { DATABASE_NAMES } from '../stages/tooltalk/tool.ts';
import { commonExporters, trlExporterOnCall } from '../stages/export/index.ts';
import { draftConversationStage } from '../stages/tooltalk/draft.ts';
import { executeConversationStage } from '../stages/tooltalk/execute.ts';
import { exportToolTalk } from '../stages/tooltalk/export.ts';
import { tooltalkAudits } from '../stages/tooltalk/audit.ts';
import { conversationFiles } from '../stages/tooltalk/conversation-files.ts';
import { importConversationFile, importConversationsStage } from '../stages/tooltalk/import.ts';
import { tooltalkScorer } from '../stages/tooltalk/score.ts';
import { PLUGINS, filterScenariosStage, generateScenariosStage, plausibilityStage, scenarioRequestsStage, selectScenariosStage } from '../stages/tooltalk/scenarios.ts';
import { overlayConflictsStage, statisticsStage } from '../stages/tooltalk/statistics.ts';
import { RECIPE_SUMMARIES } from './summaries.ts';
import { ToolsConfigField, toolSourceFiles } from '../core/tool-source.ts';
import { completeConversationStage, draftOverToolsStage, easyImportedScenarios, executeImportedCallsStage, filterImportedScenariosStage, generateImportedScenariosStage, importedScenarioRequestsStage } from '../stages/tooltalk/imported.ts';
import { libraryLoader } from '../stages/tooltalk/library.ts';

/**
 * ToolTalk (Farn & Shin), §2.2: scenarios per 3-plugin subset and required tool, filtered and
 * judged plausible, sampled evenly over the tools; conversations drafted by the LLM from the
 * scenario and the mock databases' records, then executed call by call with the simulated tools
 * (real responses written in; failing, unknown, ill-typed or ungrounded calls rejected); plus one
 * easy conversation per tool. With `importDir` set, released conversation files are imported instead.
 */
export const ToolTalkConfig = z.object({
  conversations: z.number().int().min(0).default(50).describe('conversations of the hard set to draft (their scenarios sampled evenly over the tools)'),
  easy: z.boolean().default(true).describe('also draft the 28 easy conversations (one per tool, one call)'),
  plugins: z
    .array(z.enum(PLUGINS as [string, ...string[]]))
    .min(3)
    .default(PLUGINS)
    .describe(`the plugins whose 3-plugin subsets get scenario prompts, at least 3 of ${PLUGINS.join(', ')} (all 7: 35 subsets)`),
  databasesDir: z
    .string()
    .default('../shared/data/sources/tooltalk/databases')
    .describe(`folder of the mock databases the simulated tools run on: ${DATABASE_NAMES.map((name) => `${name}.json`).join(', ')}`),
  referenceDir: z.string().default('../shared/data/reference/tooltalk').describe('the released conversations (easy/ and tooltalk/ folders of *.json files) the statistics are compared with ("" to skip)'),
  scenarioTemperature: z.number().min(0).max(2).default(0.9).describe('sampling temperature of the scenario requests'),
  draftTemperature: z.number().min(0).max(2).default(0.7).describe('sampling temperature of the conversation drafts'),
  importDir: z.string().default('').describe('instead of generating: import this folder of ToolTalk conversation files (*.json at any depth; under a folder easy/: category easy)'),
  testOverlap: OverlapConfig,
  tools: ToolsConfigField,
});
export type ToolTalkConfig = z.infer<typeof ToolTalkConfig>;

/** The released ToolTalk conversations: audited and scored as samples, beside the run's statistics. */
export const RELEASED_TOOLTALK: ReleasedSamples = {
  name: 'tooltalk',
  path: '../shared/data/reference/tooltalk',
  files: 'the conversation files of easy/ and tooltalk/',
  read: (dir) => ({ samples: () => conversationFiles(dir).map((file) => importConversationFile(dir, file)) }),
};

export const tooltalkPipeline = definePipeline<ToolTalkConfig>({
  name: 'tooltalk',
  benchmark: 'tooltalk',
  description: RECIPE_SUMMARIES.tooltalk.description,
  configSchema: ToolTalkConfig,
  sourceFiles: (config) => (config.tools ? toolSourceFiles(config.tools) : [...DATABASE_NAMES.map((name) => `${config.databasesDir}/${name}.json`), config.importDir, config.referenceDir].filter(Boolean)),
  stages: (config) => {
    if (config.tools) return importedToolsStages(config);
    const statistics = statisticsStage({ released: { set: RELEASED_TOOLTALK, path: config.referenceDir, setting: 'referenceDir' } });
    return config.importDir
      ? [importConversationsStage({ importDir: config.importDir, databasesDir: config.databasesDir }), statistics]
      : [
          scenarioRequestsStage({ databasesDir: config.databasesDir, plugins: config.plugins }),
          generateScenariosStage({ temperature: config.scenarioTemperature }),
          filterScenariosStage(),
          plausibilityStage(),
          selectScenariosStage({ conversations: config.conversations, easy: config.easy }),
          draftConversationStage({ databasesDir: config.databasesDir, temperature: config.draftTemperature }),
          executeConversationStage({ databasesDir: config.databasesDir }),
          overlayConflictsStage(),
          statistics,
        ];
  },
  // Generating, it selects `conversations` (+ 28 easy) of the scenarios 420 requests made, as few as one: only an empty version is refused.
  minYield: (config) => (config.importDir ? undefined : 0),
  exports: { ...commonExporters, trl: trlExporterOnCall(undefined, tooltalkScorer), tooltalk: exportToolTalk },
  scorer: tooltalkScorer,
  // An import publishes the released conversations as they are: what breaks an invariant is counted, not dropped.
  invariants: { gate: (config) => (config.importDir ? 'record' : 'reject') },
  // Over imported tools there are no databases to run the calls on again: the results are the recorded ones.
  audits: (config, resolvePath) => (config.tools ? [] : tooltalkAudits(resolvePath(config.databasesDir))),
  released: [RELEASED_TOOLTALK],
  testOverlap: (config) => config.testOverlap,
});

/**
 * Over an imported tool library (`tools`): the servers as plugins, scenarios and conversations over
 * their tools, the calls executed on the live servers or their results simulated (stages/tooltalk/imported.ts).
 */
function importedToolsStages(config: ToolTalkConfig) {
  const tools = config.tools!;
  const load = libraryLoader(tools);
  const live = tools.execute.enabled && tools.sources.some((source) => source.kind === 'mcp-stdio');
  return [
    importedScenarioRequestsStage(tools),
    generateImportedScenariosStage(load, { temperature: config.scenarioTemperature }),
    filterImportedScenariosStage(load),
    plausibilityStage(),
    selectScenariosStage({ conversations: config.conversations, easy: config.easy, easyScenarios: (ctx) => easyImportedScenarios(load, ctx) }),
    draftOverToolsStage(load, { temperature: config.draftTemperature }),
    ...(live ? [executeImportedCallsStage(tools)] : []),
    completeConversationStage(load),
    statisticsStage({}),
  ];
}

export default tooltalkPipeline;
