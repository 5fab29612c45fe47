import type { ToolLibraryTally } from '../../core/pipeline.ts';
import { Sample, type ToolSpec } from '../../core/records.ts';
import type { ScanStage } from '../../core/stage.ts';
import type { MtuConfig } from './config.ts';
import { libraryLoader } from './library.ts';
import { allCalls, mtuMeta, toolKey, type MtuMeta } from './sample.ts';

/** The dataset's tool library: the documented tools the samples offer (hard-set renamings left out), made one sample at a time. */
export function mtuToolLibrary(): ToolLibraryTally {
  const library = new Map<string, ToolSpec>();
  // The samples offer the library's own tool objects (see candidateToolsStage): one met before is in already.
  const seen = new WeakSet<ToolSpec>();
  return {
    add: (sample) => {
      // Published samples, checked where they were made: only the one field is read (no schema pass per sample).
      if ((sample.meta as { mtu?: Pick<MtuMeta, 'renamed'> }).mtu?.renamed) return;
      for (const tool of sample.tools) {
        if (seen.has(tool)) continue;
        seen.add(tool);
        const key = toolKey(tool);
        if (!library.has(key)) library.set(key, tool);
      }
    },
    tools: () => [...library.values()].sort((a, b) => (toolKey(a) < toolKey(b) ? -1 : toolKey(a) > toolKey(b) ? 1 : 0)),
  };
}

/**
 * The tool list each sample shows a model, as in MTU-Eval: the documented tools of the services
 * the dialogue draws on (so the model must choose among related tools), at most `max` of them
 * with the gold tools always kept, plus `distractors` tools of other services, in a seeded order.
 * A hard-set variant keeps its renamed tool and leaves out withheld ones; a list left empty that
 * way gets two tools of other services. This is the last stage: only here do samples carry the
 * full tool entries.
 */
export function candidateToolsStage(options: MtuConfig['candidates']): ScanStage<Sample, Sample, CandidateState> {
  const loadLibrary = libraryLoader();
  return {
    kind: 'scan',
    name: 'candidate-tools',
    version: 1,
    input: Sample,
    output: Sample,
    // The library comes from the run folder, so nothing needs to be gathered from the samples first.
    begin: (ctx) => {
      const library = loadLibrary(ctx.runDir).list();
      const byPlugin = new Map<string, ToolSpec[]>();
      for (const tool of library) byPlugin.set(tool.plugin ?? '', [...(byPlugin.get(tool.plugin ?? '') ?? []), tool]);
      const byKey = new Map<string, ToolSpec>();
      for (const tool of library) byKey.set(toolKey(tool), tool);
      return { library, byPlugin, byKey, samples: 0, tools: 0 };
    },
    run: (sample, ctx) => {
      const { library, byPlugin, byKey } = ctx.state;
      // Its plugin's tool of that name (a key is the same for another plugin and name only when a name holds a slash).
      const find = (name: string, plugin: string | undefined) => {
        const tool = byKey.get(toolKey({ name, plugin }));
        return tool && tool.name === name && (tool.plugin ?? '') === (plugin ?? '') ? tool : undefined;
      };
      const rng = ctx.rng(); // keyed by the sample's id
      const meta = mtuMeta(sample);
      const { renamed = {}, withheld = [] } = meta;
      const gold = new Set(allCalls(sample).map((c) => c.tool));
      const own = new Map<string, ToolSpec>();
      for (const ref of sample.tools) {
        const documented = find(renamed[ref.name] ?? ref.name, ref.plugin);
        // The library's own object where the name is its own: records sharing it share its checked shape and its JSON text.
        own.set(ref.name, documented ? (documented.name === ref.name ? documented : { ...documented, name: ref.name }) : ref);
      }
      const shown = new Set([...own.values()].map((t) => renamed[t.name] ?? t.name));
      // The services the dialogue draws on (a variant may have no tool of one left in its list).
      const plugins = new Set([...meta.services, ...sample.tools.map((t) => t.plugin ?? '')]);
      for (const plugin of plugins) {
        for (const tool of byPlugin.get(plugin) ?? []) if (!shown.has(tool.name) && !withheld.includes(tool.name) && !own.has(tool.name)) own.set(tool.name, tool);
      }
      const needed: ToolSpec[] = [];
      const notNeeded: ToolSpec[] = [];
      for (const tool of own.values()) (gold.has(tool.name) ? needed : notNeeded).push(tool);
      const others = rng.shuffle(notNeeded);
      let tools = [...needed, ...others.slice(0, Math.max(0, options.max - needed.length))];
      const extra = options.distractors || (tools.length ? 0 : 2);
      if (extra) {
        const names = new Set([...tools.map((t) => t.name), ...withheld]);
        tools = [...tools, ...rng.sample(library.filter((t) => !plugins.has(t.plugin ?? '') && !names.has(t.name)), extra)];
      }
      tools = [...new Map(tools.map((t) => [t.name, t])).values()];
      ctx.state.samples++;
      ctx.state.tools += tools.length;
      return { ...sample, tools: rng.shuffle(tools) };
    },
    finish: (state, ctx) => {
      ctx.report('candidateTools', { library: state.library.length, meanPerSample: state.samples ? Math.round((state.tools / state.samples) * 100) / 100 : 0 });
    },
  };
}

interface CandidateState {
  library: ToolSpec[];
  byPlugin: Map<string, ToolSpec[]>;
  /** The library by plugin and name (toolKey). */
  byKey: Map<string, ToolSpec>;
  samples: number;
  tools: number;
}
