import { resolve } from 'node:path';
import { UserError } from '../../core/errors.ts';
import type { MetricTable } from '../../core/eval.ts';
import { DatasetStore } from '../../core/store.ts';
import { formatTable } from '../../core/runner.ts';
import { evaluate, modelDirName, type Interaction, type ModelChoice } from '../../eval/run.ts';
import { pipelines } from '../../pipelines/index.ts';
import type { Command, Io, Values } from '../command.ts';
import { intFlag, needPositionals, stringFlag } from '../flags.ts';
import { GATEWAY_LIMIT_OPTIONS, gatewayFromFlags } from '../gateway.ts';

const OFFLINE_MODELS = ['oracle', 'noisy-oracle'];

/** Which model answers: a predictions file, a model through the LLM gateway, or an offline oracle. */
function modelChoice(values: Values, io: Io, seed: number): ModelChoice {
  const predictions = stringFlag(values, 'predictions');
  const llm = stringFlag(values, 'llm');
  const model = stringFlag(values, 'model');
  if (predictions !== undefined) {
    if (llm !== undefined || model !== undefined) throw new UserError('--predictions scores answers made elsewhere: leave out --model and --llm');
    return { kind: 'predictions', path: resolve(io.cwd, predictions), shown: predictions };
  }
  if (llm !== undefined) {
    if (llm === 'offline') throw new UserError('--llm offline has no model to answer with: use --model oracle or --model noisy-oracle, or --llm openai --model <m>');
    return { kind: 'llm', llm: gatewayFromFlags(values, io.env, io.home, seed, io.err, io.cwd) };
  }
  if (model === undefined) throw new UserError('say whose answers to score: --predictions <file.jsonl>, --model oracle|noisy-oracle, or --llm openai --model <m>');
  if (!OFFLINE_MODELS.includes(model)) throw new UserError(`--model ${model} needs --llm openai (a model behind the gateway); without --llm, --model is one of ${OFFLINE_MODELS.join(', ')}`);
  return model === 'oracle' ? { kind: 'oracle' } : { kind: 'noisy-oracle', seed };
}

/** Metrics (rows) by table (columns: all, then each category), in %. */
function metricsTable(tables: Record<string, MetricTable>): string {
  const names = [...new Set(Object.values(tables).flatMap((t) => Object.keys(t)))];
  const columns = Object.keys(tables);
  const cell = (v: number | undefined) => (v === undefined ? '—' : (v * 100).toFixed(1));
  return formatTable(['metric', ...columns], names.map((n) => [n, ...columns.map((c) => cell(tables[c][n]))]));
}

/** How the interactive items were answered, in one line. */
function interactionLine(interaction: Interaction): string {
  if (interaction.mode === 'gold replay') return `gold replay: ${interaction.note}`;
  return `model in the loop: ${interaction.items} item(s), ${interaction.steps} model step(s), ${interaction.capped} ended at the step cap`;
}

export const evalCommand: Command = {
  path: ['eval'],
  usage: 'toolkiln eval <name>@v (--predictions f.jsonl | --model oracle|noisy-oracle | --llm openai|replay --model m [--concurrency n] [--rpm n] [--tpm n] [--max-retries n] [--no-cache] [--price-table f]) [--limit n] [--seed s] [--json]',
  summary: "score a model's answers on a version by its benchmark's own rules (results in datasets/<name>/<v>.derived/eval/<model>/)",
  options: {
    predictions: { type: 'string' },
    model: { type: 'string' },
    llm: { type: 'string' },
    limit: { type: 'string' },
    seed: { type: 'string' },
    ...GATEWAY_LIMIT_OPTIONS,
  },
  async run(positionals, values, io) {
    needPositionals(positionals, 1, this.usage);
    const limit = intFlag(values, 'limit', { min: 1 });
    const seed = intFlag(values, 'seed', { min: 0 }) ?? 42;
    const store = new DatasetStore(io.home, { warn: io.err });
    const ref = store.resolve(positionals[0]);
    const manifest = store.manifest(ref);
    const scorer = pipelines[manifest.pipeline]?.scorer;
    if (!scorer) {
      const scored = Object.entries(pipelines).filter(([, p]) => p.scorer).map(([name]) => name);
      throw new UserError(`${ref.name}@${ref.version} was made by the ${manifest.pipeline} recipe, which has no scorer; toolkiln eval scores versions of ${scored.join(', ')}`);
    }
    const model = modelChoice(values, io, seed);
    if (model.kind === 'noisy-oracle' && !scorer.corrupt && !scorer.session) throw new UserError(`the ${scorer.benchmark} scorer has no noisy oracle; use --model oracle`);
    store.assertIntact(ref);
    try {
      const result = await evaluate({ scorer, samples: store.sampleSource(ref), version: ref, model, limit, outDir: store.derivedDir(ref, 'eval', modelDirName(model)), onProgress: io.json ? undefined : io.err });
      const { report } = result;
      if (io.json) {
        const { details: _details, ...tables } = report;
        io.out(JSON.stringify({ dataset: `${ref.name}@${ref.version}`, model: modelDirName(model), ...tables, missing: result.missing, ...(result.interaction ? { interaction: result.interaction } : {}), ...(result.noise ? { noise: result.noise } : {}), ...(result.usage ? { usage: result.usage } : {}), files: result.files }));
      } else {
        io.out(`${ref.name}@${ref.version} scored by ${report.benchmark} rules: ${report.items} item(s), ${result.missing} without output (model ${modelDirName(model)})`);
        io.out(metricsTable({ all: report.metrics, ...report.byCategory }));
        if (result.interaction) io.out(interactionLine(result.interaction));
        if (result.noise) io.out(`noise (seed ${result.noise.seed}): applied ${Object.entries(result.noise.applied).map(([c, n]) => `${c} ${n}/${result.noise!.drawn[c]} drawn`).join(', ')}`);
        io.out(`results: ${result.files.join(', ')}`);
      }
      return 0;
    } finally {
      if (model.kind === 'llm') await model.llm.close();
    }
  },
};
