import type { EvalItem, ModelReply, ReplyCall } from '../core/eval.ts';
import type { Json } from '../core/records.ts';
import { openAIFunctionName } from '../stages/export/openai-chat.ts';

/**
 * A predictions line written by a model trained on chat data (`export --format trl` or `sharegpt`):
 * what the model generated for an item, in one of the shapes such a model (or the server running it)
 * gives, read into its calls and text. Besides `id`, a line has exactly one of:
 *
 * - `message`: one assistant message, OpenAI / TRL style (`{"role": "assistant", "content": …,
 *   "tool_calls": [{"type": "function", "function": {"name", "arguments"}, "id"?}]}`, `arguments` a
 *   JSON object or its text) or a ShareGPT turn (`{"from": "function_call", "value": "<a call or a
 *   list of calls as JSON>"}`, `{"from": "gpt", "value": "<text>"}`);
 * - `messages`: several such messages, the item's whole answer in order, with the `tool` (or
 *   ShareGPT `observation`) results between them that the model was shown: a turn whose later
 *   calls came after earlier results (each result goes to the call its `tool_call_id` names, else
 *   to the first call still without one: calls read from text have no ids); an assistant message whose text holds calls (a model served
 *   without a tool parser) is read as `text` is;
 * - `tool_calls`: the `tool_calls` list alone;
 * - `text`: the generated text as it came, its calls in Hermes `<tool_call>{…}</tool_call>` blocks,
 *   as Llama 3.1 JSON (`{"name", "parameters"}`, several joined by `;`), or after Mistral's
 *   `[TOOL_CALLS]` (`[{"name", "arguments"}, …]`, or `name[ARGS]{…}`); text without calls is a reply.
 *
 * A line that fits none of them is a `ReplyError` (the caller names the file and line). Generated
 * text whose call block is not JSON is not an error: it is the model's answer, kept as text.
 */
export const REPLY_FIELDS = ['message', 'messages', 'tool_calls', 'text'] as const;

export class ReplyError extends Error {}

/** The reply a line gives in one of REPLY_FIELDS (the caller checked exactly one is present). */
export function readReply(line: Record<string, unknown>): ModelReply {
  if ('text' in line) {
    if (typeof line.text !== 'string') throw new ReplyError('"text" must be the text the model generated (a string)');
    return replyOfText(line.text);
  }
  if ('tool_calls' in line) return { calls: toolCalls(line.tool_calls, '"tool_calls"'), text: null };
  if ('message' in line) return joined([messageReply(line.message, '"message"')]);
  const messages = line.messages;
  if (!Array.isArray(messages) || !messages.length) throw new ReplyError('"messages" must be a non-empty list of the assistant\'s messages');
  const replies: ModelReply[] = [];
  messages.forEach((message, i) => {
    const where = `message ${i + 1} of "messages"`;
    const reply = messageReply(message, where);
    if (reply) replies.push(reply);
    else withResult(replies.flatMap((r) => r.calls), message as Record<string, unknown>, where);
  });
  return joined(replies);
}

/** A tool result between the assistant's messages, given to its call: the one its `tool_call_id` names, else the first call still without one. */
function withResult(calls: ReplyCall[], message: Record<string, unknown>, where: string): void {
  const content = 'value' in message ? message.value : message.content;
  if (typeof content !== 'string') throw new ReplyError(`${where}: a tool result's content must be text`);
  const named = typeof message.tool_call_id === 'string' ? calls.find((c) => c.id === message.tool_call_id) : undefined;
  const call = named ?? calls.find((c) => !('result' in c));
  if (!call) return;
  const parsed = jsonOf(content);
  call.result = parsed === undefined ? content : (parsed as Json);
}

function joined(replies: (ModelReply | null)[]): ModelReply {
  const texts = replies.map((reply) => reply?.text).filter((text): text is string => !!text);
  return { calls: replies.flatMap((reply) => reply?.calls ?? []), text: texts.length ? texts.join('\n\n') : null };
}

