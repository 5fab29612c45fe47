import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import acebenchPipeline from '../pipelines/acebench.ts';
import { multiTurnDialogueStage } from '../stages/acebench/dialogue-multi-turn.ts';
import { singleDialogueStage } from '../stages/acebench/dialogue-single.ts';

/**
 * The ACEBench stages are declared (core/stage.ts): a stage asks the LLM through `ctx.ask` /
 * `ctx.tryAsk` and takes its lineage from the answer or `ctx.lineage()`, so its name and version
 * are written once, in its declaration, and cannot drift from what its records say.
 */

const FOLDER = join(dirname(fileURLToPath(import.meta.url)), '..', 'stages', 'acebench');

const files = readdirSync(FOLDER, { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.ts'))
  .sort()
  .map((file) => ({ file, text: readFileSync(join(FOLDER, file), 'utf8') }));

/** Every stage the recipe can run (judges and translation on), and the two the dialogue stage delegates to. */
function recipeStageNames(): string[] {
  const config = acebenchPipeline.configSchema.parse({ translate: ['zh'], judges: 3 });
  return [...acebenchPipeline.stages(config), singleDialogueStage(), multiTurnDialogueStage()].map((stage) => stage.name);
}

describe('ACEBench stages are declared', () => {
  it('no stage file asks the gateway itself or writes a lineage entry by hand', () => {
    const handWritten = files.flatMap(({ file, text }) =>
      [/llm\.generate\(/, /promptHash/, /\bstage: '/, /model: ctx\.llm\.model/].filter((pattern) => pattern.test(text)).map((pattern) => `${file}: ${pattern.source}`),
    );
    expect(handWritten).toEqual([]);
  });

  it("each stage's name is written once, in its declaration", () => {
    const names = recipeStageNames();
    expect(names).toContain('judge');
    const repeated = names
      .map((name) => ({ name, count: files.reduce((sum, { text }) => sum + text.split(`'${name}'`).length - 1, 0) }))
      .filter(({ count }) => count !== 1)
      .map(({ name, count }) => `${name}: written ${count} times`);
    expect(repeated).toEqual([]);
  });
});
