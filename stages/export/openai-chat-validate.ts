import { existsSync } from 'node:fs';
import { UserError } from '../../core/errors.ts';
import { jsonlTexts } from '../../core/jsonl.ts';
import { isJsonObject } from '../../core/records.ts';
import { jsonValueOf } from '../../core/source-files.ts';

/**
 * OpenAI's chat fine-tuning format with tool calling, checked line by line: one JSON object per
 * line with `messages` (and optionally `tools`, `parallel_tool_calls`); roles system / developer /
 * user / assistant / tool; an assistant message holds text or `tool_calls` (`id`, `type:
 * "function"`, `function.name`, `function.arguments` as a JSON-object string); every call that is
 * not the last message is answered by a `tool` message whose `tool_call_id` names it, right after
 * it; `tools` are functions with a JSON-Schema object as parameters, and every call names one of
 * them. Each example has an assistant message and ends with one (a trailing user or tool message
 * trains nothing). Each problem is one line: `<file>:<line>: <what is wrong>`.
 */

/** OpenAI's rule for function names. */
export const FUNCTION_NAME = /^[A-Za-z0-9_-]{1,64}$/;

const TOP_KEYS = new Set(['messages', 'tools', 'parallel_tool_calls']);
const MESSAGE_KEYS: Record<string, Set<string>> = {
  system: new Set(['role', 'content', 'name']),
  developer: new Set(['role', 'content', 'name']),
  user: new Set(['role', 'content', 'name']),
  assistant: new Set(['role', 'content', 'name', 'tool_calls', 'weight', 'refusal']),
  tool: new Set(['role', 'content', 'tool_call_id']),
};
const FUNCTION_KEYS = new Set(['name', 'description', 'parameters', 'strict']);

const isText = (value: unknown) => typeof value === 'string' && value.trim().length > 0;
/** A content value: a non-empty string, or a list of text parts. */
const isContent = (value: unknown) =>
  isText(value) || (Array.isArray(value) && value.length > 0 && value.every((part) => isJsonObject(part) && part.type === 'text' && typeof part.text === 'string'));

/** The problems of one line's example (none when it is valid). */
export function chatExampleProblems(example: unknown): string[] {
  if (!isJsonObject(example)) return ['an example is a JSON object {"messages": [...], "tools"?: [...]}'];
  const problems: string[] = [];
  for (const key of Object.keys(example)) if (!TOP_KEYS.has(key)) problems.push(`unknown key "${key}" (an example holds only messages, tools, parallel_tool_calls)`);
  if (example.parallel_tool_calls !== undefined && typeof example.parallel_tool_calls !== 'boolean') problems.push('parallel_tool_calls must be true or false');
  const toolNames = toolProblems(example.tools, problems);
  const messages = example.messages;
  if (!Array.isArray(messages) || messages.length === 0) return [...problems, 'messages must be a non-empty list'];
  /** Calls of the last assistant message still waiting for their tool message. */
  let pending: string[] = [];
  const seenCallIds = new Set<string>();
  let assistants = 0;
  messages.forEach((message, i) => {
    const at = `messages[${i}]`;
    if (!isJsonObject(message)) return void problems.push(`${at} is not an object`);
    const role = message.role;
    if (typeof role !== 'string' || !MESSAGE_KEYS[role]) return void problems.push(`${at}.role ${JSON.stringify(role)} is not one of system, developer, user, assistant, tool`);
    for (const key of Object.keys(message)) if (!MESSAGE_KEYS[role].has(key)) problems.push(`${at} (${role}) has unknown key "${key}"`);
    if (pending.length && role !== 'tool') {
      problems.push(`${at}: the tool call(s) ${pending.join(', ')} before it have no tool message (each call must be answered right after its assistant message)`);
      pending = [];
    }
    if (role === 'tool') {
      if (!isContent(message.content)) problems.push(`${at}.content must be the tool's result as a non-empty string`);
      const id = message.tool_call_id;
      if (typeof id !== 'string' || !id) problems.push(`${at}.tool_call_id is missing`);
      else if (!pending.includes(id)) problems.push(`${at}.tool_call_id "${id}" answers no call of the assistant message before it`);
      else pending = pending.filter((p) => p !== id);
      return;
    }
    if (role !== 'assistant') {
      if (!isContent(message.content)) problems.push(`${at}.content must be a non-empty string`);
      return;
    }
    assistants++;
    if (message.weight !== undefined && message.weight !== 0 && message.weight !== 1) problems.push(`${at}.weight must be 0 or 1`);
    const calls = message.tool_calls;
    if (calls === undefined) {
      if (!isContent(message.content)) problems.push(`${at}: an assistant message without tool_calls needs a non-empty content`);
      return;
    }
    if (message.content !== undefined && message.content !== null && typeof message.content !== 'string') problems.push(`${at}.content must be a string or null beside tool_calls`);
    if (!Array.isArray(calls) || calls.length === 0) return void problems.push(`${at}.tool_calls must be a non-empty list`);
    calls.forEach((call, j) => {
      const cat = `${at}.tool_calls[${j}]`;
      if (!isJsonObject(call)) return void problems.push(`${cat} is not an object`);
      if (typeof call.id !== 'string' || !call.id) problems.push(`${cat}.id is missing`);
      else if (seenCallIds.has(call.id)) problems.push(`${cat}.id "${call.id}" is used twice in the example`);
      else {
        seenCallIds.add(call.id);
        pending.push(call.id);
      }
      if (call.type !== 'function') problems.push(`${cat}.type must be "function"`);
      const fn = call.function;
      if (!isJsonObject(fn)) return void problems.push(`${cat}.function is missing`);
      if (typeof fn.name !== 'string' || !FUNCTION_NAME.test(fn.name)) problems.push(`${cat}.function.name ${JSON.stringify(fn.name)} is not a function name (letters, digits, _ and -, at most 64)`);
      else if (toolNames && !toolNames.has(fn.name)) problems.push(`${cat}.function.name "${fn.name}" is not among the example's tools`);
      if (typeof fn.arguments !== 'string') problems.push(`${cat}.function.arguments must be a JSON string, not ${Array.isArray(fn.arguments) ? 'a list' : typeof fn.arguments}`);
      else if (!isJsonObject(jsonValueOf(fn.arguments))) problems.push(`${cat}.function.arguments is not a JSON object: ${fn.arguments.slice(0, 60)}`);
    });
  });
  // A final call left unanswered is the gold answer itself (the example ends on it).
  if (assistants === 0) problems.push('no assistant message: an example trains on what the assistant says');
  else if (isJsonObject(messages.at(-1)) && (messages.at(-1) as Record<string, unknown>).role !== 'assistant') problems.push(`the last message is a ${(messages.at(-1) as Record<string, unknown>).role} message; an example ends with the assistant's`);
  return problems;
}

