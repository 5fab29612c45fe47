import { Sample, type ToolSpec } from '../../core/records.ts';
import { reject, type ScanStage } from '../../core/stage.ts';
import { mapCalls } from '../tool-merge.ts';
import { distinguishedToolNames } from './names.ts';
import { toolKey } from './sample.ts';

/** A tool renamed because another plugin's tool has its name. */
interface DistinguishedTool {
  name: string;
  originalName: string;
  plugin?: string;
}

interface UnifiedTools {
  /** Key of a created tool (plugin and name) → its unified spec, under its distinguished name. */
  union: Map<string, ToolSpec>;
  distinguished: DistinguishedTool[];
}

/**
 * The tools as created, one spec per plugin and name. Grammar- and LLM-made tools are created per
 * dialogue, each knowing only the parameters of its own calls; here every sample's copy gets the
 * union of them, so that clustering compares whole tools. A name that several plugins' tools share
 * (compared without case: SGD's services `Restaurants_1` and `Restaurants_2` both have a
 * `FindRestaurants`) would make a call, a candidate list or a review question mean either: each
 * such tool takes a name distinguished by its plugin or source (`FindRestaurants1`, see
 * distinguishedToolNames), everywhere the sample names it, and keeps the name it was created
 * with in `provenance.originalName`. Reports the count of created tools (`toolsCreated`: by
 * plugin and name, distinct names, the renamed ones) for the before/after figures.
 */
export function unifyToolSpecsStage(): ScanStage<Sample, Sample, UnifiedTools> {
  return {
    kind: 'scan',
    name: 'unify-tool-specs',
    version: 2,
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
      const created = [...union.values()];
      const distinguished: DistinguishedTool[] = [];
      for (const [i, name] of distinguishedToolNames(created.map((t) => ({ name: t.name, plugin: t.plugin, source: t.provenance?.source })))) {
        const tool = created[i];
        distinguished.push({ name, originalName: tool.name, ...(tool.plugin ? { plugin: tool.plugin } : {}) });
        union.set(toolKey(tool), { ...tool, name, provenance: { source: tool.plugin ?? '', ...tool.provenance, originalName: tool.name } });
      }
      distinguished.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      ctx.report('toolsCreated', { tools: union.size, names: new Set(created.map((t) => t.name)).size, distinguished });
      if (distinguished.length) ctx.log(`${distinguished.length} tools renamed apart (another plugin's tool has their name): ${distinguished.map((d) => `${d.plugin}/${d.originalName} → ${d.name}`).join(', ')}`);
      return { union, distinguished };
    },
    run: (sample, { state }) => {
      const renamed = new Map<string, string>();
      for (const tool of sample.tools) {
        const unified = state.union.get(toolKey(tool))!;
        if (unified.name === tool.name) continue;
        // Two same-named tools in one sample: its calls name the tool alone, so which one each means is unknown.
        if (renamed.has(tool.name)) return reject('ambiguous_tool_name', `the sample offers two tools named ${tool.name} (plugins ${sample.tools.filter((t) => t.name === tool.name).map((t) => t.plugin).join(', ')}); its calls cannot say which they use`);
        renamed.set(tool.name, unified.name);
      }
      const tools = sample.tools.map((t) => state.union.get(toolKey(t))!);
      if (!renamed.size) return { ...sample, tools };
      const out = mapCalls(sample, (call) => (renamed.has(call.tool) ? { ...call, tool: renamed.get(call.tool)! } : call));
      // A thought written when the tool was created may name it.
      const pattern = new RegExp(`\\b(${[...renamed.keys()].map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})\\b`, 'g');
      const dialogue = out.dialogue.map((turn) => {
        const thought = turn.thought?.replace(pattern, (name) => renamed.get(name)!);
        return thought === turn.thought ? turn : { ...turn, thought };
      });
      return { ...out, tools, dialogue };
    },
  };
}
