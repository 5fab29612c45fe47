import { UserError } from '../errors.ts';
import type { ChatMessage, PromptFile } from '../prompt.ts';
import type { BatchController } from './batch.ts';
import type { ResponseCache } from './cache.ts';
import { TransportError, type OpenAiTransport } from './openai.ts';
import { buildChatRequest, chatCacheKey, embeddingCacheKey, type ChatCacheEntry, type EmbeddingCacheEntry } from './request.ts';
import { AnswerError, parseAnswer, repairLimit, repairMessage } from './structured.ts';
import type { BatchHook, EmbedOptions, FailureReason, GenerateOptions, GenerateResult, LlmGateway, UsageReport } from './types.ts';
import type { UsageMeter } from './usage.ts';

/** A replay miss, for callers that stop the run on the first one (`replayMiss: 'throw'`). */
export class ReplayMissError extends UserError {
  constructor(message: string) {
    super(message);
    this.name = 'ReplayMissError';
  }
}

export interface CachedGatewayOptions {
  backend: 'openai' | 'replay';
  model: string;
  embeddingModel: string;
  seed: number;
  /** null: `--no-cache` (neither read nor written). */
  cache: ResponseCache | null;
  /** null: the replay backend (cache only). */
  transport: OpenAiTransport | null;
  meter: UsageMeter;
  /** Follow-up requests that send a failed answer's errors back for a corrected one. */
  maxRepairs: number;
  /** The most max_tokens a truncated answer is retried with. */
  maxTokensCap: number;
  /** What a replay miss does: a reject (`replay_miss`), or a thrown ReplayMissError. */
  replayMiss: 'reject' | 'throw';
  /** Texts per embeddings request. */
  embedBatchSize: number;
  log: (message: string) => void;
  /** Batch mode (or loaded batch results): asked in place of the transport's chat. */
  batch?: BatchController;
}

type Conversation = { ok: true; text: string } | { ok: false; reason: FailureReason; detail: string };

/**
 * The openai and replay backends: every answer is looked up in the cache first; on a miss the
 * openai backend holds a conversation with the endpoint (repairs, a larger token limit after a
 * truncation) until an answer passes the prompt's schema, and caches that answer's raw text.
 * Identical requests in flight at once are sent once.
 */
export class CachedGateway implements LlmGateway {
  readonly backend: 'openai' | 'replay';
  readonly model: string;
  readonly dryRun = false;
  readonly batch?: BatchHook;
  private readonly inflight = new Map<string, Promise<Conversation>>();

  constructor(private readonly options: CachedGatewayOptions) {
    this.backend = options.backend;
    this.model = options.model;
    if (options.batch?.collecting) this.batch = options.batch;
  }

  async generate<V extends Record<string, unknown>, O>(prompt: PromptFile<V, O>, vars: V, options: GenerateOptions): Promise<GenerateResult<O>> {
    const request = buildChatRequest(prompt, vars, options, this.model, this.options.seed);
    const key = chatCacheKey(request);
    const { cache, transport, meter } = this.options;
    const hit = cache?.get(key) as ChatCacheEntry | undefined;
    if (hit && typeof hit.text === 'string') {
      try {
        const value = parseAnswer(prompt, hit.text);
        meter.cacheHit(options.stage, this.model);
        return { ok: true, value, model: this.model, cached: true };
      } catch (error) {
        this.options.log(`cache: the stored answer for ${prompt.id} (key ${key.slice(0, 12)}) no longer passes its schema (${(error as Error).message}); asking again`);
        cache!.forget(key);
      }
    }
    if (!transport) return this.replayMiss(prompt.id, options, key);

    let conversation = this.inflight.get(key);
    const shared = conversation !== undefined;
    if (!conversation) {
      conversation = this.converse(prompt, request, options.stage).finally(() => this.inflight.delete(key));
      this.inflight.set(key, conversation);
    }
    const outcome = await conversation;
    if (!outcome.ok) return outcome;
    if (shared) meter.cacheHit(options.stage, this.model);
    else cache?.put(key, { promptId: prompt.id, model: this.model, text: outcome.text } satisfies ChatCacheEntry);
    return { ok: true, value: parseAnswer(prompt, outcome.text), model: this.model, cached: shared };
  }

  private replayMiss(promptId: string, options: GenerateOptions, key: string): GenerateResult<never> {
    const where = this.options.cache ? `in ${this.options.cache.dir}` : '(the cache is off: --no-cache)';
    const detail = `no cached answer for prompt ${promptId} (stage ${options.stage}, record ${options.key}, model ${this.model}, cache key ${key}) ${where}; the cache must come from a run with the same model, seed, prompts and inputs`;
    if (this.options.replayMiss === 'throw') throw new ReplayMissError(`replay: ${detail}`);
    return { ok: false, reason: 'replay_miss', detail };
  }

