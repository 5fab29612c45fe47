// `npm run bench -- overlap [--quick] [--seed n] [--samples n] [--references n] [--skip-plants] [--skip-scale]`:
//   1. what `datasets overlap` finds among known overlaps planted in the released test sets
//      (bench/lib/overlap-plants.ts), with the default thresholds: per benchmark and kind of plant,
//      the share found at each level and by the levels meant to find it, the share of clean
//      look-alikes flagged, and the embedding threshold's trade-off;
//   2. training data against test data at scale: a version of 100,000 samples (the released
//      samples and rewordings of them) against a version of 10,000, through the command in a
//      process of its own: wall and CPU seconds, peak memory, hits.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createEmbedder } from '../core/embed/index.ts';
import { hashOf } from '../core/hash.ts';
import { OverlapConfig, levelsOf } from '../core/overlap/config.ts';
import { userText } from '../core/overlap/text.ts';
import type { Sample } from '../core/records.ts';
import { Rng } from '../core/rng.ts';
import { DatasetStore } from '../core/store.ts';
import { paraphrase, paraphraseStrength, plantReleased, releasedSamples } from './lib/overlap-plants.ts';
import { pooled, scorePlants, scoresTable } from './lib/overlap-scores.ts';

const PROJECT = new URL('..', import.meta.url).pathname;
const RELEASED = ['mtu-bench', 'metatool', 'tooltalk', 'nestools', 'acebench'];

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { quick: { type: 'boolean' }, seed: { type: 'string' }, samples: { type: 'string' }, references: { type: 'string' }, 'skip-plants': { type: 'boolean' }, 'skip-scale': { type: 'boolean' } },
    allowPositionals: false,
  });
  const seed = Number(values.seed ?? 11);
  console.log(`Node ${process.version}, load average ${loadavg()[0].toFixed(2)} at start (${values.quick ? 'quick' : 'full'} run, seed ${seed}).\n`);
  if (!values['skip-plants']) await plants(seed, values.quick === true);
  if (!values['skip-scale']) scale(Number(values.samples ?? (values.quick ? 20_000 : 100_000)), Number(values.references ?? 10_000), seed);
}

async function plants(seed: number, quick: boolean): Promise<void> {
  const config = OverlapConfig.parse({});
  const embedder = createEmbedder(config.embedder, { stage: 'bench' });
  const sets = plantReleased({ perKind: quick ? 50 : 100, lookAlikes: quick ? 150 : 300, seed });
  const strength = sets.flatMap((set) =>
    set.plants
      .filter((p) => p.kind === 'paraphrase')
      .map((p) => {
        const source = [...set.reference.samples()].find((s) => s.id === p.from)!;
        return paraphraseStrength(userText(source), userText(p.sample));
      }),
  );
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  console.log(`### Plants found with the default thresholds (seed ${seed})\n`);
  console.log(`Reference halves: ${sets.map((s) => `${s.benchmark} ${[...s.reference.samples()].length}`).join(', ')}; look-alikes left out as duplicates inside the release: ${sets.map((s) => `${s.benchmark} ${s.duplicatesSkipped}`).join(', ')}.`);
  console.log(`Paraphrases keep on average ${(mean(strength.map((s) => s.grams)) * 100).toFixed(0)}% of their source's word 8-grams and ${(mean(strength.map((s) => s.words)) * 100).toFixed(0)}% of its words.\n`);
  const started = performance.now();
  const scores = await scorePlants(sets, config, embedder);
  console.log(scoresTable([...scores, ...pooled(scores)], levelsOf(config)));
  console.log(`\n(measured in ${((performance.now() - started) / 1000).toFixed(1)} s)\n`);

  console.log('### The embedding threshold: paraphrases found by their text, look-alikes flagged at any level (all benchmarks)\n');
  console.log('| embedding ≥ | paraphrases found | look-alikes flagged |');
  console.log('|---:|---:|---:|');
  for (const embedding of [0.7, 0.75, 0.8, 0.85, 0.9]) {
    const all = pooled(await scorePlants(sets, { ...config, thresholds: { ...config.thresholds, embedding } }, embedder));
    const of = (kind: string) => all.find((s) => s.kind === kind)!;
    const share = (kind: string) => `${((of(kind).found / of(kind).plants) * 100).toFixed(1)}%`;
    console.log(`| ${embedding} | ${share('paraphrase')} | ${share('look-alike')} |`);
  }
  console.log('');
}

