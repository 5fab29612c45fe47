import { spawnSync } from 'node:child_process';
import { cpSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pipelines } from '../pipelines/index.ts';
import { defaultRun, type DefaultRun } from './helpers/default-run.ts';
import { bareToolkilnLines, invocationProblems, shellExamples, toolkilnInvocations, type ShellExample } from './helpers/doc-examples.ts';

/**
 * Every shell example of the documentation runs, so a stale command fails here and not in a reader's
 * terminal. The ```bash / ```sh / ```console blocks of README.md, docs/*.md, review/README.md and
 * datasets/README.md run in page order, each page in a folder of its own that stands in for the
 * project folder (see projectStandIn), so `npx toolkiln` is this checkout, `../shared/data/…` and
 * `docs/examples/…` resolve, and the files an example writes land in the temporary folder, which is
 * also TOOLKILN_HOME. No endpoint is set: runs are offline. A page
 * that uses a recipe's default version (`mtu@v1`, or `npx toolkiln run mtu`) finds it published
 * (test/helpers/default-run.ts), so `run` reports it unchanged instead of running it again. A block
 * marked `<!-- example: … -->` (needs-endpoint, needs-redis, needs-browser, needs-person, installs,
 * long) is only parsed: each `npx toolkiln` line in it must name a command and flags the CLI has.
 */

