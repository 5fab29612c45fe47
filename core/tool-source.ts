import { z } from 'zod';

/**
 * The `tools` block any recipe accepts: where an imported tool library comes from. One shape for
 * every recipe, so a curator writes it once and points any recipe at the same tools:
 *
 *   "tools": { "sources": ["tools.jsonl", {"kind": "mcp", "path": "servers/"}, {"kind": "mcp-stdio", "command": "node", "args": ["server.js"]}] }
 *
 * A source given as a plain path is read by what the file holds (a tool library written by
 * `toolkiln tools import`, an MCP `tools/list` answer or a TOUCAN server file, an OpenAPI document,
 * an OpenAI tool list); a folder is every such file under it. What each recipe takes from the
 * tools is the recipe's business (docs/sources.md).
 */

export const TOOL_SOURCE_KINDS = ['auto', 'library', 'mcp', 'openapi', 'functions'] as const;
export type ToolFileKind = (typeof TOOL_SOURCE_KINDS)[number];

export const ToolFileSource = z
  .object({
    kind: z.enum(TOOL_SOURCE_KINDS).default('auto').describe('what the file holds: auto (read from its content), library (toolkiln tools.jsonl), mcp (tools/list answer or TOUCAN server file), openapi, functions (OpenAI tool list)'),
    path: z.string().min(1).describe('a file, or a folder of such files (read in name order, at any depth)'),
    name: z.string().min(1).optional().describe('the server or spec name the tools are credited to (default: the one the file gives, else the file name)'),
  })
  .strict();
export type ToolFileSource = z.infer<typeof ToolFileSource>;

export const StdioToolSource = z
  .object({
    kind: z.literal('mcp-stdio'),
    name: z.string().min(1).describe('the server name the tools are credited to and calls are sent to'),
    command: z.string().min(1).describe('the program that runs the MCP server (its stdin/stdout speak MCP)'),
    args: z.array(z.string()).default([]).describe('its arguments'),
    cwd: z.string().optional().describe('its working folder (default: the current one)'),
    env: z.record(z.string(), z.string()).default({}).describe('environment variables added to the inherited ones'),
  })
  .strict();
export type StdioToolSource = z.infer<typeof StdioToolSource>;

export const ToolSourceEntry = z.union([z.string().min(1).transform((path): ToolFileSource => ({ kind: 'auto', path })), ToolFileSource, StdioToolSource]);
export type ToolSourceEntry = ToolFileSource | StdioToolSource;

export const ToolExecution = z
  .object({
    enabled: z.boolean().default(true).describe('execute the calls of generated samples on the live (mcp-stdio) servers; false: observations are simulated'),
    timeoutMs: z.number().int().min(1).default(20_000).describe('a call that has not answered by then fails with reason tool_timeout'),
    restarts: z.number().int().min(0).default(2).describe('times a server that exited is started again (the record retried) before its records are rejected'),
  })
  .strict();
export type ToolExecution = z.infer<typeof ToolExecution>;

export const ToolsConfig = z
  .object({
    sources: z.array(ToolSourceEntry).min(1).describe('where the tools come from: paths (kind read from the content) or {kind, path} / {kind: "mcp-stdio", name, command, args}'),
    execute: ToolExecution.prefault({}).describe('calls against live servers (mcp-stdio sources)'),
  })
  .strict();
export type ToolsConfig = z.infer<typeof ToolsConfig>;

/** The optional block a recipe's config schema adds: `tools: ToolsConfigField`. Unset: the recipe's own domain input. */
export const ToolsConfigField = ToolsConfig.optional().describe('an imported tool library as the domain (docs/sources.md, "Tools from MCP servers, OpenAPI and function lists"); unset: the recipe\'s own inputs');

/** The files a tools block reads, for the fingerprint (a live server is not a file: its tools are hashed as imported). */
export function toolSourceFiles(config: ToolsConfig | undefined): string[] {
  return (config?.sources ?? []).flatMap((source) => ('path' in source ? [source.path] : []));
}
