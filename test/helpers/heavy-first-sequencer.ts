import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The longest test files, longest first, as measured on a clean clone (`.ci/run`, 2 cores): seconds
 * of wall time in brackets. Vitest starts the files it has timings for longest first, but a clean
 * clone has none, and it then starts the largest files first: the two longest files here are small
 * ones, so they started late and ran on one core while the other had nothing left to do. The second
 * file makes no default version, so it runs while the first makes them (test/helpers/default-run.ts).
 */
export const LONGEST_FILES = [
  'test/docs-examples.test.ts', // 145: every runnable shell example of the docs; makes the default versions
  'test/tools-recipes.test.ts', // 32: four recipes over imported tools
  'test/trl-chat-templates.test.ts', // 85: every trl row of every default version through three chat templates
  'test/eval-chat-predictions.test.ts', // 38
  'test/workers.test.ts', // 35: mostly waiting for lock expiry
  'test/workers-redis-lost.test.ts', // 35: mostly waiting
  'test/run-yield.test.ts', // 30
  'test/export-bfcl.test.ts', // 76 when it makes the default versions, a few seconds when they are made
  'test/golden.test.ts', // 27
  'test/mtu-import.test.ts', // 25
  'test/review-carry.test.ts', // 24
  'test/review-app.test.ts', // 23
  'test/review-tool-sheet.test.ts', // 21
  'test/toole-pipeline.test.ts', // 19
  'test/openai-chat.test.ts', // 19
];

/**
 * Vitest's order when it has a timing for every file of the run (a run after a full one on this
 * checkout); otherwise LONGEST_FILES first, in that order, then the rest in vitest's order.
 */
export default class HeavyFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const path = (spec: TestSpecification) => relative(this.ctx.config.root, spec.moduleId).split('\\').join('/');
    if (sorted.every((spec) => this.ctx.cache.getFileTestResults(`${spec.project.name}:${path(spec)}`))) return sorted;
    const rank = (spec: TestSpecification) => {
      const at = LONGEST_FILES.indexOf(path(spec));
      return at === -1 ? LONGEST_FILES.length : at;
    };
    // Array.prototype.sort is stable: files off the list keep vitest's order.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}
