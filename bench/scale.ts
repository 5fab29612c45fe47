// `npm run bench -- scale [--mtu 1,4,16] [--toole 1,8] [--nestools 100000] [--commands 4,16] [--reference <checkout>] [--million]`:
// each recipe on inputs made n times larger, each size in a fresh process, offline. Prints samples,
// wall time, CPU time (user + system of the child) and CPU per sample, peak RSS and RSS per 1,000
// samples, and the wall time and peak RSS of exporting the version in the recipe's own format
// (another fresh process); the reference is the same recipe at ×1 in the same run. With
// `--reference`, each MTU size is also run by another checkout of toolkiln (the code before a
// change, its own node_modules or a link to these) on the same inputs, and a second table gives the
// MTU runs side by side as ratios. `--million` adds an MTU run on the sources ×100 (about 1.04
// million samples, `--prune-stages`, no export): a long one. Then, on the MTU versions of the sizes
// `--commands` names (default ×4 and ×16; `--commands ""` leaves them out), every command that reads a
// whole version, each in a fresh process: peak RSS and wall time, against the same command at the
// smallest of those sizes in the same run.
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { readCsv, writeCsvSheet } from '../review/csv.ts';

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
 * format in another: samples, wall and CPU seconds, peak RSS of each. `more` measures other commands
 * on the version before its home is removed.
 */
