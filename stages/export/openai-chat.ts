import { join } from 'node:path';
import { mapIterable } from '../../core/collections.ts';
import { writeJsonlAtomic } from '../../core/jsonl.ts';
import type { SampleSource } from '../../core/sample-source.ts';
import { isRef, parseRef, toOpenAITool, type ArgValue, type Call, type Sample, type ToolSpec } from '../../core/records.ts';

interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | null;
  tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

/**
 * OpenAI chat fine-tuning JSONL: `{messages, tools}` per sample, assistant turns with `tool_calls`
 * and a `tool` message per observation. A `$ref` argument is filled with the producing call's
 * observed value when there is one, else written as the `<call>.<field>` text it stands for.
 */
export function sampleToChat(sample: Sample): { messages: ChatMessage[]; tools: ReturnType<typeof toOpenAITool>[] } {
  const messages: ChatMessage[] = [];
  const observed: Record<string, unknown> = {};
  for (const turn of sample.dialogue) {
    if (turn.role === 'user') {
      messages.push({ role: 'user', content: turn.content });
      continue;
    }
    const calls = turn.calls ?? [];
    if (calls.length) {
      messages.push({
        role: 'assistant',
        content: turn.thought ?? null,
        tool_calls: calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.tool, arguments: JSON.stringify(resolveArgs(call, observed)) } })),
      });
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
  return { messages, tools: sample.tools.map(toOpenAITool) };
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

export async function exportOpenAIChat(samples: SampleSource, _tools: ToolSpec[], outDir: string): Promise<string[]> {
  return [...samples.splits].sort().map((split) => {
    const path = join(outDir, `${split}.jsonl`);
    writeJsonlAtomic(path, mapIterable(samples.inSplit(split), sampleToChat));
    return path;
  });
}