/** Checks `tools`; returns the names it declares (undefined when there is no list to check calls against). */
function toolProblems(tools: unknown, problems: string[]): Set<string> | undefined {
  if (tools === undefined) return undefined;
  if (!Array.isArray(tools)) {
    problems.push('tools must be a list');
    return undefined;
  }
  const names = new Set<string>();
  tools.forEach((tool, i) => {
    const at = `tools[${i}]`;
    if (!isJsonObject(tool) || tool.type !== 'function' || !isJsonObject(tool.function)) return void problems.push(`${at} must be {"type": "function", "function": {...}}`);
    const fn = tool.function;
    for (const key of Object.keys(fn)) if (!FUNCTION_KEYS.has(key)) problems.push(`${at}.function has unknown key "${key}"`);
    if (typeof fn.name !== 'string' || !FUNCTION_NAME.test(fn.name)) problems.push(`${at}.function.name ${JSON.stringify(fn.name)} is not a function name (letters, digits, _ and -, at most 64)`);
    else if (names.has(fn.name)) problems.push(`${at}.function.name "${fn.name}" is declared twice`);
    else names.add(fn.name);
    if (fn.description !== undefined && typeof fn.description !== 'string') problems.push(`${at}.function.description must be a string`);
    if (fn.parameters !== undefined) schemaProblems(fn.parameters, `${at}.function.parameters`, problems);
  });
  return names;
}

/** A function's parameters: a JSON-Schema object whose properties are schemas and whose required names are properties. */
function schemaProblems(schema: unknown, at: string, problems: string[]): void {
  if (!isJsonObject(schema)) return void problems.push(`${at} must be a JSON-Schema object`);
  if (schema.type !== 'object') problems.push(`${at}.type must be "object"`);
  const properties = schema.properties ?? {};
  if (!isJsonObject(properties)) return void problems.push(`${at}.properties must be an object`);
  for (const [name, property] of Object.entries(properties)) if (!isJsonObject(property)) problems.push(`${at}.properties.${name} must be a schema object`);
  const required = schema.required ?? [];
  if (!Array.isArray(required) || !required.every((r) => typeof r === 'string')) return void problems.push(`${at}.required must be a list of names`);
  for (const name of required) if (!(name in properties)) problems.push(`${at}.required names "${name}", which is not among its properties`);
}


/** The problems of one line's text (JSON first, then the example). */
export function chatLineProblems(text: string): string[] {
  let example: unknown;
  try {
    example = JSON.parse(text);
  } catch (error) {
    return [`not JSON (${(error as Error).message})`];
  }
  return chatExampleProblems(example);
}

/** Every problem of a JSONL file, one line each: `<file>:<line>: <problem>`. */
export function validateChatFile(path: string, shown = path): string[] {
  if (!existsSync(path)) throw new UserError(`${shown}: no such file to validate`);
  const out: string[] = [];
  for (const { text, number } of jsonlTexts(path)) for (const problem of chatLineProblems(text)) out.push(`${shown}:${number}: ${problem}`);
  return out;
}
