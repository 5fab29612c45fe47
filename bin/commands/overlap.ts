import { existsSync, renameSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createEmbedder, type EmbedderConfig } from '../../core/embed/index.ts';
import { UserError } from '../../core/errors.ts';
import { JsonlWriter, writeFileAtomic } from '../../core/jsonl.ts';
import { DEFAULT_OVERLAP_EMBEDDER, OverlapConfig, type OverlapThresholds } from '../../core/overlap/config.ts';
import { formatOverlap } from '../../core/overlap/format.ts';
import { describeHit, OVERLAP_STAGE } from '../../core/overlap/gate.ts';
import { measureOverlap, type OverlapHit } from '../../core/overlap/measure.ts';
import { referenceSets } from '../../core/overlap/references.ts';
import { pathResolver } from '../../core/run.ts';
import { DatasetStore } from '../../core/store.ts';
import { pipelines } from '../../pipelines/index.ts';
import type { Command, Values } from '../command.ts';
import { DATASETS_OVERLAP, OVERLAP_SHOWN_HITS } from '../command-specs.ts';
import { intFlag, needPositionals, stringFlag } from '../flags.ts';
import { gatewayFromFlags } from '../gateway.ts';
import { PROJECT_DIR } from '../../core/project-dir.ts';

/** `--threshold` level names → the config's keys. */
const THRESHOLD_KEYS: Record<string, keyof OverlapThresholds> = { ngram: 'ngram', 'call-exact': 'callExact', 'call-near': 'callNear', embedding: 'embedding' };

/** The thresholds of `--threshold level=t …` laid over `base`. */
function thresholdsFromFlags(values: Values, base: OverlapThresholds): OverlapThresholds {
  const given = (values.threshold as string[] | undefined) ?? [];
  const out = { ...base };
  for (const item of given) {
    const [level, raw] = item.split('=');
    const key = THRESHOLD_KEYS[level];
    if (!key || raw === undefined) throw new UserError(`--threshold ${item}: write level=t with a level of ${Object.keys(THRESHOLD_KEYS).join(', ')} and t a number from 0 to 1 or off`);
    const value = raw === 'off' ? null : Number(raw);
    if (value !== null && (raw.trim() === '' || !Number.isFinite(value) || value < 0 || value > 1)) throw new UserError(`--threshold ${item}: the threshold is a number from 0 to 1, or off`);
    out[key] = value;
  }
  if (Object.values(out).every((t) => t === null)) throw new UserError('--threshold turned every level off: nothing to measure');
  return out;
}

function ngramsFromFlag(values: Values, base: number[]): number[] {
  const raw = stringFlag(values, 'ngrams');
  if (raw === undefined) return base;
  const ns = raw.split(',').map((n) => n.trim());
  if (!ns.every((n) => /^\d+$/.test(n) && Number(n) >= 2 && Number(n) <= 50)) throw new UserError(`--ngrams ${raw}: give word n-gram sizes from 2 to 50, separated by commas (e.g. 8,13)`);
  return ns.map(Number);
}

function embedderFromFlag(values: Values, base: EmbedderConfig, cwd: string): EmbedderConfig {
  const raw = stringFlag(values, 'embedder');
  if (raw === undefined) return base;
  if (raw === 'lexical') return DEFAULT_OVERLAP_EMBEDDER;
  if (raw === 'openai' || raw.startsWith('openai:')) return { kind: 'openai', ...(raw.length > 7 ? { model: raw.slice(7) } : {}) };
  const dir = resolve(cwd, raw);
  if (!existsSync(join(dir, 'config.json'))) throw new UserError(`--embedder ${raw}: no model folder there (config.json, tokenizer.json, onnx/model.onnx); or write lexical, or openai[:model]`);
  return { kind: 'transformers', modelPath: dir };
}

