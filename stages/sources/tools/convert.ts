import { hashOf } from '../../../core/hash.ts';
import { ToolSpec, formatZodError } from '../../../core/records.ts';
import { checkJsonSchema } from '../../../core/json-schema.ts';
import { OPENAI_NAME, openAiName, qualifiedName } from './names.ts';
import { SchemaRefused, convertObjectSchema, type SchemaContext } from './schema.ts';

/**
 * One tool as a source gave it, and how it became a ToolSpec: the conversion every source kind
 * shares (schemas, names, descriptions, action hints), with a report line for every tool.
 */

export type ToolSourceKind = 'mcp' | 'openapi' | 'functions' | 'library';

export interface RawTool {
  kind: ToolSourceKind;
  /** The server (MCP), the spec's title (OpenAPI), or the file's name (function lists). */
  server: string;
  /** Where it was read: `file: tools[3]`, `file: GET /pets`, `stdio server "notes"`. */
  where: string;
  file?: string;
  originalName: unknown;
  description?: unknown;
  title?: string;
  inputSchema: unknown;
  outputSchema?: unknown;
  /** The document `#/…` references point into (default: the tool's own input / output schema). */
  root?: unknown;
  annotations?: unknown;
  /** Whether calling it changes state, when the source says so other than by annotations (an HTTP method). */
  isAction?: boolean;
  domain?: string;
  /** What the source says of the tool that a curator may filter by (`toucan-remote-tool-invalid`): report notes and provenance flags. */
  flags?: string[];
  /** What the provenance's schema hash is taken of, when not the two schemas (an OpenAPI operation object). */
  original?: unknown;
  /** Further provenance fields (an OpenAPI operation's method and path). */
  extra?: Record<string, unknown>;
}

/** What happened to one tool (or one source that gave none). */
export interface ReportLine {
  server: string;
  where: string;
  /** The name the source gave (`""` for a source line about no tool). */
  tool: string;
  /** The name in the library (imported tools). */
  name?: string;
  outcome: 'imported' | 'refused' | 'no-tools';
  /** Refused / no-tools: why (one code). */
  reason?: string;
  detail?: string;
  /** Imported: every change made on the way and every flag raised (`no-description`, `anyOf-kept`, `renamed-across-servers`, …). */
  notes: string[];
}

export interface ConvertedTool {
  tool: ToolSpec;
  line: ReportLine;
}

const MCP_HINTS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint', 'title'];

/**
 * Whether calling the tool changes state, from MCP's annotations: `readOnlyHint: true` → no;
 * `readOnlyHint: false` or `destructiveHint: true` → yes; neither → unknown (the source's own
 * answer, such as an HTTP method, otherwise).
 */
export function actionFromAnnotations(annotations: unknown, notes: string[]): boolean | undefined {
  if (!annotations || typeof annotations !== 'object' || Array.isArray(annotations)) return undefined;
  const a = annotations as Record<string, unknown>;
  if (Object.keys(a).some((key) => !MCP_HINTS.includes(key))) notes.push('annotations-unknown-keys-ignored');
  if (a.readOnlyHint === true) {
    notes.push('isAction-from-readOnlyHint');
    return false;
  }
  if (a.destructiveHint === true || a.readOnlyHint === false) {
    notes.push(a.destructiveHint === true ? 'isAction-from-destructiveHint' : 'isAction-from-readOnlyHint');
    return true;
  }
  return undefined;
}

/** A short hash of the schemas as the source gave them: the provenance's fingerprint of the original. */
export function originalSchemaHash(raw: Pick<RawTool, 'inputSchema' | 'outputSchema' | 'original'>): string {
  return hashOf(raw.original ?? { input: raw.inputSchema ?? null, output: raw.outputSchema ?? null }, 16);
}

function refused(raw: RawTool, tool: string, reason: string, detail: string): ReportLine {
  return { server: raw.server, where: raw.where, tool, outcome: 'refused', reason, detail, notes: [] };
}

