import type { ToolSpec } from '../../core/records.ts';
import { reject, type SourceReject, type StageContext } from '../../core/stage.ts';
import type { ToolsConfig } from '../../core/tool-source.ts';
import { importTools } from './tools/import.ts';
import { importTable, summariseImport } from './tools/report.ts';

/**
 * An imported tool library as a recipe's source: the `tools` block's sources imported (files read,
 * live servers listed), every tool a source refused — and every source that gave none — a reject
 * of the loading stage with the import's reason (`tool_import/<reason>`), the report attached to
 * the version (`reports/tools-import.json`, `reports/tools-import.md`) and its counts in the
 * manifest's stats (`toolsImport`). Each recipe makes its own input record of a tool with `make`.
 */
export const TOOLS_IMPORT_REPORT = 'tools-import.json';

export async function* importedToolRecords<O>(config: ToolsConfig, ctx: StageContext, make: (tool: ToolSpec, index: number) => O): AsyncGenerator<O | SourceReject> {
  const { tools, lines, sources } = await importTools(config.sources, { resolvePath: ctx.resolvePath, log: ctx.log });
  const summary = summariseImport(lines, tools);
  ctx.report('toolsImport', { ...summary, sources: sources.length });
  ctx.attach(TOOLS_IMPORT_REPORT, `${JSON.stringify({ summary, sources, lines }, null, 2)}\n`);
  ctx.attach('tools-import.md', `${importTable(summary)}\n`);
  for (const line of lines) {
    if (line.outcome === 'imported') continue;
    yield { ...reject(`tool_import/${line.reason ?? 'refused'}`, `${line.where}${line.tool ? ` (${line.tool})` : ''}: ${line.detail ?? ''}`, { recordId: line.tool ? `${line.server}/${line.tool}` : line.server }), record: null };
  }
  for (const [index, tool] of tools.entries()) yield make(tool, index);
}

/**
 * A tool as the recipes that call it see it: one that declares no result fields (most MCP tools:
 * their result is text content) returns one string field `result`, which is what such a tool
 * answers when executed (core/tool-server.ts) and what a simulated result holds.
 */
export function withTextResult(tool: ToolSpec): ToolSpec {
  if (Object.keys(tool.returns.properties).length) return tool;
  return { ...tool, returns: { type: 'object' as const, properties: { result: { type: 'string', description: `the text ${tool.name} answers` } }, required: ['result'] } };
}
