import { OverlapConfig } from '../../core/overlap/config.ts';
import { z } from 'zod';
import { ToolsConfigField } from '../../core/tool-source.ts';
import { MergeToolsMtuConfig } from '../merge-tools-mtu.ts';

/**
 * The MTU recipe's config: which sources and splits a run reads and the knobs of every step.
 * Every field has a default, so `{}` runs over all shipped sources. A config file overrides any
 * part, e.g. `{"sources": {"atis": {"enabled": false}, "generic": [{"name": "shop", "file": "shop.jsonl"}]}}`.
 */

const DATA = '../shared/data/sources';

/** MTU-Bench's four settings (single / multi turn × single / multi tool). */
export const SETTINGS = ['S-S', 'S-M', 'M-S', 'M-M'] as const;
export type Setting = (typeof SETTINGS)[number];

/** How far the shares of `targets.mix` may sum from 1. */
export const MIX_SUM_TOLERANCE = 0.01;

const SourceBase = { enabled: z.boolean().default(true) };

/** Dialogues planned per imported tool and setting. */
export const ImportedDialogues = z
  .object({
    perTool: z
      .object(Object.fromEntries(SETTINGS.map((setting) => [setting, z.number().int().min(0).default(1)])) as Record<Setting, z.ZodDefault<z.ZodNumber>>)
      .strict()
      .prefault({}),
  })
  .strict();
export type ImportedDialogues = z.infer<typeof ImportedDialogues>;

