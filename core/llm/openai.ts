import { setMaxListeners } from 'node:events';
import type OpenAI from 'openai';
import type { APIError } from 'openai';
import type { ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import { UserError } from '../errors.ts';
import type { ChatMessage } from '../prompt.ts';
import { Rng } from '../rng.ts';
import type { RequestLimiter, Ticket } from './limiter.ts';
import { keyMasker, maskingFetch } from './secrets.ts';
import { withJsonInstruction, type ResponseFormat } from './structured.ts';
import type { FailureReason } from './types.ts';
import { estimateMessageTokens, estimateTokens, type UsageMeter } from './usage.ts';

/** One chat request as the gateway means it; how it is spelled for the endpoint is decided here. */
export interface ChatSend {
  model: string;
  messages: ChatMessage[];
  temperature?: number;
  maxTokens?: number;
  seed?: number;
  format: ResponseFormat;
}

export interface ChatReply {
  text: string;
  finishReason: string;
  refusal: string | null;
  promptTokens: number;
  completionTokens: number;
}

/** A request that failed for good (after every retry): becomes a reject with `reason`. */
export class TransportError extends Error {
  constructor(readonly reason: FailureReason, message: string) {
    super(message);
  }
}

export interface OpenAiTransportOptions {
  /** Sent as the bearer token; a placeholder when the endpoint needs none (vLLM, Ollama, llama.cpp). */
  apiKey?: string;
  baseURL?: string;
  limiter: RequestLimiter;
  meter: UsageMeter;
  /** Retries of one request after a 429, 5xx, timeout, reset or unreadable answer. */
  maxRetries: number;
  /** Per attempt, from sending to the last byte of the answer. */
  requestTimeoutMs: number;
  /** Cap on any single wait (a `Retry-After` of 120 s waits this long at most). */
  maxRetryWaitMs: number;
  /** First backoff step; doubles per attempt, with jitter. */
  retryBaseMs: number;
  seed: number;
  log: (message: string) => void;
  redact: (text: string) => string;
  /** Replaces global fetch (tests of connection handling). */
  fetch?: typeof fetch;
}

/** What an endpoint turned out not to accept, learned from its 400s and remembered per model. */
interface Quirks {
  noResponseFormat?: boolean;
  maxCompletionTokens?: boolean;
  noSeed?: boolean;
  noTemperature?: boolean;
}

interface Attempt<T> {
  stage: string;
  model: string;
  priority: number;
  /** Token estimate for the budget, computed per attempt (the body may change between attempts). */
  tokens: () => number;
  send: (client: OpenAI, signal: AbortSignal) => Promise<{ value: T; promptTokens: number; completionTokens: number }>;
  /** Called on a 400/422: adjust the request and return true to resend it, false to fail. */
  adapt?: (error: APIError) => boolean;
}

interface Failure {
  retry: boolean;
  reason: FailureReason;
  detail: string;
  /** A 429: how long the whole pool pauses. */
  rateLimitWaitMs?: number;
  /** A misconfiguration every request would hit: thrown as a UserError with this message. */
  fatal?: string;
  /** A 400/422 the request may be adapted to. */
  error?: APIError;
}

const MAX_ADAPTATIONS = 4;
const MAX_BACKOFF_MS = 30_000;

/**
 * Talks to an OpenAI-compatible endpoint through the `openai` SDK, with the SDK's own retries off:
 * every attempt passes the shared limiter, has its own timeout covering the whole answer, and is
 * retried here (429 after `Retry-After` capped, 5xx / timeouts / resets with jittered backoff).
 */
export class OpenAiTransport {
  /** The SDK is loaded on the first request: offline and replay runs never pay for its import. */
  private sdk: typeof import('openai') | null = null;
  private client: Promise<OpenAI> | null = null;
  private readonly quirks = new Map<string, Quirks>();
  private readonly jitter: Rng;
  private typicalCompletion = 256;
  private fatal: UserError | null = null;
  private readonly closing = new AbortController();

  constructor(private readonly options: OpenAiTransportOptions) {
    this.jitter = Rng.derive(options.seed, 'llm-retry-jitter');
    // Every request and wait in flight listens for close(): thousands at once is normal.
    setMaxListeners(0, this.closing.signal);
  }

  private connect(): Promise<OpenAI> {
    this.client ??= import('openai').then((sdk) => {
      this.sdk = sdk;
      return new sdk.default({
        apiKey: this.options.apiKey || 'no-key',
        baseURL: this.options.baseURL || 'https://api.openai.com/v1',
        maxRetries: 0,
        timeout: this.options.requestTimeoutMs,
        // Every body is masked on arrival: an endpoint echoing the key cannot put it in an answer or error.
        fetch: maskingFetch(this.options.fetch ?? globalThis.fetch, keyMasker(this.options.apiKey)),
      });
    });
    return this.client;
  }

  async chat(request: ChatSend, context: { stage: string; priority: number }): Promise<ChatReply> {
    const quirks = this.quirksOf(request.model);
    let dropFormat = false; // tried without response_format for this request only, until it works
    const reply = await this.attempt<ChatReply>({
      stage: context.stage,
      model: request.model,
      priority: context.priority,
      tokens: () => estimateMessageTokens(request.messages) + (request.format.kind === 'json' ? estimateTokens(JSON.stringify(request.format.schema)) : 0) + (request.maxTokens ?? this.typicalCompletion),
      send: async (client, signal) => {
        const completion = await client.chat.completions.create(this.chatBody(request, quirks, dropFormat), { signal });
        const choice = (completion as { choices?: unknown }).choices;
        if (!Array.isArray(choice) || !choice[0] || typeof choice[0] !== 'object' || !choice[0].message) {
          throw new BadResponse(`the endpoint answered 200 with something that is not a chat completion: ${preview(completion)}`);
        }
        const message = choice[0].message as { content?: string | null; refusal?: string | null };
        const text = message.content ?? '';
        const promptTokens = completion.usage?.prompt_tokens ?? estimateMessageTokens(request.messages);
        const completionTokens = completion.usage?.completion_tokens ?? estimateTokens(text);
        return {
          value: { text, finishReason: choice[0].finish_reason ?? 'stop', refusal: message.refusal ?? null, promptTokens, completionTokens },
          promptTokens,
          completionTokens,
        };
      },
      adapt: (error) => {
        const said = `${error.param ?? ''} ${error.message}`.toLowerCase();
        const sentFormat = request.format.kind === 'json' && !quirks.noResponseFormat && !dropFormat;
        if (/max_completion_tokens/.test(said) && request.maxTokens !== undefined && !quirks.maxCompletionTokens) {
          quirks.maxCompletionTokens = true;
          this.options.log(`${request.model}: the endpoint wants max_completion_tokens instead of max_tokens; using it`);
          return true;
        }
        if (/\bseed\b/.test(said) && request.seed !== undefined && !quirks.noSeed) {
          quirks.noSeed = true;
          this.options.log(`${request.model}: the endpoint does not accept seed; sending without it`);
          return true;
        }
        if (/temperature/.test(said) && request.temperature !== undefined && !quirks.noTemperature) {
          quirks.noTemperature = true;
          this.options.log(`${request.model}: the endpoint does not accept this temperature; using its default`);
          return true;
        }
        if (sentFormat && /response_format|json_schema|json schema|structured output|grammar|guided/.test(said)) {
          dropFormat = true;
          return true;
        }
        return false;
      },
    });
    if (dropFormat && !quirks.noResponseFormat) {
      quirks.noResponseFormat = true;
      this.options.log(`${request.model}: the endpoint rejects response_format json_schema; asking for JSON in the prompt instead`);
    }
    this.typicalCompletion = Math.round(0.9 * this.typicalCompletion + 0.1 * Math.max(16, reply.completionTokens));
    return reply;
  }

  async embed(model: string, inputs: string[], context: { stage: string; priority: number }): Promise<number[][]> {
    return this.attempt<number[][]>({
      stage: context.stage,
      model,
      priority: context.priority,
      tokens: () => inputs.reduce((sum, text) => sum + estimateTokens(text), 0),
      send: async (client, signal) => {
        const response = await client.embeddings.create({ model, input: inputs, encoding_format: 'float' }, { signal });
        const data = (response as { data?: unknown }).data;
        if (!Array.isArray(data) || data.length !== inputs.length || data.some((d) => !d || !Array.isArray(d.embedding))) {
          throw new BadResponse(`the endpoint answered 200 with something that is not ${inputs.length} embeddings: ${preview(response)}`);
        }
        const vectors: number[][] = new Array(inputs.length);
        data.forEach((d, i) => (vectors[typeof d.index === 'number' ? d.index : i] = d.embedding as number[]));
        const promptTokens = response.usage?.prompt_tokens ?? inputs.reduce((sum, text) => sum + estimateTokens(text), 0);
        return { value: vectors, promptTokens, completionTokens: 0 };
      },
    });
  }

  private quirksOf(model: string): Quirks {
    let quirks = this.quirks.get(model);
    if (!quirks) this.quirks.set(model, (quirks = {}));
    return quirks;
  }

  private chatBody(request: ChatSend, quirks: Quirks, dropFormat: boolean): ChatCompletionCreateParamsNonStreaming {
    const useFormat = request.format.kind === 'json' && !quirks.noResponseFormat && !dropFormat;
    const messages = request.format.kind === 'json' && !useFormat ? withJsonInstruction(request.messages, request.format) : request.messages;
    const body: ChatCompletionCreateParamsNonStreaming = { model: request.model, messages };
    if (request.temperature !== undefined && !quirks.noTemperature) body.temperature = request.temperature;
    if (request.maxTokens !== undefined) {
      if (quirks.maxCompletionTokens) body.max_completion_tokens = request.maxTokens;
      else body.max_tokens = request.maxTokens;
    }
    if (request.seed !== undefined && !quirks.noSeed) body.seed = request.seed;
    if (useFormat) {
      body.response_format = { type: 'json_schema', json_schema: { name: request.format.name, schema: request.format.schema, strict: request.format.strict } };
    }
    return body;
  }

  /** One logical request: attempts through the limiter until it succeeds, fails for good, or is fatal. */
  private async attempt<T>(spec: Attempt<T>): Promise<T> {
    let adaptations = 0;
    for (let attempt = 0; ; attempt++) {
      if (this.fatal) throw this.fatal;
      let failure: Failure;
      try {
        const value = await this.options.limiter.run((ticket) => this.sendOnce(spec, ticket), { tokens: spec.tokens(), priority: spec.priority + attempt });
        this.options.limiter.succeeded();
        return value;
      } catch (error) {
        if (error instanceof UserError) throw error;
        failure = this.classify(error);
      }
      if (failure.fatal) {
        this.fatal ??= new UserError(this.options.redact(failure.fatal));
        throw this.fatal;
      }
      if (failure.error && spec.adapt && adaptations < MAX_ADAPTATIONS) {
        if (spec.adapt(failure.error)) {
          adaptations++;
          attempt--; // the request was malformed for this endpoint, not unlucky: this is no retry
          continue;
        }
      }
      if (!failure.retry || attempt >= this.options.maxRetries) {
        const tries = attempt + 1;
        throw new TransportError(failure.reason, this.options.redact(`${failure.detail}${failure.retry ? ` (gave up after ${tries} attempt${tries === 1 ? '' : 's'})` : ''}`));
      }
      if (failure.rateLimitWaitMs !== undefined) {
        // The whole pool waits; this request re-enters the queue and is admitted after the pause.
        this.options.limiter.rateLimited(failure.rateLimitWaitMs);
      } else {
        const wait = this.backoff(attempt);
        this.options.log(this.options.redact(`${spec.stage}: ${failure.detail}; retry ${attempt + 1}/${this.options.maxRetries} in ${(wait / 1000).toFixed(1)} s`));
        await this.sleep(wait);
      }
    }
  }

  private async sendOnce<T>(spec: Attempt<T>, ticket: Ticket): Promise<T> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new RequestTimeout()), this.options.requestTimeoutMs);
    const onClose = () => controller.abort(new Error('the LLM gateway was closed'));
    this.closing.signal.addEventListener('abort', onClose, { once: true });
    try {
      const result = await spec.send(await this.connect(), controller.signal);
      this.options.meter.request(spec.stage, spec.model, result.promptTokens, result.completionTokens);
      ticket.settle(result.promptTokens + result.completionTokens);
      return result.value;
    } catch (error) {
      ticket.settle();
      this.options.meter.request(spec.stage, spec.model, 0, 0);
      if (controller.signal.aborted && controller.signal.reason instanceof RequestTimeout) throw controller.signal.reason;
      throw error;
    } finally {
      clearTimeout(timer);
      this.closing.signal.removeEventListener('abort', onClose);
    }
  }

  private classify(error: unknown): Failure {
    if (this.closing.signal.aborted) return { retry: false, reason: 'connection_error', detail: 'the LLM gateway was closed' };
    const seconds = (this.options.requestTimeoutMs / 1000).toFixed(1);
    const sdk = this.sdk;
    if (error instanceof RequestTimeout || (sdk && error instanceof sdk.APIConnectionTimeoutError)) {
      return { retry: true, reason: 'timeout', detail: `no complete answer within ${seconds} s` };
    }
    if (error instanceof BadResponse) return { retry: true, reason: 'bad_response', detail: error.message };
    if (error instanceof SyntaxError) return { retry: true, reason: 'bad_response', detail: `the endpoint sent a body that is not valid JSON (${error.message})` };
    if (sdk && error instanceof sdk.APIConnectionError) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      return { retry: true, reason: 'connection_error', detail: `connection failed (${cause?.code ?? cause?.message ?? error.message})` };
    }
    if (!sdk || !(error instanceof sdk.APIError) || error.status === undefined) throw error;
    const status = error.status;
    const said = error.message.replace(/\s+/g, ' ').slice(0, 300);
    const where = this.options.baseURL ?? 'https://api.openai.com/v1';
    if (status === 401) return { retry: false, reason: 'http_error', detail: said, fatal: `${where} rejected the API key (401): check OPENAI_API_KEY (${said})` };
    if (status === 403) return { retry: false, reason: 'http_error', detail: said, fatal: `${where} refused access (403): check the key's permissions for this model (${said})` };
    if (status === 404) return { retry: false, reason: 'http_error', detail: said, fatal: `${where} answered 404: check --model / TOOLKILN_MODEL and OPENAI_BASE_URL (it usually ends in /v1) (${said})` };
    if (status === 429) {
      if (error.code === 'insufficient_quota') return { retry: false, reason: 'rate_limited', detail: said, fatal: `${where}: the account's quota is used up (429 insufficient_quota): ${said}` };
      return { retry: true, reason: 'rate_limited', detail: `429 rate limited: ${said}`, rateLimitWaitMs: this.retryAfter(error.headers) ?? this.backoff(0) };
    }
    if (status === 408 || status === 409 || status >= 500) return { retry: true, reason: 'http_error', detail: `HTTP ${status}: ${said}` };
    if ((status === 400 || status === 413) && /context|too long|too many tokens|maximum.*tokens/i.test(said) && !/max_tokens|max_completion_tokens/.test(said)) {
      return { retry: false, reason: 'prompt_too_long', detail: `HTTP ${status}: ${said}` };
    }
    return { retry: false, reason: 'http_error', detail: `HTTP ${status}: ${said}`, error: status === 400 || status === 422 ? error : undefined };
  }

  /** `retry-after-ms`, else `Retry-After` (seconds or an HTTP date), capped; undefined without either. */
  private retryAfter(headers: Headers | undefined): number | undefined {
    if (!headers) return undefined;
    let ms: number | undefined;
    const exact = Number.parseFloat(headers.get('retry-after-ms') ?? '');
    if (Number.isFinite(exact) && exact >= 0) ms = exact;
    else {
      const value = headers.get('retry-after');
      if (value) {
        const seconds = Number.parseFloat(value);
        if (Number.isFinite(seconds) && seconds >= 0) ms = seconds * 1000;
        else if (!Number.isNaN(Date.parse(value))) ms = Math.max(0, Date.parse(value) - Date.now());
      }
    }
    return ms === undefined ? undefined : Math.min(ms, this.options.maxRetryWaitMs);
  }

  /** Exponential backoff with jitter: half fixed, half random, capped. */
  private backoff(attempt: number): number {
    const step = Math.min(this.options.maxRetryWaitMs, MAX_BACKOFF_MS, this.options.retryBaseMs * 2 ** attempt);
    return Math.round(step / 2 + (this.jitter.next() * step) / 2);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const signal = this.closing.signal;
      function done() {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      }
      signal.addEventListener('abort', done, { once: true });
    });
  }

  close(): void {
    this.closing.abort();
  }
}

class RequestTimeout extends Error {
  constructor() {
    super('request timed out');
  }
}

class BadResponse extends Error {}

function preview(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value) ?? String(value);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
