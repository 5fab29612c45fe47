import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pipelines } from '../pipelines/index.ts';
import { multiTurnDialogueStage } from '../stages/acebench/dialogue-multi-turn.ts';
import { singleDialogueStage } from '../stages/acebench/dialogue-single.ts';

/**
 * Stages are declared (core/stage.ts): a stage asks the LLM through `ctx.ask` / `ctx.tryAsk` and
 * takes its lineage from the answer or `ctx.lineage()`, so its name and version are written once, in
 * its declaration, and cannot drift from what its records and the gateway's accounts say.
 */

const STAGES = new URL('../stages/', import.meta.url).pathname;

const files = readdirSync(STAGES, { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.ts'))
  .sort()
  .map((file) => ({ file, text: readFileSync(join(STAGES, file), 'utf8') }));

/** Each recipe's stages with its options that add stages on (judges, translation, rewriting, an import). */
const CONFIGS: Record<string, unknown[]> = {
  acebench: [{ translate: ['zh'], judges: 3 }],
  nestools: [{ removeConjunctions: true }, { importFile: 'x.jsonl' }],
};

function stageNames(recipe: string): string[] {
  const pipeline = pipelines[recipe];
  const configs = [{}, ...(CONFIGS[recipe] ?? [])].map((config) => pipeline.configSchema.parse(config));
  const extra = recipe === 'acebench' ? [singleDialogueStage(), multiTurnDialogueStage()] : [];
  return [...new Set([...configs.flatMap((config) => pipeline.stages(config)), ...extra].map((stage) => stage.name))];
}

describe('stages are declared', () => {
  it('no stage file asks the gateway itself or writes a lineage entry or a prompt hash by hand', () => {
    const handWritten = files.flatMap(({ file, text }) =>
      [/llm\.generate\(/, /promptHash/, /\bstage: '/, /model: ctx\.llm\.model/, /\bversion: \d+, prompt/].filter((pattern) => pattern.test(text)).map((pattern) => `${file}: ${pattern.source}`),
    );
    expect(handWritten).toEqual([]);
  });

  for (const recipe of Object.keys(pipelines)) {
    it(`${recipe}: each stage's name is written once in the recipe's folder, in its declaration`, () => {
      const own = files.filter(({ file }) => file.startsWith(`${recipe}/`));
      const repeated = stageNames(recipe)
        .map((name) => ({ name, count: own.reduce((sum, { text }) => sum + text.split(`'${name}'`).length - 1, 0) }))
        .filter(({ count }) => count > 1)
        .map(({ name, count }) => `${name}: written ${count} times`);
      expect(repeated).toEqual([]);
    });
  }
});
