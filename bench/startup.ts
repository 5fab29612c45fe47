// `npm run bench -- startup [--rounds 9] [--variants compiled,source] [--before dir] [--run-rounds 3]`:
// how soon the CLI answers. Each quick command (--version, --help, datasets list, runs list, every
// command's --help) is started as a fresh process, round after round with `node -e 0` in every round,
// and its wall time (spawn to exit) is given as the median of the rounds and as a ratio to the median of
// `node -e 0` of the same run, so that a busy moment of a shared machine weighs on both alike; with
// GNU time at /usr/bin/time, its CPU time too (mean of the rounds, as a ratio to node -e 0's), which
// a busy machine moves less than the wall time. Then
// `run mtu` (the default recipe, offline): the time until its first stage starts (its folder appears
// under the run's stages/), after which the run is stopped.
//
// Variants (columns): `compiled` runs bin/toolkiln.js as installed (the compiled JavaScript in dist/);
// `source` the TypeScript through tsx (TOOLKILN_FROM_SOURCE=1); `source-nocache` the same with tsx's
// transpile cache off (TSX_DISABLE_CACHE=1); `--before dir` adds another checkout's bin/toolkiln.js
// (e.g. the code before a change, extracted with `git archive <commit> | tar -x -C dir` and its
// node_modules linked, in a folder beside a link to ../shared for the run's inputs) measured in the same rounds.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { registry } from '../bin/cli.ts';
import { formatTable } from '../core/table.ts';
import { median } from './lib/timing.ts';

const PROJECT = fileURLToPath(new URL('..', import.meta.url));

interface Variant {
  name: string;
  bin: string;
  env: Record<string, string>;
}

const VARIANTS: Record<string, (project: string) => Variant> = {
  compiled: (project) => ({ name: 'compiled', bin: join(project, 'bin/toolkiln.js'), env: {} }),
  source: (project) => ({ name: 'source (tsx)', bin: join(project, 'bin/toolkiln.js'), env: { TOOLKILN_FROM_SOURCE: '1' } }),
  'source-nocache': (project) => ({ name: 'source (tsx, no cache)', bin: join(project, 'bin/toolkiln.js'), env: { TOOLKILN_FROM_SOURCE: '1', TSX_DISABLE_CACHE: '1' } }),
};

/** The environment of every measured process: offline, in the bench's own home. */
function environment(home: string, variant: Variant | undefined): NodeJS.ProcessEnv {
  return { ...process.env, TOOLKILN_HOME: home, OPENAI_API_KEY: '', OPENAI_BASE_URL: '', TOOLKILN_FROM_SOURCE: '', ...variant?.env };
}

/** GNU time, when there, reports the CPU time (user + system) of each process too: steadier than wall time on a busy machine. */
const TIME = '/usr/bin/time';

interface Timing {
  wall: number;
  cpu?: number;
}

/** Milliseconds from spawn to exit, and of CPU; a failed command stops the bench (a fast wrong answer is no answer). */
function timing(argv: string[], env: NodeJS.ProcessEnv, cwd: string, scratch: string): Timing {
  const cpuFile = join(scratch, 'cpu.txt');
  const [command, args] = existsSync(TIME) ? [TIME, ['-f', '%U %S', '-o', cpuFile, process.execPath, ...argv]] : [process.execPath, argv];
  const started = performance.now();
  const child = spawnSync(command, args, { env, cwd, encoding: 'utf8' });
  const wall = performance.now() - started;
  if (child.status !== 0) throw new Error(`bench startup: node ${argv.join(' ')} exited ${child.status}: ${child.stderr.trim().split('\n').slice(-3).join(' | ')}`);
  if (command !== TIME) return { wall };
  const [user, system] = readFileSync(cpuFile, 'utf8').trim().split('\n').at(-1)!.split(' ').map(Number);
  return { wall, cpu: (user + system) * 1000 };
}

const mean = (values: number[]) => values.reduce((sum, v) => sum + v, 0) / values.length;

/** Milliseconds from spawn until the run's first stage has its folder; the run is stopped then. */
async function firstStage(variant: Variant, home: string, recipe: string): Promise<number> {
  const runs = join(home, '.toolkiln', 'runs');
  const runIds = () => (existsSync(runs) ? readdirSync(runs) : []);
  const earlier = new Set(runIds());
  const started = performance.now();
  const child = spawn(process.execPath, [variant.bin, 'run', recipe, '--quiet'], { env: environment(home, variant), cwd: home, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += String(chunk)));
  const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
  let ms: number | undefined;
  let finished = false;
  void exited.then(() => (finished = true));
  while (ms === undefined && !finished) {
    await new Promise((wake) => setTimeout(wake, 2));
    const begun = runIds().some((run) => !earlier.has(run) && existsSync(join(runs, run, 'stages')) && readdirSync(join(runs, run, 'stages')).length > 0);
    if (begun) ms = performance.now() - started;
  }
  child.kill('SIGKILL');
  await exited;
  for (const run of runIds()) if (!earlier.has(run)) rmSync(join(runs, run), { recursive: true, force: true });
  if (ms === undefined) throw new Error(`bench startup: run ${recipe} ended before a stage started: ${stderr.trim().split('\n').slice(-3).join(' | ')}`);
  return ms;
}

/**
 * What a start pays before any command code: an ES module process, tsx's loader registered, and each
 * package bin/compile.js bundles, imported from node_modules and as its bundle (run in the project
 * folder, where the bare names resolve).
 */
