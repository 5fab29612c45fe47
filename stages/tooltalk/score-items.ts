import type { EvalItem, ModelReply } from '../../core/eval.ts';
import type { Json, Sample } from '../../core/records.ts';
import { dialogueMessages } from '../export/openai-chat.ts';
import type { CallRecord } from './comparators.ts';
import { sampleToConversation, toolTalkMetaOf } from './conversation.ts';
import type { ConversationStart, ToolRequest } from './world.ts';

/**
 * ToolTalk's evaluation items (paper Algorithm 1; ToolExecutor.run_conversation in the repository):
 * one item per assistant turn, the conversation up to that turn as the model sees it — the system
 * prompt of ToolTalk's OpenAI predictor (location, timestamp, username), the user and assistant
 * texts, and the ground-truth calls of earlier turns with their results. Turns without calls are
 * items too: the repository predicts at every assistant turn, so a call made where none is due
 * counts (as an unmatched prediction, and as an incorrect action when it changes the world).
 *
 * A model answers with the calls it makes in that turn, in order: a JSON list of
 * `{"api_name", "parameters"}` (or `{"tool", "arguments"}`; arguments may be a JSON string, as
 * OpenAI writes them). `[]` is a turn answered without calls.
 */

/** What the scorer needs of an item: how to rebuild the world before the turn, and the turn's ground truth. */
export interface ToolTalkGold {
  /** Dialogue index of the assistant turn. */
  turn: number;
  start: ConversationStart;
  /** Records the conversation adds to the initial databases. */
  overlay: Record<string, Json>;
  /** Ground-truth calls of the earlier turns, in order (run again before the turn, as the repository does). */
  history: ToolRequest[];
  /** This turn's ground-truth calls with their released results (session token as released). */
  apis: CallRecord[];
  /** The turn's reply to the user, after its calls (what the oracle in the loop ends the turn with). */
  reply: string;
  /** Over imported tools (no databases): every call of the conversation with its recorded result, which answers the same call in evaluation (recorded.ts). */
  recorded?: CallRecord[];
}

const SYSTEM_PROMPT = (metadata: Record<string, Json>) =>
  `You are a helpful assistant. Here is some user data:\nlocation: ${metadata.location}\ntimestamp: ${metadata.timestamp}\nusername (if logged in): ${metadata.username ?? 'None'}`;

/** One item per assistant turn of a ToolTalk sample. */
export function toolTalkItems(sample: Sample): EvalItem[] {
  const conversation = sampleToConversation(sample);
  const metadata = conversation.metadata as Record<string, Json>;
  const start: ConversationStart = { timestamp: conversation.metadata.timestamp, user: conversation.user as ConversationStart['user'] };
  const meta = toolTalkMetaOf(sample);
  const overlay = meta.overlay as Record<string, Json>;
  const recorded = meta.toolsImported ? conversation.conversation.flatMap((turn) => (turn.apis ?? []).map((api) => ({ request: api.request, response: api.response, exception: api.exception }) as CallRecord)) : undefined;
  const items: EvalItem[] = [];
  const history: ToolRequest[] = [];
  conversation.conversation.forEach((turn, position) => {
    if (turn.role !== 'assistant') return;
    const apis = (turn.apis ?? []).map((api) => ({ request: api.request, response: api.response, exception: api.exception }) as CallRecord);
    const gold: ToolTalkGold = { turn: position, start, overlay, history: [...history], apis, reply: turn.text, ...(recorded ? { recorded } : {}) };
    items.push({
      id: `${sample.id}#${position}`,
      sampleId: sample.id,
      category: sample.category,
      messages: [{ role: 'system', content: SYSTEM_PROMPT(metadata) }, ...dialogueMessages({ ...sample, dialogue: sample.dialogue.slice(0, position) }).map((message) => ({ ...message }))],
      tools: sample.tools,
      gold: gold as unknown as Json,
      turn: position,
    });
    history.push(...apis.map((api) => api.request));
  });
  return items;
}

/** The turn's ground-truth calls as a perfect model writes them (no session token: the executor supplies it). */
export function toolTalkOracle(item: EvalItem): string {
  const gold = item.gold as unknown as ToolTalkGold;
  return JSON.stringify(gold.apis.map(({ request }) => ({ api_name: request.api_name, parameters: withoutSessionToken(request.parameters) })));
}

/** A chat model's reply as the turn's answer: its calls as `{"api_name", "parameters"}`; a reply in words is a turn without calls (`[]`). */
export function toolTalkAnswerOfReply(_item: EvalItem, reply: ModelReply): string {
  return JSON.stringify(reply.calls.map((call) => ({ api_name: call.name, parameters: call.arguments })));
}

export function withoutSessionToken(parameters: Record<string, Json> | null): Record<string, Json> | null {
  if (parameters === null) return null;
  const { session_token: _token, ...rest } = parameters;
  return rest;
}

/** A model's output read as the calls it makes; `note` says what could not be read and how it counts. */
export interface PredictedCalls {
  requests: ToolRequest[];
  note?: string;
}

/**
 * Reads a model's output. Output that is not a JSON list is a turn answered in text (no calls), as
 * the repository reads a reply without a function call; a listed call whose arguments cannot be read
 * is still a call, with parameters null (the executor answers it "Failed to parse API call").
 */
export function parsePredictedCalls(output: string | null): PredictedCalls {
  if (output === null) return { requests: [], note: 'no output: counted as a turn without calls' };
  let value: unknown;
  try {
    value = JSON.parse(output);
  } catch {
    return { requests: [], note: 'output is not JSON: counted as a turn answered without calls' };
  }
  if (!Array.isArray(value)) return { requests: [], note: 'output is not a JSON list of calls: counted as a turn answered without calls' };
  const unread: number[] = [];
  const requests = value.map((entry, index): ToolRequest => {
    const call = (entry && typeof entry === 'object' && !Array.isArray(entry) ? entry : {}) as Record<string, unknown>;
    const fn = (call.function && typeof call.function === 'object' ? call.function : {}) as Record<string, unknown>;
    const name = call.api_name ?? call.tool ?? call.name ?? fn.name;
    let parameters: unknown = call.parameters ?? call.arguments ?? fn.arguments ?? {};
    if (typeof parameters === 'string') {
      try {
        parameters = JSON.parse(parameters);
      } catch {
        parameters = null;
      }
    }
    const readable = typeof name === 'string' && parameters !== null && typeof parameters === 'object' && !Array.isArray(parameters);
    if (!readable) unread.push(index + 1);
    return { api_name: typeof name === 'string' ? name : '', parameters: readable ? (parameters as Record<string, Json>) : null };
  });
  return { requests, ...(unread.length ? { note: `call ${unread.join(', ')}: name or arguments unreadable (executed as "Failed to parse API call")` } : {}) };
}