/** An assistant message (OpenAI or ShareGPT); null for a tool result between them. */
function messageReply(message: unknown, where: string): ModelReply | null {
  if (!isObject(message)) throw new ReplyError(`${where} is not a JSON object; write the assistant message ({"role": "assistant", "content": …, "tool_calls": […]} or {"from": "function_call", "value": …})`);
  if ('from' in message) {
    const { from, value } = message;
    if (from === 'observation') return null;
    if (typeof value !== 'string') throw new ReplyError(`${where}: "value" of a ShareGPT turn must be a string`);
    if (from === 'function_call') {
      const parsed = jsonOf(value);
      if (parsed === undefined) throw new ReplyError(`${where}: "value" of the function_call turn is not JSON (${value.slice(0, 60)}); write {"name": …, "arguments": {…}} or a list of them`);
      return { calls: namedCalls(Array.isArray(parsed) ? parsed : [parsed], `${where}'s value`), text: null };
    }
    if (from === 'gpt') return { calls: [], text: value };
    throw new ReplyError(`${where}: "from" is ${JSON.stringify(from)}; an answer is a "function_call" or "gpt" turn`);
  }
  const { role, content } = message;
  if (role === 'tool') return null;
  if (role !== undefined && role !== 'assistant') throw new ReplyError(`${where}: "role" is ${JSON.stringify(role)}; an answer is an "assistant" message`);
  if (content !== undefined && content !== null && typeof content !== 'string') throw new ReplyError(`${where}: "content" must be text or null`);
  const calls = message.tool_calls === undefined || message.tool_calls === null ? [] : toolCalls(message.tool_calls, `${where}'s "tool_calls"`);
  // A message without parsed calls may hold them in its text, as a model served without a tool parser writes them.
  if (!calls.length && typeof content === 'string') return replyOfText(content);
  return { calls, text: content || null };
}

/** An OpenAI `tool_calls` list: `{function: {name, arguments}, id?}` (or `{name, arguments}`). */
function toolCalls(value: unknown, where: string): ReplyCall[] {
  if (!Array.isArray(value)) throw new ReplyError(`${where} must be a list of calls ({"type": "function", "function": {"name": …, "arguments": …}})`);
  return value.map((entry, i) => {
    const at = `call ${i + 1} of ${where}`;
    if (!isObject(entry)) throw new ReplyError(`${at} is not a JSON object`);
    const fn = isObject(entry.function) ? entry.function : entry;
    const call = namedCall(fn, at);
    return typeof entry.id === 'string' && entry.id ? { ...call, id: entry.id } : call;
  });
}

function namedCalls(values: unknown[], where: string): ReplyCall[] {
  return values.map((value, i) => {
    if (!isObject(value)) throw new ReplyError(`call ${i + 1} of ${where} is not a JSON object ({"name": …, "arguments": {…}})`);
    return namedCall(value, `call ${i + 1} of ${where}`);
  });
}

/** `{name, arguments}` (`parameters` as Llama writes it); arguments a JSON object or the text of one. */
function namedCall(value: Record<string, unknown>, where: string): ReplyCall {
  const { name } = value;
  if (typeof name !== 'string' || !name) throw new ReplyError(`${where} has no function "name"`);
  let args: unknown = value.arguments ?? value.parameters ?? {};
  if (typeof args === 'string') {
    const parsed = jsonOf(args);
    if (!isObject(parsed)) throw new ReplyError(`${where} (${name}): "arguments" is text that is not a JSON object (${args.slice(0, 60)}); give the arguments the model wrote as a JSON object, or the generated text as "text"`);
    args = parsed;
  }
  if (!isObject(args)) throw new ReplyError(`${where} (${name}): "arguments" must be a JSON object`);
  const id = typeof value.id === 'string' && value.id ? { id: value.id } : {};
  return { name, arguments: args as Record<string, Json>, ...id };
}

// ---------------------------------------------------------------- generated text

const HERMES = /<tool_call>\s*([\s\S]*?)\s*(?:<\/tool_call>|$)/g;
const MISTRAL = '[TOOL_CALLS]';

