import type { BatchStage, RejectReason } from '../../core/stage.ts';
import { PluginRecord } from '../sources/metatool-plugins.ts';
import { TooleItem, toolItem, type TooleTool } from './records.ts';
import { contentTokens, squash } from './text.ts';

/**
 * Tool descriptions (paper §2.2.1 "Tool description", Appendix A.5): each plugin becomes a tool whose
 * definitive description is the user-facing one (the model-facing one is kept for the prompts).
 * Rejected, each with its reason: empty or unusable descriptions (A.3 "low-quality tool
 * descriptions"), tools the config excludes (A.3: tool-retrieval and all-in-one AI tools), and
 * plugins listed twice. Two different plugins sharing a model name keep both: the later one is
 * renamed `<name>_2` and tagged.
 */
export interface ToolDescriptionOptions {
  /** Fewer meaningful words than this makes a description unusable. */
  minWords: number;
  /** Tools to leave out, with why (A.3). */
  exclude: { tool: string; reason: string }[];
}

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

export function toolDescriptionsStage(options: ToolDescriptionOptions): BatchStage<PluginRecord, TooleItem> {
  return {
    kind: 'batch',
    name: 'toole-tool-descriptions',
    version: 1,
    input: PluginRecord,
    output: TooleItem,
    run: async (plugins, ctx) => {
      const excluded = new Map(options.exclude.map((e) => [e.tool, e.reason]));
      const out: TooleItem[] = [];
      const rejects: (RejectReason & { record: unknown })[] = [];
      const seen = new Map<string, PluginRecord>();
      const renamed: string[] = [];
      for (const plugin of plugins) {
        const recordId = `${plugin.file}#${plugin.index}:${plugin.nameForModel}`;
        if (!plugin.nameForModel.trim()) {
          rejects.push({ reason: 'empty_name', detail: `plugin record ${plugin.index} has no name_for_model`, recordId, record: plugin });
          continue;
        }
        const exclusion = excluded.get(plugin.nameForModel);
        if (exclusion !== undefined) {
          rejects.push({ reason: 'excluded_tool', detail: exclusion, recordId, record: plugin });
          continue;
        }
        const problem = descriptionProblem(plugin.descriptionForHuman, [plugin.nameForModel, plugin.nameForHuman], options.minWords);
        if (problem) {
          rejects.push({ ...problem, recordId, record: plugin });
          continue;
        }
        const earlier = seen.get(plugin.nameForModel);
        if (earlier && earlier.descriptionForHuman.trim() === plugin.descriptionForHuman.trim() && earlier.descriptionForModel.trim() === plugin.descriptionForModel.trim()) {
          rejects.push({ reason: 'duplicate_plugin', detail: `same name and descriptions as record ${earlier.index}`, recordId, duplicateOf: `tool:${earlier.nameForModel}`, record: plugin });
          continue;
        }
        let name = plugin.nameForModel;
        const tags: string[] = [];
        if (earlier) {
          for (let k = 2; seen.has(name); k++) name = `${plugin.nameForModel}_${k}`;
          tags.push('renamed:duplicate-name');
          renamed.push(`${plugin.nameForModel} → ${name} (record ${plugin.index})`);
        }
        seen.set(name, plugin);
        const tool: TooleTool = {
          name,
          nameForHuman: plugin.nameForHuman.trim(),
          description: plugin.descriptionForHuman.trim(),
          descriptionForModel: plugin.descriptionForModel.trim(),
          provenance: { source: 'metatool', id: plugin.nameForModel, file: plugin.file, index: plugin.index },
          checks: [],
          tags,
        };
        out.push(toolItem(tool));
      }
      if (renamed.length) ctx.log(`renamed ${renamed.length} plugin(s) whose model name another plugin already uses: ${renamed.join('; ')}`);
      ctx.report('toole.tools', { plugins: plugins.length, tools: out.length, renamed });
      return { out, rejects };
    },
  };
}
