import { isRef, parseRef, Sample, type ArgValue, type Call, type Json, type ToolSpec, type Turn } from '../../core/records.ts';
import type { Rng } from '../../core/rng.ts';
import { mapStage, reject, type LineageEntry, type MapStage } from '../../core/stage.ts';
import { mtuObservationPrompt, type PendingCall } from '../../prompts/mtu-observation.ts';
import type { Situation } from '../../prompts/mtu-situation.ts';
import { mtuThoughtPrompt, type ThoughtRound } from '../../prompts/mtu-thought.ts';
import { loadMultiwozDb, lookupMultiwoz, type MultiwozDb } from '../sources/multiwoz.ts';
import { libraryLoader } from './library.ts';
import { renderToolList } from './mtu-format.ts';
import { mtuMeta, toolOf, turnCalls } from './sample.ts';

/**
 * Step 5 of the paper, tool-use synthesis in the ReAct shape: every assistant turn gets a Thought,
 * its Action(s) and Action Input(s) (the calls made so far), an Observation per call and a
 * Response. Observations are, in order of preference: the real results the source recorded (SGD
 * `service_results`), a MultiWOZ database lookup, or an LLM simulation that follows the tool's
 * documented result fields (offline: values drawn from the return schema). Simulated results are
 * made consistent with the call's arguments and with earlier results about the same entity.
 */

export interface ReactOptions {
  today: string;
  /** MultiWOZ folder (schema and `db/`), for database lookups. */
  multiwozDir: string;
}

/** A call's arguments with references replaced by the values earlier results hold. */
function resolvedArguments(call: Call, results: Map<string, Json>): Record<string, Json> {
  // Most calls take only plain values: their arguments are the answer as they are (nothing edits them).
  if (!Object.values(call.arguments).some((value) => value !== null && typeof value === 'object')) return call.arguments as Record<string, Json>;
  const resolve = (value: ArgValue): Json => {
    if (isRef(value)) {
      const { callId, field } = parseRef(value);
      const result = results.get(callId);
      return result && typeof result === 'object' && !Array.isArray(result) && field in result ? result[field] : value.$ref;
    }
    return Array.isArray(value) ? value.map(resolve) : (value as Json);
  };
  return Object.fromEntries(Object.entries(call.arguments).map(([k, v]) => [k, resolve(v)]));
}

/**
 * Keeps a simulated result consistent: a field named like an argument echoes it, and when the
 * call names an entity an earlier result described (same value in the same field), the fields
 * both results have keep the earlier values.
 */
export function reconcile(result: Record<string, Json>, args: Record<string, Json>, earlier: Json[]): Record<string, Json> {
  const out = { ...result };
  for (const [field, value] of Object.entries(args)) if (field in out) out[field] = value;
  for (const previous of earlier) {
    if (!previous || typeof previous !== 'object' || Array.isArray(previous)) continue;
    const same = Object.entries(args).some(([field, value]) => typeof value === 'string' && value !== '' && previous[field] === value);
    if (!same) continue;
    for (const field of Object.keys(out)) if (field in previous && !(field in args)) out[field] = previous[field];
  }
  return out;
}

function dialogueText(dialogue: Turn[], calls: (i: number) => Call[]): string {
  const lines: string[] = [];
  let round = -1;
  dialogue.forEach((turn, i) => {
    if (turn.role === 'user') {
      round++;
      lines.push(`[Round ${round}]`, `User: ${turn.content}`);
      return;
    }
    for (const call of calls(i)) lines.push(`Action: ${call.tool}`, `Action Input: ${JSON.stringify(call.arguments)}`);
    lines.push(`Assistant: ${turn.content || '(reply missing)'}`);
  });
  return lines.join('\n');
}

/** Required parameters of the tools, each once in order, with the words a user would say for it (`time_range` → `time range`). */
function requiredParameters(tools: ToolSpec[]): { name: string; said: string }[] {
  const names = new Set<string>();
  for (const tool of tools) for (const name of tool.parameters.required) names.add(name);
  return [...names].map((name) => ({ name, said: name.replace(/_/g, ' ') }));
}

/** The first two required parameters (see requiredParameters) that no user turn has stated so far. */
function missingValues(required: { name: string; said: string }[], said: string): string[] {
  const lower = said.toLowerCase();
  const missing: string[] = [];
  for (const parameter of required) {
    if (lower.includes(parameter.said)) continue;
    missing.push(parameter.name);
    if (missing.length === 2) break;
  }
  return missing;
}

/**
 * An assistant turn with what the stage adds, made whole at once (not set and deleted key by key
 * on a copy): keys the turn has keep their place, new ones follow in the order thought,
 * observations, response; observations only when there are some.
 */
export function withReact(turn: Turn, thought: string | undefined, observations: Record<string, Json>, response: string): Turn {
  const out: Record<string, unknown> = {};
  const observed = Object.keys(observations).length > 0;
  for (const key of Object.keys(turn)) {
    if (key === 'observations') {
      if (observed) out.observations = observations;
    } else if (key === 'thought' && thought !== undefined) out.thought = thought;
    else if (key === 'response') out.response = response;
    else out[key] = turn[key as keyof Turn];
  }
  if (thought !== undefined && !('thought' in out)) out.thought = thought;
  if (observed && !('observations' in out)) out.observations = observations;
  if (!('response' in out)) out.response = response;
  return out as Turn;
}

