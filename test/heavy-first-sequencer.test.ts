import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TestSpecification, Vitest } from 'vitest/node';
import HeavyFirstSequencer, { LONGEST_FILES } from './helpers/heavy-first-sequencer.ts';

const ROOT = new URL('..', import.meta.url).pathname.replace(/\/$/, '');

/** A file of the run as the sequencer sees it. */
const spec = (file: string) => ({ moduleId: join(ROOT, file), project: { name: '', config: { sequence: { groupOrder: 0 }, isolate: true } } }) as unknown as TestSpecification;
/** Vitest as the sequencer reads it: timings for the files in `timed`, file sizes for none. */
const vitest = (timed: Record<string, number>) =>
  ({ config: { root: ROOT }, cache: { getFileTestResults: (key: string) => (key.slice(1) in timed ? { duration: timed[key.slice(1)], failed: false } : undefined), getFileStats: () => undefined } }) as unknown as Vitest;
const files = ['test/layout.test.ts', 'test/trl-chat-templates.test.ts', 'test/runner.test.ts', 'test/docs-examples.test.ts'];

describe('the order test files start in', () => {
  it('lists only test files that exist', () => {
    expect(LONGEST_FILES.filter((file) => !existsSync(join(ROOT, file)))).toEqual([]);
    expect(new Set(LONGEST_FILES).size).toBe(LONGEST_FILES.length);
  });

  it('on a clean clone (no timings) starts the longest files first, in the listed order, the rest after', async () => {
    const order = await new HeavyFirstSequencer(vitest({})).sort(files.map(spec));
    expect(order.map((s) => s.moduleId.slice(ROOT.length + 1))).toEqual(['test/docs-examples.test.ts', 'test/trl-chat-templates.test.ts', 'test/layout.test.ts', 'test/runner.test.ts']);
  });

  it('keeps vitest\'s order, longest measured first, when it has a timing for every file', async () => {
    const order = await new HeavyFirstSequencer(vitest({ 'test/layout.test.ts': 9, 'test/trl-chat-templates.test.ts': 1, 'test/runner.test.ts': 5, 'test/docs-examples.test.ts': 2 })).sort(files.map(spec));
    expect(order.map((s) => s.moduleId.slice(ROOT.length + 1))).toEqual(['test/layout.test.ts', 'test/runner.test.ts', 'test/docs-examples.test.ts', 'test/trl-chat-templates.test.ts']);
  });
});
