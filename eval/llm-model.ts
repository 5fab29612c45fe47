import { z } from 'zod';
import type { EvalItem } from '../core/eval.ts';
import type { LlmGateway } from '../core/llm/types.ts';
import { definePrompt, type ChatMessage, type PromptFile } from '../core/prompt.ts';

type Vars = { messages: ChatMessage[] };

/**
 * The item's own messages sent as they are, the answer taken as free text: the benchmark's prompt is
 * already in the item, and its scorer reads the answer. Going through the gateway gives the response
 * cache (a re-run, or a run resumed after a crash, asks only what is not cached), the rate limits,
 * retries and the token and cost accounting.
 */
export const answerPrompt: PromptFile<Vars, { text: string }> = {
  ...definePrompt<Vars, { text: string }>({
    id: 'eval/answer',
    template: '{{messages}}',
    schema: z.object({ text: z.string() }),
    parseText: (text) => ({ text }),
    offline: () => ({ text: '' }),
    temperature: 0,
  }),
  render: (vars) => vars.messages,
};

/** A tool result has no place in a plain chat request without tool calls: it is shown as a user message. */
function chatMessages(item: EvalItem): ChatMessage[] {
  return item.messages.map((m) => ({ role: m.role === 'tool' ? 'user' : m.role, content: m.role === 'tool' ? `Observation: ${m.content ?? ''}` : (m.content ?? '') }));
}

export interface LlmAnswer {
  output: string | null;
  /** Why there is no output (the gateway's failure reason and detail). */
  failure?: string;
}

/** The model's answer to one item, through the gateway. */
export async function llmAnswer(item: EvalItem, llm: LlmGateway): Promise<LlmAnswer> {
  const result = await llm.generate(answerPrompt, { messages: chatMessages(item) }, { stage: 'eval', key: item.id });
  return result.ok ? { output: result.value.text } : { output: null, failure: `${result.reason}: ${result.detail}` };
}
