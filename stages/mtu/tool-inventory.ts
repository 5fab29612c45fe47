import { Sample } from '../../core/records.ts';
import type { BatchStage } from '../../core/stage.ts';
import { toolKey } from './sample.ts';

/** Counts the distinct tools (plugin and name) the samples carry, under `key` in the manifest stats. */
export function toolInventoryStage(name: string, key: string): BatchStage<Sample, Sample> {
  return {
    kind: 'batch',
    name,
    version: 1,
    input: Sample,
    output: Sample,
    run: async (samples, ctx) => {
      const tools = new Set(samples.flatMap((s) => s.tools.map(toolKey)));
      const parameters = new Set(samples.flatMap((s) => s.tools.flatMap((t) => Object.keys(t.parameters.properties))));
      ctx.report(key, { tools: tools.size, parameterNames: parameters.size });
      return { out: samples };
    },
  };
}
