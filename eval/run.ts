import { join } from 'node:path';
import type { BenchmarkScorer, Corruption, EvalItem, EvalOutput, EvalReport, EvalVersion } from '../core/eval.ts';
import { stageFolder } from '../core/folders.ts';
import { writeFileAtomic, writeJsonlAtomic } from '../core/jsonl.ts';
import type { LlmGateway, UsageReport } from '../core/llm/types.ts';
import { combineUsage } from '../core/llm/usage.ts';
import type { SampleSource } from '../core/sample-source.ts';
import { llmAnswers } from './llm-model.ts';
import { runInLoop, type LoopModel, type LoopOutcome } from './loop.ts';
import { NOISE_RATES, noisyAnswer } from './noisy-oracle.ts';
import { readPredictions } from './predictions.ts';

/** Where the answers come from. */
export type ModelChoice =
  | { kind: 'oracle' }
  | { kind: 'noisy-oracle'; seed: number }
  | { kind: 'predictions'; path: string; shown: string }
  /** `userLlm`: the model playing a benchmark's simulated user (ACEBench used another model than the agent's); default `llm`. */
  | { kind: 'llm'; llm: LlmGateway; userLlm?: LlmGateway };

export interface EvaluateOptions {
  scorer: BenchmarkScorer;
  /** The version's samples, whose items are answered… */
  samples?: SampleSource;
  /** …or these items (a released benchmark's, read by `eval compare`). */
  items?: EvalItem[];
  /** The version's folder, passed to the scorer's `items`. */
  version?: { dir: string };
  model: ModelChoice;
  /** Score only the items of the first `limit` samples. */
  limit?: number;
  /** The folder results are written to (the version's `.derived/eval/<model>/`). */
  outDir: string;
  onProgress?: (message: string) => void;
}

export interface EvaluateResult {
  report: EvalReport;
  /** What the noisy oracle drew and applied, per corruption. */
  noise?: { seed: number; rates: typeof NOISE_RATES; drawn: Record<string, number>; applied: Record<string, number> };
  usage?: UsageReport;
  /** Items the model gave no output for. */
  missing: number;
  /** How the scorer's interactive items were answered: with the model in the loop, or (a predictions file) on gold replay. */
  interaction?: Interaction;
  /** Each item with the model's output, in item order. */
  outputs: EvalOutput[];
  files: string[];
}

/** The items of the version's samples (of the first `limit` samples), streamed from the source. */
export function collectItems(scorer: BenchmarkScorer, samples: SampleSource, limit?: number, version?: EvalVersion): EvalItem[] {
  const items: EvalItem[] = [];
  let taken = 0;
  for (const sample of samples.all()) {
    if (limit !== undefined && taken >= limit) break;
    const produced = scorer.items(sample, version);
    if (produced.length) taken++;
    items.push(...produced);
  }
  return items;
}

/** The id of every item of the version's samples. */
function allItemIds(scorer: BenchmarkScorer, samples: SampleSource, version?: EvalVersion): Set<string> {
  const ids = new Set<string>();
  for (const sample of samples.all()) for (const item of scorer.items(sample, version)) ids.add(item.id);
  return ids;
}

/** The scorer's metrics where lower is better, as reports carry them (nothing when it has none). */
export function lowerIsBetterOf(scorer: BenchmarkScorer): { lowerIsBetter?: string[] } {
  return scorer.lowerIsBetter?.length ? { lowerIsBetter: [...scorer.lowerIsBetter] } : {};
}

/** A directory name for a model's results. */
export function modelDirName(model: ModelChoice): string {
  switch (model.kind) {
    case 'oracle':
      return 'oracle';
    case 'noisy-oracle':
      return `noisy-oracle-seed${model.seed}`;
    case 'predictions':
      return `predictions-${safeName(model.shown.replace(/^.*[\\/]/, '').replace(/\.jsonl?$/, ''))}`;
    case 'llm':
      return `${model.llm.backend}-${safeName(model.llm.model)}`;
  }
}

const safeName = (text: string) => text.replace(/[^A-Za-z0-9._-]+/g, '_') || 'model';

/**
 * Answers every item with the chosen model, scores the answers by the benchmark's rules and writes
 * `report.json` (the tables) and `items.jsonl` (per item: output, figures, why it was wrong) into
 * `outDir`.
 */
