import { UserError } from '../core/errors.ts';
import type { PipelineDefinition } from '../core/pipeline.ts';

/**
 * The recipes by name, each imported only when asked for: `toolkiln run mtu --help` loads the MTU
 * recipe and none of the others. pipelines/index.ts holds the same recipes loaded at once (a test
 * keeps the two lists equal).
 */
const LOADERS: Record<string, () => Promise<PipelineDefinition>> = {
  mtu: async () => (await import('./mtu.ts')).mtuPipeline,
  nestools: async () => (await import('./nestools.ts')).nestoolsPipeline,
  toole: async () => (await import('./toole.ts')).toolePipeline,
  tooltalk: async () => (await import('./tooltalk.ts')).tooltalkPipeline,
  acebench: async () => (await import('./acebench.ts')).acebenchPipeline,
};

export const RECIPE_NAMES: readonly string[] = Object.keys(LOADERS);

export function unknownRecipe(name: string): UserError {
  return new UserError(`unknown pipeline "${name}": choose one of ${RECIPE_NAMES.join(', ')}`);
}

/** The recipe called `name`, loaded alone; an unknown name is a one-line error listing the known ones. */
export async function loadRecipe(name: string): Promise<PipelineDefinition> {
  if (!Object.hasOwn(LOADERS, name)) throw unknownRecipe(name);
  return LOADERS[name]();
}