/** Converts one tool; its name is made valid here and made unique across servers by {@link assembleLibrary}. */
export function convertTool(raw: RawTool): ConvertedTool | ReportLine {
  if (typeof raw.originalName !== 'string' || !raw.originalName.trim()) return refused(raw, String(raw.originalName ?? ''), 'no-name', `the tool has no name (got ${JSON.stringify(raw.originalName ?? null)})`);
  const original = raw.originalName;
  if (raw.inputSchema !== undefined && raw.inputSchema !== null && (typeof raw.inputSchema !== 'object' || Array.isArray(raw.inputSchema))) {
    return refused(raw, original, 'parameters-not-object', `its input schema is ${JSON.stringify(raw.inputSchema).slice(0, 60)}, not a JSON-Schema object`);
  }
  const notes: string[] = [];
  const changes = new Set<string>();
  let parameters;
  let returns;
  try {
    parameters = convertObjectSchema(raw.inputSchema, { root: raw.root ?? raw.inputSchema, changes } satisfies SchemaContext, 'parameters');
    returns = convertObjectSchema(raw.outputSchema, { root: raw.root ?? raw.outputSchema, changes }, 'returns');
  } catch (error) {
    if (error instanceof SchemaRefused) return refused(raw, original, error.reason, error.message);
    throw error;
  }
  notes.push(...[...changes].sort());
  const { name, change } = openAiName(original);
  if (change) notes.push(change);
  const description = typeof raw.description === 'string' ? raw.description.trim() : '';
  const flags = [...(description ? [] : ['no-description']), ...(raw.flags ?? [])];
  notes.push(...flags);
  const fromAnnotations = actionFromAnnotations(raw.annotations, notes);
  const isAction = fromAnnotations ?? raw.isAction;
  if (fromAnnotations === undefined && raw.isAction !== undefined) notes.push('isAction-from-source');
  const hints = raw.annotations && typeof raw.annotations === 'object' && !Array.isArray(raw.annotations) ? Object.fromEntries(Object.entries(raw.annotations).filter(([key, value]) => MCP_HINTS.includes(key) && value !== null)) : undefined;
  const candidate = {
    name,
    description,
    parameters,
    returns,
    ...(raw.domain ? { domain: raw.domain } : {}),
    plugin: raw.server,
    ...(isAction !== undefined ? { isAction } : {}),
    provenance: {
      source: raw.kind,
      server: raw.server,
      ...(raw.file ? { file: raw.file } : {}),
      originalName: original,
      schemaHash: originalSchemaHash(raw),
      ...(raw.title ? { title: raw.title } : {}),
      ...(hints && Object.keys(hints).length ? { annotations: hints } : {}),
      ...(Object.keys(raw.outputSchema ?? {}).length ? {} : { returnsGiven: false }),
      ...(flags.length ? { flags } : {}),
      ...raw.extra,
    },
  };
  const parsed = ToolSpec.safeParse(candidate);
  if (!parsed.success) return refused(raw, original, 'not-a-tool-spec', formatZodError(parsed.error));
  return { tool: parsed.data, line: { server: raw.server, where: raw.where, tool: original, name, outcome: 'imported', notes } };
}

export const isConverted = (item: ConvertedTool | ReportLine): item is ConvertedTool => 'line' in item;

/**
 * The library from converted tools: one name per tool. A name two servers both use is qualified
 * with each server's name (`weather__get_forecast`, `maps__get_forecast`), so neither takes the
 * plain name by coming first; a name one server gives twice keeps the first and refuses the
 * repeat. Returns the tools in input order and every report line.
 */
export function assembleLibrary(items: (ConvertedTool | ReportLine)[]): { tools: ToolSpec[]; lines: ReportLine[] } {
  const converted = items.filter(isConverted);
  const serversByName = new Map<string, Set<string>>();
  for (const { tool } of converted) {
    const servers = serversByName.get(tool.name) ?? new Set<string>();
    servers.add(tool.provenance!.server as string);
    serversByName.set(tool.name, servers);
  }
  const taken = new Map<string, { server: string; original: string }>();
  const tools: ToolSpec[] = [];
  const lines: ReportLine[] = [];
  for (const item of items) {
    if (!isConverted(item)) {
      lines.push(item);
      continue;
    }
    const { tool, line } = item;
    const server = tool.provenance!.server as string;
    const original = tool.provenance!.originalName as string;
    let name = tool.name;
    if ((serversByName.get(name)?.size ?? 0) > 1) {
      name = qualifiedName(server, name);
      line.notes.push('renamed-across-servers');
    }
    const earlier = taken.get(name);
    if (earlier) {
      const same = earlier.server === server && earlier.original === original;
      lines.push({ ...line, name: undefined, outcome: 'refused', reason: same ? 'duplicate-in-server' : 'name-collision', detail: same ? `"${original}" is listed twice by ${server}; the first is kept` : `"${original}" becomes "${name}", the name "${earlier.original}" of ${earlier.server} already took` });
      continue;
    }
    taken.set(name, { server, original });
    const final = name === tool.name ? tool : { ...tool, name };
    const problem = openAiProblem(final);
    if (problem) {
      lines.push({ ...line, name: undefined, outcome: 'refused', reason: 'openai-refuses', detail: problem });
      continue;
    }
    tools.push(final);
    lines.push({ ...line, name });
  }
  return { tools, lines };
}

/**
 * Why OpenAI's function schema would refuse the tool, or null: the name rule, parameters one
 * object schema that is valid JSON Schema with no reference left.
 */
export function openAiProblem(tool: ToolSpec): string | null {
  if (!OPENAI_NAME.test(tool.name)) return `name "${tool.name}" does not match ^[a-zA-Z0-9_-]{1,64}$`;
  if (tool.parameters.type !== 'object') return 'parameters is not an object schema';
  if (JSON.stringify(tool.parameters).includes('"$ref"')) return 'parameters still hold a $ref';
  const problem = checkJsonSchema(tool.parameters);
  return problem ? `parameters: ${problem}` : null;
}