export function synthesizeReactStage(options: ReactOptions): MapStage<Sample, Sample> {
  const library = libraryLoader();
  let db: MultiwozDb | undefined;
  const database = (resolve: (p: string) => string) => (db ??= loadMultiwozDb(resolve(options.multiwozDir)));
  return mapStage({
    name: 'synthesize-react',
    version: 1,
    input: Sample,
    output: Sample,
    prompts: [mtuThoughtPrompt, mtuObservationPrompt],
    run: async (input, ctx) => {
      // Checks and prompts read the full tool entries; the sample keeps its references.
      const sample = library(ctx.runDir).full(input);
      const meta = mtuMeta(sample);
      const dialogue = sample.dialogue;
      // One pass over the dialogue: the assistant turns, their round (user turns before them, less one), their calls.
      const indexes: number[] = [];
      // By dialogue index (arrays, not maps: a few of each per record).
      const roundOf: number[] = [];
      const callsAt: Call[][] = [];
      const userTexts: string[] = [];
      for (let i = 0; i < dialogue.length; i++) {
        if (dialogue[i].role === 'user') {
          userTexts.push(dialogue[i].content);
          continue;
        }
        indexes.push(i);
        roundOf[i] = userTexts.length - 1;
        callsAt[i] = turnCalls(sample, i);
      }
      const calls = (i: number) => callsAt[i];
      const apis = renderToolList(sample.tools);
      const text = dialogueText(dialogue, calls);
      const called = new Set<string>();
      for (const i of indexes) for (const call of calls(i)) called.add(call.tool);
      const required = requiredParameters(sample.tools.filter((t) => called.has(t.name)));

      const lineage: LineageEntry[] = [...sample.meta.lineage];

      // Thoughts for the turns that have none yet.
      const rounds: ThoughtRound[] = indexes
        .filter((i) => !dialogue[i].thought)
        .map((i) => ({
          round: roundOf[i],
          user: dialogue[i - 1]?.role === 'user' ? dialogue[i - 1].content : '',
          assistant: dialogue[i].content,
          situation: (meta.situations[String(i)] ?? (calls(i).length ? 'api_call' : 'chit_chat')) as Situation,
          calls: calls(i).map((c) => ({ tool: c.tool, arguments: c.arguments as Record<string, Json> })),
          missing: missingValues(required, userTexts.slice(0, roundOf[i] + 1).join(' ')),
        }));
      // What the stage adds to each assistant turn, put in place when the turn is made (see withReact).
      const thoughts: (string | undefined)[] = [];
      const observationsAt: Record<string, Json>[] = [];
      if (rounds.length) {
        const result = await ctx.ask(mtuThoughtPrompt, { apis, dialogue: text, rounds }, { part: 'thought' });
        lineage.push(result.lineage);
        const byRound = new Map(result.value.thoughts.map((t) => [t.round, t.thought]));
        for (const i of indexes) if (!dialogue[i].thought && byRound.has(roundOf[i])) thoughts[i] = byRound.get(roundOf[i]);
      }

      // Observations: recorded, looked up, or simulated.
      const results = new Map<string, Json>();
      const pending: PendingCall[] = [];
      // Made at the first database lookup (deriving it hashes the record's key); the same generator either way.
      let rng: Rng | undefined;
      for (const i of indexes) {
        const observations: Record<string, Json> = { ...(dialogue[i].observations ?? {}) };
        for (const call of calls(i)) {
          const args = resolvedArguments(call, results);
          const tool = toolOf(sample, call);
          if (!(call.id in observations) && meta.database === 'multiwoz' && tool?.provenance?.schema) {
            const [service] = String(tool.provenance.id ?? '').split('/');
            observations[call.id] = lookupMultiwoz(database(ctx.resolvePath), service, { name: tool.name, transactional: tool.isAction === true }, args as Record<string, string>, (rng ??= ctx.rng('database')));
          }
          if (call.id in observations) results.set(call.id, observations[call.id]);
          else pending.push({ round: roundOf[i], call_id: call.id, tool: call.tool, arguments: args, returns: tool?.returns.properties ?? {} });
        }
        observationsAt[i] = observations;
      }
      const needResponse = indexes.filter((i) => !dialogue[i].content.trim()).map((i) => roundOf[i]);
      let responses: Map<number, string> | undefined;
      if (pending.length || needResponse.length) {
        const result = await ctx.ask(mtuObservationPrompt, { apis, dialogue: text, today: options.today, pending, needResponse }, { part: 'observation' });
        lineage.push(result.lineage);
        const simulated = new Map(result.value.observations.map((o) => [o.call_id, o.observation]));
        const earlier: Json[] = [];
        for (const i of indexes) {
          for (const call of calls(i)) {
            const observations = observationsAt[i];
            if (!(call.id in observations)) {
              const fields = Object.keys(toolOf(sample, call)?.returns.properties ?? {});
              const raw = simulated.get(call.id) ?? {};
              // Only documented result fields; a reply-less turn keeps whatever the model returned.
              const kept = fields.length ? Object.fromEntries(Object.entries(raw).filter(([f]) => fields.includes(f) || f === 'error')) : raw;
              observations[call.id] = reconcile(kept, resolvedArguments(call, results), earlier);
              results.set(call.id, observations[call.id]);
            }
            earlier.push(observations[call.id]);
          }
        }
        responses = new Map(result.value.responses.map((r) => [r.round, r.response]));
      }
      const synthesized = dialogue.slice();
      for (const i of indexes) {
        const turn = dialogue[i];
        const response = turn.content.trim() ? turn.content : responses?.get(roundOf[i]) ?? '';
        if (!response) return reject('missing_response', `assistant turn ${i} has no reply and the model wrote none`);
        synthesized[i] = withReact(turn, thoughts[i], observationsAt[i], response);
      }
      // As withMtuMeta would, from the meta already read.
      return { ...input, dialogue: synthesized, meta: { ...sample.meta, lineage, mtu: { ...meta, today: options.today } } };
    },
  });
}