async function measure(
  recipe: string,
  size: string,
  config: object,
  options: { checkout?: string; runArgs?: string[]; exported?: boolean; quiet?: boolean; more?: (home: string, exported: CommandFigures) => Promise<void> } = {},
): Promise<Row> {
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
    await options.more?.(home, { seconds: exported.seconds, rssGb: exported.rssGb });
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

/** A command's peak RSS and wall time on one version (or why it failed). */
interface CommandFigures {
  seconds: number;
  rssGb: number;
  failed?: string;
}

/**
 * Every command that reads a whole version, on the MTU version `mtu@v1` in `home`, each in a fresh
 * process: the checks (`datasets audit`, `show --compare-reference`), eval (the oracle; `eval compare`
 * with 200 resamples), the review round (export, the two annotators' sheets filled, agreement,
 * import, which publishes `mtu@v2`), `datasets diff v1 v2`, and `review serve` until its state is read.
 */
async function measureCommands(home: string, exported: CommandFigures): Promise<Map<string, CommandFigures>> {
  const figures = new Map<string, CommandFigures>([['export --format mtu', exported]]);
  const command = (name: string, args: string[]) => {
    const run = timed(args, home);
    figures.set(name, { seconds: run.seconds, rssGb: run.rssGb, ...(run.failed ? { failed: run.failed } : {}) });
    return run;
  };
  command('datasets audit', ['datasets', 'audit', 'mtu@v1', '--json']);
  command('datasets show --compare-reference', ['datasets', 'show', 'mtu@v1', '--compare-reference', '--json']);
  command('eval --model oracle', ['eval', 'mtu@v1', '--model', 'oracle', '--json']);
  command('eval compare --model oracle (200 resamples)', ['eval', 'compare', 'mtu@v1', '--model', 'oracle', '--resamples', '200', '--json']);
  command('review export --format csv', ['review', 'export', 'mtu@v1', '--format', 'csv', '--json']);
  const split = command('review export --format csv --annotators 2', ['review', 'export', 'mtu@v1', '--format', 'csv', '--annotators', '2', '--overlap', '0.1', '--json']);
  if (!split.failed) {
    const sheets = fillSheets(JSON.parse(split.stdout) as { sheets: { file: string }[] }, home);
    command('review agreement (2 sheets)', ['review', 'agreement', 'mtu@v1', ...sheets, '--json']);
    const imported = command('review import (2 sheets; publishes v2)', ['review', 'import', 'mtu@v1', ...sheets, '--json']);
    if (!imported.failed) command('datasets diff v1 v2', ['datasets', 'diff', 'mtu@v1', 'mtu@v2', '--json']);
  }
  figures.set('review serve (until its state is read)', await served(home));
  return figures;
}

/** The annotators' sheets filled: every row accepted, the first 50 rows only the first annotator has rejected (so both agree where they overlap). */
function fillSheets(exported: { sheets: { file: string }[] }, home: string): string[] {
  const read = exported.sheets.map((sheet) => readCsv(sheet.file));
  const second = new Set(read[1].records.map((r) => r.cells.item_id));
  let rejected = 0;
  return read.map((sheet, i) => {
    const rows = sheet.records.map(({ cells }) => {
      const reject = i === 0 && !second.has(cells.item_id) && rejected < 50;
      if (reject) rejected++;
      return { ...cells, decision: reject ? 'reject' : 'accept', notes: reject ? 'off topic' : cells.notes };
    });
    const file = join(home, `filled-${i + 1}.csv`);
    writeCsvSheet(file, sheet.header, rows);
    return file;
  });
}

/** `review serve` in a fresh process until it has answered its state: the process's peak RSS (VmHWM) then. */
async function served(home: string): Promise<CommandFigures> {
  const started = Date.now();
  const child = spawn(process.execPath, [join(project, 'bin/toolkiln.js'), 'review', 'serve', 'mtu@v1', '--annotator', 'annotator-1', '--json'], { cwd: home, env: { ...process.env, TOOLKILN_HOME: home }, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    let out = '';
    let err = '';
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')));
    const line = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString('utf8');
        if (out.includes('\n')) resolve(out.split('\n')[0]);
      });
      child.once('exit', (code) => reject(new Error(err.trim().split('\n').at(-1) ?? `exit ${code}`)));
    });
    const { url } = JSON.parse(line) as { url: string };
    const state = await fetch(`${url}api/state`);
    if (!state.ok) throw new Error(`api/state: HTTP ${state.status}`);
    await state.arrayBuffer();
    const peak = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
    return { seconds: (Date.now() - started) / 1000, rssGb: Number(peak?.[1] ?? 0) / 1048576 };
  } catch (error) {
    return { seconds: (Date.now() - started) / 1000, rssGb: 0, failed: (error as Error).message };
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

/** The commands table: each command's figures per size, its peak against the smallest size's (the reference) in the same run. */
function commandsTable(bySize: [number, Map<string, CommandFigures>][]): void {
  if (!bySize.length) return;
  const [reference, ...larger] = bySize;
  process.stdout.write(
    `\nCommands on the MTU versions above, each in a fresh process; reference: the same command on the ×${reference[0]} version of this run.\n\n` +
      `| command | ${[...bySize.map(([n]) => `×${n} peak RSS MB | ×${n} wall s`), ...larger.map(([n]) => `peak ×${n} / ×${reference[0]}`)].join(' | ')} |\n` +
      `|---|${[...bySize.map(() => '---:|---:'), ...larger.map(() => '---:')].join('|')}|\n`,
  );
  const cell = (f: CommandFigures | undefined) => (!f ? '– | –' : f.failed ? `failed: ${f.failed} | ${f.seconds.toFixed(1)}` : `${Math.round(f.rssGb * 1024)} | ${f.seconds.toFixed(1)}`);
  for (const name of reference[1].keys()) {
    const base = reference[1].get(name)!;
    const ratios = larger.map(([, figures]) => {
      const f = figures.get(name);
      return f && !f.failed && !base.failed && base.rssGb ? (f.rssGb / base.rssGb).toFixed(2) : '–';
    });
    process.stdout.write(`| \`${name}\` | ${[...bySize.map(([, figures]) => cell(figures.get(name))), ...ratios].join(' | ')} |\n`);
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
  const commandSizes = sizesOf(args, '--commands', [4, 16]);
  const commands: [number, Map<string, CommandFigures>][] = [];
  try {
    let base: Row | undefined;
    for (const n of [...new Set([...sizesOf(args, '--mtu', [1, 4, 16]), ...commandSizes])].sort((a, b) => a - b)) {
      const dir = join(work, `mtu-${n}`);
      const config = replicateMtu(dir, n);
      const row = await measure('mtu', `×${n}`, config, {
        more: async (home, exported) => {
          if (commandSizes.includes(n)) commands.push([n, await measureCommands(home, exported)]);
        },
      });
      const before = reference ? await measure('mtu', `×${n}`, config, { checkout: reference, exported: false, quiet: true }) : undefined;
      rmSync(dir, { recursive: true, force: true });
      if (n === 1) base = row;
      table(row, base);
      mtuRuns.push({ row, before });
    }
    if (million) {
      const dir = join(work, 'mtu-million');
      // Stage records are removed as the run goes: a million samples' stage files would fill a small disk.
      const row = await measure('mtu', `×${MILLION_COPIES}`, replicateMtu(dir, MILLION_COPIES), { runArgs: ['--prune-stages'], exported: false });
      rmSync(dir, { recursive: true, force: true });
      table(row, base);
      mtuRuns.push({ row });
    }
    let tooleBase: Row | undefined;
    for (const n of sizesOf(args, '--toole', [1, 8])) {
      const dir = join(work, `toole-${n}`);
      mkdirSync(dir, { recursive: true });
      const row = await measure('toole', `×${n}`, replicateToolE(dir, n));
      if (n === 1) tooleBase = row;
      table(row, tooleBase);
    }
    for (const count of sizesOf(args, '--nestools', [100_000])) table(await measure('nestools', `${count.toLocaleString('en-US')} domains`, { count }), undefined);
    if (mtuRuns.length) runTable(mtuRuns, reference);
    commandsTable(commands);
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
