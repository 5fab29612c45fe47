import { existsSync } from 'node:fs';
import { z } from 'zod';
import { UserError } from '../../core/errors.ts';
import { readJsonl } from '../../core/jsonl.ts';
import { Rng } from '../../core/rng.ts';
import { reject, type MapStage, type StageContext } from '../../core/stage.ts';
import generatePrompt from '../../prompts/nestools-generate.ts';
import { EXAMPLE_POOL, formatExamples, rotateExamples, type PoolExample } from '../../prompts/nestools-example-pool.ts';
import { DomainRequest } from '../sources/nestools.ts';
import { loadSealToolsLibrary } from '../sources/seal-tools.ts';
import { ChainGraph } from './chain-graph.ts';

/**
 * §3.1 tool & instance generation: one LLM request per sampled domain for Python stubs and a
 * nested call chain in main(), with in-context examples rotating through a pool (seeded). Offline,
 * the prompt's renderer writes the same kind of program from a chain sampled over Seal-Tools.
 */

export const GeneratedProgram = z.object({
  index: z.number().int().min(0),
  domain: z.string(),
  /** The whole answer, code block and any text around it. */
  answer: z.string(),
  model: z.string(),
  /** Domains of the in-context examples shown. */
  examples: z.array(z.string()),
});
export type GeneratedProgram = z.infer<typeof GeneratedProgram>;

export interface GenerateOptions {
  sealToolsFile: string;
  /** JSONL of `{"domain", "answer"}`; default: the built-in pool. */
  examplePoolFile?: string;
  examplesPerRequest: number;
  temperature: number;
}

const PoolEntry = z.object({ domain: z.string().min(1), answer: z.string().min(1) });

export function loadExamplePool(path: string): { domain: string; answer: string }[] {
  if (!existsSync(path)) throw new UserError(`example pool not found: ${path} (set examplePoolFile in the config, or leave it out for the built-in pool)`);
  return readJsonl(path).map((raw, i) => {
    const parsed = PoolEntry.safeParse(raw);
    if (!parsed.success) throw new UserError(`${path}: example ${i + 1} is not {"domain": "...", "answer": "..."}`);
    return parsed.data;
  });
}

/** Part of each sample's lineage (written by the check stage, which turns answers into samples). */
export const GENERATE_STAGE = { name: 'generate-chains', version: 1 } as const;

export function generateChainsStage(options: GenerateOptions): MapStage<DomainRequest, GeneratedProgram> {
  let pool: { domain: string; answer: string }[] | undefined;
  let graph: ChainGraph | undefined;
  // Built on first use: only the offline renderer samples chains, and the pool needs the seed.
  const poolFor = (ctx: StageContext) =>
    (pool ??= Rng.derive(ctx.seed, 'nestools-example-pool').shuffle(options.examplePoolFile ? loadExamplePool(ctx.resolvePath(options.examplePoolFile)) : (EXAMPLE_POOL as PoolExample[])));
  const graphFor = (ctx: StageContext) => (graph ??= new ChainGraph(loadSealToolsLibrary(ctx.resolvePath(options.sealToolsFile)).tools));

  return {
    kind: 'map',
    name: GENERATE_STAGE.name,
    version: GENERATE_STAGE.version,
    input: DomainRequest,
    output: GeneratedProgram,
    prompts: [generatePrompt],
    keyOf: (request) => `${request.index}:${request.domain}`,
    run: async (request, ctx) => {
      const examples = rotateExamples(poolFor(ctx), request.index, options.examplesPerRequest);
      const result = await ctx.llm.generate(
        generatePrompt,
        { domain: request.domain, examples: formatExamples(examples), chains: { sample: (field, rng) => graphFor(ctx).sample(field, rng) } },
        { stage: GENERATE_STAGE.name, key: ctx.key, temperature: options.temperature },
      );
      if (!result.ok) return reject(result.reason, result.detail);
      return { index: request.index, domain: request.domain, answer: result.value.answer, model: result.model, examples: examples.map((e) => e.domain) };
    },
  };
}
