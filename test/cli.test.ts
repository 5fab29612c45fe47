import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { main } from '../bin/cli.ts';

const bin = new URL('../bin/toolkiln.js', import.meta.url).pathname;
let home: string;

async function cli(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (t) => out.push(t), err: (t) => err.push(t), home, cwd: home, env: {} });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'tk-cli-'));
  const published = await cli('run', 'mtu', '--limit', '30', '--quiet', '--name', 'small');
  expect(published.code).toBe(0);
});

describe('cli', () => {
  it('runs, lists, shows, diffs and exports with --json documents on stdout', async () => {
    const again = await cli('run', 'mtu', '--limit', '30', '--name', 'small', '--force', '--json', '--quiet');
    expect(again.code).toBe(0);
    const doc = JSON.parse(again.out);
    expect(doc).toMatchObject({ status: 'published', dataset: 'small@v2' });
    const samples = doc.counts.samples as number;
    expect(samples).toBeGreaterThanOrEqual(30); // 30 source records; multi-tool composition adds some
    expect(doc.stages[0]).toMatchObject({ in: 0, out: 30 });

    const list = JSON.parse((await cli('datasets', 'list', '--json')).out);
    expect(list.datasets).toEqual([expect.objectContaining({ name: 'small', versions: ['v1', 'v2'], latest: 'v2', samples })]);
    expect(JSON.parse((await cli('datasets', 'show', 'small@v1', '--json')).out)).toMatchObject({ name: 'small', version: 'v1', pipeline: 'mtu' });
    expect(JSON.parse((await cli('datasets', 'diff', 'small@v1', 'small@v2', '--json')).out).counts).toEqual({ added: 0, removed: 0, changed: 0, unchanged: samples });

    const exported = await cli('export', 'small@v1', '--format', 'openai-chat', '--out', 'chat', '--json');
    expect(exported.code).toBe(0);
    expect(JSON.parse(exported.out).files.length).toBeGreaterThan(0);
    const text = await cli('datasets', 'show', 'small');
    expect(text.out).toContain('small@v2');
  });

  const badInputs: [string, string[], RegExp][] = [
    ['unknown pipeline', ['run', 'nope'], /unknown pipeline "nope": choose one of mtu/],
    ['unknown flag', ['run', 'mtu', '--bogus'], /Unknown option '--bogus'.*usage: toolkiln run/],
    ['bad number', ['run', 'mtu', '--limit', 'ten'], /--limit takes a whole number, not "ten"/],
    ['number out of range', ['run', 'mtu', '--limit', '0'], /--limit must be at least 1/],
    ['seed beyond its one range, in every command that takes one', ['eval', 'small@v1', '--model', 'noisy-oracle', '--seed', '4294967296'], /--seed must be at most 4294967295/],
    ['review seed beyond its range', ['review', 'export', 'small@v1', '--format', 'csv', '--seed', '-1'], /--seed must be at least 0/],
    ['bad choice', ['run', 'mtu', '--llm', 'gpt'], /--llm must be one of offline, openai, replay/],
    ['missing config file', ['run', 'mtu', '--config', 'missing.json'], /config file not found: missing.json/],
    ['unreadable config file', ['run', 'mtu', '--config', 'broken.json'], /broken.json: not valid JSON/],
    ['config that is a folder', ['run', 'mtu', '--config', '.'], /config file \.: not a regular file \(a folder\)/],
    ['config of the wrong shape', ['run', 'mtu', '--config', 'wrong.json'], /wrong.json: invalid mtu config: sources/],
    ['version not found', ['datasets', 'show', 'small@v9'], /small@v9 not found: small has v1, v2/],
    ['dataset not found', ['datasets', 'show', 'other'], /no dataset named "other"/],
    ['name with a slash', ['run', 'mtu', '--name', 'a/b'], /invalid dataset name "a\/b"/],
    ['name with a backslash', ['datasets', 'show', 'a\\b@v1'], /invalid dataset name "a\\b"/],
    ['name with ..', ['export', '..@v1', '--format', 'canonical'], /invalid dataset name "\.\."/],
    ['unknown export format', ['export', 'small@v1', '--format', 'xml'], /cannot be exported as "xml": choose one of/],
    ['missing argument', ['datasets', 'diff', 'small@v1'], /missing argument: usage: toolkiln datasets diff/],
    ['unknown command', ['frobnicate'], /unknown command "frobnicate"/],
    ['resume with settings of its own', ['run', 'mtu', '--resume', 'mtu-000', '--seed', '3', '--limit', '5'], /a resumed run keeps the settings it started with: drop --seed, --limit/],
    ['resume of an unknown run', ['run', 'mtu', '--resume', 'mtu-000'], /no run "mtu-000" to resume/],
  ];

  it.each(badInputs)('%s: one clear line and exit 2', async (_label, argv, message) => {
    writeFileSync(join(home, 'broken.json'), '{ "sources": ');
    writeFileSync(join(home, 'wrong.json'), JSON.stringify({ sources: { snips: { dir: 3 } } }));
    const result = await cli(...argv);
    expect(result.code).toBe(2);
    expect(result.err).toMatch(message);
    expect(result.err.split('\n')).toHaveLength(1);
    expect(result.err).not.toMatch(/\n\s+at /); // no stack
  });

  it('the installed binary exits non-zero with the reason on stderr and a JSON error with --json', () => {
    mkdirSync(join(home, 'bin-home'), { recursive: true });
    const plain = spawnSync(process.execPath, [bin, 'datasets', 'show', 'nothing@v1'], { cwd: join(home, 'bin-home'), encoding: 'utf8', env: { ...process.env, TOOLKILN_HOME: '' } });
    expect(plain.status).toBe(2);
    expect(plain.stderr.trim()).toBe(`toolkiln: no dataset named "nothing" in ${join(home, 'bin-home', 'datasets')} (see: toolkiln datasets list)`);
    const json = spawnSync(process.execPath, [bin, 'run', 'nope', '--json'], { encoding: 'utf8' });
    expect(json.status).toBe(2);
    expect(JSON.parse(json.stdout)).toEqual({ error: expect.stringContaining('unknown pipeline') });
  });

  it('the installed binary prints help on stdout with exit 0: a command\'s flags with their defaults, a pipeline\'s config keys', () => {
    const help = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { cwd: home, encoding: 'utf8', env: { ...process.env, TOOLKILN_HOME: home } });
    const show = help('datasets', 'show', '--help');
    expect(show.status).toBe(0);
    expect(show.stdout).toMatch(/^ {2}--compare-reference +print the version's statistics beside the released benchmark's .*\(default: off\)$/m);
    const run = help('run', 'tooltalk', '--help');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^ {2}--seed <n> +seed of every random choice .*\(default: 42\)$/m);
    expect(run.stdout).toMatch(/^ {2}conversations = 50 — conversations of the hard set to draft/m);
    expect(run.stderr).toBe('');
    const unknown = help('run', 'nope', '--help');
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toBe('toolkiln: unknown pipeline "nope": choose one of mtu, nestools, toole, tooltalk, acebench\n');
  });

  it('a rerun of an unchanged pipeline prints only that it is unchanged, not the stored stage table', async () => {
    const again = await cli('run', 'mtu', '--limit', '30', '--quiet', '--name', 'small');
    expect(again.code).toBe(0);
    expect(again.out).toMatch(/^unchanged: small@v\d \(.*\) has the same fingerprint; nothing published \(--force to publish anyway\)$/);
  });

  it('diffs two different datasets only with --across, and says so', async () => {
    expect((await cli('run', 'mtu', '--limit', '5', '--quiet', '--name', 'tiny')).code).toBe(0);
    const refused = await cli('datasets', 'diff', 'small@v1', 'tiny@v1');
    expect(refused.code).toBe(2);
    expect(refused.err).toBe('toolkiln: small@v1 and tiny@v1 are different datasets; datasets diff compares versions of one dataset (add --across to compare them anyway)');
    const across = await cli('datasets', 'diff', 'small@v1', 'tiny@v1', '--across');
    expect(across.code).toBe(0);
    expect(across.out.split('\n')[0]).toMatch(/^small@v1 → tiny@v1 \(two different datasets\): \d+ added, \d+ removed/);
    expect(JSON.parse((await cli('datasets', 'diff', 'small@v1', 'tiny@v1', '--across', '--json')).out).across).toBe(true);
  });

  it('resumes a run with the seed it was started with, not the default', async () => {
    const first = JSON.parse((await cli('run', 'mtu', '--limit', '20', '--seed', '7', '--name', 'seven', '--json', '--quiet')).out);
    expect(first.status).toBe('published');
    // Undo every stage after the fourth, as if the run had been killed there.
    const stagesDir = join(home, '.toolkiln', 'runs', first.runId, 'stages');
    for (const folder of readdirSync(stagesDir).sort().slice(4)) rmSync(join(stagesDir, folder), { recursive: true });
    const resumed = JSON.parse((await cli('run', 'mtu', '--resume', first.runId, '--force', '--json', '--quiet')).out);
    expect(resumed).toMatchObject({ status: 'published', dataset: 'seven@v2', fingerprint: first.fingerprint });
    const diff = JSON.parse((await cli('datasets', 'diff', 'seven@v1', 'seven@v2', '--json')).out);
    expect(diff.counts).toEqual({ added: 0, removed: 0, changed: 0, unchanged: first.counts.samples });
  });
});
