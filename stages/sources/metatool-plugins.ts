import { existsSync } from 'node:fs';
import { z } from 'zod';
import { UserError } from '../../core/errors.ts';
import { Provenance, formatZodError } from '../../core/records.ts';
import type { ToolsConfig } from '../../core/tool-source.ts';
import { importedToolRecords } from './imported-tools.ts';
import { readJsonFile } from '../../core/source-files.ts';
import { sourceStage } from '../../core/stage.ts';

/** One OpenAI plugin record as MetaTool's `plugin_info.json` lists it. */
const PluginInfo = z.object({
  name_for_model: z.string(),
  name_for_human: z.string(),
  description_for_model: z.string(),
  description_for_human: z.string(),
});

/** A plugin record in toolkiln's spelling, with where it came from. */
export const PluginRecord = z.object({
  /** Position in the source file (0-based): names the record in messages. */
  index: z.number().int().min(0),
  nameForModel: z.string(),
  nameForHuman: z.string(),
  descriptionForModel: z.string(),
  descriptionForHuman: z.string(),
  file: z.string(),
  /** Where an imported tool came from (server, original name, schema hash); absent for plugin records. */
  provenance: Provenance.optional(),
});
export type PluginRecord = z.infer<typeof PluginRecord>;

/** Reads a `plugin_info.json`-shaped file: a JSON list of `{name_for_model, name_for_human, description_for_model, description_for_human}`. */
export function loadMetatoolPlugins(path: string, shown = path): PluginRecord[] {
  if (!existsSync(path)) throw new UserError(`plugin file not readable: ${shown} (ENOENT); set source.file in the toole config`);
  const json = readJsonFile(path, { shown, expected: 'a JSON list of plugin records' });
  if (!Array.isArray(json)) throw new UserError(`${shown}: expected a JSON list of plugin records, found ${json === null ? 'null' : typeof json}`);
  return json.map((item, index) => {
    const parsed = PluginInfo.safeParse(item);
    if (!parsed.success) {
      throw new UserError(`${shown}: plugin record ${index} is malformed: ${formatZodError(parsed.error)} (each record needs name_for_model, name_for_human, description_for_model, description_for_human as strings)`);
    }
    const p = parsed.data;
    return {
      index,
      nameForModel: p.name_for_model,
      nameForHuman: p.name_for_human,
      descriptionForModel: p.description_for_model,
      descriptionForHuman: p.description_for_human,
      file: shown,
    };
  });
}

export function loadMetatoolPluginsStage(options: { file: string }) {
  return sourceStage({
    name: 'load-metatool-plugins',
    version: 1,
    output: PluginRecord,
    load: (ctx) => loadMetatoolPlugins(ctx.resolvePath(options.file), options.file),
  });
}

/**
 * An imported tool library as ToolE's plugins: the tool's (OpenAI-valid) name is the model name,
 * its title or original name the human one, its one description both (MCP, OpenAPI and function
 * lists have no separate user-facing text); its provenance travels to the tool.
 */
export function importedPluginsStage(tools: ToolsConfig) {
  return sourceStage({
    name: 'load-imported-tools',
    version: 1,
    output: PluginRecord,
    load: (ctx) =>
      importedToolRecords(tools, ctx, (tool, index) => ({
        index,
        nameForModel: tool.name,
        nameForHuman: String(tool.provenance?.title ?? tool.provenance?.originalName ?? tool.name),
        descriptionForModel: tool.description,
        descriptionForHuman: tool.description,
        file: String(tool.provenance?.file ?? tool.provenance?.server ?? 'tools'),
        ...(tool.provenance ? { provenance: tool.provenance } : {}),
      })),
  });
}
