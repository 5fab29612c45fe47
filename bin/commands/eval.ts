import { resolve } from 'node:path';
import { UserError } from '../../core/errors.ts';
import type { BenchmarkScorer, MetricTable } from '../../core/eval.ts';
import { pathResolver } from '../../core/run.ts';
import { DatasetStore } from '../../core/store.ts';
import { formatTable } from '../../core/table.ts';
import { agreementOf, type Agreement } from '../../eval/compare-agreement.ts';
import { ALL, compareModel, writeComparison, type CompareModel, type ModelComparison } from '../../eval/compare.ts';
import { releasedItems, releasedSetFor } from '../../eval/released.ts';
import { evaluate, lowerIsBetterOf, modelDirName, type Interaction, type ModelChoice } from '../../eval/run.ts';
import { pipelines } from '../../pipelines/index.ts';
import type { Command, Io, Values } from '../command.ts';
import { intFlag, needPositionals, stringFlag } from '../flags.ts';
import { gatewayFromFlags } from '../gateway.ts';
import { PROJECT_DIR } from '../../core/project-dir.ts';
import { DEFAULT_SEED, SEED_RANGE } from '../../core/seed.ts';
import { COMPARE_RESAMPLES, EVAL, EVAL_COMPARE } from '../command-specs.ts';

const OFFLINE_MODELS = ['oracle', 'noisy-oracle'];

/** The scorer of the recipe that made a version, or a one-line error naming the recipes that have one. */
function scorerOf(pipeline: string, shown: string): BenchmarkScorer {
  const scorer = pipelines[pipeline]?.scorer;
  if (scorer) return scorer;
  const scored = Object.entries(pipelines).filter(([, p]) => p.scorer).map(([name]) => name);
  throw new UserError(`${shown} was made by the ${pipeline} recipe, which has no scorer; toolkiln eval scores versions of ${scored.join(', ')}`);
}

/** Which model answers: a predictions file, a model through the LLM gateway, or an offline oracle. */
function modelChoice(values: Values, io: Io, seed: number): ModelChoice {
  const predictions = stringFlag(values, 'predictions');
  const llm = stringFlag(values, 'llm');
  const model = stringFlag(values, 'model');
  if (values['user-model'] !== undefined && llm === undefined) throw new UserError('--user-model names the model that plays the simulated user of a model behind the gateway: use it with --llm openai --model <m>');
  if (predictions !== undefined) {
    if (llm !== undefined || model !== undefined) throw new UserError('--predictions scores answers made elsewhere: leave out --model and --llm');
    return { kind: 'predictions', path: resolve(io.cwd, predictions), shown: predictions };
  }
  if (llm !== undefined) {
    if (llm === 'offline') throw new UserError('--llm offline has no model to answer with: use --model oracle or --model noisy-oracle, or --llm openai --model <m>');
    const userModel = stringFlag(values, 'user-model');
    const gateway = gatewayFromFlags(values, io.env, io.home, seed, io.err, io.cwd);
    if (userModel === undefined) return { kind: 'llm', llm: gateway };
    try {
      return { kind: 'llm', llm: gateway, userLlm: gatewayFromFlags({ ...values, model: userModel }, io.env, io.home, seed, io.err, io.cwd) };
    } catch (error) {
      void gateway.close();
      throw error;
    }
  }
  if (model === undefined) throw new UserError('say whose answers to score: --predictions <file.jsonl>, --model oracle|noisy-oracle, or --llm openai --model <m>');
  if (!OFFLINE_MODELS.includes(model)) throw new UserError(`--model ${model} needs --llm openai (a model behind the gateway); without --llm, --model is one of ${OFFLINE_MODELS.join(', ')}`);
  return model === 'oracle' ? { kind: 'oracle' } : { kind: 'noisy-oracle', seed };
}

/** The model `--model` names on both sides of `eval compare` (see its usage). */
function compareModelOf(spec: string, values: Values, io: Io, seed: number): CompareModel {
  const same = (choice: ModelChoice): CompareModel => ({ name: modelDirName(choice), generated: choice, released: choice });
  const predictions = /^predictions:(.*)$/.exec(spec);
  if (predictions) {
    const files = predictions[1].split(',');
    if (files.length !== 2 || files.some((f) => !f)) throw new UserError(`--model ${spec}: give a predictions file for each side, predictions:<generated.jsonl>,<released.jsonl>`);
    const [generated, released] = files.map((shown): ModelChoice => ({ kind: 'predictions', path: resolve(io.cwd, shown), shown }));
    return { name: modelDirName(generated), generated, released };
  }
  const noisy = /^noisy-oracle(?::(.*))?$/.exec(spec);
  if (noisy) {
    const ownSeed = noisy[1] === undefined ? seed : Number(noisy[1]);
    if (!/^\d+$/.test(noisy[1] ?? '0') || !Number.isSafeInteger(ownSeed)) throw new UserError(`--model ${spec}: the seed after noisy-oracle: is a whole number (noisy-oracle:7)`);
    return same({ kind: 'noisy-oracle', seed: ownSeed });
  }
  if (spec === 'oracle') return same({ kind: 'oracle' });
  const llm = stringFlag(values, 'llm');
  if (llm === undefined || llm === 'offline') throw new UserError(`--model ${spec} needs --llm openai (a model behind the gateway); without it, --model is oracle, noisy-oracle[:seed] or predictions:<generated.jsonl>,<released.jsonl>`);
  return same({ kind: 'llm', llm: gatewayFromFlags({ ...values, model: spec }, io.env, io.home, seed, io.err, io.cwd) });
}

