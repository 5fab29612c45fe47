import type { ToolSpec } from '../../core/records.ts';
import type { Rng } from '../../core/rng.ts';
import type { StageContext } from '../../core/stage.ts';
import type { ToolsConfig } from '../../core/tool-source.ts';
import { withTextResult } from '../sources/imported-tools.ts';
import { importTools } from '../sources/tools/import.ts';

/**
 * An imported tool library as ToolTalk's plugins: each server (MCP server, OpenAPI spec, function
 * list) is a plugin, its tools the plugin's tools, as ToolTalk groups its 28 tools into 7 plugins.
 * A tool that declares no result fields returns one text field `result` (what it answers).
 */

export interface ToolTalkLibrary {
  tools: ToolSpec[];
  byName: Map<string, ToolSpec>;
  /** Plugin (server) → its tools, in library order. */
  byPlugin: Map<string, ToolSpec[]>;
}

export function pluginOf(tool: ToolSpec): string {
  return tool.plugin ?? String(tool.provenance?.server ?? tool.domain ?? 'tools');
}

export function libraryOf(imported: readonly ToolSpec[]): ToolTalkLibrary {
  const tools = imported.map(withTextResult);
  const byPlugin = new Map<string, ToolSpec[]>();
  for (const tool of tools) {
    const plugin = pluginOf(tool);
    const listed = byPlugin.get(plugin);
    if (listed) listed.push(tool);
    else byPlugin.set(plugin, [tool]);
  }
  return { tools, byName: new Map(tools.map((tool) => [tool.name, tool])), byPlugin };
}

/**
 * The library of a `tools` block, imported once for all the stages of one recipe instance that ask
 * for it (a resumed run, or a worker, imports it again: the same sources give the same library).
 */
export function libraryLoader(config: ToolsConfig): (ctx: Pick<StageContext, 'resolvePath' | 'log'>) => Promise<ToolTalkLibrary> {
  let loading: Promise<ToolTalkLibrary> | undefined;
  return (ctx) => (loading ??= importTools(config.sources, { resolvePath: ctx.resolvePath, log: ctx.log }).then(({ tools }) => libraryOf(tools)));
}

/** The tools of some plugins, in library order. */
export function toolsOfPlugins(library: ToolTalkLibrary, plugins: readonly string[]): ToolSpec[] {
  return plugins.flatMap((plugin) => library.byPlugin.get(plugin) ?? []);
}

/**
 * ToolTalk prompts for every 3-plugin subset and every tool in it; over hundreds of servers that is
 * millions of prompts, so each tool gets one subset: its own plugin and up to two others, drawn
 * (seeded by the tool) from the plugins of the same kind (the first part of the tools' domain, a
 * TOUCAN server's Smithery label) when there are enough, else from all.
 */
export function pluginsFor(tool: ToolSpec, library: ToolTalkLibrary, rng: Rng): string[] {
  const own = pluginOf(tool);
  const kind = (t: ToolSpec) => (t.domain ?? '').split('/')[0];
  const others = [...library.byPlugin.keys()].filter((plugin) => plugin !== own);
  const sameKind = others.filter((plugin) => kind(library.byPlugin.get(plugin)![0]) === kind(tool));
  const pool = sameKind.length >= 2 ? sameKind : others;
  return [own, ...rng.sample(pool, 2)].sort();
}

/** The documentation a prompt shows: per tool its description, parameters (JSON Schema) and result fields. */
export function libraryDocs(tools: readonly ToolSpec[]): string {
  return tools
    .map((tool) => {
      const required = new Set(tool.parameters.required);
      const params = Object.entries(tool.parameters.properties).map(([name, schema]) => {
        const { description, ...rest } = schema as { description?: string };
        return `    ${name} (${JSON.stringify(rest)}${required.has(name) ? ', required' : ''})${description ? `: ${description}` : ''}`;
      });
      const returns = Object.entries(tool.returns.properties).map(([name, schema]) => `    ${name}${(schema as { description?: string }).description ? `: ${(schema as { description?: string }).description}` : ''}`);
      const action = tool.isAction === true ? ', action' : tool.isAction === false ? ', read-only' : '';
      return [`${tool.name} (${pluginOf(tool)}${action}): ${tool.description || '(no description)'}`, '  parameters:', ...(params.length ? params : ['    none']), '  returns:', ...returns].join('\n');
    })
    .join('\n\n');
}
