import type { PipelineDefinition } from '../core/pipeline.ts';
import { acebenchPipeline } from './acebench.ts';
import { unknownRecipe } from './catalog.ts';
import { mtuPipeline } from './mtu.ts';
import { nestoolsPipeline } from './nestools.ts';
import { toolePipeline } from './toole.ts';
import { tooltalkPipeline } from './tooltalk.ts';

/** Every recipe `toolkiln run <pipeline>` knows. */
export const pipelines: Record<string, PipelineDefinition> = {
  mtu: mtuPipeline,
  nestools: nestoolsPipeline,
  toole: toolePipeline,
  tooltalk: tooltalkPipeline,
  acebench: acebenchPipeline,
};

export function getPipeline(name: string): PipelineDefinition {
  const pipeline = pipelines[name];
  if (!pipeline) throw unknownRecipe(name);
  return pipeline;
}