/** Generated text read for calls in the three formats; calls that cannot be read leave the text as the answer. */
export function replyOfText(text: string): ModelReply {
  if (text.includes('<tool_call>')) {
    const calls: ReplyCall[] = [];
    for (const [, body] of text.matchAll(HERMES)) {
      const call = hermesCall(body);
      if (!call) return { calls: [], text };
      calls.push(call);
    }
    const rest = text.replace(HERMES, '').trim();
    return { calls, text: rest || null };
  }
  const mistral = text.indexOf(MISTRAL);
  if (mistral >= 0) {
    const calls = mistralCalls(text.slice(mistral + MISTRAL.length));
    if (!calls) return { calls: [], text };
    const before = text.slice(0, mistral).trim();
    return { calls, text: before || null };
  }
  const llama = llamaCalls(text);
  return llama ? { calls: llama, text: null } : { calls: [], text };
}

/** `{"name", "arguments"}`, or the form vLLM's Hermes template writes: `{"name": "f"}, "arguments": {…}`. */
function hermesCall(body: string): ReplyCall | undefined {
  const whole = jsonOf(body);
  const quirk = /^\{"name":\s*("(?:[^"\\]|\\.)*")\},\s*"arguments":\s*([\s\S]*)$/.exec(body);
  const value = isObject(whole) ? whole : quirk ? { name: jsonOf(quirk[1]), arguments: jsonOf(quirk[2]) } : undefined;
  return value ? lenientCall(value) : undefined;
}

/** `[TOOL_CALLS] [{"name", "arguments", "id"?}, …]` (v3) or `[TOOL_CALLS]name[ARGS]{…}` (v11 and later), up to `</s>`. */
function mistralCalls(rest: string): ReplyCall[] | undefined {
  const body = rest.replace(/<\/s>\s*$/, '').trim();
  const list = jsonOf(body);
  if (Array.isArray(list)) {
    const calls = list.map((entry) => (isObject(entry) ? lenientCall(entry) : undefined));
    return calls.every((call) => call) ? (calls as ReplyCall[]) : undefined;
  }
  const calls: ReplyCall[] = [];
  for (const part of body.split(MISTRAL)) {
    const match = /^\s*([^\s[]+)\[ARGS\]([\s\S]*)$/.exec(part);
    const args = match && jsonOf(match[2].trim());
    if (!match || !isObject(args)) return undefined;
    calls.push({ name: match[1], arguments: args as Record<string, Json> });
  }
  return calls.length ? calls : undefined;
}

/** Llama 3.1 JSON: the whole text (after `<|python_tag|>`) one call object, a list of them, or several joined by `;`. */
function llamaCalls(text: string): ReplyCall[] | undefined {
  const body = text.replace(/^\s*<\|python_tag\|>/, '').replace(/<\|(eot_id|eom_id)\|>\s*$/, '').trim();
  if (!body.startsWith('{') && !body.startsWith('[')) return undefined;
  const whole = jsonOf(body);
  const parts = whole !== undefined ? (Array.isArray(whole) ? whole : [whole]) : body.split(/;\s*(?=\{)/).map(jsonOf);
  const calls = parts.map((part) => (isObject(part) && ('parameters' in part || 'arguments' in part) ? lenientCall(part) : undefined));
  return calls.length && calls.every((call) => call) ? (calls as ReplyCall[]) : undefined;
}

/** A call in generated text: unreadable (no name, arguments not an object) is undefined, never an error. */
function lenientCall(value: Record<string, unknown>): ReplyCall | undefined {
  try {
    return namedCall(value, 'call');
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------- names

/**
 * The reply with each call named as the item's tool: a chat export writes a tool whose name OpenAI
 * refuses with `_` in place of each refused character (stages/export/openai-chat.ts), and a model
 * trained on it calls it so. A name no tool has stays as it is (the benchmark scores it wrong).
 */
export function withToolNames(reply: ModelReply, item: EvalItem): ModelReply {
  const names = new Map(item.tools.map((tool) => [tool.name, tool.name]));
  for (const tool of item.tools) if (!names.has(openAIFunctionName(tool.name))) names.set(openAIFunctionName(tool.name), tool.name);
  return { ...reply, calls: reply.calls.map((call) => ({ ...call, name: names.get(call.name) ?? call.name })) };
}

function jsonOf(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return !!value && typeof value === 'object' && !Array.isArray(value);
}
