import { join } from 'node:path';
import type { BenchmarkScorer, Corruption, EvalItem, EvalReport, EvalVersion, JudgedItem, ReportTables } from '../core/eval.ts';
import { stageFolder } from '../core/folders.ts';
import { JsonlWriter, writeFileAtomic } from '../core/jsonl.ts';
import type { LlmGateway, UsageReport } from '../core/llm/types.ts';
import { combineUsage } from '../core/llm/usage.ts';
import type { SampleSource } from '../core/sample-source.ts';
import { llmAnswer } from './llm-model.ts';
import { runItem, type LoopOutcome } from './loop.ts';
import { NOISE_RATES, noisyAnswer } from './noisy-oracle.ts';
import { JudgedItems, unitOf } from './judged.ts';
import { inOrder } from './ordered.ts';
import { Predictions } from './predictions.ts';
import { withToolNames } from './chat-reply.ts';
import { UserError } from '../core/errors.ts';

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
  /** Items answered at once (default: 256 by a model behind the gateway, 64 when the scorer runs items in the loop, 8 offline); at most four times as many are in hand. */
  window?: number;
  onProgress?: (message: string) => void;
}

/** A report's tables and counts; the per-item details are in `items.jsonl`, never held together. */
export type EvalSummary = Omit<EvalReport, 'details'>;

export interface EvaluateResult {
  report: EvalSummary;
  /** What the noisy oracle drew and applied, per corruption. */
  noise?: { seed: number; rates: typeof NOISE_RATES; drawn: Record<string, number>; applied: Record<string, number> };
  usage?: UsageReport;
  /** Items the model gave no output for. */
  missing: number;
  /** How the scorer's interactive items were answered: with the model in the loop, or (a predictions file) on gold replay. */
  interaction?: Interaction;
  /**
   * The judged items grouped in the scorer's units (first-seen order), each in its compact form (ids,
   * category and the gold's plain fields, with its figures; see `JudgedItems`): what the tables are
   * made from, and what a resample of `eval compare` draws.
   */
  units: JudgedItem[][];
  files: string[];
}

/**
 * Items answered at once: a model behind the gateway is kept busy (an interactive item holds a session
 * each); an offline model answers at once, so a few in hand are enough. At most `AHEAD` times as many
 * items are in hand.
 */
const WINDOW = { gateway: 256, interactive: 64, offline: 8 };
const AHEAD = 4;
/** Items scored together: whole samples, about this many items (scoring needs only a sample's own items). */
const SCORE_BATCH = 256;
/** Progress lines at most this often. */
const PROGRESS_MS = 5000;

/** The items of the version's samples (of the first `limit` samples), one sample's items at a time. */
export function* itemsOfSamples(scorer: BenchmarkScorer, samples: SampleSource, limit?: number, version?: EvalVersion): Generator<EvalItem[]> {
  let taken = 0;
  for (const sample of samples.all()) {
    if (limit !== undefined && taken >= limit) return;
    const produced = scorer.items(sample, version);
    if (produced.length) taken++;
    yield produced;
  }
}

