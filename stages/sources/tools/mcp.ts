import { basename } from 'node:path';
import { UserError } from '../../../core/errors.ts';
import type { RawTool, ReportLine } from './convert.ts';

/**
 * MCP `tools/list` answers read from files: the plain result `{"tools": […]}` (or the JSON-RPC
 * response around it), and TOUCAN's server files, which hold the answer under
 * `metadata.remote_server_response.tools` with snake-case `input_schema`. A TOUCAN server whose
 * answer failed (`is_success: false`) gives no tools: it is one `no-tools` line of the report with
 * the error TOUCAN recorded; its `server_info_crawled.tools` are a web page's scrape, not a
 * `tools/list` answer, and are not read as tools (the line counts them).
 */

const isObject = (value: unknown): value is Record<string, unknown> => !!value && typeof value === 'object' && !Array.isArray(value);

/** Whether a parsed document is an MCP tools/list answer or a TOUCAN server file. */
export function isMcpDocument(doc: unknown): boolean {
  if (!isObject(doc)) return false;
  if (isObject(doc.metadata) && isObject(doc.metadata.remote_server_response)) return true;
  const result = isObject(doc.result) ? doc.result : doc;
  return Array.isArray(result.tools) && result.tools.every((tool) => !isObject(tool) || tool.type !== 'function');
}

/** One MCP tool object (`name`, `description`, `inputSchema` or `input_schema`, `outputSchema`, `annotations`, `title`). */
export function rawMcpTool(tool: unknown, context: { server: string; where: string; file?: string; domain?: string }): RawTool {
  const t = isObject(tool) ? tool : {};
  return {
    kind: 'mcp',
    server: context.server,
    where: context.where,
    file: context.file,
    originalName: isObject(tool) ? t.name : undefined,
    description: t.description,
    title: typeof t.title === 'string' ? t.title : isObject(t.annotations) && typeof t.annotations.title === 'string' ? t.annotations.title : undefined,
    inputSchema: t.inputSchema ?? t.input_schema,
    outputSchema: t.outputSchema ?? t.output_schema,
    annotations: t.annotations,
    domain: context.domain,
  };
}

/** The tools of an MCP file, or the one line saying why it has none. `name` overrides the server name. */
export function readMcpDocument(doc: unknown, shown: string, name?: string): (RawTool | ReportLine)[] {
  const file = basename(shown);
  if (!isObject(doc)) throw new UserError(`${shown}: not an MCP tools/list answer (expected {"tools": […]} or a TOUCAN server file)`);
  if (isObject(doc.metadata) && isObject(doc.metadata.remote_server_response)) return readToucanServer(doc, shown, file, name);
  const result = isObject(doc.result) ? doc.result : doc;
  if (!Array.isArray(result.tools)) throw new UserError(`${shown}: no "tools" list (expected the tools/list result {"tools": […]})`);
  const server = name ?? (isObject(doc.serverInfo) && typeof doc.serverInfo.name === 'string' ? doc.serverInfo.name : file.replace(/\.(json|ya?ml)$/i, ''));
  return result.tools.map((tool, i) => rawMcpTool(tool, { server, where: `${shown}: tools[${i}]`, file, domain: server }));
}

function readToucanServer(doc: Record<string, unknown>, shown: string, file: string, name?: string): (RawTool | ReportLine)[] {
  const metadata = doc.metadata as Record<string, unknown>;
  const response = metadata.remote_server_response as Record<string, unknown>;
  const crawled = isObject(metadata.server_info_crawled) ? metadata.server_info_crawled : {};
  const server = name ?? [metadata.server_name, crawled.name].find((v): v is string => typeof v === 'string' && v.trim() !== '') ?? file;
  const labels = isObject(doc.labels) ? doc.labels : {};
  const label = typeof labels.primary_label === 'string' ? labels.primary_label : undefined;
  const tools = Array.isArray(response.tools) ? response.tools : [];
  if (response.is_success === false || !tools.length) {
    const scraped = Array.isArray(crawled.tools) ? crawled.tools.length : 0;
    const why = response.is_success === false ? `TOUCAN could not list its tools (${String(response.error ?? 'no error recorded')})` : 'its tools/list answer is empty';
    return [{ server, where: shown, tool: '', outcome: 'no-tools', reason: response.is_success === false ? 'server-not-listed' : 'empty-tools-list', detail: `${why}${scraped ? `; ${scraped} tool(s) scraped from its web page are not a tools/list answer and were not read` : ''}`, notes: [] }];
  }
  // Servers are grouped by their Smithery label, so tools of one kind of server share a domain.
  const domain = label ? `${label}/${server}` : server;
  // TOUCAN generates no data from a server whose tool calls it judged invalid: flagged, not dropped (the schemas are sound).
  const flags = labels.is_remote_tool_valid === false ? ['toucan-remote-tool-invalid'] : [];
  return tools.map((tool, i) => ({ ...rawMcpTool(tool, { server, where: `${shown}: metadata.remote_server_response.tools[${i}]`, file, domain }), flags }));
}
