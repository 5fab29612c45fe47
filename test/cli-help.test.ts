import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main, packageVersion, registry } from '../bin/cli.ts';
import { commonOptions } from '../bin/flags.ts';
import { pipelines } from '../pipelines/index.ts';

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