/** Every item of the version's samples, in an array (small versions: tests, tools). */
export function collectItems(scorer: BenchmarkScorer, samples: SampleSource, limit?: number, version?: EvalVersion): EvalItem[] {
  return [...itemsOfSamples(scorer, samples, limit, version)].flat();
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

/** One item's answer and how it came. */
interface Answered {
  output: string | null;
  failure?: string;
  /** Noisy oracle: the corruption drawn, and whether the item could take it. */
  noise?: { drawn: Corruption | null; applied: boolean };
  /** The item ran with the model in the loop. */
  loop?: LoopOutcome;
}

/**
 * Answers every item with the chosen model, scores the answers by the benchmark's rules and writes
 * `report.json` (the tables) and `items.jsonl` (per item: output, figures, why it was wrong) into
 * `outDir`. The items stream: a window of them is answered at once, whole samples of answered items
 * are scored together and their lines written, and each item's compact judged form goes to a
 * file read back when the tables are made: nothing is held per item while the items stream.
 */
export async function evaluate(options: EvaluateOptions): Promise<EvaluateResult> {
  const { scorer, model } = options;
  const { samples } = options;
  if (!samples && !options.items) throw new Error('evaluate needs the samples or the items to answer');
  // Every sample of the version, also past --limit: a scorer may number things across all of them.
  const version: EvalVersion | undefined = options.version && { dir: options.version.dir, samples };
  const predictions = model.kind === 'predictions' ? Predictions.open(model.path, model.shown) : undefined;
  const interactive = model.kind !== 'predictions' && scorer.session !== undefined;

  /** Each item with its sample's number (items of one sample are scored together). */
  function* numbered(): Generator<{ item: EvalItem; sample: number }> {
    if (options.items) {
      let sample = -1;
      let last: string | undefined;
      for (const item of options.items) {
        if (item.sampleId !== last) sample++;
        last = item.sampleId;
        yield { item, sample };
      }
      return;
    }
    let sample = 0;
    for (const items of itemsOfSamples(scorer, samples!, options.limit, version)) {
      for (const item of items) yield { item, sample };
      sample++;
    }
    // A predictions file made for the whole version is read as it is: ids past `--limit` are known, and ignored.
    if (predictions && options.limit !== undefined) {
      let seen = 0;
      for (const items of itemsOfSamples(scorer, samples!, undefined, version)) if (seen++ >= sample) for (const item of items) predictions.know(item.id);
    }
  }

  const answer = async (item: EvalItem): Promise<Answered> => {
    if (interactive) {
      const outcome = await runItem(scorer, item, model as Exclude<ModelChoice, { kind: 'predictions' }>);
      if (outcome) return { output: outcome.output, failure: outcome.failure, ...(outcome.drawn === undefined ? {} : { noise: { drawn: outcome.drawn, applied: outcome.applied ?? false } }), loop: outcome };
    }
    switch (model.kind) {
      case 'oracle':
        return { output: scorer.oracle(item) };
      case 'noisy-oracle': {
        const noisy = noisyAnswer(scorer, item, model.seed);
        return { output: noisy.output, noise: { drawn: noisy.drawn, applied: noisy.applied } };
      }
      case 'predictions': {
        const given = predictions!.answerOf(item.id);
        if ('output' in given) return given;
        // A chat model's reply (a trained model's tool calls) becomes the benchmark's own answer text.
        if (!scorer.answerOfReply) throw new UserError(`${model.shown}: the ${scorer.benchmark} scorer reads only its own answer text; give each line as {"id": …, "output": …}`);
        return { output: scorer.answerOfReply(item, withToolNames(given.reply, item)) };
      }
      case 'llm':
        return llmAnswer(item, model.llm);
    }
  };

  const who = model.kind === 'llm' ? model.llm.model : model.kind;
  if (model.kind === 'llm') options.onProgress?.(`eval: asking ${who} to answer the items${interactive ? ' (the interactive ones in the loop)' : ''}`);
  const tally = { items: 0, missing: 0, loopItems: 0, steps: 0, capped: 0 };
  const noiseCounts = { drawn: zeroCounts(), applied: zeroCounts() };
  let lastProgress = Date.now();

  // Both files or neither: staged, then moved into outDir together.
  const stage = stageFolder(options.outDir);
  const detailsFile = join(stage.dir, 'items.jsonl');
  const reportFile = join(stage.dir, 'report.json');
  const details = new JsonlWriter(detailsFile);
  const judged = new JudgedItems(join(stage.dir, '.judged.jsonl'));
  try {
    let batch: { item: EvalItem; answered: Answered }[] = [];
    let batchSample = -1;
    const scoreBatch = () => {
      if (!batch.length) return;
      // Items are numbered within their sample: two with one id are two of the same samples.
      const ids = new Set<string>();
      for (const { item } of batch) {
        if (ids.has(item.id)) throw new Error(`the ${scorer.benchmark} scorer gave two items the id ${item.id}`);
        ids.add(item.id);
      }
      const report = scorer.score(batch.map(({ item, answered }) => ({ item, output: answered.output })));
      const position = new Map(batch.map(({ item }, i) => [item.id, i]));
      for (const detail of report.details) {
        const { item, answered } = batch[position.get(detail.id)!];
        const noise = answered.noise;
        const corruption = noise?.drawn ? `${noise.drawn}${noise.applied ? '' : ' (skipped: not applicable)'}` : null;
        const loop = answered.loop;
        details.write({
          ...detail,
          sampleId: item.sampleId,
          output: answered.output,
          ...(answered.failure ? { failure: answered.failure } : {}),
          ...(corruption ? { corruption } : {}),
          ...(loop ? { interaction: { steps: loop.steps, ...(loop.note ? { note: loop.note } : {}), transcript: loop.transcript } } : {}),
        });
        judged.add(item, detail.figures, unitOf(scorer, item));
      }
      // Every item scored has its figures; one without would count as all zero in the tables.
      if (report.details.length !== batch.length) {
        const scored = new Set(report.details.map((d) => d.id));
        throw new Error(`the ${scorer.benchmark} scorer gave no figures for item ${batch.find(({ item }) => !scored.has(item.id))!.item.id}`);
      }
      batch = [];
    };

    const window = options.window ?? (model.kind !== 'llm' ? WINDOW.offline : interactive ? WINDOW.interactive : WINDOW.gateway);
    for await (const [{ item, sample }, answered] of inOrder(numbered(), ({ item }) => answer(item), { window, ahead: window * AHEAD })) {
      if (sample !== batchSample && batch.length >= SCORE_BATCH) scoreBatch();
      batchSample = sample;
      batch.push({ item, answered });
      tally.items++;
      if (answered.output === null) tally.missing++;
      if (answered.noise?.drawn) {
        noiseCounts.drawn[answered.noise.drawn]++;
        if (answered.noise.applied) noiseCounts.applied[answered.noise.drawn]++;
      }
      if (answered.loop) {
        tally.loopItems++;
        tally.steps += answered.loop.steps;
        if (answered.loop.capped) tally.capped++;
      }
      if (options.onProgress && Date.now() - lastProgress >= PROGRESS_MS) {
        lastProgress = Date.now();
        options.onProgress(`eval: ${tally.items} item(s) answered by ${who}${interactive ? ', the interactive ones in the loop' : ''}`);
      }
    }
    scoreBatch();
    predictions?.assertAllKnown();
    details.close();

    const judgedUnits = judged.units();
    const tables: ReportTables = scorer.tablesOf(judgedUnits);
    const report: EvalSummary = { benchmark: scorer.benchmark, items: tally.items, ...tables };
    const noise = model.kind === 'noisy-oracle' ? { seed: model.seed, rates: NOISE_RATES, drawn: noiseCounts.drawn, applied: noiseCounts.applied } : undefined;
    const interaction = interactionOf(scorer, model, tally);
    // The simulated user's requests cost as much as the model's own.
    const usage = model.kind === 'llm' ? (model.userLlm ? combineUsage(model.llm.usage(), model.userLlm.usage()) : model.llm.usage()) : undefined;
    writeFileAtomic(reportFile, `${JSON.stringify({ model: modelDirName(model), ...report, ...lowerIsBetterOf(scorer), missing: tally.missing, ...(interaction ? { interaction } : {}), ...(noise ? { noise } : {}), ...(usage ? { usage } : {}) }, null, 2)}\n`);
    stage.commit();
    return { report, noise, usage, missing: tally.missing, ...(interaction ? { interaction } : {}), units: judgedUnits, files: [stage.final(reportFile), stage.final(detailsFile)] };
  } catch (error) {
    try {
      details.close();
      judged.close();
    } catch {
      // Already closed, or the disk failed: the staged folder goes either way.
    }
    throw stage.failed(error);
  }
}

function zeroCounts(): Record<Corruption, number> {
  return Object.fromEntries(Object.keys(NOISE_RATES).map((c) => [c, 0])) as Record<Corruption, number>;
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

function interactionOf(scorer: BenchmarkScorer, model: ModelChoice, tally: { loopItems: number; steps: number; capped: number }): Interaction | undefined {
  if (!scorer.session) return undefined;
  if (model.kind === 'predictions') {
    return { mode: 'gold replay', items: 0, note: `the ${scorer.benchmark} scorer runs its interactive items with the model in the loop; a predictions file cannot answer step by step, so each answer is scored against the gold history of its turn (gold replay)` };
  }
  return { mode: 'model in the loop', items: tally.loopItems, steps: tally.steps, capped: tally.capped };
}
