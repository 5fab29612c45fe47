import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UserError, messageOf } from './errors.ts';
import { hashOf } from './hash.ts';
import { ResponseCache } from './llm/cache.ts';
import { isRef, parseRef, type Json } from './records.ts';
import type { StdioToolSource, ToolsConfig } from './tool-source.ts';

/**
 * A live MCP server over stdio (the official SDK's client): lists its tools and calls them. The
 * process starts on first use, so a run whose results all come from the cache starts nothing. A
 * server that exits is started again and the call sent again, up to `restarts` times; a call that
 * does not answer within `timeoutMs` fails (`tool_timeout`) and the server is restarted for the
 * next one, since a hung tool may hold it.
 */

export type CallOutcome =
  /** The tool answered: `value` is its structured result, else its text (JSON when it parses), `isError` when the tool reported a failure. */
  | { ok: true; value: Json; isError: boolean; text: string }
  | { ok: false; reason: 'tool_timeout' | 'server_exited' | 'server_start_failed'; detail: string };

export interface ToolServerOptions {
  /** A call (and `tools/list`) that has not answered by then fails. */
  timeoutMs: number;
  /** How long the process may take to start and answer `initialize` (default 60 s: a loaded machine starts node slowly). */
  startTimeoutMs?: number;
  restarts: number;
  /** Version the client announces. */
  clientVersion?: string;
  log?: (message: string) => void;
}

const CLIENT = 'toolkiln';

export class McpStdioServer {
  private client: Client | undefined;
  private connecting: Promise<Client> | undefined;
  private exits = 0;
  /** Processes started and restarts after an exit, so far. */
  starts = 0;
  restarts = 0;

  constructor(
    readonly source: StdioToolSource,
    private readonly options: ToolServerOptions,
  ) {}

  get name(): string {
    return this.source.name;
  }

  private async connect(): Promise<Client> {
    if (this.client) return this.client;
    this.connecting ??= (async () => {
      // The SDK (with zod 3, zod-to-json-schema and ajv beneath it) is loaded by the first server
      // started: a run without a live tool server does not load it.
      const [{ Client }, { StdioClientTransport, getDefaultEnvironment }] = await Promise.all([import('@modelcontextprotocol/sdk/client/index.js'), import('@modelcontextprotocol/sdk/client/stdio.js')]);
      const transport = new StdioClientTransport({
        command: this.source.command,
        args: this.source.args,
        cwd: this.source.cwd,
        env: { ...getDefaultEnvironment(), ...this.source.env },
        stderr: 'pipe',
      });
      const client = new Client({ name: CLIENT, version: this.options.clientVersion ?? '0' });
      client.onclose = () => {
        if (this.client === client) {
          this.client = undefined;
          this.exits++;
        }
      };
      try {
        await client.connect(transport, { timeout: this.options.startTimeoutMs ?? 60_000 });
        this.starts++;
      } catch (error) {
        await client.close().catch(() => {});
        throw new UserError(`MCP server "${this.name}" (${[this.source.command, ...this.source.args].join(' ')}) did not start: ${messageOf(error)}`);
      } finally {
        this.connecting = undefined;
      }
      this.client = client;
      return client;
    })();
    return this.connecting;
  }

  /** Every tool the server lists (all pages), as it gives them. */
  async listTools(): Promise<unknown[]> {
    const client = await this.connect();
    const tools: unknown[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : undefined, { timeout: this.options.timeoutMs });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    return tools;
  }

  /**
   * Calls one tool; an exit is retried on a fresh process up to `restarts` times (`retryOnExit:
   * false`: not retried, the caller retries what it needs, e.g. a whole sequence), a hang fails.
   */
  async call(tool: string, args: Record<string, Json>, options: { retryOnExit?: boolean } = {}): Promise<CallOutcome> {
    for (let attempt = 0; ; attempt++) {
      let client: Client;
      try {
        client = await this.connect();
      } catch (error) {
        return { ok: false, reason: 'server_start_failed', detail: messageOf(error) };
      }
      try {
        const result = await client.callTool({ name: tool, arguments: args }, undefined, { timeout: this.options.timeoutMs });
        const answered = result as { structuredContent?: unknown; content?: unknown };
        return { ok: true, value: resultValue(answered), isError: result.isError === true, text: resultText(answered) };
      } catch (error) {
        const message = messageOf(error);
        const timedOut = /timed out|timeout/i.test(message);
        const closed = !this.client || this.client !== client || /closed|EPIPE|exited/i.test(message);
        if (!timedOut && !closed) return { ok: true, value: { error: message }, isError: true, text: message };
        // A hung or dead process cannot be trusted with the next call: start a fresh one.
        await this.stop(client);
        if (timedOut) return { ok: false, reason: 'tool_timeout', detail: `${this.name}.${tool} did not answer within ${this.options.timeoutMs} ms` };
        if (options.retryOnExit === false) return { ok: false, reason: 'server_exited', detail: `MCP server "${this.name}" exited during ${tool} (${message})` };
        if (attempt >= this.options.restarts) return { ok: false, reason: 'server_exited', detail: `MCP server "${this.name}" exited during ${tool} ${attempt + 1} time(s) (${message}); gave up after ${this.options.restarts} restart(s)` };
        this.restarts++;
        this.options.log?.(`MCP server "${this.name}" exited during ${tool}: starting it again (restart ${attempt + 1} of ${this.options.restarts})`);
      }
    }
  }