const PROJECT = resolve(new URL('..', import.meta.url).pathname);
const FILES = ['README.md', ...readdirSync(join(PROJECT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`), 'review/README.md', 'datasets/README.md'];
const RECIPES = Object.keys(pipelines);
const EXAMPLE_INPUTS = join(PROJECT, 'docs', 'examples');

const pages = FILES.map((file) => ({ file, examples: shellExamples(readFileSync(join(PROJECT, file), 'utf8'), file) }));
const runnable = (example: ShellExample) => !example.markers.length;

/** Recipes whose default version a page's runnable examples use. */
function defaultVersionsUsed(examples: ShellExample[]): string[] {
  const text = examples.filter(runnable).map((e) => e.script).join('\n');
  return RECIPES.filter((name) => new RegExp(`\\b${name}@v1\\b`).test(text) || text.split('\n').some((line) => new RegExp(`toolkiln run ${name}(\\s|$)`).test(line) && !line.includes('--name')));
}

/**
 * A folder standing in for the project, holding only what an example reads of it, so that nothing an
 * example writes can reach the checkout: `package.json` (npx finds the local package by it),
 * `node_modules/.bin/toolkiln` (the checkout's bin, which npx runs as a local package's bin), the
 * example inputs of `docs/examples/`, and `../shared` beside it. Shipped defaults in a config resolve
 * against the toolkiln folder anyway.
 */
function projectStandIn(): string {
  const root = mkdtempSync(join(tmpdir(), 'tk-docs-'));
  const project = join(root, 'project');
  mkdirSync(join(project, 'datasets'), { recursive: true });
  mkdirSync(join(project, 'node_modules', '.bin'), { recursive: true });
  mkdirSync(join(project, 'docs'), { recursive: true });
  symlinkSync(join(PROJECT, 'bin', 'toolkiln.js'), join(project, 'node_modules', '.bin', 'toolkiln'));
  symlinkSync(join(PROJECT, 'package.json'), join(project, 'package.json'));
  symlinkSync(EXAMPLE_INPUTS, join(project, 'docs', 'examples'));
  symlinkSync(resolve(PROJECT, '../shared'), join(root, 'shared'));
  mkdirSync(join(root, 'npx-shortcut'));
  writeFileSync(join(root, 'npx-shortcut', 'npx'), NPX_SHORTCUT, { mode: 0o755 });
  return project;
}

/**
 * `npx <name> …` as npm's npx runs it when a folder from here up has node_modules/.bin/<name> (the
 * stand-in's toolkiln): that bin, without npm's own start-up, about 0.4 CPU-seconds an invocation,
 * fifty-odd times. Anything else goes to npm's npx. The test below checks that npm's npx runs the
 * same bin in the stand-in.
 */
const NPX_SHORTCUT = `#!/bin/sh
case "$1" in -*|'') ;; *)
  dir=$PWD
  while :; do
    if [ -x "$dir/node_modules/.bin/$1" ]; then bin="$dir/node_modules/.bin/$1"; shift; exec "$bin" "$@"; fi
    [ "$dir" = / ] && break
    dir=$(dirname "$dir")
  done;;
esac
PATH="\${PATH#*:}" exec npx "$@"
`;

/** Every file under docs/examples with its size and modification time: the examples read them, never write. */
function exampleInputs(): string[] {
  return readdirSync(EXAMPLE_INPUTS, { recursive: true, withFileTypes: true, encoding: 'utf8' }).map((entry) => {
    const path = join(entry.parentPath, entry.name);
    const stat = statSync(path);
    return `${path.slice(EXAMPLE_INPUTS.length + 1)} ${entry.isDirectory() ? 'dir' : `${stat.size} ${stat.mtimeMs}`}`;
  }).sort();
}

/** A recipe's default version into the page's store: published files (never rewritten) linked, the rest copied. */
function seed(home: string, run: DefaultRun): void {
  const from = join(run.home, 'datasets', run.ref.name);
  const to = join(home, 'datasets', run.ref.name);
  for (const entry of readdirSync(from, { recursive: true, withFileTypes: true, encoding: 'utf8' })) {
    const relativePath = join(entry.parentPath, entry.name).slice(from.length + 1);
    if (relativePath.split('/').some((part) => part.endsWith('.derived') || part.startsWith('.'))) continue;
    const target = join(to, relativePath);
    if (entry.isDirectory()) mkdirSync(target, { recursive: true });
    else if (/^v\d+\//.test(relativePath)) {
      mkdirSync(join(target, '..'), { recursive: true });
      linkSync(join(from, relativePath), target);
    } else {
      mkdirSync(join(target, '..'), { recursive: true });
      cpSync(join(from, relativePath), target);
    }
  }
}

/** The environment of an example: offline, the stand-in as home, npx never asking the registry and keeping its cache beside it (npm's npx, or the shortcut to the bin it runs). */
function exampleEnv(home: string, options: { npmNpx?: boolean } = {}): NodeJS.ProcessEnv {
  const path = options.npmNpx ? process.env.PATH : `${join(home, '..', 'npx-shortcut')}${delimiter}${process.env.PATH}`;
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: path, TOOLKILN_HOME: home, npm_config_offline: 'true', npm_config_update_notifier: 'false', npm_config_cache: join(home, '..', 'npm-cache'), NO_COLOR: '1' };
  for (const name of ['OPENAI_API_KEY', 'OPENAI_BASE_URL', 'TOOLKILN_MODEL']) delete env[name];
  return env;
}

const where = (example: ShellExample) => `${example.file}:${example.line}`;

describe('shell examples of README.md and docs/', () => {
  it('every npx toolkiln line names a command, flags and a pipeline the CLI has, and none calls toolkiln bare (marked blocks are only parsed)', async () => {
    const problems: string[] = [];
    let invocations = 0;
    for (const { examples } of pages) {
      for (const example of examples) {
        if (!example.markers.includes('installs')) for (const line of bareToolkilnLines(example.script)) problems.push(`${where(example)}: toolkiln is not on the PATH in the project folder; write npx toolkiln: ${line}`);
        for (const { line, args } of toolkilnInvocations(example.script)) {
          invocations++;
          for (const problem of await invocationProblems(args)) problems.push(`${where(example)}: ${problem}: ${line}`);
        }
      }
    }
    expect(problems).toEqual([]);
    expect(invocations).toBeGreaterThan(50);
  });

  it("npm's npx runs this checkout's toolkiln in the stand-in, offline, as the shortcut the examples take does", () => {
    const project = projectStandIn();
    try {
      const version = JSON.parse(readFileSync(join(PROJECT, 'package.json'), 'utf8')).version;
      for (const npmNpx of [true, false]) {
        const run = spawnSync('bash', ['-e', '-c', 'command -v npx; npx toolkiln --version'], { cwd: project, env: exampleEnv(project, { npmNpx }), encoding: 'utf8', timeout: 120_000 });
        expect([run.status, run.stderr]).toEqual([0, '']);
        const [npx, printed] = run.stdout.trim().split('\n');
        expect(npx.includes('npx-shortcut')).toBe(!npmNpx);
        expect(printed).toBe(version);
      }
    } finally {
      rmSync(join(project, '..'), { recursive: true, force: true });
    }
  }, 120_000);
});

describe('runnable shell examples, page by page', () => {
  // Made (or found) only when a page's examples run: the parse check above needs none.
  const defaults: Record<string, DefaultRun> = Object.fromEntries([...new Set(pages.flatMap((page) => defaultVersionsUsed(page.examples)))].map((name) => [name, defaultRun(name)]));
  for (const page of pages.filter((p) => p.examples.some(runnable))) {
    it(`${page.file}: every runnable example runs, in page order`, () => {
      const project = projectStandIn();
      const inputs = exampleInputs();
      try {
        for (const name of defaultVersionsUsed(page.examples)) seed(project, defaults[name]);
        for (const example of page.examples.filter(runnable)) {
          const run = spawnSync('bash', ['-e', '-o', 'pipefail', '-c', example.script], { cwd: project, env: exampleEnv(project), encoding: 'utf8', timeout: 300_000, maxBuffer: 64 * 1024 * 1024 });
          const tail = (text: string) => text.trim().split('\n').slice(-8).join('\n');
          expect(run.status, `${where(example)} exited ${run.status ?? run.signal}:\n${example.script}\n--- stderr:\n${tail(run.stderr)}\n--- stdout:\n${tail(run.stdout)}`).toBe(0);
          expect(exampleInputs(), `${where(example)} changed docs/examples/, which examples only read`).toEqual(inputs);
        }
      } finally {
        rmSync(join(project, '..'), { recursive: true, force: true });
      }
    }, 1_800_000);
  }
});

describe('the example reader', () => {
  const page = [
    'Intro.',
    '',
    '```sh',
    'npx toolkiln run mtu --limit 5   # a comment',
    '```',
    '',
    '<!-- example: needs-endpoint — a vLLM server -->',
    '```bash',
    'npx toolkiln run mtu --llm openai \\',
    '    --model m --batch-file out.jsonl > log.txt 2>&1',
    '```',
    '',
    '```console',
    '$ npx toolkiln datasets list --json',
    '{"datasets": []}',
    '```',
    '',
    '```json',
    '{"not": "shell"}',
    '```',
  ].join('\n');

  it('reads sh, bash and console blocks with the markers above them, console blocks by their $ lines', () => {
    const examples = shellExamples(page, 'page.md');
    expect(examples.map((e) => [e.line, e.lang, e.markers, e.script])).toEqual([
      [3, 'sh', [], 'npx toolkiln run mtu --limit 5   # a comment'],
      [8, 'bash', ['needs-endpoint'], 'npx toolkiln run mtu --llm openai \\\n    --model m --batch-file out.jsonl > log.txt 2>&1'],
      [13, 'console', [], 'npx toolkiln datasets list --json'],
    ]);
  });

  it('refuses a marker it does not know, naming the line', () => {
    expect(() => shellExamples('<!-- example: needs-coffee -->\n```sh\nls\n```\n', 'page.md')).toThrow('page.md:1: unknown example marker "needs-coffee"');
  });

  it('finds the arguments of each invocation: continuation lines joined, comments, redirections and later commands left out', () => {
    const [, endpoint] = shellExamples(page, 'page.md');
    expect(toolkilnInvocations(endpoint.script)).toEqual([{ line: 'npx toolkiln run mtu --llm openai      --model m --batch-file out.jsonl > log.txt 2>&1', args: ['run', 'mtu', '--llm', 'openai', '--model', 'm', '--batch-file', 'out.jsonl'] }]);
    expect(toolkilnInvocations('npx toolkiln config show mtu > my.json && npx toolkiln run mtu --config my.json   # edit first').map((i) => i.args)).toEqual([
      ['config', 'show', 'mtu'],
      ['run', 'mtu', '--config', 'my.json'],
    ]);
    expect(toolkilnInvocations('npx toolkiln run <pipeline> --resume <runId> [--batch]')[0].args).toEqual(['run', '<pipeline>', '--resume', '<runId>', '--batch']);
  });

  it('finds toolkiln called bare, which the project folder does not have on its PATH', () => {
    expect(bareToolkilnLines('npx toolkiln run mtu\ntoolkiln run mtu --limit 5\ncd x && toolkiln --version\necho toolkiln')).toEqual(['toolkiln run mtu --limit 5', 'cd x && toolkiln --version']);
  });

  it('finds what the CLI lacks: an unknown command, flag or pipeline', async () => {
    expect(await invocationProblems(['run', 'mtu', '--limit', '5', '--json'])).toEqual([]);
    expect(await invocationProblems(['datasets', '--help'])).toEqual([]);
    expect(await invocationProblems(['--version'])).toEqual([]);
    expect(await invocationProblems(['run', 'mtu', '--limt', '5'])).toEqual(['run has no flag --limt']);
    expect(await invocationProblems(['datasets', 'lst'])).toEqual(['unknown command "datasets lst"']);
    expect(await invocationProblems(['models', 'import', 'x.json'])).toEqual(['unknown command "models import"']);
    expect(await invocationProblems(['run', 'mtu-bench'])).toEqual(['no pipeline "mtu-bench" (pipelines: mtu, nestools, toole, tooltalk, acebench)']);
  });
});