  /** Asks until an answer passes the schema or attempts run out. */
  private async converse(prompt: PromptFile<any, unknown>, request: ReturnType<typeof buildChatRequest>, stage: string): Promise<Conversation> {
    const transport = this.options.batch ?? this.options.transport!;
    let messages: ChatMessage[] = request.messages;
    let maxTokens = request.maxTokens;
    let grown = false;
    let repairs = 0;
    for (let round = 0; ; round++) {
      let reply;
      try {
        reply = await transport.chat({ ...request, messages, maxTokens }, { stage, priority: round });
      } catch (error) {
        if (error instanceof TransportError) return { ok: false, reason: error.reason, detail: `${prompt.id}: ${error.message}` };
        throw error;
      }
      if (reply.finishReason === 'length') {
        const larger = grown ? undefined : this.largerLimit(maxTokens, reply.completionTokens);
        if (larger === undefined) {
          return { ok: false, reason: 'truncated', detail: `${prompt.id}: the answer was cut off by the token limit (${reply.completionTokens} completion tokens${maxTokens ? `, max_tokens ${maxTokens}` : ''})` };
        }
        this.options.log(`${stage}: ${prompt.id} answer cut off at ${reply.completionTokens} tokens; asking again with max_tokens ${larger}`);
        grown = true;
        maxTokens = larger;
        continue;
      }
      if (reply.finishReason === 'content_filter') return { ok: false, reason: 'content_filter', detail: `${prompt.id}: the endpoint's content filter stopped the answer` };
      if (reply.refusal) return { ok: false, reason: 'refused', detail: `${prompt.id}: the model refused: ${clip(reply.refusal)}` };
      try {
        parseAnswer(prompt, reply.text);
        return { ok: true, text: reply.text };
      } catch (error) {
        if (!(error instanceof AnswerError)) throw error;
        if (repairs >= repairLimit(error, this.options.maxRepairs)) {
          return { ok: false, reason: error.reason, detail: `${prompt.id}: ${error.message} (after ${repairs} repair attempt${repairs === 1 ? '' : 's'}); the answer began: ${clip(reply.text)}` };
        }
        repairs++;
        messages = [...messages, { role: 'assistant', content: reply.text }, { role: 'user', content: repairMessage(request.format, error) }];
      }
    }
  }

  /** Twice the old limit (or twice what was produced, at least 1,024), capped; undefined at the cap. */
  private largerLimit(maxTokens: number | undefined, produced: number): number | undefined {
    const larger = Math.min(this.options.maxTokensCap, maxTokens ? maxTokens * 2 : Math.max(1024, produced * 2));
    return larger > (maxTokens ?? produced) ? larger : undefined;
  }

  async embed(texts: string[], options: EmbedOptions): Promise<number[][]> {
    const model = options.model ?? this.options.embeddingModel;
    const { cache, transport, meter } = this.options;
    const vectors: number[][] = new Array(texts.length);
    const missing = new Map<string, number[]>(); // text → indexes wanting it
    texts.forEach((text, i) => {
      const entry = cache?.get(embeddingCacheKey(model, text)) as EmbeddingCacheEntry | undefined;
      if (entry && Array.isArray(entry.vector)) {
        vectors[i] = entry.vector;
        meter.cacheHit(options.stage, model);
      } else {
        const list = missing.get(text);
        if (list) list.push(i);
        else missing.set(text, [i]);
      }
    });
    if (missing.size === 0) return vectors;
    if (!transport) {
      const [first] = missing.keys();
      throw new ReplayMissError(
        `replay: ${missing.size} text(s) of stage ${options.stage} have no cached ${model} embedding (first: "${clip(first, 80)}", cache key ${embeddingCacheKey(model, first)}); the cache must come from a run with the same embedding model and inputs`,
      );
    }
    const unique = [...missing.keys()];
    const batches: string[][] = [];
    for (let i = 0; i < unique.length; i += this.options.embedBatchSize) batches.push(unique.slice(i, i + this.options.embedBatchSize));
    await Promise.all(
      batches.map(async (batch) => {
        let answer: number[][];
        try {
          answer = await transport.embed(model, batch, { stage: options.stage, priority: 0 });
        } catch (error) {
          if (error instanceof TransportError) throw new UserError(`embeddings (${model}, stage ${options.stage}) failed: ${error.message}`);
          throw error;
        }
        batch.forEach((text, j) => {
          cache?.put(embeddingCacheKey(model, text), { model, vector: answer[j] } satisfies EmbeddingCacheEntry);
          for (const i of missing.get(text)!) vectors[i] = answer[j];
        });
      }),
    );
    return vectors;
  }

  usage(): UsageReport {
    return this.options.meter.report();
  }

  async close(): Promise<void> {
    this.options.transport?.close();
    this.options.cache?.close();
  }
}

function clip(text: string, length = 200): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > length ? `${flat.slice(0, length)}…` : flat;
}
