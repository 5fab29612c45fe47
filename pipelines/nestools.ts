import { z } from 'zod';
import { OverlapConfig } from '../core/overlap/config.ts';
import { definePipeline, type ReleasedSamples } from '../core/pipeline.ts';
import type { Check, Sample, ToolSpec } from '../core/records.ts';
import { commonExporters, trlExporterOnCall } from '../stages/export/index.ts';
import { checkNesToolsRecord } from '../stages/nestools/check-records.ts';
import { checkGeneratedStage } from '../stages/nestools/check-generated.ts';
import { dedupeStage } from '../stages/nestools/dedupe.ts';
import { generateChainsStage } from '../stages/nestools/generate-chains.ts';
import { exportNesTools, exportSealTools, toNesToolsRecord } from '../stages/nestools/import-export.ts';
import { formatIssue } from '../stages/nestools/issues.ts';
import { describeValues, missingValues, normaliseQueryStage } from '../stages/nestools/normalise-query.ts';
import { refineQueryStage } from '../stages/nestools/refine-query.ts';
import { removeConjunctionsStage } from '../stages/nestools/remove-conjunctions.ts';
import { nestoolsScorer } from '../stages/nestools/score.ts';
import { statisticsStage } from '../stages/nestools/statistics.ts';
import { tagForReviewStage } from '../stages/nestools/tag-for-review.ts';
import { nestoolsAudits } from '../stages/nestools/audit.ts';
import { importFileStage, importedDomainsStage, loadDomainsStage } from '../stages/sources/nestools.ts';
import { executeCallsStage } from '../stages/execute-calls.ts';
import { ToolsConfigField, toolSourceFiles } from '../core/tool-source.ts';
import { releasedNesTools, releasedSealTools } from '../stages/nestools/released.ts';
import { RECIPE_SUMMARIES } from './summaries.ts';

/**
 * NesTools (Han et al.): nested call chains generated as Python code per domain (§3.1), checked
 * by parsing (§3.3), tasks normalised and refined (§3.2), tagged for the manual review (§3.3).
 * With `importFile` set, an existing NesTools or Seal-Tools file is checked and tagged instead.
 */

export const NesToolsConfig = z.object({
  count: z.number().int().positive().default(200).describe('LLM requests to make, one per sampled domain (past the distinct domains, they come round again)'),
  fieldsFile: z.string().default('../shared/data/sources/nestools/fields.json').describe('the domains generation is seeded with: a JSON list of "Domain/Subdomain" strings (NesTools fields.json)'),
  sealToolsFile: z
    .string()
    .default('../shared/data/sources/seal-tools/tool.jsonl')
    .describe('Seal-Tools tool library, JSONL of {"api_name", "api_description", "parameters", …}: the offline generator samples chains from it; a seal-tools import looks its tools up in it'),
  referenceFile: z.string().default('../shared/data/reference/nestools/test_data.jsonl').describe('the released NesTools test_data.jsonl the statistics are compared with ("" to skip)'),
  examplePoolFile: z.string().default('').describe('in-context examples, JSONL of {"domain", "answer"} (an answer: Python stubs and main()); "": the built-in pool'),
  examplesPerRequest: z.number().int().min(0).default(2).describe('in-context examples shown in each generation request (rotating through the pool)'),
  temperature: z.number().min(0).max(2).default(0.95).describe('sampling temperature of the generation requests'),
  strict: z.boolean().default(false).describe('warnings (type mismatches, unused stubs, docstring disagreements) reject a generated program too'),
  requireNested: z.boolean().default(false).describe('reject a program in which no call takes an earlier call\'s result'),
  normaliseAttempts: z.number().int().min(0).default(2).describe('LLM rewrites asked to work the call values the task does not state into it (§3.2); still missing after them: rejected'),
  refine: z.boolean().default(true).describe('rewrite each task so that no API name appears and the text follows the chain (§3.2); a rewrite that loses a value is not taken'),
  removeConjunctions: z.boolean().default(false).describe('also rewrite tasks without conjunctions (Appendix B.3, the robustness variant)'),
  split: z.string().min(1).default('test').describe('the split every sample is published in'),
  importFile: z
    .string()
    .default('')
    .describe('instead of generating: check, tag for review and publish this NesTools (test_data.jsonl format: {test_id, api, task, call, field} per line) or Seal-Tools JSONL file'),
  importFormat: z.enum(['nestools', 'seal-tools']).default('nestools').describe('the format of importFile: nestools or seal-tools'),
  tools: ToolsConfigField,
  testOverlap: OverlapConfig,
});
export type NesToolsConfig = z.infer<typeof NesToolsConfig>;

/**
 * Checks a reviewer's edit: the chain must still pass the NesTools record check (tools, parameters,
 * placeholders, references), and the task should state every value (soft).
 */
