import { z } from 'zod';
import { UserError } from '../../core/errors.ts';
import { formatZodError, type Sample, type ToolSpec } from '../../core/records.ts';
import { readJsonlValues } from '../../core/source-files.ts';
import { ApiSpec, toolSpecOfApi } from '../nestools/api-spec.ts';
import { fromSealToolsRecord } from '../nestools/import-export.ts';
import { existsSync } from 'node:fs';

/**
 * Seal-Tools sources: the tool library `tool.jsonl` (`{api_name, api_description, field,
 * parameters, required, responses}` per line) and call records `{id, query, calling}`.
 */

const SealTool = ApiSpec.extend({ field: z.string() });

export interface SealToolsLibrary {
  tools: ToolSpec[];
  byName: Map<string, ToolSpec>;
  /** Lines whose tool name an earlier line already defined (the first one is kept). */
  duplicates: { line: number; name: string }[];
}

export function loadSealToolsLibrary(path: string): SealToolsLibrary {
  if (!existsSync(path)) throw new UserError(`Seal-Tools tool library not found: ${path} (set sealToolsFile in the config)`);
  const tools: ToolSpec[] = [];
  const byName = new Map<string, ToolSpec>();
  const duplicates: SealToolsLibrary['duplicates'] = [];
  for (const { line, value } of readJsonlValues(path, { expected: 'one Seal-Tools tool object per line' })) {
    const parsed = SealTool.safeParse(value);
    if (!parsed.success) throw new UserError(`${path}:${line}: not a Seal-Tools tool: ${formatZodError(parsed.error)}`);
    let tool: ToolSpec;
    try {
      tool = toolSpecOfApi(parsed.data, { source: 'seal-tools', id: parsed.data.api_name, file: 'tool.jsonl' }, parsed.data.field);
    } catch (error) {
      throw new UserError(`${path}:${line} (${parsed.data.api_name}): ${(error as Error).message}`);
    }
    if (byName.has(tool.name)) {
      duplicates.push({ line, name: tool.name });
      continue;
    }
    byName.set(tool.name, tool);
    tools.push(tool);
  }
  return { tools, byName, duplicates };
}

/** Seal-Tools call records (dev / test files) as Samples, their tools taken from `library`. */
export function loadSealToolsRecords(path: string, library: SealToolsLibrary, split = 'test'): Sample[] {
  const file = path.split('/').pop();
  return readJsonlValues(path).map(({ line, value }) => fromSealToolsRecord(value, library.byName, { file, split, where: `${path}:${line}` }));
}
