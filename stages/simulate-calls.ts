import { ArgumentValidator, describeProblems } from '../core/json-schema.ts';
import { isJsonObject, Sample, type Call, type Json, type ToolSpec } from '../core/records.ts';
import { mapStage, reject, type MapStage, type StageContext } from '../core/stage.ts';
import { toolResultsPrompt } from '../prompts/tool-results.ts';

/**
 * The sibling of execute-calls for samples no live server answered: each sample's gold calls get
 * results simulated by the LLM within their tools' result schemas (`returns`), so that every
 * sample leaves saying how its observations were made — `meta.execution.mode` `executed` (by
 * execute-calls, passed on as they are) or `simulated` (here, with the model and, when
 * execute-calls ran first, why the calls were not executed). A result the schema refuses rejects
 * the sample (`simulated_result_invalid`, with the schema's complaint); a result field the schema
 * does not declare is dropped first. The results go to `meta.observations` (per call id), or where
 * the recipe keeps them (`place`: MTU's ReAct turns).
 */

/** What `meta.execution` says of a sample whose results were simulated. */
export function simulatedExecution(model: string, reason?: string): { mode: 'simulated'; model: string; reason?: string } {
  return { mode: 'simulated', model, ...(reason ? { reason } : {}) };
}

export interface SimulateCallsOptions {
  /** The date the results may speak of (YYYY-MM-DD). */
  today: string;
  /** The full tool entries of a sample's calls (default: the sample's own `tools`). */
  toolsOf?: (sample: Sample, ctx: StageContext) => ToolSpec[];
  /** Puts a sample's results (per call id) where its recipe keeps them; default: `meta.observations`. */
  place?: (sample: Sample, observations: Record<string, Json>) => Sample;
}

type Execution = { mode?: string; reason?: string };

function goldCalls(sample: Sample): Call[] {
  return (sample.expected as { calls?: Call[] }).calls ?? sample.dialogue.flatMap((turn) => turn.calls ?? []);
}

function inMeta(sample: Sample, observations: Record<string, Json>): Sample {
  return { ...sample, meta: { ...sample.meta, observations } };
}

export function simulateCallsStage(options: SimulateCallsOptions): MapStage<Sample, Sample> {
  const validator = new ArgumentValidator({ maxCompiled: 1000 });
  const place = options.place ?? inMeta;
  return mapStage({
    name: 'simulate-calls',
    version: 1,
    input: Sample,
    output: Sample,
    prompts: [toolResultsPrompt],
    run: async (sample, ctx) => {
      const execution = (sample.meta.execution ?? {}) as Execution;
      if (execution.mode === 'executed') return place(sample, (sample.meta.observations ?? {}) as Record<string, Json>);
      const tools = new Map((options.toolsOf?.(sample, ctx) ?? sample.tools).map((tool) => [tool.name, tool]));
      const calls = goldCalls(sample);
      const returnsOf = (call: Call) => tools.get(call.tool)?.returns ?? { type: 'object', properties: {}, required: [] };
      const request = sample.dialogue.filter((turn) => turn.role === 'user').map((turn) => turn.content).join('\n');
      const answer = await ctx.ask(toolResultsPrompt, { today: options.today, request, calls: calls.map((call) => ({ call_id: call.id, tool: call.tool, arguments: call.arguments, returns: returnsOf(call) })) });
      const given = new Map(answer.value.results.map((r) => [r.call_id, r.result]));
      const observations: Record<string, Json> = {};
      for (const call of calls) {
        const returns = returnsOf(call);
        const declared = isJsonObject(returns.properties) ? Object.keys(returns.properties) : [];
        const raw = given.get(call.id);
        if (!raw) return reject('simulated_result_invalid', `call ${call.id} (${call.tool}): the answer gives no result`);
        const result = Object.fromEntries(Object.entries(raw).filter(([field]) => declared.includes(field)));
        const problems = validator.validate(returns, result);
        if (problems.length) return reject('simulated_result_invalid', `call ${call.id} (${call.tool}): ${describeProblems(problems)}`);
        observations[call.id] = result;
      }
      const meta = { ...sample.meta, execution: simulatedExecution(answer.model, execution.reason), lineage: [...sample.meta.lineage, answer.lineage] };
      return place({ ...sample, meta }, observations);
    },
  });
}
