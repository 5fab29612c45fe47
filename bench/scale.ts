// `npm run bench -- scale [--mtu 1,4,16] [--toole 1,8] [--nestools 100000] [--reference <checkout>] [--million]`:
// each recipe on inputs made n times larger, each size in a fresh process, offline. Prints samples,
// wall time, CPU time (user + system of the child) and CPU per sample, peak RSS and RSS per 1,000
// samples, and the wall time and peak RSS of exporting the version in the recipe's own format
// (another fresh process); the reference is the same recipe at ×1 in the same run. With
// `--reference`, each MTU size is also run by another checkout of toolkiln (the code before a
// change, its own node_modules or a link to these) on the same inputs, and a second table gives the
// MTU runs side by side as ratios. `--million` adds an MTU run on the sources ×100 (about 1.04
// million samples, `--prune-stages`, no export): a long one.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const project = new URL('..', import.meta.url).pathname;
const sources = join(project, '../shared/data/sources');

/**
 * The MTU sources with every record repeated `n` times: SNIPS files copied under new names (a SNIPS
 * file is one JSON document, read whole: n copies of a file, not one n times larger), ATIS lines
 * repeated, SGD dialogue files copied with their dialogue ids made distinct.
 */
export function replicateMtu(dir: string, n: number): object {
  const snips = join(dir, 'snips');
  mkdirSync(snips, { recursive: true });
  for (const file of readdirSync(join(sources, 'snips')).filter((f) => f.endsWith('.json'))) {
    for (let copy = 0; copy < n; copy++) cpSync(join(sources, 'snips', file), join(snips, copy ? file.replace(/\.json$/, `-${copy}.json`) : file));
  }
  for (const split of ['train', 'valid', 'test']) {
    mkdirSync(join(dir, 'atis', split), { recursive: true });
    for (const file of ['seq.in', 'seq.out', 'label']) writeFileSync(join(dir, 'atis', split, file), readFileSync(join(sources, 'atis', split, file), 'utf8').repeat(n));
  }
  for (const split of ['train', 'dev', 'test']) {
    const from = join(sources, 'sgd', split);
    mkdirSync(join(dir, 'sgd', split), { recursive: true });
    cpSync(join(from, 'schema.json'), join(dir, 'sgd', split, 'schema.json'));
    let k = 0;
    const files = readdirSync(from).filter((f) => /^dialogues_\d+\.json$/.test(f)).sort();
    for (let copy = 0; copy < n; copy++) {
      for (const file of files) {
        const to = join(dir, 'sgd', split, `dialogues_${String(++k).padStart(4, '0')}.json`);
        if (!copy) cpSync(join(from, file), to);
        // A copy's dialogues get ids of their own: the same ids would make the same sample ids, which publishing rejects as duplicates.
        else writeFileSync(to, JSON.stringify((JSON.parse(readFileSync(join(from, file), 'utf8')) as { dialogue_id: string }[]).map((d) => ({ ...d, dialogue_id: `${d.dialogue_id}_copy${copy}` }))));
      }
    }
  }
  cpSync(join(sources, 'multiwoz'), join(dir, 'multiwoz'), { recursive: true });
  return { sources: { snips: { dir: join(dir, 'snips') }, atis: { dir: join(dir, 'atis') }, sgd: { dir: join(dir, 'sgd') }, multiwoz: { dir: join(dir, 'multiwoz') } } };
}

/** The MetaTool plugins repeated `n` times, each copy under its own names. */
export function replicateToolE(dir: string, n: number): object {
  const plugins = JSON.parse(readFileSync(join(sources, 'metatool/plugin_info.json'), 'utf8')) as Record<string, string>[];
  const copies = Array.from({ length: n }, (_, copy) => plugins.map((p) => (copy === 0 ? p : { ...p, name_for_model: `${p.name_for_model}_${copy}`, name_for_human: `${p.name_for_human} ${copy}` }))).flat();
  const file = join(dir, 'plugin_info.json');
  writeFileSync(file, JSON.stringify(copies));
  return { source: { file } };
}

interface Row {
  recipe: string;
  size: string;
  samples: number;
  seconds: number;
  /** User + system CPU seconds of the run's process. */
  cpuSeconds: number;
  rssGb: number;
  /** The export of the published version in the recipe's own format, in a fresh process. */
  exportSeconds: number;
  exportRssGb: number;
}

