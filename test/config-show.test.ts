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

  it('refuses an unknown pipeline or config key in one line', async () => {
    expect(await cli('config', 'show', 'nope')).toMatchObject({ code: 2, err: expect.stringMatching(/unknown pipeline "nope": choose one of mtu/) });
    writeFileSync(join(home, 'typo.json'), JSON.stringify({ conversation: 3 }));
    const typo = await cli('config', 'show', 'tooltalk', '--config', 'typo.json');
    expect(typo.code).toBe(2);
    expect(typo.err).toContain('conversation');
  });
});
