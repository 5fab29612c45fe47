import { readdirSync, statSync } from 'node:fs';
import { basename, extname, join, relative } from 'node:path';
import { UserError, messageOf } from '../../../core/errors.ts';
import { ToolSpec, formatZodError, isJsonObject } from '../../../core/records.ts';
import { readJsonFile, readJsonlValues, readSourceText } from '../../../core/source-files.ts';
import { McpStdioServer } from '../../../core/tool-server.ts';
import type { StdioToolSource, ToolFileSource, ToolSourceEntry } from '../../../core/tool-source.ts';
import { assembleLibrary, convertTool, isConverted, type ConvertedTool, type RawTool, type ReportLine } from './convert.ts';
import { isFunctionsDocument, readFunctionsDocument } from './functions.ts';
import { isMcpDocument, readMcpDocument, rawMcpTool } from './mcp.ts';
import { isOpenApiDocument, readOpenApiDocument } from './openapi.ts';

/**
 * Tool sources → one tool library and its report: files and folders (kind told by the config or
 * read from the content), live MCP servers over stdio. Every tool a source gives ends in the
 * library or in a report line saying why not, and so does a source that gives none.
 */

export interface ImportOptions {
  /** Resolves a configured path (relative to the current folder, then the project). */
  resolvePath?: (path: string) => string;
  /** Timeout of a live server's start and `tools/list`. */
  timeoutMs?: number;
  log?: (message: string) => void;
}

export interface ImportResult {
  tools: ToolSpec[];
  lines: ReportLine[];
  /** What each file or server gave. */
  sources: { source: string; kind: string; tools: number }[];
}

const TOOL_FILE = /\.(json|jsonl|ya?ml)$/i;

/** The files a path names: itself, or every tool file under a folder, in name order. */
function filesUnder(path: string, shown: string): { path: string; shown: string }[] {
  let stat;
  try {
    stat = statSync(path);
  } catch {
    throw new UserError(`tool source not found: ${shown} (give a file or folder of MCP, OpenAPI, OpenAI tool-list or tools.jsonl files)`);
  }
  if (!stat.isDirectory()) return [{ path, shown }];
  const files = (readdirSync(path, { recursive: true, encoding: 'utf8' }) as string[])
    .filter((name) => TOOL_FILE.test(name) && !/(^|[\\/])\./.test(name))
    .sort()
    .map((name) => ({ path: join(path, name), shown: join(shown, name) }))
    .filter((file) => statSync(file.path).isFile());
  if (!files.length) throw new UserError(`${shown}: the folder holds no .json, .jsonl, .yaml or .yml file to import tools from`);
  return files;
}

async function parseDocument(path: string, shown: string): Promise<unknown> {
  if (/\.ya?ml$/i.test(path)) {
    // yaml is loaded by the first YAML file read: a run (a recipe's tool import) without one does not load it.
    const { parse: parseYaml } = await import('yaml');
    try {
      return parseYaml(readSourceText(path, shown));
    } catch (error) {
      throw new UserError(`${shown}: not valid YAML (${messageOf(error).split('\n')[0]})`);
    }
  }
  return readJsonFile(path, { shown, expected: 'an MCP tools/list answer, an OpenAPI document or an OpenAI tool list' });
}

/** A tools.jsonl line (a canonical ToolSpec, or the line form of a published version) as a converted tool. */
function libraryTool(value: unknown, where: string, file: string): ConvertedTool | ReportLine {
  const record = isJsonObject(value) ? { ...value } : value;
  if (isJsonObject(record)) {
    // The line form of a published version carries schemas and provenance as JSON text.
    for (const key of ['parameters', 'returns', 'provenance'] as const) if (typeof record[key] === 'string') record[key] = JSON.parse(record[key] as string);
    if (record.isAction === 'yes' || record.isAction === 'no') record.isAction = record.isAction === 'yes';
    else if (record.isAction === 'unknown') delete record.isAction;
    for (const key of ['domain', 'plugin'] as const) if (record[key] === '') delete record[key];
    if (record.provenance === null) delete record.provenance;
  }
  const parsed = ToolSpec.safeParse(record);
  const name = isJsonObject(value) && typeof value.name === 'string' ? value.name : '';
  const server = (isJsonObject(record) && isJsonObject(record.provenance) && typeof record.provenance.server === 'string' && record.provenance.server) || (isJsonObject(record) && typeof record.plugin === 'string' && record.plugin) || file;
  if (!parsed.success) return { server, where, tool: name, outcome: 'refused', reason: 'not-a-tool-spec', detail: formatZodError(parsed.error), notes: [] };
  const tool = parsed.data;
  const provenance = { source: 'library', ...tool.provenance, server, originalName: (tool.provenance?.originalName as string | undefined) ?? tool.name };
  return { tool: { ...tool, provenance }, line: { server, where, tool: provenance.originalName, name: tool.name, outcome: 'imported', notes: ['from-library'] } };
}

