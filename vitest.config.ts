import { defineConfig } from 'vitest/config';
import HeavyFirstSequencer from './test/helpers/heavy-first-sequencer.ts';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Every record a run serialises is frozen: a stage that edits one in place throws in any test (core/runner.ts runTexts).
    env: { TOOLKILN_FREEZE_RECORDS: '1' },
    // One file more than the two cores: the default leaves one of two idle, and the suite is mostly
    // CPU-bound runs, but some files mostly wait (workers-redis-lost: 9 CPU-seconds in 35 s, workers:
    // 20 in 35, waiting for a lock to expire or a worker to die), and a third file uses the core they leave.
    maxWorkers: 3,
    // On a clean clone (CI) the longest files start first, so none of them is left running alone at the end.
    sequence: { sequencer: HeavyFirstSequencer },
  },
});
