import { join } from 'node:path';
import { ResponseCache } from '../core/llm/cache.ts';
import { Sample, type Call, type Json } from '../core/records.ts';
import { reject, scanStage, type RejectReason, type ScanStage, type StageContext } from '../core/stage.ts';
import { ToolExecutor, type SequenceCall } from '../core/tool-server.ts';
import type { StdioToolSource, ToolsConfig } from '../core/tool-source.ts';
import { importTools } from './sources/tools/import.ts';

/**
 * The gold calls of each sample executed against the live MCP servers of the `tools` block
 * (mcp-stdio sources), in order, a reference to an earlier call's result resolved from the real
 * result. The results become the sample's observations (`meta.observations`, per call id) and
 * `meta.execution` says how they were made: `executed` (with `cached` when the result cache
 * answered), or `not-executed` with why (a tool no live server serves). A call that fails — the
 * tool reports an error, times out, the server exits past its restarts, a reference the result
 * cannot satisfy — rejects the sample with that reason. Samples run one at a time, so a server
 * with state sees each sample's calls together; the results are cached under
 * `.toolkiln/tool-results/` by the whole sequence, so a re-run and `--llm replay` send nothing.
 */

export const EXECUTION_MODES = ['executed', 'not-executed'] as const;

/** A tool of the library that a live server serves: the server, the name the server knows it by, whether it answers text. */
export interface LiveTool {
  server: string;
  tool: string;
  textResult: boolean;
}

/** The live servers of a `tools` block, opened for calls: the executor and the library names they serve. */
export interface LiveExecution {
  executor: ToolExecutor;
  /** Library name → the live server and the name the server knows it by. */
  live: Map<string, LiveTool>;
}

interface ExecutionState {
  execution?: LiveExecution;
  counts: { executed: number; cached: number; notExecuted: number };
}

function callsOf(sample: Sample): Call[] {
  const gold = (sample.expected as { calls?: Call[] }).calls;
  return gold ?? sample.dialogue.flatMap((turn) => turn.calls ?? []);
}

/**
 * The `tools` block's live (mcp-stdio) servers, their tools listed and named as the library names
 * them; results cached beside the response cache, read only under `--llm replay`. Nothing starts
 * until a call is made. Close the executor when done (a scan stage's `dispose`).
 */
export async function openLiveExecution(tools: ToolsConfig, ctx: StageContext): Promise<LiveExecution> {
  const servers = tools.sources.filter((source): source is StdioToolSource => source.kind === 'mcp-stdio');
  const { tools: library } = await importTools(servers, { resolvePath: ctx.resolvePath, timeoutMs: tools.execute.timeoutMs, log: ctx.log });
  const live = new Map(library.map((tool) => [tool.name, { server: String(tool.provenance?.server), tool: String(tool.provenance?.originalName ?? tool.name), textResult: !Object.keys(tool.returns.properties).length }]));
  // The run folder is <home>/.toolkiln/runs/<id>: results sit beside the response cache, shared by runs.
  const cache = ResponseCache.open(join(ctx.runDir, '..', '..', 'tool-results'), ctx.log);
  return { live, executor: new ToolExecutor(servers, { timeoutMs: tools.execute.timeoutMs, restarts: tools.execute.restarts, log: ctx.log }, cache, ctx.llm.backend === 'replay') };
}

/** What running one record's calls gave: each call's result in order, or why the record is rejected. */
export type LiveCallsOutcome = { ok: true; results: Json[]; cached: boolean; servers: string[] } | ({ ok: false } & RejectReason);

/**
 * Runs a record's calls, in order, on the live servers (every call's tool must be in `live`): a
 * call that fails (timeout, server exited past its restarts, unresolved reference) or answers an
 * error (`tool_error`, with the tool's text) fails the record.
 */
export async function runOnLiveServers(calls: readonly Call[], execution: LiveExecution): Promise<LiveCallsOutcome> {
  const sequence: SequenceCall[] = calls.map((call) => ({ id: call.id, ...execution.live.get(call.tool)!, arguments: call.arguments }));
  const outcome = await execution.executor.run(sequence);
  if (!outcome.ok) return { ok: false, reason: outcome.reason, detail: `call ${outcome.index} (${calls[outcome.index].tool}): ${outcome.detail}` };
  const failed = outcome.results.findIndex((result) => result.isError);
  if (failed >= 0) return { ok: false, reason: 'tool_error', detail: `call ${failed} (${calls[failed].tool}) answered an error: ${JSON.stringify(outcome.results[failed].value).slice(0, 300)}` };
  return { ok: true, results: outcome.results.map((result) => result.value), cached: outcome.cached, servers: [...new Set(sequence.map((call) => call.server))] };
}

export function executeCallsStage(tools: ToolsConfig): ScanStage<Sample, Sample, ExecutionState> {
  return scanStage<Sample, Sample, ExecutionState>({
    name: 'execute-calls',
    version: 1,
    input: Sample,
    output: Sample,
    begin: (): ExecutionState => ({ counts: { executed: 0, cached: 0, notExecuted: 0 } }),
    run: async (sample, ctx) => {
      const state = ctx.state;
      state.execution ??= await openLiveExecution(tools, ctx);
      const { live } = state.execution;
      const calls = callsOf(sample);
      const missing = calls.find((call) => !live.has(call.tool));
      if (!calls.length || missing) {
        state.counts.notExecuted++;
        const why = missing ? `${missing.tool} has no live server` : 'the sample has no calls';
        return { ...sample, meta: { ...sample.meta, execution: { mode: 'not-executed', reason: why } } };
      }
      const outcome = await runOnLiveServers(calls, state.execution);
      if (!outcome.ok) return reject(outcome.reason, outcome.detail);
      state.counts.executed++;
      if (outcome.cached) state.counts.cached++;
      const observations: Record<string, Json> = Object.fromEntries(calls.map((call, i) => [call.id, outcome.results[i]]));
      return {
        ...sample,
        meta: { ...sample.meta, observations, execution: { mode: 'executed', servers: outcome.servers, cached: outcome.cached }, lineage: [...sample.meta.lineage, ctx.lineage()] },
      };
    },
    finish: (state, ctx) => {
      ctx.report('execution', state.counts);
    },
    // Also when the run fails: the server processes must not outlive it.
    dispose: (state) => state.execution?.executor.close(),
  });
}