export const datasetsOverlapCommand: Command = {
  ...DATASETS_OVERLAP,
  async run(positionals, values, io) {
    needPositionals(positionals, 1, this.usage);
    const shown = intFlag(values, 'show', { min: 0 }) ?? OVERLAP_SHOWN_HITS;
    const store = new DatasetStore(io.home, { warn: io.err });
    const ref = store.resolve(positionals[0]);
    store.assertIntact(ref);
    const manifest = store.manifest(ref);
    const pipeline = pipelines[manifest.pipeline];
    // The version's own settings (its recipe's testOverlap), flags over them.
    const base = OverlapConfig.parse(pipeline?.testOverlap?.(manifest.config) ?? {});
    const config: OverlapConfig = {
      ...base,
      ngrams: ngramsFromFlag(values, base.ngrams),
      thresholds: thresholdsFromFlags(values, base.thresholds),
      embedder: embedderFromFlag(values, base.embedder, io.cwd),
    };
    const resolvePath = pathResolver(io.cwd, PROJECT_DIR);
    const given = (values.against as string[] | undefined) ?? [];
    const own = (pipeline?.released ?? []).map((entry) => entry.name);
    if (!given.length && !own.length) throw new UserError(`${ref.name}@${ref.version} is of recipe ${manifest.pipeline}, which reads no released set: name what to compare with (--against released, a released set, <name>@<version> or a file)`);
    const references = referenceSets(given.length ? given : own, {
      released: Object.values(pipelines).flatMap((p) => p.released ?? []),
      store,
      resolvePath,
      cwd: io.cwd,
    });
    const embedder = config.thresholds.embedding === null ? undefined : createEmbedder(config.embedder, { stage: OVERLAP_STAGE, resolvePath, gateway: config.embedder.kind === 'openai' ? gatewayFromFlags({ ...values, llm: 'openai' }, io.env, io.home, 0, io.err, io.cwd) : undefined });

    const dir = store.derivedDir(ref, 'overlap');
    const hitsPath = join(dir, 'hits.jsonl');
    const writer = new JsonlWriter(`${hitsPath}.tmp`);
    const first: OverlapHit[] = [];
    let report;
    try {
      report = await measureOverlap(store.sampleSource(ref).all(), references, {
        config,
        embedder,
        onSample: (_sample, hits) => {
          for (const hit of hits) {
            writer.write(hit);
            if (first.length < shown) first.push(hit);
          }
        },
      });
    } finally {
      writer.close();
    }
    renameSync(`${hitsPath}.tmp`, hitsPath);
    const subject = `${ref.name}@${ref.version}`;
    const document = { dataset: subject, ...report, hits: writer.count, hitsFile: hitsPath };
    writeFileAtomic(join(dir, 'report.json'), `${JSON.stringify(document, null, 2)}\n`);
    if (io.json) io.out(JSON.stringify({ ...document, firstHits: first }));
    else io.out(formatReport(subject, document, first));
    return 0;
  },
};

function formatReport(subject: string, document: Awaited<ReturnType<typeof measureOverlap>> & { hits: number; hitsFile: string }, first: OverlapHit[]): string {
  const megabytes = document.references.reduce((sum, r) => sum + r.indexBytes, 0) / 2 ** 20;
  const perSecond = document.seconds.measure > 0 ? Math.round(document.samples / document.seconds.measure) : document.samples;
  return [
    formatOverlap(subject, document),
    '',
    `embedder: ${document.embedder ?? 'none (embedding level off)'}; references indexed in ${document.seconds.index.toFixed(1)} s (${megabytes.toFixed(1)} MB of index), samples measured in ${document.seconds.measure.toFixed(1)} s (${perSecond} a second)`,
    `hits: ${document.hits} (every one in ${document.hitsFile})${first.length ? `; the first ${first.length}:` : ''}`,
    ...first.map((hit) => `  ${hit.sample} (${hit.split}/${hit.category}): ${describeHit(hit)}`),
  ].join('\n');
}
