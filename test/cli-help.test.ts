import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { main, packageVersion, registry } from '../bin/cli.ts';
import { DATASETS_AUDIT, GATEWAY_LIMIT_OPTIONS, RUN } from '../bin/command-specs.ts';
import type { Flag } from '../bin/command.ts';
import { commonOptions } from '../bin/flags.ts';
import { DEFAULT_REDIS_WAIT_MS } from '../core/distributed.ts';
import { DEFAULT_CONCURRENCY, DEFAULT_MAX_RETRIES, DEFAULT_OPENAI_MODEL } from '../core/llm/index.ts';
import { DEFAULT_MAX_TRANSPORT_REJECTS, DEFAULT_RECORDS_IN_FLIGHT } from '../core/runner.ts';
import { DEFAULT_MIN_YIELD } from '../core/run-yield.ts';
import { DEFAULT_THREADS_FROM } from '../core/stage-threads.ts';
import { RECIPE_NAMES, loadRecipe, recipeSummary } from '../pipelines/catalog.ts';
import { pipelines } from '../pipelines/index.ts';
import { DEFAULT_SELECTION } from '../review/options.ts';

const home = mkdtempSync(join(tmpdir(), 'tk-help-'));

async function cli(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (t) => out.push(t), err: (t) => err.push(t), home, cwd: home, env: {} });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('cli help', () => {
  it('every usage string names exactly the options its command accepts', async () => {
    for (const entry of registry) {
      const command = await entry.load();
      expect(command.path).toEqual(entry.path);
      const named = new Set([...command.usage.matchAll(/--([a-z][a-z-]*)/g)].map((m) => m[1]));
      for (const option of Object.keys(command.options)) expect(named, `${command.usage} lacks --${option}`).toContain(option);
      for (const flag of named) expect({ ...commonOptions, ...command.options }, `${command.path.join(' ')} does not accept --${flag}`).toHaveProperty([flag]);
    }
  });

  it('group help lists every subcommand of the group from the registry', async () => {
    const groups = [...new Set(registry.filter((e) => e.path.length > 1).map((e) => e.path[0]))];
    expect(groups).toEqual(expect.arrayContaining(['datasets', 'runs', 'review', 'check', 'tools']));
    for (const group of groups) {
      const help = await cli(group, '--help');
      expect(help.code).toBe(0);
      for (const entry of registry.filter((e) => e.path[0] === group)) {
        const command = await entry.load();
        expect(help.out).toContain(command.usage);
      }
      const bare = await cli(group);
      expect(bare.code).toBe(2); // a group alone is not a command (or, as `eval`, one that needs arguments)
      if (!registry.some((e) => e.path.length === 1 && e.path[0] === group)) expect(bare.out).toBe(help.out);
    }
    expect(await cli('help', 'datasets')).toMatchObject({ code: 0, out: (await cli('datasets', '--help')).out });
    const unknown = await cli('datasets', 'bogus');
    expect(unknown.code).toBe(2);
    const subcommands = registry.filter((e) => e.path[0] === 'datasets').map((e) => e.path[1]);
    expect(subcommands).toEqual(expect.arrayContaining(['list', 'show', 'diff']));
    expect(unknown.err).toBe(`toolkiln: unknown command "datasets bogus": datasets has ${subcommands.join(', ')} (see toolkiln datasets --help)`);
  });

  it('top-level help lists every command, every pipeline with its export formats, and --version', async () => {
    const help = await cli('--help');
    expect(help.code).toBe(0);
    for (const entry of registry) expect(help.out).toContain((await entry.load()).usage);
    for (const [name, pipeline] of Object.entries(pipelines)) {
      expect(help.out).toMatch(new RegExp(`^  ${name} +${pipeline.description.replace(/[()]/g, '\\$&')}\\n +export formats: ${Object.keys(pipeline.exports).join(', ')}$`, 'm'));
    }
    expect(help.out).toContain('--version');
    expect(await cli('--version')).toEqual({ code: 0, out: packageVersion(), err: '' });
    expect(packageVersion()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('every command --help lists each flag it accepts, with its default and a line of what it does, and the parser takes each flag listed', async () => {
    for (const entry of registry) {
      const help = await cli(...entry.path, '--help');
      expect(help.code).toBe(0);
      const flagsSection = help.out.split('\nFlags:\n')[1]?.split('\n\n')[0] ?? '';
      const listed = flagsSection.split('\n').map((line) => /^  (?:-[a-z], )?--([a-z][a-z-]*)(?: <[^>]+>)? {2,}(\S.*) \(default: (.+)\)$/.exec(line));
      expect(listed.every(Boolean), `${entry.path.join(' ')}: a flag line without its default:\n${flagsSection}`).toBe(true);
      const names = listed.map((m) => m![1]);
      expect(new Set(names).size).toBe(names.length);
      expect(names.sort(), entry.path.join(' ')).toEqual(Object.keys({ ...commonOptions, ...entry.options }).sort());
      for (const m of listed) expect(m![2].length, `--${m![1]} of ${entry.path.join(' ')}`).toBeGreaterThan(10);
      // What help lists, the parser takes (a string flag with a value); what it does not list, it refuses.
      for (const name of names) {
        const flag: Flag = ({ ...commonOptions, ...entry.options } as Record<string, Flag>)[name];
        const given = await cli(...entry.path, `--${name}`, ...(flag.type === 'string' ? ['1'] : []), '--help');
        expect(given.code, `${entry.path.join(' ')} --${name}: ${given.err}`).toBe(0);
      }
      const unlisted = await cli(...entry.path, '--not-a-flag', '--help');
      expect(unlisted).toMatchObject({ code: 2, err: expect.stringContaining("Unknown option '--not-a-flag'") });
      // The command's code reads the same declaration.
      expect((await entry.load()).options).toBe(entry.options);
    }
  });

  it('the defaults flags declare are the ones the code applies', () => {
    const byDefault = (options: Record<string, Flag>, name: string) => {
      const flag = options[name];
      if (flag.type !== 'string') throw new Error(`--${name} takes no value`);
      return flag.byDefault;
    };
    expect(byDefault(GATEWAY_LIMIT_OPTIONS, 'concurrency')).toBe(`${DEFAULT_CONCURRENCY} requests in flight`);
    expect(byDefault(GATEWAY_LIMIT_OPTIONS, 'max-retries')).toBe(String(DEFAULT_MAX_RETRIES));
    expect(byDefault(RUN.options, 'concurrency')).toMatch(new RegExp(`^${DEFAULT_RECORDS_IN_FLIGHT} records and ${DEFAULT_CONCURRENCY} requests;`));
    expect(byDefault(RUN.options, 'model')).toContain(DEFAULT_OPENAI_MODEL);
    expect(byDefault(RUN.options, 'max-transport-rejects')).toBe(String(DEFAULT_MAX_TRANSPORT_REJECTS));
    expect(byDefault(RUN.options, 'min-yield')).toMatch(new RegExp(`^${DEFAULT_MIN_YIELD},`));
    expect(byDefault(RUN.options, 'redis-wait')).toBe(String(DEFAULT_REDIS_WAIT_MS / 1000));
    expect(byDefault(RUN.options, 'threads')).toContain(`for ${DEFAULT_THREADS_FROM} records or more`);
    expect(byDefault(registry.find((e) => e.path.join(' ') === 'review export')!.options, 'rate')).toMatch(new RegExp(`^${DEFAULT_SELECTION.randomRate},`));
    // --released names every released benchmark a recipe reads.
    const released = Object.values(pipelines).flatMap((p) => (p.released ?? []).map((r) => r.name));
    for (const name of released) expect(DATASETS_AUDIT.options.released.help).toContain(name);
  });

  it('run --help lists the pipelines; run <pipeline> --help lists every config key of that pipeline with its default and description', async () => {
    const bare = await cli('run', '--help');
    expect(bare.code).toBe(0);
    expect(bare.out).toContain(`Pipelines: ${Object.keys(pipelines).join(', ')}\ntoolkiln run <pipeline> --help lists the pipeline's config keys`);
    const mtu = await cli('run', 'mtu', '--help');
    expect(mtu.code).toBe(0);
    expect(mtu.out).toContain('\nFlags:\n  --config <file>');
    expect(mtu.out).toContain('\n  sources.generic = [] — plain dialogue files (JSONL');
    expect(mtu.out).toContain('\n  sources.generic[].file (required) — the JSONL file of dialogues');
    expect(mtu.out).toMatch(/\n {2}sources\.snips\.dir = "\.\.\/shared\/data\/sources\/snips" — SNIPS folder: train_<Intent>\.json and validate_<Intent>\.json/);
    expect(mtu.out).toContain('\n  sources.multiwoz.dialogues (unset) — folder of SGD-format MultiWOZ 2.2 dialogues');
    const toole = await cli('run', 'toole', '--help');
    expect(toole.out).toMatch(/\n {2}source\.file = "[^"]+plugin_info\.json" — JSON list of OpenAI plugin records/);
    expect((await cli('run', 'nestools', '--help')).out).toContain('\n  split = "test" — the split every sample is published in');
    expect(await cli('run', 'nope', '--help')).toMatchObject({ code: 2, err: `toolkiln: unknown pipeline "nope": choose one of ${Object.keys(pipelines).join(', ')}` });
  });

  it('the lazily loaded recipes are the recipes, and the summaries help prints without loading them are theirs', async () => {
    expect(RECIPE_NAMES).toEqual(Object.keys(pipelines));
    for (const name of RECIPE_NAMES) {
      const pipeline = await loadRecipe(name);
      expect(pipeline).toBe(pipelines[name]);
      expect(recipeSummary(name), name).toEqual({ description: pipeline.description, exportFormats: Object.keys(pipeline.exports) });
    }
  });

  it('help loads no command code and no recipe; run <pipeline> --help loads that recipe alone', () => {
    const script = fileURLToPath(new URL('./helpers/help-loads.mjs', import.meta.url));
    const calls = [...registry.filter((e) => e.path.join(' ') !== 'run').map((e) => [...e.path, '--help']), ['datasets', '--help'], ['run', '--help'], ['run', 'toole', '--help']];
    const child = spawnSync(process.execPath, [script, JSON.stringify(calls)], { encoding: 'utf8', env: { ...process.env, TOOLKILN_HOME: '' } });
    expect(child.status, child.stderr).toBe(0);
    const { startup, results } = JSON.parse(child.stdout) as { startup: Loaded; results: (Loaded & { argv: string[]; code: number })[] };
    type Loaded = { files: string[]; packages: string[] };
    // The CLI itself: its specs, flags and help, nothing of a command or a recipe.
    expect(startup.files.filter((f) => !/^bin\/[a-z-]+\.ts$|^core\/(errors|seed|project-dir)\.ts$|^pipelines\/(catalog|summaries)\.ts$/.test(f))).toEqual([]);
    expect(startup.packages).toEqual([]);
    const [runHelp, recipeHelp] = results.slice(-2);
    for (const result of results.slice(0, -2)) {
      expect(result.code, result.argv.join(' ')).toBe(0);
      expect({ argv: result.argv.join(' '), files: result.files, packages: result.packages }).toEqual({ argv: result.argv.join(' '), files: [], packages: [] });
    }
    expect(runHelp.code).toBe(0);
    expect(runHelp.files).toEqual(['bin/recipe-help.ts']);
    expect(recipeHelp.code).toBe(0);
    expect(recipeHelp.files).toContain('pipelines/toole.ts');
    expect(recipeHelp.files.filter((f) => f.startsWith('pipelines/') || f.startsWith('bin/commands/'))).toEqual(['pipelines/toole.ts']);
    expect(recipeHelp.files.filter((f) => /^stages\/(mtu|nestools|tooltalk|acebench)\//.test(f))).toEqual([]);
  });

  it('a command --help prints its usage and summary', async () => {
    const help = await cli('datasets', 'diff', '--help');
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/^toolkiln datasets diff <name>@a <name>@b \[--ids\] \[--across\] \[--json\]\n +sample ids added/);
  });

  it.each([
    [['run', 'mtu', '--limit', '-3'], 'toolkiln: --limit must be at least 1 (got -3)'],
    [['run', 'mtu', '--seed', '-1'], 'toolkiln: --seed must be at least 0 (got -1)'],
    [['review', 'export', 'x@v1', '--format', 'csv', '--overlap', '-.5'], 'toolkiln: --overlap must be at least 0 (got -0.5)'],
  ])('a negative number after a flag is that flag value: %j', async (argv, message) => {
    const result = await cli(...argv);
    expect(result).toMatchObject({ code: 2, err: message });
  });

  it('check nestools refuses Markdown without a program, empty files and empty record files (exit 2)', async () => {
    writeFileSync(join(home, 'notes.md'), '# Notes\n\n```sh\nnpm ci && npm test\n```\n');
    writeFileSync(join(home, 'answer.md'), 'Here it is:\n\n```python\ndef main():\n    pass\n```\n');
    writeFileSync(join(home, 'empty.py'), '\n  \n');
    writeFileSync(join(home, 'empty.jsonl'), '');
    writeFileSync(join(home, 'none.json'), '[]');
    const notes = await cli('check', 'nestools', 'notes.md');
    expect(notes.code).toBe(2);
    expect(notes.err).toMatch(/notes\.md: no Python program in it/);
    for (const [file, message] of [['empty.py', /empty\.py: empty file, nothing to check/], ['empty.jsonl', /empty\.jsonl: no records or programs in it/], ['none.json', /none\.json: no records or programs in it/]] as const) {
      const result = await cli('check', 'nestools', file);
      expect(result.code, file).toBe(2);
      expect(result.err).toMatch(message);
    }
    // A Markdown answer that holds a program is checked (and fails its check: exit 1, not 2).
    expect((await cli('check', 'nestools', 'answer.md')).code).toBe(1);
  });
});
