import { readFileSync } from 'node:fs';
import { Template } from '@huggingface/jinja';
import type { TrlRow } from '../../stages/export/trl.ts';

/**
 * vLLM's tool-calling chat templates (test/fixtures/chat-templates/, see its README), rendered with
 * `@huggingface/jinja` as `tokenizer.apply_chat_template(messages, tools=tools)` renders them, and
 * each template's calls and results read back from the text in the template's own notation: what a
 * model trained on the text learns to write, and what a parser of that notation gets back.
 */
export interface ReadBack {
  calls: { name: string; arguments: unknown }[];
  /** Each tool result's content, parsed as JSON. */
  results: unknown[];
}

export interface ChatTemplate {
  name: string;
  render(row: Pick<TrlRow, 'messages' | 'tools'>): string;
  readBack(text: string): ReadBack;
}

const FIXTURES = new URL('../fixtures/chat-templates/', import.meta.url).pathname;

function template(file: string, edit: (text: string) => string = (text) => text): (row: Pick<TrlRow, 'messages' | 'tools'>) => string {
  const compiled = new Template(edit(readFileSync(`${FIXTURES}${file}`, 'utf8')));
  // What transformers passes besides the row (`raise_exception` is @huggingface/jinja's own).
  return (row) => compiled.render({ messages: row.messages, tools: row.tools, bos_token: '<s>', eos_token: '</s>', add_generation_prompt: false });
}

const matches = (text: string, pattern: RegExp) => [...text.matchAll(pattern)].map((m) => m.slice(1));

/** Hermes: `<tool_call>\n{"name": "<name>"}, "arguments": <json>\n</tool_call>` and `<tool_response>\n<content>\n</tool_response>`. */
export const hermes: ChatTemplate = {
  name: 'hermes',
  render: template('tool_chat_template_hermes.jinja'),
  readBack: (text) => ({
    calls: matches(text, /<tool_call>\n\{"name": "([^"]*)"\}, "arguments": (.*?)\n<\/tool_call>/gs).map(([name, args]) => ({ name, arguments: JSON.parse(args) })),
    // The system prompt's own example call is not a call of the row.
    results: matches(text, /<tool_response>\n(.*?)\n<\/tool_response>/gs).map(([content]) => JSON.parse(content)),
  }),
};

/**
 * @huggingface/jinja (0.5.11) raises "Cannot access property with non-string: got UndefinedValue" on
 * `mapping[undefined]`, where Jinja2 (Python, what transformers runs) gives an undefined value. The
 * Hermes template's type macro looks up `basic_type_map[json_spec.type]` for a parameter without a
 * `type` and, through `json_spec|items`, for every array parameter. This copy guards that one lookup
 * (`json_spec.type is defined and …`), which changes only the Python-type hints it writes in a
 * tool's description for those parameters, never a call or a result.
 */
export const hermesGuarded: ChatTemplate = {
  ...hermes,
  name: 'hermes (type lookup guarded)',
  render: template('tool_chat_template_hermes.jinja', (text) => {
    const lookup = 'basic_type_map[json_spec.type] is defined';
    if (!text.includes(`{%- if ${lookup} %}`)) throw new Error('the Hermes template no longer has the type lookup this copy guards');
    return text.replace(`{%- if ${lookup} %}`, `{%- if json_spec.type is defined and ${lookup} %}`);
  }),
};

/** Whether @huggingface/jinja raises on a row's tools in the Hermes template: a parameter without a type, or an array. */
export function hermesLookupRaises(row: Pick<TrlRow, 'tools'>): boolean {
  return row.tools.some((tool) => Object.values((tool.function.parameters as { properties?: Record<string, { type?: unknown }> }).properties ?? {}).some((p) => p.type === undefined || p.type === 'array'));
}

/** Llama 3.1 JSON: an assistant block `{"name": …, "parameters": …}`, an `ipython` block `{"output": <content>}`. */
export const llama31Json: ChatTemplate = {
  name: 'llama3.1_json',
  render: template('tool_chat_template_llama3.1_json.jinja'),
  readBack: (text) => {
    const blocks = matches(text, /<\|start_header_id\|>(\w+)<\|end_header_id\|>\n\n(.*?)<\|eot_id\|>/gs);
    const calls = blocks
      .filter(([role]) => role === 'assistant')
      .map(([, body]) => jsonOrUndefined(body))
      .filter((value): value is { name: string; parameters: unknown } => !!value && typeof value === 'object' && 'name' in value && 'parameters' in value)
      .map((call) => ({ name: call.name, arguments: call.parameters }));
    const results = blocks.filter(([role]) => role === 'ipython').map(([, body]) => JSON.parse((JSON.parse(body) as { output: string }).output));
    return { calls, results };
  },
};

/** Mistral: `[TOOL_CALLS] [{"name", "arguments", "id"}, …]</s>` and `[TOOL_RESULTS] {"content": <content>, "call_id": …}[/TOOL_RESULTS]`. */
export const mistral: ChatTemplate = {
  name: 'mistral',
  render: template('tool_chat_template_mistral.jinja'),
  readBack: (text) => ({
    calls: matches(text, /\[TOOL_CALLS\] (\[.*?\])<\/s>/gs).flatMap(([list]) => (JSON.parse(list) as { name: string; arguments: unknown }[]).map(({ name, arguments: args }) => ({ name, arguments: args }))),
    results: matches(text, /\[TOOL_RESULTS\] (.*?)\[\/TOOL_RESULTS\]/gs).map(([body]) => (JSON.parse(body) as { content: unknown }).content),
  }),
};

export const CHAT_TEMPLATES = [hermes, llama31Json, mistral];

function jsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A row's calls and results as every template should give them back. */
export function rowCallsAndResults(row: Pick<TrlRow, 'messages'>): ReadBack {
  return {
    calls: row.messages.flatMap((m) => m.tool_calls ?? []).map((call) => ({ name: call.function.name, arguments: call.function.arguments })),
    results: row.messages.filter((m) => m.role === 'tool').map((m) => JSON.parse(m.content)),
  };
}
