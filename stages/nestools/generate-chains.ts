import { existsSync } from 'node:fs';
import { z } from 'zod';
import { UserError } from '../../core/errors.ts';
import { readJsonl } from '../../core/jsonl.ts';
import { Rng } from '../../core/rng.ts';
import { LineageEntry } from '../../core/records.ts';
import { promptStep, reject, type Answer, type MapStage, type StageContext } from '../../core/stage.ts';
import generatePrompt from '../../prompts/nestools-generate.ts';
import generateOverToolsPrompt from '../../prompts/nestools-generate-over-tools.ts';
import { renderStub } from '../../prompts/nestools-render-program.ts';
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
  /** The answer's lineage entry (this stage at its version, the prompt, the model): the check stage puts it on the sample. */
  lineage: LineageEntry,
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
  /** Chains over the tools each request carries (an imported library) instead of new tools per domain. */
  overImported?: boolean;
}

/** Stubs shown to the model per request over an imported library: the field's own tools first. */
const MAX_STUBS = 12;

const PoolEntry = z.object({ domain: z.string().min(1), answer: z.string().min(1) });

export function loadExamplePool(path: string): { domain: string; answer: string }[] {
  if (!existsSync(path)) throw new UserError(`example pool not found: ${path} (set examplePoolFile in the config, or leave it out for the built-in pool)`);
  return readJsonl(path).map((raw, i) => {
    const parsed = PoolEntry.safeParse(raw);
    if (!parsed.success) throw new UserError(`${path}: example ${i + 1} is not {"domain": "...", "answer": "..."}`);
    return parsed.data;
  });
}

export function generateChainsStage(options: GenerateOptions): MapStage<DomainRequest, GeneratedProgram> {
  let pool: { domain: string; answer: string }[] | undefined;
  let graph: ChainGraph | undefined;
  // Built on first use: only the offline renderer samples chains, and the pool needs the seed.
  const poolFor = (ctx: StageContext) =>
    (pool ??= Rng.derive(ctx.seed, 'nestools-example-pool').shuffle(options.examplePoolFile ? loadExamplePool(ctx.resolvePath(options.examplePoolFile)) : (EXAMPLE_POOL as PoolExample[])));
  const graphFor = (ctx: StageContext) => (graph ??= new ChainGraph(loadSealToolsLibrary(ctx.resolvePath(options.sealToolsFile)).tools));
  const examplesFor = (request: DomainRequest, ctx: StageContext) => rotateExamples(poolFor(ctx), request.index, options.examplesPerRequest);

  // Over an imported library, one graph per top-level domain, made from the tools the request carries.
  const importedGraphs = new Map<string, ChainGraph>();
  const importedGraph = (request: DomainRequest) => {
    const top = request.domain.split('/')[0];
    let made = importedGraphs.get(top);
    if (!made) importedGraphs.set(top, (made = new ChainGraph(request.tools ?? [])));
    return made;
  };
  const step = {
    name: 'generate-chains',
    version: 2,
    input: DomainRequest,
    output: GeneratedProgram,
    keyOf: (request: DomainRequest) => `${request.index}:${request.domain}`,
    options: () => ({ temperature: options.temperature }),
    result: (answer: Answer<{ answer: string }>, request: DomainRequest, ctx: StageContext) => ({
      index: request.index,
      domain: request.domain,
      answer: answer.value.answer,
      lineage: answer.lineage,
      examples: examplesFor(request, ctx).map((e) => e.domain),
    }),
  };
  if (options.overImported) {
    return promptStep({
      ...step,
      prompt: generateOverToolsPrompt,
      variables: (request, ctx) => {
        const graph = importedGraph(request);
        if (!graph.tools.length) return reject('no_usable_tools', `none of the ${request.tools?.length ?? 0} tools of ${request.domain} can be a Python stub (names and fields must be identifiers)`);
        const own = graph.tools.filter((tool) => tool.domain === request.domain);
        const shown = [...own, ...graph.tools.filter((tool) => tool.domain !== request.domain)].slice(0, MAX_STUBS);
        return { domain: request.domain, examples: formatExamples(examplesFor(request, ctx)), stubs: shown.map(renderStub).join('\n\n'), chains: { sample: (field, rng) => graph.sample(field, rng) } };
      },
    });
  }
  return promptStep({
    ...step,
    prompt: generatePrompt,
    variables: (request, ctx) => ({
      domain: request.domain,
      examples: formatExamples(examplesFor(request, ctx)),
      chains: { sample: (field, rng) => graphFor(ctx).sample(field, rng) },
    }),
  });
}
