import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../bin/cli.ts';
import { compareWithReference } from '../core/reference-compare.ts';
import { DatasetStore } from '../core/store.ts';
import { draftManifest, makeSamples } from './fixtures/core/samples.ts';

const home = mkdtempSync(join(tmpdir(), 'tk-compare-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

async function cli(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (t) => out.push(t), err: (t) => err.push(t), home, cwd: home, env: {} });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('statistics beside the reference', () => {
  it('pairs every number found at the same path of a generated side and a reference side', () => {
    const rows = compareWithReference({
      seed: 42,
      'nestools.statistics': { generated: { callsPerSample: 3, depth: { mean: 2 }, name: 'x', onlyOurs: 1 }, reference: { callsPerSample: 2, depth: { mean: 0 } } },
      tooltalk: { version: { turns: 6 }, released: { turns: 4 } },
      // Kept per split: compared through the test split.
      mtuStatistics: { ours: { test: { 'S-S': { turns: 1 } }, train: { 'S-S': { turns: 9 } } }, released: { 'S-S': { turns: 2 } } },
      'no.reference': { generated: { a: 1 } },
    });
    expect(rows).toEqual([
      { report: 'nestools.statistics', figure: 'callsPerSample', generated: 3, reference: 2, ratio: 1.5 },
      { report: 'nestools.statistics', figure: 'depth.mean', generated: 2, reference: 0, ratio: null },
      { report: 'tooltalk', figure: 'turns', generated: 6, reference: 4, ratio: 1.5 },
      { report: 'mtuStatistics', figure: 'S-S.turns', generated: 1, reference: 2, ratio: 0.5 },
    ]);
  });

  it('`datasets show --compare-reference` prints the table and writes it beside the version, which stays intact', async () => {
    const store = new DatasetStore(home);
    store.publish({ name: 'cmp', samples: makeSamples(3), tools: [], rejects: [], manifest: { ...draftManifest('a'), stats: { tooltalk: { version: { turns: 6 }, released: { turns: 4 } } } } });
    const shown = await cli(['datasets', 'show', 'cmp@v1', '--compare-reference']);
    expect(shown.code).toBe(0);
    expect(shown.out).toContain('| tooltalk | turns | 6 | 4 | 1.50 |');
    const file = join(home, 'datasets', 'cmp', 'v1.derived', 'reports', 'compare-reference.md');
    expect(readFileSync(file, 'utf8')).toContain('| tooltalk | turns | 6 | 4 | 1.50 |');
    expect(existsSync(join(home, 'datasets', 'cmp', 'v1', 'reports'))).toBe(false);
    expect(store.verify(store.resolve('cmp@v1'))).toEqual([]);

    store.publish({ name: 'plain', samples: makeSamples(2), tools: [], rejects: [], manifest: draftManifest('b') });
    const refused = await cli(['datasets', 'show', 'plain@v1', '--compare-reference']);
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(/plain@v1 holds no statistics beside a released set/);
  });
});
