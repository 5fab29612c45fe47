import { join } from 'node:path';
import { UserError } from '../../core/errors.ts';
import { AtomicJsonlFile } from '../../core/jsonl.ts';
import type { Exporter, ExportOptions } from '../../core/pipeline.ts';
import { isRef, parseRef, toOpenAITool, type ArgValue, type Call, type OpenAIFunctionTool, type Sample, type ToolSpec, type Turn } from '../../core/records.ts';
import { chatExampleProblems, FUNCTION_NAME } from './openai-chat-validate.ts';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | null;
  tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

export interface ChatExample {
  messages: ChatMessage[];
  tools?: OpenAIFunctionTool[];
}

/** The gold answer a recipe knows how to write for a sample whose answer is not just its gold calls (a refusal, a question back). */
export type GoldReply = (sample: Sample) => { content?: string; calls?: Call[] } | undefined;

export interface ChatOptions extends ExportOptions {
  goldReply?: GoldReply;
}

/**
 * One sample as an OpenAI chat fine-tuning example: `{messages, tools}`, assistant turns with
 * `tool_calls` and a `tool` message per observation. A sample whose dialogue stops before its
 * answer (the gold in `expected`: calls, the calls of a later turn, or labels) ends with the
 * assistant's gold calls or text; a recipe's `goldReply` writes answers only it knows (ACEBench's
 * refusals). The example ends with the last assistant message: a closing user line ("thanks,
 * that's all") has no answer to train on. A `$ref` argument is filled with the producing call's
 * observed value when there is one, else written as the `<call>.<field>` text it stands for; a call
 * that uses the result of another call of its own turn comes in an assistant message after that
 * result (callsAfterTheirInputs), so the value is always one the model was shown. The trl and
 * sharegpt exports build on this: every chat export carries a dependent call the same way.
 * Tool names OpenAI does not accept are written with `_` for each character it refuses.
 */
export function sampleToChat(given: Sample, options: ChatOptions = {}): ChatExample {
  const sample = callsAfterTheirInputs(given);
  const names = openAINames(sample);
  const { messages, rendered, callMessage } = dialogueChat(sample, names);
  if (messages.at(-1)?.role !== 'assistant') {
    const gold = options.goldReply?.(sample) ?? goldOf(sample, rendered);
    if (gold?.calls?.length) messages.push(callMessage(gold.calls, gold.content ?? null));
    else if (gold?.content) messages.push({ role: 'assistant', content: gold.content });
  }
  // With no assistant message at all, nothing is dropped: the check names what is missing.
  if (messages.some((m) => m.role === 'assistant')) while (messages.at(-1)!.role !== 'assistant') messages.pop();
  const tools = sample.tools.map((tool) => chatTool(tool, names.get(tool.name)!, options.keepExtensions ?? false));
  return { messages, ...(tools.length ? { tools } : {}) };
}

/** A sample's dialogue as chat messages, as it stands: no gold answer added, nothing dropped (what a model is shown). */
export function dialogueMessages(sample: Sample): ChatMessage[] {
  return dialogueChat(callsAfterTheirInputs(sample), openAINames(sample)).messages;
}

function dialogueChat(sample: Sample, names: Map<string, string>) {
  const messages: ChatMessage[] = [];
  const observed: Record<string, unknown> = {};
  const rendered = new Set<string>();
  const callMessage = (calls: Call[], content: string | null): ChatMessage => {
    for (const call of calls) rendered.add(call.id);
    return {
      role: 'assistant',
      content,
      tool_calls: calls.map((call) => ({ id: call.id, type: 'function', function: { name: names.get(call.tool) ?? call.tool, arguments: JSON.stringify(resolveArgs(call, observed)) } })),
    };
  };
  for (const turn of sample.dialogue) {
    if (turn.role === 'user') {
      messages.push({ role: 'user', content: turn.content });
      continue;
    }
    const calls = turn.calls ?? [];
    if (calls.length) {
      messages.push(callMessage(calls, turn.thought ?? null));
      for (const call of calls) {
        const result = turn.observations?.[call.id];
        if (result !== undefined) {
          observed[call.id] = result;
          messages.push({ role: 'tool', tool_call_id: call.id, content: JSON.stringify(result) });
        }
      }
    }
    const text = turn.response ?? turn.content;
    if (text) messages.push({ role: 'assistant', content: text });
  }
  return { messages, rendered, callMessage };
}

/** The gold answer the dialogue does not hold yet: the calls of the turn after it, the gold calls not rendered, or the labels as text. */
function goldOf(sample: Sample, rendered: Set<string>): { content?: string; calls?: Call[] } | undefined {
  const next = sample.expected.turns?.[String(sample.dialogue.length)];
  const calls = next ?? (sample.expected.calls ?? []).filter((call) => !rendered.has(call.id));
  if (calls.length) return { calls };
  const labels = sample.expected.labels ?? [];
  return labels.length ? { content: labels.join(', ') } : undefined;
}