/** `count` samples drawn round the pool, each after the first round reworded (its own seed), under ids of their own. */
function* variants(pool: readonly Sample[], count: number, seed: number, split: string): Generator<Sample> {
  for (let i = 0; i < count; i++) {
    const source = pool[i % pool.length];
    const text = i < pool.length ? userText(source) : paraphrase(userText(source), Rng.derive(seed, i));
    let placed = false;
    const dialogue = source.dialogue.map((turn) => {
      if (turn.role !== 'user') return turn;
      const content = placed ? '' : text;
      placed = true;
      return { ...turn, content };
    });
    yield { ...source, id: `${split}-${i}-${hashOf(source.id, 8)}`, split, dialogue };
  }
}

const usage = { requests: 0, cached: 0, promptTokens: 0, completionTokens: 0, costUsd: null };

function publish(store: DatasetStore, name: string, samples: Iterable<Sample>): void {
  store.publish({
    name,
    samples,
    tools: [],
    rejects: [],
    manifest: { pipeline: 'bench', config: {}, fingerprint: name, parent: null, stages: [], usage: { total: usage, byStage: {}, byModel: {} }, models: [], prompts: {}, sources: {}, stats: {} },
  });
}

function scale(samples: number, references: number, seed: number): void {
  const home = mkdtempSync(join(tmpdir(), 'tk-bench-overlap-'));
  try {
    const pool = new Rng(seed).shuffle(RELEASED.flatMap((name) => releasedSamples(name)));
    const store = new DatasetStore(home);
    let started = performance.now();
    publish(store, 'test-set', variants(pool, references, seed, 'test'));
    publish(store, 'training', variants(new Rng(seed + 1).shuffle(pool), samples, seed + 1, 'train'));
    console.log(`### Training data against test data: ${samples.toLocaleString('en-US')} samples against ${references.toLocaleString('en-US')}\n`);
    console.log(`The ${pool.length.toLocaleString('en-US')} released samples of ${RELEASED.join(', ')}, shuffled: the test set is its first ${references.toLocaleString('en-US')} (reworded past the pool), the training set ${samples.toLocaleString('en-US')} drawn round it again, each after the first round reworded with a seed of its own. Published in ${((performance.now() - started) / 1000).toFixed(0)} s.\n`);
    started = performance.now();
    const child = spawnSync('/usr/bin/time', ['-f', '%e %U %S %M', process.execPath, join(PROJECT, 'bin/toolkiln.js'), 'datasets', 'overlap', 'training@v1', '--against', 'test-set@v1', '--json', '--show', '0'], {
      env: { ...process.env, TOOLKILN_HOME: home },
      encoding: 'utf8',
      maxBuffer: 64 * 2 ** 20,
    });
    if (child.status !== 0) throw new Error(`datasets overlap failed: ${child.stderr}`);
    const [wall, user, system, kilobytes] = child.stderr.trim().split('\n').at(-1)!.split(' ').map(Number);
    const report = JSON.parse(child.stdout) as { samples: number; hits: number; seconds: { index: number; measure: number }; total: Record<string, { any: number }>; references: { indexBytes: number }[] };
    console.log('| samples | references | index (s) | measure (s) | wall (s) | CPU (s) | peak memory | index size | samples overlapping | hits |');
    console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
    console.log(
      `| ${report.samples.toLocaleString('en-US')} | ${references.toLocaleString('en-US')} | ${report.seconds.index.toFixed(1)} | ${report.seconds.measure.toFixed(1)} | ${wall.toFixed(1)} | ${(user + system).toFixed(1)} | ${(kilobytes / 1024).toFixed(0)} MB | ${(report.references[0].indexBytes / 2 ** 20).toFixed(1)} MB | ${report.total['test-set@v1'].any.toLocaleString('en-US')} | ${report.hits.toLocaleString('en-US')} |`,
    );
    console.log(`\n(load average ${loadavg()[0].toFixed(2)} at the end; the command's own figures: index and measure seconds, wall clock and CPU of its process)`);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}