const percent = (v: number | null | undefined) => (v == null ? '—' : (v * 100).toFixed(1));
const signed = (v: number | null) => (v === null ? '—' : `${v > 0 ? '+' : ''}${(v * 100).toFixed(1)}`);

/** A metric's name as a table shows it: said to be better lower when the scorer says so (a 0.0 there is the best figure). */
const metricLabel = (scorer: BenchmarkScorer, metric: string) => (scorer.lowerIsBetter?.includes(metric) ? `${metric} (lower is better)` : metric);

/** Per category and metric: each side, the difference and its interval, in %. */
function comparisonTable(scorer: BenchmarkScorer, comparison: ModelComparison): string {
  return formatTable(
    ['category', 'metric', 'generated', 'released', 'difference', '95% interval'],
    comparison.rows.map((r) => [r.category, metricLabel(scorer, r.metric), percent(r.generated), percent(r.released), signed(r.difference), r.interval ? `[${signed(r.interval.low)}, ${signed(r.interval.high)}]` : '—']),
  );
}

/** Per category and metric: how each side orders each pair of models. */
function agreementTable(agreement: Agreement): string {
  const pairs = agreement.rows[0]?.pairs ?? [];
  return formatTable(
    ['category', 'metric', ...pairs.flatMap((p) => [`${p.first} vs ${p.second} generated`, 'released'])],
    agreement.rows.map((r) => [r.category, r.metric, ...r.pairs.flatMap((p) => [p.generated, p.released])]),
  );
}

/** Metrics (rows) by table (columns: all, then each category), in %. */
function metricsTable(scorer: BenchmarkScorer, tables: Record<string, MetricTable>): string {
  const names = [...new Set(Object.values(tables).flatMap((t) => Object.keys(t)))];
  const columns = Object.keys(tables);
  const cell = (v: number | undefined) => (v === undefined ? '—' : (v * 100).toFixed(1));
  return formatTable(['metric', ...columns], names.map((n) => [metricLabel(scorer, n), ...columns.map((c) => cell(tables[c][n]))]));
}

/** How the interactive items were answered, in one line. */
function interactionLine(interaction: Interaction): string {
  if (interaction.mode === 'gold replay') return `gold replay: ${interaction.note}`;
  return `model in the loop: ${interaction.items} item(s), ${interaction.steps} model step(s), ${interaction.capped} ended at the step cap`;
}

export const evalCommand: Command = {
  ...EVAL,
  async run(positionals, values, io) {
    needPositionals(positionals, 1, this.usage);
    const limit = intFlag(values, 'limit', { min: 1 });
    const seed = intFlag(values, 'seed', SEED_RANGE) ?? DEFAULT_SEED;
    const store = new DatasetStore(io.home, { warn: io.err });
    const ref = store.resolve(positionals[0]);
    const scorer = scorerOf(store.manifest(ref).pipeline, `${ref.name}@${ref.version}`);
    const model = modelChoice(values, io, seed);
    if (model.kind === 'noisy-oracle' && !scorer.corrupt && !scorer.session) throw new UserError(`the ${scorer.benchmark} scorer has no noisy oracle; use --model oracle`);
    store.assertIntact(ref);
    try {
      const result = await evaluate({ scorer, samples: store.sampleSource(ref), version: ref, model, limit, outDir: store.derivedDir(ref, 'eval', modelDirName(model)), onProgress: io.json ? undefined : io.err });
      const { report } = result;
      if (io.json) {
        io.out(JSON.stringify({ dataset: `${ref.name}@${ref.version}`, model: modelDirName(model), ...report, ...lowerIsBetterOf(scorer), missing: result.missing, ...(result.interaction ? { interaction: result.interaction } : {}), ...(result.noise ? { noise: result.noise } : {}), ...(result.usage ? { usage: result.usage } : {}), files: result.files }));
      } else {
        io.out(`${ref.name}@${ref.version} scored by ${report.benchmark} rules: ${report.items} item(s), ${result.missing} without output (model ${modelDirName(model)})`);
        io.out(metricsTable(scorer, { all: report.metrics, ...report.byCategory }));
        if (result.interaction) io.out(interactionLine(result.interaction));
        if (result.noise) io.out(`noise (seed ${result.noise.seed}): applied ${Object.entries(result.noise.applied).map(([c, n]) => `${c} ${n}/${result.noise!.drawn[c]} drawn`).join(', ')}`);
        io.out(`results: ${result.files.join(', ')}`);
      }
      return 0;
    } finally {
      if (model.kind === 'llm') await Promise.all([model.llm.close(), model.userLlm?.close()]);
    }
  },
};

