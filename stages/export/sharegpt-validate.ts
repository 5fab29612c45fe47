import { isJsonObject } from '../../core/records.ts';
import { jsonValueOf } from '../../core/source-files.ts';

/**
 * LLaMA-Factory's rules for a `formatting: sharegpt` row with tools, as its own code applies them
 * (src/llamafactory/data/converter.py `SharegptDatasetConverter`, data/formatter.py
 * `FunctionFormatter` and `ToolFormatter`, data/tool_utils.py):
 *
 * - after an optional first message tagged `system`, the messages alternate: positions 0, 2, 4, …
 *   are `human` or `observation`, positions 1, 3, 5, … are `gpt` or `function_call`; a message
 *   out of place makes the converter skip the whole row ("Invalid role tag");
 * - a row has an even number of messages (the last one is what is learnt), else it is skipped
 *   ("Invalid message count");
 * - a `function_call` value is JSON, `{"name", "arguments"}` or a list of them (parallel calls);
 *   other text raises "Invalid JSON format in function message" (a thought can only precede the
 *   JSON inside a template's thought words, which differ by template);
 * - `tools` is JSON text of a list of functions (`{name, description, parameters}`, or wrapped as
 *   `{type: "function", function: …}`) whose `parameters.properties` the tool formatters read.
 *
 * And one rule of this format's own, stricter than the converter (which would take a `human` after
 * a `function_call`): a `function_call` that does not end the row is answered by an `observation`.
 */
export const SHAREGPT_TAGS = {
  role_tag: 'from',
  content_tag: 'value',
  user_tag: 'human',
  assistant_tag: 'gpt',
  observation_tag: 'observation',
  function_tag: 'function_call',
} as const;

const ODD = new Set<string>([SHAREGPT_TAGS.user_tag, SHAREGPT_TAGS.observation_tag]);
const EVEN = new Set<string>([SHAREGPT_TAGS.assistant_tag, SHAREGPT_TAGS.function_tag]);

/** The problems of one row (none when LLaMA-Factory takes it). */
export function shareGptRowProblems(row: unknown): string[] {
  if (!isJsonObject(row)) return ['a row is a JSON object {"conversations": [...], "tools": "..."}'];
  const problems: string[] = [];
  let messages = row.conversations;
  if (!Array.isArray(messages) || messages.length === 0) return ['conversations must be a non-empty list'];
  if (isJsonObject(messages[0]) && messages[0].from === 'system') messages = messages.slice(1);
  messages.forEach((message, i) => {
    const at = `conversations[${i}]`;
    if (!isJsonObject(message) || typeof message.from !== 'string' || typeof message.value !== 'string') return void problems.push(`${at} must be {"from": <tag>, "value": <text>}`);
    const allowed = i % 2 === 0 ? ODD : EVEN;
    if (!allowed.has(message.from)) problems.push(`${at}.from is "${message.from}" where ${[...allowed].join(' or ')} must stand (LLaMA-Factory skips the row: "Invalid role tag")`);
    if (message.from === SHAREGPT_TAGS.function_tag) {
      problems.push(...functionCallProblems(message.value, at));
      const next = messages[i + 1];
      if (next !== undefined && (!isJsonObject(next) || next.from !== SHAREGPT_TAGS.observation_tag)) problems.push(`${at}: a function_call that does not end the row is followed by its observation`);
    }
  });
  if (messages.length % 2 !== 0) problems.push(`${messages.length} messages after the system one: LLaMA-Factory wants an even count, ending with what is learnt ("Invalid message count")`);
  if (typeof row.tools !== 'string') problems.push('tools must be JSON text (a string)');
  else problems.push(...toolsProblems(row.tools));
  return problems;
}

/** A function_call value as `FunctionFormatter` parses it: a call object or a list of them. */
function functionCallProblems(value: string, at: string): string[] {
  const parsed = jsonValueOf(value);
  const calls = Array.isArray(parsed) ? parsed : [parsed];
  if (parsed === undefined || calls.length === 0) return [`${at}.value is not JSON of a call or a list of calls ("Invalid JSON format in function message")`];
  return calls.flatMap((call, j) => (isJsonObject(call) && typeof call.name === 'string' && 'arguments' in call ? [] : [`${at}.value call ${j} has no "name" and "arguments"`]));
}

/** The tools text as `ToolFormatter` reads it. */
function toolsProblems(text: string): string[] {
  const tools = jsonValueOf(text);
  if (!Array.isArray(tools)) return ['tools is not JSON text of a list of functions ("Invalid JSON format in tool description")'];
  return tools.flatMap((tool, i) => {
    const fn = isJsonObject(tool) && tool.type === 'function' ? tool.function : tool;
    if (!isJsonObject(fn) || typeof fn.name !== 'string') return [`tools[${i}] has no name`];
    const parameters = fn.parameters;
    return isJsonObject(parameters) && isJsonObject(parameters.properties) ? [] : [`tools[${i}] (${fn.name}) has no parameters.properties object`];
  });
}
