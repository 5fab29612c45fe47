import { Sample, type Check, type Json } from '../../core/records.ts';
import { mapStage, reject, type MapStage } from '../../core/stage.ts';
import { mtuQualityCheckPrompt } from '../../prompts/mtu-quality-check.ts';
import { valueProblem } from './infer.ts';
import { historyLines } from './llm-tools.ts';
import { libraryLoader } from './library.ts';
import { mtuArguments, renderToolList, toolsOfCalls } from './mtu-format.ts';
import { allCalls, assistantIndexes, refsIn, toolOf, turnCalls } from './sample.ts';

/**
 * MTU-Bench's quality filters (Appendix B), each failure a rejection with its reason:
 * `undefined_tool` (a call to a tool not in the library), `fabricated_parameter` (an argument the
 * tool does not document), `invalid_value` (a value, or an item of a list, failing its documented
 * type, pattern, format or enum),
 * `missing_required`, `duplicate_call_id`, `invalid_reference` (a `Tool.field` value pointing at no earlier call or at
 * a field its tool does not return), `repeated_tool_in_turn` (MTU answers key calls by tool name,
 * so one turn cannot call a tool twice), and — when enabled — `llm_verification_failed`, the
 * paper's data quality check re-deriving each turn's calls.
 */

/** The first rule a sample breaks, or the checks it passed. */
export function ruleProblems(sample: Sample): { reason: string; detail: string } | Check[] {
  const seen = new Map<string, string>(); // call id → tool
  const ids = new Set<string>();
  for (const call of allCalls(sample)) {
    if (ids.has(call.id)) return { reason: 'duplicate_call_id', detail: `two calls have the id ${call.id}` };
    ids.add(call.id);
  }
  for (const index of assistantIndexes(sample)) {
    const calls = turnCalls(sample, index);
    const names = calls.map((c) => c.tool);
    const repeated = names.find((n, i) => names.indexOf(n) !== i);
    if (repeated) return { reason: 'repeated_tool_in_turn', detail: `turn ${index} calls ${repeated} twice` };
    for (const call of calls) {
      const where = `turn ${index}, ${call.tool}`;
      const tool = toolOf(sample, call);
      if (!tool) return { reason: 'undefined_tool', detail: `${where}: no tool of that name in the library` };
      const properties = tool.parameters.properties;
      for (const [name, value] of Object.entries(call.arguments)) {
        if (!(name in properties)) return { reason: 'fabricated_parameter', detail: `${where}: parameter "${name}" is not documented` };
        const refs = refsIn(value);
        for (const ref of refs) {
          const producer = seen.get(ref.callId);
          const returns = producer ? sample.tools.find((t) => t.name === producer)?.returns.properties : undefined;
          if (!producer || !returns || !(ref.field in returns)) return { reason: 'invalid_reference', detail: `${where}: ${name} refers to ${ref.callId}.${ref.field}, which no earlier call returns` };
        }
        if (refs.length) continue;
        const problem = valueProblem(value as Json, properties[name]);
        if (problem) return { reason: 'invalid_value', detail: `${where}: ${name}: ${problem}` };
      }
      const missing = tool.parameters.required.find((name) => !(name in call.arguments));
      if (missing) return { reason: 'missing_required', detail: `${where}: required parameter "${missing}" is not given` };
      seen.set(call.id, call.tool);
    }
  }
  return ['defined_tools', 'documented_parameters', 'valid_values', 'required_parameters', 'valid_references'].map((name) => ({ name, pass: true }));
}

type MtuCall = { tool: string; arguments: Record<string, Json> };

function proposalText(thought: string | undefined, calls: MtuCall[]): string {
  return [`Thought: ${thought ?? ''}`, ...calls.flatMap((c) => [`Action: ${c.tool}`, `Action Input: ${JSON.stringify(c.arguments)}`])].join('\n');
}

/** Same tools in the same order with the same values (compared as text: "2" and 2 agree). */
function sameCalls(a: MtuCall[], b: MtuCall[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    if (a[i].tool !== b[i].tool) return false;
    const x = a[i].arguments;
    const y = b[i].arguments;
    const keys = Object.keys(x);
    if (keys.length !== Object.keys(y).length) return false;
    for (const key of keys) if (!Object.hasOwn(y, key) || !strictlyEqual(asText(x[key]), asText(y[key]))) return false;
  }
  return true;
}

/** An argument as compared: a list or object as it is, anything else as its text. */
const asText = (v: Json): Json => (v !== null && typeof v === 'object' ? v : String(v));

/** `isDeepStrictEqual` over JSON values (numbers by Object.is, objects by own keys in any order and prototype), nothing built. */
export function strictlyEqual(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!strictlyEqual(a[i], b[i])) return false;
    return true;
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  const keys = Object.keys(x);
  if (keys.length !== Object.keys(y).length) return false;
  for (const key of keys) if (!Object.hasOwn(y, key) || !strictlyEqual(x[key], y[key])) return false;
  return true;
}

/** 2: list items, calendar dates and clock times are checked as values too. */
const VERSION = 2;

export function qualityFilterStage(options: { verify: boolean }): MapStage<Sample, Sample> {
  const library = libraryLoader();
  return mapStage({
    name: 'quality-filter',
    version: VERSION,
    input: Sample,
    output: Sample,
    prompts: options.verify ? [mtuQualityCheckPrompt] : [],
    run: async (input, ctx) => {
      const sample = library(ctx.runDir).full(input);
      const rules = ruleProblems(sample);
      if (!Array.isArray(rules)) return reject(rules.reason, rules.detail);
      const checks: Check[] = [...rules];
      // The check's answers name the prompt and model; without the check, the stage alone.
      let lineage = ctx.lineage();
      if (options.verify) {
        const apis = renderToolList(sample.tools);
        const toolOfCall = toolsOfCalls(sample);
        // The history before each checked turn grows by the turns between: each turn is written once.
        let history = '';
        let historyTurns = 0;
        for (const index of assistantIndexes(sample)) {
          const turn = sample.dialogue[index];
          const user = sample.dialogue[index - 1];
          if (user?.role !== 'user') continue;
          for (; historyTurns < index - 1; historyTurns++) history = historyTurns ? `${history}\n${historyLines(sample.dialogue[historyTurns])}` : historyLines(sample.dialogue[historyTurns]);
          const calls = turnCalls(sample, index).map((c) => ({ tool: c.tool, arguments: mtuArguments(c, toolOfCall) }));
          const result = await ctx.ask(
            mtuQualityCheckPrompt,
            {
              apis,
              history: historyTurns ? history : '(none)',
              user: user.content,
              assistant: turn.response ?? turn.content,
              proposal: proposalText(turn.thought, calls),
              calls,
            },
            { part: `turn-${index}` },
          );
          lineage = result.lineage;
          const verdict = result.value.actions.map((a) => ({ tool: a.action, arguments: a.action_input }));
          if (!sameCalls(verdict, calls)) {
            return reject('llm_verification_failed', `turn ${index}: the check proposes ${JSON.stringify(verdict)} instead of ${JSON.stringify(calls)}`);
          }
        }
        checks.push({ name: 'llm_verification', pass: true });
      }
      return {
        ...input,
        meta: {
          ...sample.meta,
          checks: [...sample.meta.checks, ...checks],
          lineage: [...sample.meta.lineage, lineage],
        },
      };
    },
  });
}
