import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../bin/cli.ts';
import { defaultRun } from './helpers/default-run.ts';

/**
 * `toolkiln eval <recipe>@v1 --model oracle` on each default version: every metric at its best, 100.0
 * or, for a metric the report marks lower-is-better, 0.0 — and a 0.0 is never shown unmarked.
 */
for (const [recipe, lowerIsBetter] of [
  ['mtu', []],
  ['acebench', []],
  ['nestools', []],
  ['toole', ['multi-tool_1/1', 'multi-tool_1/2']],
  ['tooltalk', ['incorrect_action_rate']],
] as const) {
  describe(`${recipe}: the oracle on the default version`, () => {
    const run = defaultRun(recipe);

    it('scores every metric at its best, and the report says which metrics are better lower', async () => {
      const out: string[] = [];
      const cli = (argv: string[]) => main(argv, { out: (t) => out.push(t), err: () => {}, home: run.home, cwd: run.home, env: {} });
      expect(await cli(['eval', `${recipe}@v1`, '--model', 'oracle'])).toBe(0);
      const rows = out.join('\n').split('\n').filter((line) => /^\S.*\s(\d+\.\d|—)(\s|$)/.test(line) && !line.startsWith('metric'));
      expect(rows.length).toBeGreaterThan(3);
      for (const row of rows) {
        const [metric, ...cells] = row.split(/\s{2,}/);
        const lower = lowerIsBetter.some((name) => metric === `${name} (lower is better)`);
        for (const cell of cells.filter((c) => c !== '—')) expect([metric, cell]).toEqual([metric, lower ? '0.0' : '100.0']);
      }
      for (const name of lowerIsBetter) expect(rows.some((row) => row.startsWith(`${name} (lower is better) `))).toBe(true);
      const report = JSON.parse(readFileSync(join(run.ref.dir + '.derived', 'eval', 'oracle', 'report.json'), 'utf8'));
      expect(report.lowerIsBetter ?? []).toEqual(lowerIsBetter);
    }, 600_000);
  });
}
