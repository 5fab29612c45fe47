import { closeSync, existsSync, openSync, readSync } from 'node:fs';
import { UserError } from '../errors.ts';
import type { ResponseCache } from './cache.ts';
import type { ChatSend } from './openai.ts';
import type { ChatReplyEntry } from './request.ts';
import { estimateTokens } from './usage.ts';

/**
 * The OpenAI Batch file formats (also read and written by `vllm run-batch`). An input line is
 * `{"custom_id", "method": "POST", "url": "/v1/chat/completions", "body": {…chat request…}}`; an output
 * line is `{"id", "custom_id", "response": {"status_code", "request_id", "body": {…chat completion…}}, "error"}`.
 * `custom_id` is the request's reply cache key (`chatReplyKey`), so an answer goes straight into the cache.
 */

export const BATCH_ENDPOINT = '/v1/chat/completions';

export interface BatchInputLine {
  custom_id: string;
  method: 'POST';
  url: typeof BATCH_ENDPOINT;
  body: Record<string, unknown>;
}

export function batchInputLine(key: string, request: ChatSend): BatchInputLine {
  return { custom_id: key, method: 'POST', url: BATCH_ENDPOINT, body: batchRequestBody(request) };
}

/**
 * The chat request body of a batch line: what the direct transport sends before it learns an
 * endpoint's quirks (a batch cannot adapt a request after a 400; a failed line is reported instead).
 */
function batchRequestBody(request: ChatSend): Record<string, unknown> {
  const body: Record<string, unknown> = { model: request.model, messages: request.messages };
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.maxTokens !== undefined) body.max_tokens = request.maxTokens;
  if (request.seed !== undefined) body.seed = request.seed;
  if (request.format.kind === 'json') {
    body.response_format = { type: 'json_schema', json_schema: { name: request.format.name, schema: request.format.schema, strict: request.format.strict } };
  }
  return body;
}

/** One output or error line, read: the reply to `key`, or why there is none. */
export type BatchResult = { key: string; reply: ChatReplyEntry } | { key: string; error: string; expired: boolean };

const KEY = /^[0-9a-f]{64}$/;

/**
 * Reads one output/error line. `where` names it for messages (`file:line`). The response body may
 * also stand directly under `response` (some vLLM versions write the completion there).
 */
export function readBatchResult(line: string, where: string): BatchResult {
  let value: any;
  try {
    value = JSON.parse(line);
  } catch (error) {
    throw new UserError(`${where}: not valid JSON (${(error as Error).message}); expected a batch output line {"custom_id", "response": {"status_code", "body"}, "error"}`);
  }
  const key = value?.custom_id;
  if (typeof key !== 'string' || !KEY.test(key)) {
    throw new UserError(`${where}: custom_id ${JSON.stringify(key)} is not a toolkiln request key (64 hex characters); the file must be the output of a batch file toolkiln wrote`);
  }
  if (value.error) {
    const code = String(value.error.code ?? 'error');
    return { key, error: `${code}: ${String(value.error.message ?? '')}`.trim(), expired: code === 'batch_expired' };
  }
  const response = value.response;
  const status = response?.status_code ?? (response?.choices ? 200 : undefined);
  const body = response?.body ?? (response?.choices ? response : undefined);
  if (status !== 200) {
    const said = body?.error?.message ?? JSON.stringify(body ?? null).slice(0, 200);
    return { key, error: `HTTP ${status ?? '?'}: ${said}`, expired: false };
  }
  const choice = Array.isArray(body?.choices) ? body.choices[0] : undefined;
  if (!choice?.message) return { key, error: `the answer is not a chat completion: ${JSON.stringify(body).slice(0, 200)}`, expired: false };
  const text = typeof choice.message.content === 'string' ? choice.message.content : '';
  return {
    key,
    reply: {
      kind: 'chat-reply',
      model: String(body.model ?? ''),
      text,
      finishReason: choice.finish_reason ?? 'stop',
      refusal: choice.message.refusal ?? null,
      promptTokens: body.usage?.prompt_tokens ?? 0,
      completionTokens: body.usage?.completion_tokens ?? estimateTokens(text),
    },
  };
}

/** Calls `each` with every non-empty line of a file and its 1-based number, reading 1 MB at a time. */
export function forEachLine(path: string, each: (line: string, number: number) => void): void {
  const fd = openSync(path, 'r');
  try {
    const chunk = Buffer.allocUnsafe(1 << 20);
    let rest = Buffer.alloc(0);
    let number = 0;
    const emit = (bytes: Buffer) => {
      number++;
      const line = bytes.toString('utf8');
      if (line.trim()) each(line, number);
    };
    for (;;) {
      const read = readSync(fd, chunk, 0, chunk.length, null);
      if (read === 0) break;
      const buffer = Buffer.concat([rest, chunk.subarray(0, read)]);
      let start = 0;
      for (let end = buffer.indexOf(10, start); end !== -1; end = buffer.indexOf(10, start)) {
        emit(buffer.subarray(start, end));
        start = end + 1;
      }
      rest = Buffer.from(buffer.subarray(start));
    }
    if (rest.length) emit(rest);
  } finally {
    closeSync(fd);
  }
}

/**
 * Loads a batch output file (from `vllm run-batch`, or downloaded from a provider) into the cache:
 * each answered line becomes the reply of its request, the API key masked. Lines with an error are counted and left out,
 * so their requests are asked again.
 */
export function loadBatchResults(path: string, cache: ResponseCache, log: (message: string) => void, mask: (text: string) => string): { loaded: number; failed: number } {
  if (!existsSync(path)) throw new UserError(`--batch-results: file not found: ${path}`);
  let loaded = 0;
  let failed = 0;
  let firstError = '';
  forEachLine(path, (line, number) => {
    const result = readBatchResult(mask(line), `${path}:${number}`);
    if ('reply' in result) {
      cache.forget(result.key);
      cache.put(result.key, result.reply);
      loaded++;
    } else {
      failed++;
      firstError ||= `line ${number}: ${result.error}`;
    }
  });
  log(`batch results: ${loaded} answers loaded from ${path}${failed ? `; ${failed} lines held errors (first: ${firstError}): those requests are asked again` : ''}`);
  return { loaded, failed };
}