export async function evaluate(options: EvaluateOptions): Promise<EvaluateResult> {
  const { scorer, model } = options;
  const { samples } = options;
  if (!samples && !options.items) throw new Error('evaluate needs the samples or the items to answer');
  // Every sample of the version, also past --limit: a scorer may number things across all of them.
  const version: EvalVersion | undefined = options.version && { dir: options.version.dir, samples };
  const items = options.items ?? collectItems(scorer, samples!, options.limit, version);
  const byId = new Set<string>();
  for (const item of items) {
    if (byId.has(item.id)) throw new Error(`the ${scorer.benchmark} scorer gave two items the id ${item.id}`);
    byId.add(item.id);
  }

  // Items the scorer runs with the model in the loop; the rest are answered once, as below.
  const loop = model.kind !== 'predictions' && scorer.session ? await inTheLoop(scorer, items, model, options.onProgress) : items.map(() => null);
  const staticItems = items.filter((_, i) => !loop[i]);

  let staticOutputs: (string | null)[];
  let staticFailures: (string | undefined)[] = [];
  let staticNoise: { drawn: Corruption | null; applied: boolean }[] = [];
  switch (model.kind) {
    case 'oracle':
      staticOutputs = staticItems.map((item) => scorer.oracle(item));
      break;
    case 'noisy-oracle': {
      const answers = staticItems.map((item) => noisyAnswer(scorer, item, model.seed));
      staticOutputs = answers.map((a) => a.output);
      staticNoise = answers;
      break;
    }
    case 'predictions': {
      // A predictions file made for the whole version is read as it is: ids past `--limit` are known, and ignored.
      const known = options.limit === undefined || !samples ? byId : allItemIds(scorer, samples, version);
      const predicted = readPredictions(model.path, known, model.shown);
      staticOutputs = items.map((item) => predicted.get(item.id) ?? null);
      break;
    }
    case 'llm': {
      if (staticItems.length) options.onProgress?.(`eval: asking ${model.llm.model} to answer ${staticItems.length} item(s)`);
      const answers = await llmAnswers(staticItems, model.llm, { onAnswer: (done) => options.onProgress?.(`eval: ${done}/${staticItems.length} answered`) });
      staticOutputs = answers.map((a) => a.output);
      staticFailures = answers.map((a) => a.failure);
      break;
    }
  }

  // Both kinds of item, in item order.
  const outputs: (string | null)[] = [];
  const failures: (string | undefined)[] = [];
  const drawn: ({ drawn: Corruption | null; applied: boolean } | undefined)[] = [];
  let next = 0;
  items.forEach((_, i) => {
    const outcome = loop[i];
    if (outcome) {
      outputs.push(outcome.output);
      failures.push(outcome.failure);
      drawn.push(outcome.drawn === undefined ? undefined : { drawn: outcome.drawn, applied: outcome.applied ?? false });
    } else {
      outputs.push(staticOutputs[next]);
      failures.push(staticFailures[next]);
      drawn.push(staticNoise[next]);
      next++;
    }
  });
  const corruptions = drawn.map((a) => (a?.drawn ? `${a.drawn}${a.applied ? '' : ' (skipped: not applicable)'}` : null));
  let noise: EvaluateResult['noise'];
  if (model.kind === 'noisy-oracle') {
    const count = (applied: boolean) => Object.fromEntries(Object.keys(NOISE_RATES).map((c) => [c, drawn.filter((a) => a?.drawn === c && (!applied || a.applied)).length]));
    noise = { seed: model.seed, rates: NOISE_RATES, drawn: count(false), applied: count(true) };
  }
  const interaction = interactionOf(scorer, model, loop);

  const evalOutputs: EvalOutput[] = items.map((item, i) => ({ item, output: outputs[i] }));
  const report = options.scorer.score(evalOutputs);
  // The simulated user's requests cost as much as the model's own.
  const usage = model.kind === 'llm' ? (model.userLlm ? combineUsage(model.llm.usage(), model.userLlm.usage()) : model.llm.usage()) : undefined;
  const missing = outputs.filter((o) => o === null).length;

  // Both files or neither: staged, then moved into outDir together.
  const stage = stageFolder(options.outDir);
  const detailsFile = join(stage.dir, 'items.jsonl');
  const reportFile = join(stage.dir, 'report.json');
  const position = new Map(items.map((item, i) => [item.id, i]));
  try {
    writeJsonlAtomic(
      detailsFile,
      report.details.map((detail) => {
        const i = position.get(detail.id)!;
        return {
          ...detail,
          sampleId: items[i].sampleId,
          output: outputs[i],
          ...(failures[i] ? { failure: failures[i] } : {}),
          ...(corruptions[i] ? { corruption: corruptions[i] } : {}),
          ...(loop[i] ? { interaction: { steps: loop[i]!.steps, ...(loop[i]!.note ? { note: loop[i]!.note } : {}), transcript: loop[i]!.transcript } } : {}),
        };
      }),
    );
    const { details: _details, ...tables } = report;
    writeFileAtomic(reportFile, `${JSON.stringify({ model: modelDirName(model), ...tables, ...lowerIsBetterOf(scorer), missing, ...(interaction ? { interaction } : {}), ...(noise ? { noise } : {}), ...(usage ? { usage } : {}) }, null, 2)}\n`);
    stage.commit();
  } catch (error) {
    throw stage.failed(error);
  }
  return { report, noise, usage, missing, outputs: evalOutputs, ...(interaction ? { interaction } : {}), files: [stage.final(reportFile), stage.final(detailsFile)] };
}

export interface Interaction {
  mode: 'model in the loop' | 'gold replay';
  /** Items answered in the loop (0 on gold replay). */
  items: number;
  /** Model steps over those items, and the items that ended at their step cap. */
  steps?: number;
  capped?: number;
  note?: string;
}

/** Runs the interactive items, saying how far it got. */
async function inTheLoop(scorer: BenchmarkScorer, items: readonly EvalItem[], model: LoopModel, onProgress?: (message: string) => void): Promise<(LoopOutcome | null)[]> {
  const who = model.kind === 'llm' ? model.llm.model : model.kind;
  return runInLoop(scorer, items, model, { onDone: (done) => onProgress?.(`eval: ${done}/${items.length} item(s) looked at, the interactive ones answered by ${who} in the loop`) });
}

function interactionOf(scorer: BenchmarkScorer, model: ModelChoice, loop: readonly (LoopOutcome | null)[]): Interaction | undefined {
  if (!scorer.session) return undefined;
  if (model.kind === 'predictions') {
    return { mode: 'gold replay', items: 0, note: `the ${scorer.benchmark} scorer runs its interactive items with the model in the loop; a predictions file cannot answer step by step, so each answer is scored against the gold history of its turn (gold replay)` };
  }
  const ran = loop.filter((outcome): outcome is LoopOutcome => outcome !== null);
  return { mode: 'model in the loop', items: ran.length, steps: ran.reduce((sum, outcome) => sum + outcome.steps, 0), capped: ran.filter((outcome) => outcome.capped).length };
}