/** The raw tools (or converted ones, for a library) and report lines of one file. */
async function readToolFile(source: ToolFileSource, file: { path: string; shown: string }): Promise<{ items: (ConvertedTool | ReportLine)[]; kind: string }> {
  const ext = extname(file.path).toLowerCase();
  if (source.kind === 'library' || (source.kind === 'auto' && ext === '.jsonl')) {
    const items = readJsonlValues(file.path, { shown: file.shown, expected: 'one tool (ToolSpec JSON) per line' }).map(({ line, value }) => libraryTool(value, `${file.shown}:${line}`, source.name ?? basename(file.path)));
    return { items, kind: 'library' };
  }
  const doc = await parseDocument(file.path, file.shown);
  const kind = source.kind !== 'auto' ? source.kind : isOpenApiDocument(doc) ? 'openapi' : isMcpDocument(doc) ? 'mcp' : isFunctionsDocument(doc) ? 'functions' : undefined;
  if (!kind) throw new UserError(`${file.shown}: cannot tell what tools it holds: expected an MCP tools/list answer ({"tools": […]}) or TOUCAN server file, an OpenAPI 3 document ("openapi": "3.…"), or an OpenAI tool list ([{"type": "function", …}]); or give "kind"`);
  const read = kind === 'openapi' ? readOpenApiDocument : kind === 'mcp' ? readMcpDocument : readFunctionsDocument;
  return { items: read(doc, file.shown, source.name).map((entry) => ('outcome' in entry ? entry : convertTool(entry))), kind };
}

async function readStdioServer(source: StdioToolSource, options: ImportOptions): Promise<(ConvertedTool | ReportLine)[]> {
  const server = new McpStdioServer(source, { timeoutMs: options.timeoutMs ?? 20_000, restarts: 0, log: options.log });
  try {
    const tools = await server.listTools();
    if (!tools.length) return [{ server: source.name, where: `stdio server "${source.name}"`, tool: '', outcome: 'no-tools', reason: 'empty-tools-list', detail: 'the server lists no tools', notes: [] }];
    return tools.map((tool, i) => convertTool(rawMcpTool(tool, { server: source.name, where: `stdio server "${source.name}": tools[${i}]`, domain: source.name })));
  } catch (error) {
    if (error instanceof UserError) throw error;
    throw new UserError(`MCP server "${source.name}": tools/list failed: ${messageOf(error)}`);
  } finally {
    await server.close();
  }
}

/** Imports every source into one library (names unique across servers) with the report's lines. */
export async function importTools(entries: ToolSourceEntry[], options: ImportOptions = {}): Promise<ImportResult> {
  const resolvePath = options.resolvePath ?? ((path: string) => path);
  const bySource: { source: string; items: (ConvertedTool | ReportLine)[] }[] = [];
  const sources: ImportResult['sources'] = [];
  for (const entry of entries) {
    if (entry.kind === 'mcp-stdio') {
      const got = await readStdioServer(entry, options);
      sources.push({ source: `stdio:${entry.name}`, kind: 'mcp-stdio', tools: got.filter(isConverted).length });
      bySource.push({ source: `stdio:${entry.name}`, items: got });
      continue;
    }
    for (const file of filesUnder(resolvePath(entry.path), entry.path)) {
      const { items: got, kind } = await readToolFile(entry, file);
      sources.push({ source: file.shown, kind, tools: got.filter(isConverted).length });
      bySource.push({ source: file.shown, items: got });
    }
  }
  const { tools, lines } = assembleLibrary(distinctServers(bySource).flatMap((source) => source.items));
  return { tools, lines, sources };
}

const serverOf = (item: ConvertedTool | ReportLine) => (isConverted(item) ? String(item.tool.provenance?.server) : item.server);

/**
 * Two sources that give the same server name (two TOUCAN servers both called "Weather") are two
 * servers: each such name gets its source's file name, `Weather (0166.weather.json)`, so their tools
 * stay apart.
 */
function distinctServers(bySource: { source: string; items: (ConvertedTool | ReportLine)[] }[]): typeof bySource {
  const sourcesByServer = new Map<string, Set<string>>();
  for (const { source, items } of bySource) for (const item of items) sourcesByServer.set(serverOf(item), (sourcesByServer.get(serverOf(item)) ?? new Set()).add(source));
  return bySource.map(({ source, items }) => ({
    source,
    items: items.map((item) => {
      const server = serverOf(item);
      if ((sourcesByServer.get(server)?.size ?? 0) < 2) return item;
      const renamed = `${server} (${basename(source)})`;
      if (!isConverted(item)) return { ...item, server: renamed };
      return { tool: { ...item.tool, plugin: renamed, provenance: { ...item.tool.provenance!, server: renamed } }, line: { ...item.line, server: renamed, notes: [...item.line.notes, 'server-name-shared'] } };
    }),
  }));
}

/** `relative` for messages: a path under the current folder without its prefix. */
export function shownPath(path: string, cwd: string): string {
  const rel = relative(cwd, path);
  return rel && !rel.startsWith('..') ? rel : path;
}
