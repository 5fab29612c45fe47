import { defineConfig } from 'vitest/config';
import HeavyFirstSequencer from './test/helpers/heavy-first-sequencer.ts';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Both cores: the default leaves one of two idle, and the suite is mostly CPU-bound runs.
    maxWorkers: 2,
    // On a clean clone (CI) the longest files start first, so none of them is left running alone at the end.
    sequence: { sequencer: HeavyFirstSequencer },
  },
});