export const MtuConfig = z
  .object({
    sources: z
      .object({
        snips: z.object({ ...SourceBase, dir: z.string().default(`${DATA}/snips`), splits: z.array(z.enum(['train', 'validate'])).default(['train', 'validate']) }).strict().prefault({}),
        atis: z
          .object({
            ...SourceBase,
            dir: z.string().default(`${DATA}/atis`),
            splits: z.array(z.string().min(1)).default(['train', 'valid', 'test']),
            /** Read an `I-x` tag with no `B-x` before it as `B-x` (conlleval's reading); unset or false: such a tag is an error. */
            lenientBio: z.boolean().optional(),
          })
          .strict()
          .prefault({}),
        sgd: z.object({ ...SourceBase, dir: z.string().default(`${DATA}/sgd`), splits: z.array(z.string().min(1)).default(['train', 'dev', 'test']) }).strict().prefault({}),
        multiwoz: z
          .object({
            ...SourceBase,
            /** Schema and databases. */
            dir: z.string().default(`${DATA}/multiwoz`),
            /** Folder of SGD-format MultiWOZ 2.2 dialogues (`<split>/dialogues_NNN.json`); none shipped. */
            dialogues: z.string().optional(),
            splits: z.array(z.string().min(1)).default(['train', 'dev', 'test']),
          })
          .strict()
          .prefault({}),
        /** Plain dialogue files (JSONL): tools are created for them by the LLM. */
        generic: z
          .array(
            z
              .object({
                name: z.string().regex(/^[a-z][a-z0-9_-]*$/, 'a source name is lower-case letters, digits, "-" or "_"'),
                file: z.string().min(1),
                domain: z.string().min(1).optional(),
                split: z.string().min(1).default('train'),
              })
              .strict(),
          )
          .default([]),
      })
      .strict()
      .prefault({}),
    /** An imported tool library (MCP servers, OpenAPI, function lists): dialogues are synthesised for its tools instead of read from `sources`. */
    tools: ToolsConfigField,
    /** Dialogues planned per imported tool and setting (read only with `tools`; unset: one of each setting, so that a default run's config stays as it was). */
    importedDialogues: ImportedDialogues.optional(),
    /** Intents not suited to tool calls (as their source names them, e.g. `atis_abbreviation`): their dialogues are dropped. */
    excludeIntents: z.array(z.string()).default([]),
    splits: z
      .object({
        /** `source`: the source's split decides (via `map`); `random`: `testFraction` of each source goes to test. */
        mode: z.enum(['source', 'random']).default('source'),
        map: z.record(z.string(), z.enum(['train', 'test'])).default({ train: 'train', dev: 'test', valid: 'test', validate: 'test', test: 'test' }),
        testFraction: z.number().min(0).max(1).default(0.1),
        /** Topics held out whole as the out-of-distribution (`ood`) split. */
        oodDomains: z.array(z.string()).default(['Books', 'Events', 'Movies', 'RideSharing', 'Weather']),
      })
      .strict()
      .prefault({}),
    /** Tool clustering (paper step 3): embedder, linkage, distance threshold, name / parameter weights. */
    clustering: MergeToolsMtuConfig.prefault({}),
    documentation: z
      .object({
        /** Share of a parameter's observed values a type or format must fit to be documented. */
        minConformity: z.number().min(0.5).max(1).default(0.95),
        /** A string parameter with at most this many distinct values … */
        enumMaxValues: z.number().int().min(0).default(6),
        /** … over at least this many observations is documented as a closed set (enum). */
        enumMinObservations: z.number().int().min(1).default(30),
        /** Share of a parameter's values that must be several values (a repeated slot) for it to be documented as a list. */
        listShare: z.number().min(0).max(1).default(0.1),
        /** Share of a data-derived tool's calls that must fill a parameter for it to be required. */
        requiredShare: z.number().min(0).max(1).default(1),
      })
      .strict()
      .prefault({}),
    compose: z
      .object({
        /** S-M samples made by joining independent single-turn requests, per single-turn sample of a split. */
        singleTurnRate: z.number().min(0).max(1).default(0.05),
        minTools: z.number().int().min(2).default(2),
        maxTools: z.number().int().min(2).default(5),
        /** Share of dialogues with a result-dependent call sequence turned into one chained S-M request. */
        chainRate: z.number().min(0).max(1).default(0.5),
        /** Share of multi-turn dialogues given an extra, independent request in one turn (M-M). */
        multiTurnRate: z.number().min(0).max(1).default(0.2),
        /**
         * Share of multi-turn dialogues with a result-dependent call sequence whose two requests are asked in one turn
         * of the dialogue (M-M), the second call taking the first one's result as `Tool.field`.
         */
        chainMultiTurnRate: z.number().min(0).max(1).default(0.5),
        /**
         * In joined requests (independent S-M, M-M), share of calls whose parameter is named like a result field of an
         * earlier call's tool that take that result (`Tool.field`) instead of their own value.
         */
        linkRate: z.number().min(0).max(1).default(1),
      })
      .strict()
      .prefault({}),
    quality: z
      .object({
        /** The paper's LLM data-quality check of every assistant turn. */
        verify: z.boolean().default(true),
      })
      .strict()
      .prefault({}),
    hard: z
      .object({
        maxParameters: z.number().int().min(1).default(6),
        maxToolsPerTurn: z.number().int().min(1).default(4),
        /** Share of test samples that get a variant with a nonsensical tool name. */
        nonsensicalNameRate: z.number().min(0).max(1).default(0.05),
        /** Share of single-tool test samples that get a variant whose tool list lacks the needed tool. */
        noSuitableToolRate: z.number().min(0).max(1).default(0.05),
      })
      .strict()
      .prefault({}),
    candidates: z
      .object({
        /** Most tools a sample offers (its gold tools always among them). */
        max: z.number().int().min(1).default(4),
        /** Tools of other services added to every list as distractors. */
        distractors: z.number().int().min(0).default(0),
      })
      .strict()
      .prefault({}),
    /** The native export (`toolkiln export … --format mtu`). */
    export: z
      .object({
        /**
         * JSON file `{"S-S": "…", "S-M": "…", "M-S": "…", "M-M": "…"}` replacing the instruction text that opens
         * each setting's questions (any subset; `{today}` becomes the long date). Unset: toolkiln's own wording.
         */
        instructions: z.string().min(1).optional(),
      })
      .strict()
      .prefault({}),
    /**
     * The composition of the test split: each setting's share of the test records (`mix`) and the
     * share of a setting's records that call no tool (`noCall`; `OOD` for the ood split), as
     * fractions. Unset: the released MTU-Eval files' figures (from `reference`). The statistics
     * report them beside what the run made; with `steer` the run samples its test set toward them
     * (stages/mtu/steer.ts).
     */
    targets: z
      .object({
        /** Every setting's share, summing to 1 (a setting left out gets none). */
        mix: z.partialRecord(z.enum(SETTINGS), z.number().min(0).max(1)).optional(),
        noCall: z.partialRecord(z.enum([...SETTINGS, 'OOD']), z.number().min(0).max(1)).optional(),
        /** Build and reject samples of the test and ood splits until their composition meets the targets (unset: off). */
        steer: z.boolean().optional(),
      })
      .strict()
      .superRefine((targets, ctx) => {
        // An unknown setting is reported by the record's own check.
        if (!targets.mix || !Object.keys(targets.mix).every((key) => (SETTINGS as readonly string[]).includes(key))) return;
        const sum = Object.values(targets.mix).reduce((a, b) => a + (b ?? 0), 0);
        if (Math.abs(sum - 1) > MIX_SUM_TOLERANCE) {
          ctx.addIssue({ code: 'custom', path: ['mix'], message: `the shares sum to ${Math.round(sum * 1000) / 1000}, not 1 (±${MIX_SUM_TOLERANCE}); give every setting's share of the test records` });
        }
      })
      .prefault({}),
    /** The released MTU-Eval files the statistics compare with ('' leaves the comparison out). */
    reference: z.string().default('../shared/data/reference/mtu-bench'),
    /** The date the prompts call today (SGD's dialogues are set around 2019-03-01). */
    today: z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'write today as YYYY-MM-DD').default('2019-03-01'),
    /** Overlap with the released test sets, measured when a version is published. */
    testOverlap: OverlapConfig,
  })
  .strict();
export type MtuConfig = z.infer<typeof MtuConfig>;
