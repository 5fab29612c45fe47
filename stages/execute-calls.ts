import { join } from 'node:path';
import { ResponseCache } from '../core/llm/cache.ts';
import { Sample, type Call, type Json } from '../core/records.ts';
import { reject, scanStage, type ScanStage, type StageContext } from '../core/stage.ts';
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

interface ExecutionState {
  executor?: ToolExecutor;
  /** Library name → the live server and the name the server knows it by. */
  live?: Map<string, { server: string; tool: string; textResult: boolean }>;
  counts: { executed: number; cached: number; notExecuted: number };
}

function callsOf(sample: Sample): Call[] {
  const gold = (sample.expected as { calls?: Call[] }).calls;
  return gold ?? sample.dialogue.flatMap((turn) => turn.calls ?? []);
}

async function prepare(state: ExecutionState, tools: ToolsConfig, ctx: StageContext): Promise<void> {
  if (state.live) return;
  const servers = tools.sources.filter((source): source is StdioToolSource => source.kind === 'mcp-stdio');
  const { tools: library } = await importTools(servers, { resolvePath: ctx.resolvePath, timeoutMs: tools.execute.timeoutMs, log: ctx.log });
  state.live = new Map(library.map((tool) => [tool.name, { server: String(tool.provenance?.server), tool: String(tool.provenance?.originalName ?? tool.name), textResult: !Object.keys(tool.returns.properties).length }]));
  // The run folder is <home>/.toolkiln/runs/<id>: results sit beside the response cache, shared by runs.
  const cache = ResponseCache.open(join(ctx.runDir, '..', '..', 'tool-results'), ctx.log);
  state.executor = new ToolExecutor(servers, { timeoutMs: tools.execute.timeoutMs, restarts: tools.execute.restarts, log: ctx.log }, cache, ctx.llm.backend === 'replay');
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
      await prepare(state, tools, ctx);
      const calls = callsOf(sample);
      const missing = calls.find((call) => !state.live!.has(call.tool));
      if (!calls.length || missing) {
        state.counts.notExecuted++;
        const why = missing ? `${missing.tool} has no live server` : 'the sample has no calls';
        return { ...sample, meta: { ...sample.meta, execution: { mode: 'not-executed', reason: why } } };
      }
      const sequence: SequenceCall[] = calls.map((call) => ({ id: call.id, ...state.live!.get(call.tool)!, arguments: call.arguments }));
      const outcome = await state.executor!.run(sequence);
      if (!outcome.ok) return reject(outcome.reason, `call ${outcome.index} (${calls[outcome.index].tool}): ${outcome.detail}`);
      const failed = outcome.results.findIndex((result) => result.isError);
      if (failed >= 0) return reject('tool_error', `call ${failed} (${calls[failed].tool}) answered an error: ${JSON.stringify(outcome.results[failed].value).slice(0, 300)}`);
      state.counts.executed++;
      if (outcome.cached) state.counts.cached++;
      const observations: Record<string, Json> = Object.fromEntries(calls.map((call, i) => [call.id, outcome.results[i].value]));
      return {
        ...sample,
        meta: { ...sample.meta, observations, execution: { mode: 'executed', servers: [...new Set(sequence.map((call) => call.server))], cached: outcome.cached }, lineage: [...sample.meta.lineage, ctx.lineage()] },
      };
    },
    finish: async (state, ctx) => {
      ctx.report('execution', state.counts);
      await state.executor?.close();
    },
  });
}
