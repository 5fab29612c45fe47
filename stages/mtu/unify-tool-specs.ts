import { Sample, type ToolSpec } from '../../core/records.ts';
import type { ScanStage } from '../../core/stage.ts';
import { toolKey } from './sample.ts';

/**
 * The tools as created, one spec per plugin and name. Grammar- and LLM-made tools are created per
 * dialogue, each knowing only the parameters of its own calls; here every sample's copy gets the
 * union of them, so that clustering compares whole tools. Reports the count of created tools
 * (`toolsCreated`: by plugin and name, and distinct names) for the before/after figures.
 */
export function unifyToolSpecsStage(): ScanStage<Sample, Sample, Map<string, ToolSpec>> {
  return {
    kind: 'scan',
    name: 'unify-tool-specs',
    version: 1,
    input: Sample,
    output: Sample,
    collect: (samples, ctx) => {
      const union = new Map<string, ToolSpec>();
      for (const sample of samples) {
        for (const tool of sample.tools) {
          const known = union.get(toolKey(tool));
          if (!known) union.set(toolKey(tool), structuredClone(tool));
          else {
            for (const [name, property] of Object.entries(tool.parameters.properties)) known.parameters.properties[name] ??= property;
            if (!known.description) known.description = tool.description;
          }
        }
      }
      ctx.report('toolsCreated', { tools: union.size, names: new Set([...union.values()].map((t) => t.name)).size });
      return union;
    },
    run: (sample, { state: union }) => ({ ...sample, tools: sample.tools.map((t) => union.get(toolKey(t))!) }),
  };
}
