import { reject, type ScanStage } from '../../core/stage.ts';
import { PluginRecord } from '../sources/metatool-plugins.ts';
import { TooleItem, toolItem, type TooleTool } from './records.ts';
import { contentTokens, squash } from './text.ts';

/**
 * Tool descriptions (paper §2.2.1 "Tool description", Appendix A.5): each plugin becomes a tool whose
 * definitive description is the user-facing one (the model-facing one is kept for the prompts).
 * Rejected, each with its reason: empty or unusable descriptions (A.3 "low-quality tool
 * descriptions"), tools the config excludes (A.3: tool-retrieval and all-in-one AI tools), and
 * plugins listed twice. Two different plugins sharing a model name, also in other letter case
 * (`Weather` and `weather`: MetaTool's prompts and a model's answer name tools without regard to
 * case), keep both: the later one is renamed `<name>_2` and tagged, its provenance keeping the
 * name it had.
 */
export interface ToolDescriptionOptions {
  /** Fewer meaningful words than this makes a description unusable. */
  minWords: number;
  /** Tools to leave out, with why (A.3). */
  exclude: { tool: string; reason: string }[];
}

/** The attachment (under the version's reports/) holding the plugin records the tools were made from. */
export const PLUGIN_INFO_REPORT = 'toole-plugin-info.json';

const PLACEHOLDER = /^(?:todo|tbd|n\/?a|none|null|undefined|test(?:ing)?|description|placeholder|lorem ipsum\b.*|-+|\.+|\?+)$/i;

/** Why a description cannot be used, or null when it can. */
export function descriptionProblem(description: string, names: string[], minWords: number): { reason: string; detail: string } | null {
  const text = description.trim();
  if (!text) return { reason: 'empty_description', detail: 'the user-facing description is empty' };
  if (PLACEHOLDER.test(text)) return { reason: 'unusable_description', detail: `the description is a placeholder: "${text}"` };
  if (names.some((name) => squash(name) && squash(name) === squash(text))) return { reason: 'unusable_description', detail: 'the description only repeats the tool name' };
  const words = contentTokens(text).length;
  if (words < minWords) return { reason: 'unusable_description', detail: `the description has ${words} meaningful word(s), fewer than ${minWords}: "${text}"` };
  return null;
}

/** What a later plugin of the same model name is compared with. */
interface SeenPlugin {
  /** The tool name it took. */
  name: string;
  index: number;
  nameForModel: string;
  nameForHuman: string;
  descriptionForHuman: string;
  descriptionForModel: string;
}

interface DescriptionsState {
  /** Tool name in lower case → the plugin that took it. */
  seen: Map<string, SeenPlugin>;
  renamed: string[];
  plugins: number;
  tools: number;
}

const caseless = (name: string) => name.toLowerCase();

/** Decides plugin by plugin in input order; keeps only the names and descriptions of the plugins already taken. */
export function toolDescriptionsStage(options: ToolDescriptionOptions): ScanStage<PluginRecord, TooleItem, DescriptionsState> {
  const excluded = new Map(options.exclude.map((e) => [e.tool, e.reason]));
  return {
    kind: 'scan',
    name: 'toole-tool-descriptions',
    version: 3,
    input: PluginRecord,
    output: TooleItem,
    begin: () => ({ seen: new Map(), renamed: [], plugins: 0, tools: 0 }),
    keyOf: (plugin) => `${plugin.file}#${plugin.index}:${plugin.nameForModel}`,
    run: (plugin, ctx) => {
      const state = ctx.state;
      state.plugins++;
      if (!plugin.nameForModel.trim()) return reject('empty_name', `plugin record ${plugin.index} has no name_for_model`);
      const exclusion = excluded.get(plugin.nameForModel);
      if (exclusion !== undefined) return reject('excluded_tool', exclusion);
      const problem = descriptionProblem(plugin.descriptionForHuman, [plugin.nameForModel, plugin.nameForHuman], options.minWords);
      if (problem) return reject(problem.reason, problem.detail);
      const earlier = state.seen.get(caseless(plugin.nameForModel));
      if (earlier && earlier.descriptionForHuman === plugin.descriptionForHuman.trim() && earlier.descriptionForModel === plugin.descriptionForModel.trim()) {
        return reject('duplicate_plugin', `same name and descriptions as record ${earlier.index}`, { duplicateOf: `tool:${earlier.name}` });
      }
      let name = plugin.nameForModel;
      const tags: string[] = [];
      if (earlier) {
        for (let k = 2; state.seen.has(caseless(name)); k++) name = `${plugin.nameForModel}_${k}`;
        tags.push('renamed:duplicate-name');
        state.renamed.push(`${plugin.nameForModel} → ${name} (record ${plugin.index})`);
      }
      state.seen.set(caseless(name), { name, index: plugin.index, nameForModel: plugin.nameForModel, nameForHuman: plugin.nameForHuman.trim(), descriptionForHuman: plugin.descriptionForHuman.trim(), descriptionForModel: plugin.descriptionForModel.trim() });
      state.tools++;
      const tool: TooleTool = {
        name,
        nameForHuman: plugin.nameForHuman.trim(),
        description: plugin.descriptionForHuman.trim(),
        descriptionForModel: plugin.descriptionForModel.trim(),
        provenance: plugin.provenance ?? { source: 'metatool', id: plugin.nameForModel, file: plugin.file, index: plugin.index },
        checks: [],
        tags,
      };
      return toolItem(tool);
    },
    finish: ({ seen, renamed, plugins, tools }, ctx) => {
      // The plugins taken, in MetaTool's plugin_info.json shape under their tool names (the export writes those behind the version's tools).
      const info = [...seen.values()].map((p) => ({ name_for_model: p.name, name_for_human: p.nameForHuman, description_for_model: p.descriptionForModel, description_for_human: p.descriptionForHuman }));
      ctx.attach(PLUGIN_INFO_REPORT, `${JSON.stringify(info, null, 2)}\n`);
      if (renamed.length) ctx.log(`renamed ${renamed.length} plugin(s) whose model name another plugin already uses: ${renamed.join('; ')}`);
      ctx.report('toole.tools', { plugins, tools, renamed });
    },
  };
}