export function recheckNesTools(sample: Sample, _tools: ToolSpec[]): Check[] {
  let record;
  try {
    record = toNesToolsRecord(sample, 0);
  } catch (error) {
    return [{ name: 'nestools/record-check', pass: false, reason: (error as Error).message }];
  }
  const check = checkNesToolsRecord(record);
  const missing = missingValues(sample);
  return [
    { name: 'nestools/record-check', pass: check.ok, ...(check.ok ? {} : { reason: check.errors.map(formatIssue).join('; ') }) },
    ...check.warnings.map((w) => ({ name: `nestools/${w.code}`, pass: false, soft: true, reason: formatIssue(w) })),
    { name: 'nestools/values-in-task', pass: !missing.length, soft: true, ...(missing.length ? { reason: `the task lacks ${describeValues(missing)}` } : {}) },
  ];
}

/** The released NesTools test set: audited and scored as samples, beside the run's statistics. */
export const RELEASED_NESTOOLS: ReleasedSamples = { name: 'nestools', path: '../shared/data/reference/nestools', files: 'test_data.jsonl', read: (path) => releasedNesTools(path) };

export const nestoolsPipeline = definePipeline<NesToolsConfig>({
  name: 'nestools',
  benchmark: 'nestools',
  description: RECIPE_SUMMARIES.nestools.description,
  configSchema: NesToolsConfig,
  sourceFiles: (config) =>
    config.importFile
      ? [config.importFile, config.importFormat === 'seal-tools' ? config.sealToolsFile : '', config.referenceFile].filter(Boolean)
      : config.tools
        ? [...toolSourceFiles(config.tools), config.referenceFile, config.examplePoolFile].filter(Boolean)
        : [config.fieldsFile, config.sealToolsFile, config.referenceFile, config.examplePoolFile].filter(Boolean),
  stages: (config) => (config.importFile ? importStages(config) : generationStages(config)),
  exports: { ...commonExporters, trl: trlExporterOnCall(undefined, nestoolsScorer), nestools: exportNesTools, 'seal-tools': exportSealTools },
  recheck: recheckNesTools,
  scorer: nestoolsScorer,
  // An import publishes the file's records as they are: what breaks an invariant is counted, not dropped.
  invariants: { gate: (config) => (config.importFile ? 'record' : 'reject') },
  audits: () => nestoolsAudits(),
  released: [
    RELEASED_NESTOOLS,
    {
      name: 'seal-tools',
      path: '../shared/data/reference/seal-tools',
      files: 'dev.jsonl, test_in_domain.jsonl and test_out_domain.jsonl, their tools from the Seal-Tools library of the sources',
      read: (dir, resolvePath) => releasedSealTools(dir, resolvePath(NesToolsConfig.parse({}).sealToolsFile)),
      // Audited only: eval compare measures a version against the set its recipe regenerates (NesTools').
      items: false,
    },
  ],
  testOverlap: (config) => config.testOverlap,
});

/** Review preparation shared by both ways in: tags, de-duplication, statistics beside the reference. */
function reviewStages(config: NesToolsConfig) {
  return [tagForReviewStage(), dedupeStage(), statisticsStage({ released: { set: RELEASED_NESTOOLS, path: config.referenceFile, setting: 'referenceFile' } })];
}

function importStages(config: NesToolsConfig) {
  return [importFileStage({ file: config.importFile, format: config.importFormat, sealToolsFile: config.sealToolsFile, split: config.split }), ...reviewStages(config)];
}

/** Chains over new tools per domain, or over an imported library (`tools`), executed where a server is live. */
function generationStages(config: NesToolsConfig) {
  const live = config.tools && config.tools.execute.enabled && config.tools.sources.some((source) => source.kind === 'mcp-stdio');
  return [
    config.tools ? importedDomainsStage({ tools: config.tools, count: config.count }) : loadDomainsStage({ fieldsFile: config.fieldsFile, count: config.count }),
    generateChainsStage({
      sealToolsFile: config.sealToolsFile,
      examplePoolFile: config.examplePoolFile || undefined,
      examplesPerRequest: config.examplesPerRequest,
      temperature: config.temperature,
      overImported: !!config.tools,
    }),
    checkGeneratedStage({ strict: config.strict, requireNested: config.requireNested, split: config.split }),
    ...(live ? [executeCallsStage(config.tools!)] : []),
    normaliseQueryStage({ maxAttempts: config.normaliseAttempts }),
    ...(config.refine ? [refineQueryStage()] : []),
    ...(config.removeConjunctions ? [removeConjunctionsStage()] : []),
    ...reviewStages(config),
  ];
}

export default nestoolsPipeline;
