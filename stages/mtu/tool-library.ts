import { Sample, type ToolSpec } from '../../core/records.ts';
import type { BatchStage } from '../../core/stage.ts';

/**
 * Builds each source's tool library from the calls observed for it: a parameter that every call
 * of a tool fills is required, the others optional. Every sample then offers the whole library
 * of its source as candidates, so the model must choose.
 */
export function toolLibraryStage(): BatchStage<Sample, Sample> {
  return {
    kind: 'batch',
    name: 'source-tool-library',
    version: 1,
    input: Sample,
    output: Sample,
    run: async (samples, ctx) => {
      const observed = new Map<string, { tool: ToolSpec; calls: number; filled: Map<string, number> }>();
      for (const sample of samples) {
        for (const call of sample.expected.calls ?? []) {
          const base = sample.tools.find((t) => t.name === call.tool)!;
          const key = `${base.domain}\u0000${call.tool}`;
          const entry = observed.get(key) ?? { tool: base, calls: 0, filled: new Map() };
          entry.calls++;
          for (const name of Object.keys(call.arguments)) entry.filled.set(name, (entry.filled.get(name) ?? 0) + 1);
          observed.set(key, entry);
        }
      }
      const bySource = new Map<string, ToolSpec[]>();
      for (const { tool, calls, filled } of [...observed.values()].sort((a, b) => (a.tool.name < b.tool.name ? -1 : 1))) {
        const names = [...filled.keys()].sort();
        const spec: ToolSpec = {
          ...tool,
          parameters: {
            type: 'object',
            properties: Object.fromEntries(names.map((n) => [n, { type: 'string' }])),
            required: names.filter((n) => filled.get(n) === calls),
          },
        };
        const list = bySource.get(tool.domain ?? '') ?? [];
        list.push(spec);
        bySource.set(tool.domain ?? '', list);
      }
      ctx.report('toolsPerSource', Object.fromEntries([...bySource].map(([source, tools]) => [source, tools.length])));
      return { out: samples.map((s) => ({ ...s, tools: bySource.get(s.tools[0]?.domain ?? '') ?? s.tools })) };
    },
  };
}