  private async stop(client: Client): Promise<void> {
    if (this.client === client) this.client = undefined;
    await client.close().catch(() => {});
  }

  async close(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) await client.close().catch(() => {});
  }
}

/**
 * The arguments of a call with each reference `{"$ref": "<callId>.<field>"}` replaced by that
 * field of the earlier call's result (at any depth of lists). A reference to a call not made yet,
 * or to a field its result lacks, throws.
 */
export function resolveArguments(args: Record<string, unknown>, results: Map<string, Json>): Record<string, Json> {
  const resolve = (value: unknown): Json => {
    if (isRef(value)) {
      const { callId, field } = parseRef(value);
      const result = results.get(callId);
      if (result === undefined) throw new Error(`${value.$ref}: call ${callId} has no result before this call`);
      const got = result && typeof result === 'object' && !Array.isArray(result) ? (result as Record<string, Json>)[field] : undefined;
      if (got === undefined) throw new Error(`${value.$ref}: the result of ${callId} has no field "${field}" (it has ${result && typeof result === 'object' ? Object.keys(result).join(', ') || 'none' : JSON.stringify(result)})`);
      return got;
    }
    if (Array.isArray(value)) return value.map(resolve);
    return value as Json;
  };
  return Object.fromEntries(Object.entries(args).map(([name, value]) => [name, resolve(value)]));
}

function textParts(result: { content?: unknown }): { texts: string[]; others: number } {
  const parts = Array.isArray(result.content) ? result.content : [];
  const texts = parts.filter((part): part is { type: 'text'; text: string } => !!part && typeof part === 'object' && (part as { type?: unknown }).type === 'text').map((part) => part.text);
  return { texts, others: parts.length - texts.length };
}

/** The text parts of a call result, joined by line breaks. */
export function resultText(result: { content?: unknown }): string {
  return textParts(result).texts.join('\n');
}

/** A call result as one JSON value: the structured content, else the text parts (parsed when JSON). */
export function resultValue(result: { structuredContent?: unknown; content?: unknown }): Json {
  if (result.structuredContent && typeof result.structuredContent === 'object') return result.structuredContent as Json;
  const { others } = textParts(result);
  const text = resultText(result);
  try {
    const parsed = JSON.parse(text) as Json;
    if (parsed && typeof parsed === 'object') return parsed;
  } catch {
    // Not JSON: the text itself is the result.
  }
  return others ? { text, nonTextParts: others } : { text };
}

/** One call of a record's sequence: its arguments may refer to earlier results (resolved by the caller's `resolve`). */
export interface SequenceCall {
  /** The call's id, which later calls' references name. */
  id: string;
  server: string;
  tool: string;
  arguments: Record<string, unknown>;
  /** The tool declares no result schema: its result is its text, as the field `result` (the library's view of such a tool). */
  textResult?: boolean;
}

export type SequenceOutcome =
  /** `results` ends at the first call that answered an error, when one did. */
  | { ok: true; results: { value: Json; isError: boolean }[]; cached: boolean }
  | { ok: false; index: number; reason: string; detail: string };

/**
 * Runs the calls of one record against live servers, in order (a server that exits is started
 * again and the record sent again from its first call, up to `restarts` times), with the results kept in a
 * content-addressed cache keyed by the whole sequence as written (references unresolved): a tool
 * with state answers a call after the calls before it, so a record's results are recorded and
 * replayed together, and a re-run sends nothing. In `cacheOnly` mode (`--llm replay`) a miss is a
 * failure, never a request.
 */
export class ToolExecutor {
  private readonly servers = new Map<string, McpStdioServer>();
  /** Times a server exited and the record was sent again, so far. */
  restarts = 0;

  constructor(
    sources: StdioToolSource[],
    private readonly options: ToolServerOptions,
    private readonly cache: ResponseCache | undefined,
    private readonly cacheOnly = false,
  ) {
    for (const source of sources) this.servers.set(source.name, new McpStdioServer(source, options));
  }

  hasServer(name: string): boolean {
    return this.servers.has(name);
  }

