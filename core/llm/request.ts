import { hashOf } from '../hash.ts';
import type { PromptFile } from '../prompt.ts';
import { Rng } from '../rng.ts';
import type { ChatSend } from './openai.ts';
import { responseFormatOf } from './structured.ts';
import type { GenerateOptions } from './types.ts';

/**
 * The request a generate call means, independent of the endpoint: rendered messages, sampling
 * parameters, and a per-record `seed` derived from the run seed, the prompt and the record key, so
 * that identical prompts for different records are different requests (and cache entries).
 */
export function buildChatRequest<V extends Record<string, unknown>>(prompt: PromptFile<V, unknown>, vars: V, options: GenerateOptions, model: string, runSeed: number): ChatSend {
  return {
    model,
    messages: prompt.render(vars),
    temperature: options.temperature ?? prompt.temperature,
    maxTokens: options.maxTokens ?? prompt.maxTokens,
    seed: Rng.derive(runSeed, 'llm', prompt.id, options.key).int(0, 2 ** 31 - 1),
    format: responseFormatOf(prompt),
  };
}

/**
 * The cache key of a chat request: model, messages, temperature, seed, n, max tokens, the answer's
 * schema and format, and tools. Never the endpoint or the key, so a copied cache replays anywhere.
 */
export function chatCacheKey(request: ChatSend): string {
  return hashOf({ v: 1, kind: 'chat', ...sentFields(request) });
}

/**
 * The cache key of one raw reply to exactly this request (a batch answer, kept before it is checked
 * against the schema); also the request's `custom_id` in batch files. Distinct from `chatCacheKey`,
 * which holds only answers that passed.
 */
export function chatReplyKey(request: ChatSend): string {
  return hashOf({ v: 1, kind: 'chat-reply', ...sentFields(request) });
}

function sentFields(request: ChatSend): Record<string, unknown> {
  return {
    model: request.model,
    messages: request.messages,
    temperature: request.temperature ?? null,
    seed: request.seed ?? null,
    n: 1,
    maxTokens: request.maxTokens ?? null,
    response: { kind: request.format.kind, name: request.format.name, schema: request.format.schema },
    tools: null,
  };
}

export function embeddingCacheKey(model: string, text: string): string {
  return hashOf({ v: 1, kind: 'embedding', model, input: text });
}

/** What the cache holds for a chat request: the raw text of the answer that passed validation. */
export interface ChatCacheEntry {
  promptId: string;
  model: string;
  text: string;
}

/** What the cache holds under a `chatReplyKey`: one raw reply, whatever its content. */
export interface ChatReplyEntry {
  kind: 'chat-reply';
  model: string;
  text: string;
  finishReason: string;
  refusal: string | null;
  promptTokens: number;
  completionTokens: number;
}

export interface EmbeddingCacheEntry {
  model: string;
  vector: number[];
}