/**
 * The sample with each turn's calls cut into steps after the results they use: in the turn's order,
 * a call that uses the result of a call of the step being filled starts the next step (the value
 * filled in), so a model sees what it uses before it calls, and the calls keep their order (MTU-Eval
 * scores it). A reference to a call without a result stays in its step, as the `<call>.<field>` text.
 * The turn's thought stays with its first step, its reply with its last one.
 */
function callsAfterTheirInputs(sample: Sample): Sample {
  const dialogue: Turn[] = [];
  for (const turn of sample.dialogue) dialogue.push(...turnSteps(turn));
  if (dialogue.length === sample.dialogue.length) return sample;
  const next = sample.expected.turns?.[String(sample.dialogue.length)];
  return { ...sample, dialogue, expected: { ...sample.expected, turns: next ? { [String(dialogue.length)]: next } : undefined } };
}

function turnSteps(turn: Turn): Turn[] {
  const observed = turn.observations ?? {};
  const steps: Call[][] = [];
  for (const call of turn.calls ?? []) {
    const step = steps.at(-1);
    const usesStep = step && refsOf(Object.values(call.arguments)).some((id) => id !== call.id && id in observed && step.some((c) => c.id === id));
    if (!step || usesStep) steps.push([call]);
    else step.push(call);
  }
  if (steps.length < 2) return [turn];
  const { thought, response, content, ...rest } = turn;
  const last = steps.length - 1;
  return steps.map((mine, k): Turn => {
    const results = Object.fromEntries(mine.filter((call) => call.id in observed).map((call) => [call.id, observed[call.id]]));
    return {
      ...rest,
      content: k === last ? content : '',
      ...(k === 0 && thought !== undefined ? { thought } : {}),
      calls: mine,
      observations: results,
      ...(k === last && response !== undefined ? { response } : {}),
    };
  });
}

/** The call ids a value's references name. */
function refsOf(values: ArgValue[]): string[] {
  return values.flatMap((value): string[] => (isRef(value) ? [parseRef(value).callId] : Array.isArray(value) ? refsOf(value) : []));
}

/** Each tool's name as OpenAI accepts it (a refused character becomes `_`); two tools of a sample may not end up with one name. */
function openAINames(sample: Sample): Map<string, string> {
  const names = new Map<string, string>();
  const taken = new Map<string, string>();
  for (const tool of sample.tools) {
    const name = openAIFunctionName(tool.name);
    const other = taken.get(name);
    if (other !== undefined && other !== tool.name) throw new UserError(`sample ${sample.id}: tools "${other}" and "${tool.name}" both become "${name}" as OpenAI function names; rename one`);
    taken.set(name, tool.name);
    names.set(tool.name, name);
  }
  return names;
}

/** A tool's name as an OpenAI function name: each character OpenAI refuses becomes `_` (at most 64). */
export function openAIFunctionName(name: string): string {
  return FUNCTION_NAME.test(name) ? name : name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64) || '_';
}

/** A tool as an OpenAI function; toolkiln's own fields (and a changed name's original) under `x-toolkiln` only when kept. */
function chatTool(tool: ToolSpec, name: string, keepExtensions: boolean): OpenAIFunctionTool {
  const { 'x-toolkiln': extra, ...parameters } = toOpenAITool(tool).function.parameters as Record<string, unknown> & { 'x-toolkiln'?: Record<string, unknown> };
  const extensions = keepExtensions ? { ...extra, ...(name !== tool.name ? { name: tool.name } : {}) } : {};
  return { type: 'function', function: { name, description: tool.description, parameters: Object.keys(extensions).length ? { ...parameters, 'x-toolkiln': extensions } : parameters } };
}

function resolveArgs(call: Call, observed: Record<string, unknown>): Record<string, unknown> {
  const resolve = (value: ArgValue): unknown => {
    if (isRef(value)) {
      const { callId, field } = parseRef(value);
      const result = observed[callId] as Record<string, unknown> | undefined;
      return result && typeof result === 'object' && field in result ? result[field] : value.$ref;
    }
    return Array.isArray(value) ? value.map(resolve) : value;
  };
  return Object.fromEntries(Object.entries(call.arguments).map(([k, v]) => [k, resolve(v)]));
}

/**
 * `export/openai-chat/<split>.jsonl`. Every example is checked against OpenAI's format before it is
 * written; one that fails stops the export (nothing written) naming the sample and the problems.
 */
export function openAIChatExporter(goldReply?: GoldReply): Exporter {
  return async (samples, _tools, outDir, _version, options = {}) => {
    // Every split to a temporary file first: one bad example anywhere leaves no file written.
    const files = [...samples.splits].sort().map((split) => ({ split, file: new AtomicJsonlFile(join(outDir, `${split}.jsonl`)) }));
    try {
      for (const { split, file } of files) {
        for (const sample of samples.inSplit(split)) {
          const example = sampleToChat(sample, { ...options, goldReply });
          const problems = chatExampleProblems(example);
          if (problems.length) throw new UserError(`sample ${sample.id} (split ${split}) is not a valid OpenAI chat example: ${problems.join('; ')}`);
          file.write(example);
        }
      }
    } catch (error) {
      for (const { file } of files) file.discard();
      throw error;
    }
    return files.map(({ file }) => file.commit());
  };
}

export const exportOpenAIChat = openAIChatExporter();