export const evalCompareCommand: Command = {
  ...EVAL_COMPARE,
  async run(positionals, values, io) {
    needPositionals(positionals, 1, this.usage);
    const seed = intFlag(values, 'seed', SEED_RANGE) ?? DEFAULT_SEED;
    const resamples = intFlag(values, 'resamples', { min: 1, max: 100_000 }) ?? COMPARE_RESAMPLES;
    const limit = intFlag(values, 'limit', { min: 1 });
    const store = new DatasetStore(io.home, { warn: io.err });
    const ref = store.resolve(positionals[0]);
    const shown = `${ref.name}@${ref.version}`;
    const scorer = scorerOf(store.manifest(ref).pipeline, shown);
    const released = releasedSetFor(scorer.benchmark, shown, stringFlag(values, 'reference'));
    const specs = (values.model as string[] | undefined) ?? [];
    if (!specs.length) throw new UserError('say which model answers both sides: --model oracle|noisy-oracle[:seed]|predictions:<generated.jsonl>,<released.jsonl>, or --llm openai --model <m>; repeat --model to compare how both sides rank several');
    const models: CompareModel[] = [];
    try {
      // Inside the try: a gateway made for an earlier --model is closed when a later one is refused.
      for (const spec of specs) models.push(compareModelOf(spec, values, io, seed));
      const names = models.map((m) => m.name);
      const twice = names.find((name, i) => names.indexOf(name) !== i);
      if (twice) throw new UserError(`--model ${twice} is given twice; compare different models`);
      if (models.some((m) => m.generated.kind === 'noisy-oracle') && !scorer.corrupt) throw new UserError(`the ${scorer.benchmark} scorer has no noisy oracle; use --model oracle`);
      const referenceDir = stringFlag(values, 'reference-dir');
      const resolvePath = pathResolver(io.cwd, PROJECT_DIR);
      const items = referenceDir === undefined ? releasedItems(released, resolvePath) : releasedItems(released, resolvePath, resolve(io.cwd, referenceDir));
      store.assertIntact(ref);
      const comparisons: ModelComparison[] = [];
      for (const model of models) {
        comparisons.push(
          await compareModel({
            scorer,
            samples: store.sampleSource(ref),
            version: ref,
            releasedItems: items,
            model,
            resamples,
            seed,
            limit,
            outDir: store.derivedDir(ref, 'eval', 'compare', released.name, model.name),
            onProgress: io.json ? undefined : io.err,
          }),
        );
      }
      const agreement = comparisons.length > 1 ? agreementOf(comparisons) : undefined;
      const reference = { name: released.name, dir: referenceDir ?? '(the shared reference folder)', files: released.files };
      const file = writeComparison(store.derivedDir(ref, 'eval', 'compare', released.name), names.join('+'), { dataset: shown, reference, resamples, seed, models: comparisons, ...(agreement ? { agreement } : {}) });
      if (io.json) {
        io.out(JSON.stringify({ dataset: shown, reference, resamples, seed, models: comparisons, ...(agreement ? { agreement } : {}), file }));
        return 0;
      }
      for (const c of comparisons) {
        io.out(`${shown} against released ${released.name} (${released.files}), model ${c.model}: ${c.items.generated} / ${c.items.released} item(s), ${c.missing.generated} / ${c.missing.released} without output; difference = generated − released, ${resamples} resamples (seed ${seed}); "${ALL}" is the whole side`);
        io.out(comparisonTable(scorer, c));
        io.out('');
      }
      if (agreement) {
        io.out(`ranking agreement of ${agreement.models.join(', ')}: ${agreement.agreement === null ? 'nothing to compare (every pair level on a side)' : `${(agreement.agreement * 100).toFixed(1)}%`} (${agreement.concordant} pair(s) ordered alike, ${agreement.discordant} the other way, ${agreement.tied} level on a side)`);
        io.out(agreementTable(agreement));
      }
      io.out(`results: ${file}`);
      return 0;
    } finally {
      for (const model of models) if (model.generated.kind === 'llm') await model.generated.llm.close();
    }
  },
};