/** One toolkiln command (of this checkout, or of the one at `checkout`) in a fresh process under /usr/bin/time: its output, or why it failed, with wall, CPU and peak RSS. */
function timed(args: string[], home: string, checkout = project): { stdout: string; failed?: string; seconds: number; cpuSeconds: number; rssGb: number } {
  const child = spawnSync('/usr/bin/time', ['-f', 'TIME %e %M %U %S', process.execPath, join(checkout, 'bin/toolkiln.js'), ...args], {
    cwd: home,
    env: { ...process.env, TOOLKILN_HOME: home },
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  const timing = /TIME ([\d.]+) (\d+) ([\d.]+) ([\d.]+)/.exec(child.stderr);
  const figures = { seconds: Number(timing?.[1] ?? 0), cpuSeconds: Number(timing?.[3] ?? 0) + Number(timing?.[4] ?? 0), rssGb: Number(timing?.[2] ?? 0) / 1048576 };
  if (child.status === 0 && timing) return { stdout: child.stdout, ...figures };
  return { stdout: child.stdout, failed: child.stderr.trim().split('\n').filter((l) => !l.startsWith('TIME')).at(-1) ?? `exit ${child.status}`, ...figures };
}

/**
 * One offline run in a fresh process, then the export of what it published in the recipe's own
 * format in another: samples, wall and CPU seconds, peak RSS of each.
 */
function measure(recipe: string, size: string, config: object, options: { checkout?: string; runArgs?: string[]; exported?: boolean; quiet?: boolean } = {}): Row {
  const home = mkdtempSync(join(tmpdir(), 'tk-scale-'));
  try {
    const configFile = join(home, 'config.json');
    writeFileSync(configFile, JSON.stringify(config));
    const run = timed(['run', recipe, '--config', configFile, '--quiet', '--json', ...(options.runArgs ?? [])], home, options.checkout);
    const exportToo = options.exported ?? true;
    const exported = run.failed || !exportToo ? run : timed(['export', `${recipe}@v1`, '--format', recipe, '--json'], home, options.checkout);
    const failed = run.failed ?? exported.failed;
    if (failed) {
      const who = options.checkout ? ` (${options.checkout})` : '';
      if (options.quiet) process.stderr.write(`${recipe} ${size}${who} failed${run.failed ? '' : ' to export'}: ${failed}\n`);
      else process.stdout.write(`| ${recipe} | ${size} | failed${run.failed ? '' : ' to export'}${who}: ${failed} | | | | | | | | |\n`);
      return { recipe, size, samples: 0, ...run, exportSeconds: 0, exportRssGb: 0 };
    }
    const doc = JSON.parse(run.stdout) as { counts: { samples: number } };
    return {
      recipe,
      size,
      samples: doc.counts.samples,
      seconds: run.seconds,
      cpuSeconds: run.cpuSeconds,
      rssGb: run.rssGb,
      exportSeconds: exportToo ? exported.seconds : 0,
      exportRssGb: exportToo ? exported.rssGb : 0,
    };
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

function sizesOf(args: string[], flag: string, fallback: number[]): number[] {
  const at = args.indexOf(flag);
  // `--mtu ""` (or 0) leaves a recipe out.
  return at === -1 ? fallback : (args[at + 1] ?? '').split(',').map(Number).filter((n) => n > 0);
}

/** The sources ×100 of `--million`: about 1.04 million MTU samples. */
const MILLION_COPIES = 100;

export async function run(args: string[]): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'tk-scale-inputs-'));
  const at = args.indexOf('--reference');
  const reference = at === -1 ? undefined : resolve(args[at + 1] ?? '');
  if (reference && !existsSync(join(reference, 'bin/toolkiln.js'))) throw new Error(`--reference ${reference}: no bin/toolkiln.js there (give a checkout of toolkiln with its node_modules)`);
  const million = args.includes('--million');
  const load = () => `load average ${loadavg().map((l) => l.toFixed(1)).join(', ')}`;
  process.stdout.write(`Offline runs, each in a fresh process (/usr/bin/time), default heap; ${load()} at start, on ${availableParallelism()} cores.\n\n`);
  process.stdout.write(
    '| recipe | input | samples | wall s | wall / ×1 per sample | CPU s (user + sys) | CPU ms per sample | peak RSS GB | RSS MB per 1,000 samples | export s | export peak RSS GB |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n',
  );
  const table = (row: Row, base: Row | undefined) => {
    if (!row.samples) return;
    const perSample = base && base.samples ? (row.seconds / row.samples / (base.seconds / base.samples)).toFixed(2) : '–';
    const cpuPerSample = ((row.cpuSeconds * 1000) / row.samples).toFixed(2);
    const exported = row.exportSeconds ? `${row.exportSeconds.toFixed(1)} | ${row.exportRssGb.toFixed(2)}` : '– | –';
    process.stdout.write(
      `| ${row.recipe} | ${row.size} | ${row.samples.toLocaleString('en-US')} | ${row.seconds.toFixed(1)} | ${perSample} | ${row.cpuSeconds.toFixed(1)} | ${cpuPerSample} | ${row.rssGb.toFixed(2)} | ${((row.rssGb * 1024) / (row.samples / 1000)).toFixed(1)} | ${exported} |\n`,
    );
  };
  /** The MTU runs, each with the reference's run of the same inputs (when there is one). */
  const mtuRuns: { row: Row; before?: Row }[] = [];
  try {
    let base: Row | undefined;
    for (const n of sizesOf(args, '--mtu', [1, 4, 16])) {
      const dir = join(work, `mtu-${n}`);
      const config = replicateMtu(dir, n);
      const row = measure('mtu', `×${n}`, config);
      const before = reference ? measure('mtu', `×${n}`, config, { checkout: reference, exported: false, quiet: true }) : undefined;
      rmSync(dir, { recursive: true, force: true });
      if (n === 1) base = row;
      table(row, base);
      mtuRuns.push({ row, before });
    }
    if (million) {
      const dir = join(work, 'mtu-million');
      // Stage records are removed as the run goes: a million samples' stage files would fill a small disk.
      const row = measure('mtu', `×${MILLION_COPIES}`, replicateMtu(dir, MILLION_COPIES), { runArgs: ['--prune-stages'], exported: false });
      rmSync(dir, { recursive: true, force: true });
      table(row, base);
      mtuRuns.push({ row });
    }
    let tooleBase: Row | undefined;
    for (const n of sizesOf(args, '--toole', [1, 8])) {
      const dir = join(work, `toole-${n}`);
      mkdirSync(dir, { recursive: true });
      const row = measure('toole', `×${n}`, replicateToolE(dir, n));
      if (n === 1) tooleBase = row;
      table(row, tooleBase);
    }
    for (const count of sizesOf(args, '--nestools', [100_000])) table(measure('nestools', `${count.toLocaleString('en-US')} domains`, { count }), undefined);
    if (mtuRuns.length) runTable(mtuRuns, reference);
    process.stdout.write(`\n${load()} at the end.\n`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** `run mtu` at each size: CPU per published sample and peak RSS, beside the reference's on the same inputs, as ratios; wall per sample against ×1 of this code. */
function runTable(runs: { row: Row; before?: Row }[], reference: string | undefined): void {
  const base = runs.find((r) => r.row.size === '×1')?.row;
  const cpuMs = (row: Row) => (row.cpuSeconds * 1000) / row.samples;
  const or = (row: Row | undefined, figure: (row: Row) => string) => (row?.samples ? figure(row) : '–');
  process.stdout.write(
    `\n\`run mtu\`, this code${reference ? ` against ${reference} (reference) on the same inputs` : ''}:\n\n| input | samples | CPU ms per sample | reference CPU ms per sample | CPU per sample / reference | peak RSS GB | reference peak RSS GB | peak RSS / reference | wall per sample / ×1 |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n`,
  );
  for (const { row, before } of runs) {
    if (!row.samples) continue;
    const ratio = (a: number, b: number) => (before?.samples ? (a / b).toFixed(2) : '–');
    const wall = base?.samples ? (row.seconds / row.samples / (base.seconds / base.samples)).toFixed(2) : '–';
    process.stdout.write(
      `| ${row.size} | ${row.samples.toLocaleString('en-US')}${before?.samples && before.samples !== row.samples ? ` (reference ${before.samples.toLocaleString('en-US')})` : ''} | ${cpuMs(row).toFixed(2)} | ${or(before, (b) => cpuMs(b).toFixed(2))} | ${before ? ratio(cpuMs(row), cpuMs(before)) : '–'} | ${row.rssGb.toFixed(2)} | ${or(before, (b) => b.rssGb.toFixed(2))} | ${before ? ratio(row.rssGb, before.rssGb) : '–'} | ${wall} |\n`,
    );
  }
}
