import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../bin/cli.ts';
import { pipelines } from '../pipelines/index.ts';

const home = mkdtempSync(join(tmpdir(), 'tk-config-show-'));

async function cli(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (t) => out.push(t), err: (t) => err.push(t), home, cwd: home, env: {} });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('config show', () => {
  it.each(Object.keys(pipelines))('%s: prints the resolved default config, every key with its default', async (name) => {
    const shown = await cli('config', 'show', name);
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.out)).toEqual(JSON.parse(JSON.stringify(pipelines[name].configSchema.parse({}))));
  });

  it('lays a --config file over the defaults, and the saved output run again is the default run (same fingerprint)', async () => {
    writeFileSync(join(home, 'mine.json'), JSON.stringify({ conversations: 3 }));
    const laid = JSON.parse((await cli('config', 'show', 'tooltalk', '--config', 'mine.json')).out);
    expect(laid).toMatchObject({ conversations: 3, easy: true });

    writeFileSync(join(home, 'saved.json'), (await cli('config', 'show', 'tooltalk')).out);
    const first = await cli('run', 'tooltalk', '--quiet', '--json');
    expect(first.code).toBe(0);
    const again = await cli('run', 'tooltalk', '--config', 'saved.json', '--quiet', '--json');
    expect(JSON.parse(again.out)).toMatchObject({ status: 'existing', fingerprint: JSON.parse(first.out).fingerprint });
  }, 120_000);

  it.each(Object.keys(pipelines))('%s: run --help shows every key with the default config show prints', async (name) => {
    const shown = JSON.parse((await cli('config', 'show', name)).out) as Record<string, unknown>;
    const help = await cli('run', name, '--help');
    expect(help.code).toBe(0);
    // `  path = default — description`, `  path (unset) — …`, or an object's `  path — …` (its keys follow).
    const lines = help.out.split('\n').map((line) => /^ {2}([A-Za-z][\w.[\]]*)(?: = (.*?)| \((unset|required)\))? — \S/.exec(line)).filter((m) => m !== null);
    const listed = new Map(lines.filter((m) => !m[1].includes('[]')).map((m) => [m[1], m[2] !== undefined ? { value: JSON.parse(m[2]) as unknown } : m[3] ? { unset: true } : { section: true }]));
    // Each key help lists has the value config show prints at that path (or none there when unset);
    // keys inside an unset object show the default they get when it is set, which config show cannot.
    const unsetObjects = [...listed].filter(([, e]) => 'unset' in e).map(([path]) => `${path}.`);
    for (const [path, entry] of listed) {
      if (unsetObjects.some((prefix) => path.startsWith(prefix))) continue;
      const value = path.split('.').reduce<unknown>((at, key) => (at as Record<string, unknown> | undefined)?.[key], shown);
      if ('value' in entry) expect(entry.value, path).toEqual(value);
      else if ('unset' in entry) expect(value, path).toBeUndefined();
      else expect(value, path).toEqual(expect.any(Object));
    }
    // And every key config show prints is listed: as a value, or as an object whose keys are.
    const unlisted: string[] = [];
    const walk = (object: Record<string, unknown>, prefix: string) => {
      for (const [key, value] of Object.entries(object)) {
        const entry = listed.get(prefix + key);
        if (!entry) unlisted.push(prefix + key);
        else if ('section' in entry) walk(value as Record<string, unknown>, `${prefix}${key}.`);
      }
    };
    walk(shown, '');
    expect(unlisted).toEqual([]);
    expect([...listed.values()].filter((e) => 'value' in e).length).toBeGreaterThan(5);
  });

  it('refuses an unknown pipeline or config key in one line', async () => {
    expect(await cli('config', 'show', 'nope')).toMatchObject({ code: 2, err: expect.stringMatching(/unknown pipeline "nope": choose one of mtu/) });
    writeFileSync(join(home, 'typo.json'), JSON.stringify({ conversation: 3 }));
    const typo = await cli('config', 'show', 'tooltalk', '--config', 'typo.json');
    expect(typo.code).toBe(2);
    expect(typo.err).toContain('conversation');
  });
});