  server(name: string): McpStdioServer | undefined {
    return this.servers.get(name);
  }

  async run(calls: SequenceCall[]): Promise<SequenceOutcome> {
    const key = hashOf({
      kind: 'mcp-sequence',
      calls: calls.map((call) => {
        const live = this.servers.get(call.server);
        // The environment and folder are the server's too: one started otherwise may answer otherwise (its key holds only their hash).
        return { id: call.id, textResult: call.textResult ?? false, server: call.server, command: live ? [live.source.command, ...live.source.args] : null, ...(live && (Object.keys(live.source.env ?? {}).length || live.source.cwd) ? { setup: hashOf({ env: live.source.env, cwd: live.source.cwd ?? null }) } : {}), tool: call.tool, arguments: call.arguments };
      }),
    });
    const hit = this.cache?.get(key) as { value: Json; isError: boolean }[] | undefined;
    if (hit) return { ok: true, results: hit, cached: true };
    if (this.cacheOnly) return { ok: false, index: 0, reason: 'replay_miss', detail: `no recorded results for these ${calls.length} call(s) (replay sends nothing: run once without --llm replay)` };
    // A server that exits loses the state the record's earlier calls made: the record is sent again from its first call, on a fresh process.
    for (let attempt = 0; ; attempt++) {
      const outcome = await this.runOnce(calls);
      if (outcome.ok) {
        this.cache?.put(key, outcome.results);
        return outcome;
      }
      if (outcome.reason !== 'server_exited') return outcome;
      if (attempt >= this.options.restarts) return { ...outcome, detail: `${outcome.detail}; the record was sent ${attempt + 1} time(s), gave up after ${this.options.restarts} restart(s)` };
      this.restarts++;
      this.options.log?.(`${outcome.detail}: starting it again and sending the record's ${calls.length} call(s) again (restart ${attempt + 1} of ${this.options.restarts})`);
    }
  }

  private async runOnce(calls: SequenceCall[]): Promise<SequenceOutcome> {
    const results: { value: Json; isError: boolean }[] = [];
    const byId = new Map<string, Json>();
    for (const [index, call] of calls.entries()) {
      const live = this.servers.get(call.server);
      if (!live) return { ok: false, index, reason: 'no_live_server', detail: `no live server "${call.server}" for ${call.tool}` };
      let args: Record<string, Json>;
      try {
        args = resolveArguments(call.arguments, byId);
      } catch (error) {
        return { ok: false, index, reason: 'unresolved_reference', detail: messageOf(error) };
      }
      const outcome = await live.call(call.tool, args, { retryOnExit: false });
      if (!outcome.ok) return { ok: false, index, reason: outcome.reason, detail: outcome.detail };
      const value: Json = call.textResult && !outcome.isError ? { result: outcome.text } : outcome.value;
      results.push({ value, isError: outcome.isError });
      byId.set(call.id, value);
      // A call that failed gives later calls nothing to work on: the sequence ends with its error.
      if (outcome.isError) break;
    }
    return { ok: true, results, cached: false };
  }

  async close(): Promise<void> {
    await Promise.all([...this.servers.values()].map((server) => server.close()));
    this.cache?.close();
  }
}

/**
 * What the live (mcp-stdio) servers of a config's `tools` block list, for the run's fingerprint: a
 * live server is not a file, so a server whose tools changed (a tool added, removed, renamed, or its
 * description or schemas changed) must show as a changed input by what it lists when the run starts.
 * `{"mcp-stdio:<server>": {<tool name>: <hash of its listed definition>}}`; empty without such servers.
 */
export async function liveToolHashes(config: unknown, options: { timeoutMs?: number; log?: (message: string) => void } = {}): Promise<Record<string, Record<string, string>>> {
  const tools = (config as { tools?: ToolsConfig } | null)?.tools;
  const out: Record<string, Record<string, string>> = {};
  for (const source of tools?.sources ?? []) {
    if (source.kind !== 'mcp-stdio') continue;
    const server = new McpStdioServer(source, { timeoutMs: options.timeoutMs ?? tools?.execute?.timeoutMs ?? 20_000, restarts: 0, log: options.log });
    try {
      const hashes: Record<string, string> = {};
      for (const tool of await server.listTools()) {
        const name = String((tool as { name?: unknown }).name);
        let key = name;
        for (let n = 2; key in hashes; n++) key = `${name}#${n}`;
        hashes[key] = hashOf(tool, 16);
      }
      out[`mcp-stdio:${source.name}`] = hashes;
    } catch (error) {
      if (error instanceof UserError) throw error;
      throw new UserError(`MCP server "${source.name}": tools/list failed when the run started: ${messageOf(error)}`);
    } finally {
      await server.close();
    }
  }
  return out;
}
