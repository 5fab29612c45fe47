import { corruptCall, type Corruption, type EvalItem, type EvalSession, type SessionMessage, type SessionResult, type TranscriptEntry } from '../../core/eval.ts';
import type { Json } from '../../core/records.ts';
import type { Rng } from '../../core/rng.ts';
import type { DatabasesJson } from './databases.ts';
import { parsePredictedCalls, withoutSessionToken, type ToolTalkGold } from './score-items.ts';
import { RecordedCalls } from './recorded.ts';
import type { Databases } from './tool.ts';
import { createWorld, type ToolRequest, type ToolTalkWorld } from './world.ts';

/**
 * ToolTalk with the model in the loop (paper Algorithm 1; ToolExecutor.run_conversation): per
 * assistant turn the world is rebuilt as it stood before the turn (initial databases, the
 * conversation's overlay, clock and session, the ground-truth calls of earlier turns run again),
 * the model is shown the ground-truth dialogue so far, and every call it makes runs on the simulated
 * tools, its result fed back, until it answers the user in text. ToolTalk itself has no cap; one is
 * needed so that a model repeating a call forever ends: at `maxCalls` calls the turn ends, and the
 * calls made are scored as ToolTalk scores any prediction.
 *
 * The gateway sends text, not OpenAI function calls, so a call is written as JSON
 * (`{"api_name": …, "parameters": {…}}`, or a list of them to make in order) and its result comes
 * back as an `Observation:` message; anything else is the reply that ends the turn. The session's
 * output is the list of calls made, which the scorer runs again from the same world (the tools are
 * deterministic) and matches against the conversation's ground truth (Algorithm 2).
 */

export const TOOLTALK_MAX_CALLS_PER_TURN = 10;

const FORMAT = (tools: string) =>
  `Tools you can call:\n${tools}\n\nTo call a tool, answer with only a JSON object {"api_name": "<tool>", "parameters": {…}} (or a JSON list of such objects, made in order); the result comes back in a message that starts with "Observation:". Call as many tools as the request needs, one answer at a time. When you are done, answer the user in plain text.`;

const gold = (item: EvalItem) => item.gold as unknown as ToolTalkGold;

/** A call as written in the loop (and in the session's output), without the executor's session token. */
export const callText = (request: ToolRequest): string => JSON.stringify({ api_name: request.api_name, parameters: request.parameters === null ? null : withoutSessionToken(request.parameters) });

/** The item's dialogue as plain chat: the ground-truth calls as the JSON the model writes, their results as observations. */
function dialogueAsText(item: EvalItem): SessionMessage[] {
  const tools = JSON.stringify(item.tools.map(({ name, description, parameters }) => ({ name, description, parameters })));
  return item.messages.map((message): SessionMessage => {
    if (message.role === 'system') return { role: 'system', content: `${message.content ?? ''}\n\n${FORMAT(tools)}` };
    if (message.role === 'tool') return { role: 'user', content: `Observation: ${message.content ?? ''}` };
    const calls = (message.tool_calls ?? []) as { function: { name: string; arguments: string } }[];
    if (message.role === 'assistant' && calls.length) {
      const written = calls.map((call) => `{"api_name":${JSON.stringify(call.function.name)},"parameters":${call.function.arguments}}`);
      return { role: 'assistant', content: written.length === 1 ? written[0] : `[${written.join(',')}]` };
    }
    return { role: message.role, content: message.content ?? '' };
  });
}

/** A model's answer read as calls (a JSON call object or a non-empty list of them), or null when it is the reply in text. */
export function callsInAnswer(text: string): ToolRequest[] | null {
  const body = text.trim().replace(/^```(?:json)?\s*([\s\S]*?)\s*```$/, '$1');
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return null;
  }
  const isCall = (entry: unknown) => entry !== null && typeof entry === 'object' && !Array.isArray(entry) && ['api_name', 'name', 'tool', 'function'].some((key) => Object.hasOwn(entry, key));
  const list = Array.isArray(value) ? value : [value];
  if (!list.length || !list.every(isCall)) return null;
  return parsePredictedCalls(JSON.stringify(list)).requests;
}

export interface ToolTalkSessionOptions {
  /** The initial databases (asked for only by conversations over the built-in tools). */
  databases: () => Databases;
  maxCalls?: number;
}

export function toolTalkSession(item: EvalItem, options: ToolTalkSessionOptions): EvalSession {
  const maxCalls = options.maxCalls ?? TOOLTALK_MAX_CALLS_PER_TURN;
  const { start, overlay, history, reply: goldReply, recorded } = gold(item);
  // Over imported tools the conversation's recorded results answer its calls (recorded.ts); else the simulated world.
  const world: Pick<ToolTalkWorld, 'execute'> = recorded ? new RecordedCalls(recorded, history.length) : createWorld({ databases: options.databases(), overlay: overlay as DatabasesJson });
  if (!recorded) {
    const simulated = world as ToolTalkWorld;
    simulated.reset(start);
    for (const request of history) simulated.execute({ api_name: request.api_name, parameters: withoutSessionToken(request.parameters) });
  }

  const messages = dialogueAsText(item);
  const made: ToolRequest[] = [];
  const transcript: TranscriptEntry[] = [];
  let steps = 0;
  let over = false;
  let capped = false;
  let note: string | undefined;
  const goldCalls = goldRequests(item);
  const toolNames = item.tools.map((tool) => tool.name);

  return {
    oracleSteps: [...goldCalls.map(callText), goldReply],
    corruptStep(index: number, corruption: Corruption, rng: Rng): string | null {
      // An extra call may come before any step, the reply too (a turn the gold answers without calls).
      const call = corruption === 'extra-call' ? { api_name: '', parameters: {} } : goldCalls[index];
      if (!call?.parameters) return null;
      const changed = corruptCall({ name: call.api_name, arguments: call.parameters }, corruption, rng, toolNames, goldCalls.map((c) => c.api_name));
      return changed && callText({ api_name: changed.name, parameters: changed.arguments });
    },
    next() {
      if (over) return null;
      if (made.length >= maxCalls) {
        over = capped = true;
        note = `the turn ended at the cap of ${maxCalls} calls without a reply; the calls made are scored`;
        return null;
      }
      return { role: 'model', messages: [...messages] };
    },
    reply(text) {
      steps++;
      transcript.push({ role: 'model', text });
      if (text === null) {
        over = true;
        note = 'no answer from the model: the turn ends with the calls made so far';
        return;
      }
      const calls = callsInAnswer(text);
      if (!calls) {
        over = true;
        return;
      }
      messages.push({ role: 'assistant', content: text });
      for (const request of calls) {
        if (made.length >= maxCalls) break;
        const result = world.execute(request);
        made.push(request);
        transcript.push({ role: 'call', call: request as unknown as Json, ok: result.exception === null, result: result as unknown as Json });
        messages.push({ role: 'user', content: `Observation: ${JSON.stringify(result)}` });
      }
    },
    result(): SessionResult {
      // An unreadable call keeps its place in the output, as a call the executor could not parse.
      const output = JSON.stringify(made.map((request) => (request.parameters === null ? { api_name: request.api_name, arguments: 'unreadable' } : { api_name: request.api_name, parameters: request.parameters })));
      return { output, transcript, steps, capped, ...(note ? { note } : {}) };
    },
  };
}

/** The turn's ground-truth calls without the executor's session token. */
function goldRequests(item: EvalItem): ToolRequest[] {
  return gold(item).apis.map(({ request }) => ({ api_name: request.api_name, parameters: withoutSessionToken(request.parameters) }));
}
