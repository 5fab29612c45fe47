import { UserError } from '../core/errors.ts';
import type { PipelineDefinition } from '../core/pipeline.ts';
import { RECIPE_SUMMARIES, type RecipeName, type RecipeSummary } from './summaries.ts';

/**
 * The recipes by name, each imported only when asked for: `toolkiln run mtu --help` loads the MTU
 * recipe and none of the others, and `toolkiln --help` none at all (it prints the summaries).
 * pipelines/index.ts holds the same recipes loaded at once (a test keeps the two lists equal).
 */
const LOADERS: Record<RecipeName, () => Promise<PipelineDefinition>> = {
  mtu: async () => (await import('./mtu.ts')).mtuPipeline,
  nestools: async () => (await import('./nestools.ts')).nestoolsPipeline,
  toole: async () => (await import('./toole.ts')).toolePipeline,
  tooltalk: async () => (await import('./tooltalk.ts')).tooltalkPipeline,
  acebench: async () => (await import('./acebench.ts')).acebenchPipeline,
};

export const RECIPE_NAMES: readonly string[] = Object.keys(LOADERS);

function isRecipe(name: string): name is RecipeName {
  return Object.hasOwn(LOADERS, name);
}

export function unknownRecipe(name: string): UserError {
  return new UserError(`unknown pipeline "${name}": choose one of ${RECIPE_NAMES.join(', ')}`);
}

/** What help says of the recipe called `name`, without loading it. */
export function recipeSummary(name: string): RecipeSummary {
  if (!isRecipe(name)) throw unknownRecipe(name);
  return RECIPE_SUMMARIES[name];
}

/** The recipe called `name`, loaded alone; an unknown name is a one-line error listing the known ones. */
export async function loadRecipe(name: string): Promise<PipelineDefinition> {
  if (!isRecipe(name)) throw unknownRecipe(name);
  return LOADERS[name]();
}