async function floorsOf(): Promise<[string, string[]][]> {
  const module = (name: string, code: string): [string, string[]] => [name, ['--input-type=module', '-e', code]];
  const compile = join(PROJECT, 'bin/compile.js');
  const bundled = existsSync(compile) ? ((await import(compile)) as { BUNDLED_PACKAGES: string[] }).BUNDLED_PACKAGES : [];
  return [
    module('an ES module, nothing loaded', '0'),
    module("tsx's loader registered, nothing loaded", "(await import('tsx/esm/api')).register()"),
    ...bundled.flatMap((name) => [module(`import ${name} (node_modules)`, `await import('${name}')`), module(`import ${name} (its bundle in dist/packages/)`, `await import('./dist/packages/${name}.js')`)]),
  ];
}

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      rounds: { type: 'string', default: '9' },
      'run-rounds': { type: 'string', default: '3' },
      variants: { type: 'string', default: 'compiled,source' },
      before: { type: 'string' },
      recipe: { type: 'string', default: 'mtu' },
    },
  });
  const rounds = Number(values.rounds);
  const variants = values.variants.split(',').filter(Boolean).map((name) => {
    if (!VARIANTS[name]) throw new Error(`bench startup: unknown variant "${name}": choose from ${Object.keys(VARIANTS).join(', ')}`);
    return VARIANTS[name](PROJECT);
  });
  if (values.before) variants.unshift({ name: 'before', bin: join(resolve(values.before), 'bin/toolkiln.js'), env: {} });

  // The compiled copy as `npm ci` leaves it (a no-op when it is current).
  const home = mkdtempSync(join(tmpdir(), 'toolkiln-bench-startup-'));
  const scratch = mkdtempSync(join(tmpdir(), 'toolkiln-bench-startup-time-'));
  if (existsSync(join(PROJECT, 'bin/compile.js'))) timing([join(PROJECT, 'bin/compile.js')], process.env, PROJECT, scratch);

  try {
    // One published version and one run folder, so that the lists list something.
    const seeded = spawnSync(process.execPath, [variants.at(-1)!.bin, 'run', values.recipe, '--limit', '20', '--quiet'], { env: environment(home, variants.at(-1)), cwd: home, encoding: 'utf8' });
    if (seeded.status !== 0) throw new Error(`bench startup: seeding the home failed: ${seeded.stderr.trim()}`);

    const commands: string[][] = [['--version'], ['--help'], ['datasets', 'list'], ['runs', 'list'], ...registry.map((entry) => [...entry.path, '--help'])];
    const floors = await floorsOf();
    const load = loadavg();
    const baseline: Timing[] = [];
    const times = variants.map(() => commands.map((): Timing[] => []));
    const floorTimes = floors.map((): Timing[] => []);
    for (let round = 0; round < rounds; round++) {
      baseline.push(timing(['-e', '0'], process.env, home, scratch));
      for (const [v, variant] of variants.entries()) {
        for (const [c, command] of commands.entries()) times[v][c].push(timing([variant.bin, ...command], environment(home, variant), home, scratch));
      }
      for (const [f, [, argv]] of floors.entries()) floorTimes[f].push(timing(argv, process.env, PROJECT, scratch));
    }
    const base = median(baseline.map((t) => t.wall));
    const baseCpu = baseline[0].cpu === undefined ? undefined : mean(baseline.map((t) => t.cpu!));
    const firstStages = variants.map((): number[] => []);
    for (let round = 0; round < Number(values['run-rounds']); round++) {
      for (const [v, variant] of variants.entries()) firstStages[v].push(await firstStage(variant, home, values.recipe));
    }
    const loadAfter = loadavg();

    const wallRatio = (samples: Timing[]) => median(samples.map((t) => t.wall)) / base;
    const cpuRatio = (samples: Timing[]) => (baseCpu === undefined ? undefined : mean(samples.map((t) => t.cpu!)) / baseCpu);
    const cell = (samples: Timing[]) => `${wallRatio(samples).toFixed(2)}× (${median(samples.map((t) => t.wall)).toFixed(0)} ms)${baseCpu === undefined ? '' : `; CPU ${cpuRatio(samples)!.toFixed(1)}×`}`;
    const rows = commands.map((command, c) => [`toolkiln ${command.join(' ')}`, ...variants.map((_, v) => cell(times[v][c]))]);
    const worst = variants.map((_, v) => `${Math.max(...times[v].map(wallRatio)).toFixed(2)}×${baseCpu === undefined ? '' : `; CPU ${Math.max(...times[v].map((samples) => cpuRatio(samples)!)).toFixed(1)}×`}`);
    process.stdout.write(
      `Wall time of each command (spawn to exit) as a ratio to \`node -e 0\` (median ${base.toFixed(0)} ms), median of ${rounds} rounds` +
        (baseCpu === undefined ? '' : `; CPU time (user + system, mean of the rounds) as a ratio to node -e 0's (${baseCpu.toFixed(0)} ms)`) +
        `; load average ${load[0].toFixed(1)} at the start, ${loadAfter[0].toFixed(1)} at the end, on ${cpus().length} cores; Node ${process.version}.\n\n`,
    );
    process.stdout.write(`${formatTable(['command', ...variants.map((v) => v.name)], [...rows, ['slowest of these', ...worst]])}\n\n`);
    process.stdout.write(`${formatTable(['what a start pays (node -e …, in the project folder)', 'vs node -e 0'], floors.map(([label], f) => [label, cell(floorTimes[f])]))}\n\n`);
    process.stdout.write(
      `${formatTable(
        [`toolkiln run ${values.recipe} (offline)`, ...variants.map((v) => v.name)],
        [[`until its first stage starts, median of ${values['run-rounds']}`, ...firstStages.map((samples) => `${(median(samples) / 1000).toFixed(2)} s`)]],
      )}\n`,
    );
  } finally {
    rmSync(home, { recursive: true, force: true });
    rmSync(scratch, { recursive: true, force: true });
  }
}
