import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * A local, scriptable OpenAI-compatible endpoint for tests and benchmarks: POST /v1/chat/completions
 * and POST /v1/embeddings on 127.0.0.1 (random port). Each request is answered by the next scripted
 * reply queued for its endpoint, else by the endpoint's responder. Every request is recorded.
 *
 * It also serves the Files and Batches APIs: POST /v1/files (multipart upload), GET /v1/files/:id and
 * /v1/files/:id/content, POST /v1/batches, GET /v1/batches (list) and /v1/batches/:id. A batch answers `in_progress` for the
 * retrieves its plan asks (or while batches are held), then ends as planned (completed / expired /
 * failed) with output and error files whose chat answers come from the chat responder.
 */

export type Endpoint = 'chat' | 'embeddings';

export interface ScriptedReply {
  /** HTTP status (default 200). For >= 400 the body is an OpenAI error object built from `error`. */
  status?: number;
  headers?: Record<string, string>;
  /** Wait this long before answering. */
  latencyMs?: number;
  /** Never answer (the connection stays open until the client gives up or the server closes). */
  hang?: boolean;
  /** Send the status line and half of the body, then nothing more. */
  stallBody?: boolean;
  /** Drop the connection without answering (a connection reset). */
  reset?: boolean;
  /** Sent verbatim as an application/json body: for malformed bodies. */
  rawBody?: string;
  /** Sent as the JSON body instead of the generated completion. */
  body?: unknown;
  /** Chat: the assistant message content (default: the chat responder's choice). */
  content?: string | null;
  /** Chat: default `stop`. */
  finishReason?: string;
  refusal?: string;
  /** Token usage to report; null leaves `usage` out; default: a character-based count. */
  usage?: { prompt_tokens: number; completion_tokens: number } | null;
  /** The error object of a >= 400 reply. */
  error?: { message: string; type?: string; code?: string | null; param?: string | null };
  /** Embeddings: the vectors (default: deterministic vectors from the text). */
  embeddings?: number[][];
}

export interface RecordedRequest {
  endpoint: Endpoint | 'files' | 'batches' | 'other';
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** The parsed JSON body (undefined when it was not JSON). */
  body: any;
  /** performance.now() when the request arrived. */
  at: number;
}

export type Responder = (request: RecordedRequest) => ScriptedReply | Promise<ScriptedReply>;

/** How one input line of a batch ends: answered, answered with an HTTP error, or not run (expired). */
export type BatchLineOutcome = 'ok' | 'error' | 'expired';

export interface BatchPlan {
  /** Retrieves answered `in_progress` before the batch ends (default 1). */
  polls?: number;
  /** How it ends (default `completed`); `failed` is a batch rejected whole, with no files. */
  status?: 'completed' | 'expired' | 'failed';
  /** Per line (0-based within the batch); default `ok`, or `expired` when the batch expires. */
  line?: (line: any, index: number) => BatchLineOutcome;
  /** Rewrites the output and error files' lines before they are stored: a provider that writes a broken, stray or second line. */
  files?: (files: { output: string[]; errors: string[] }) => { output: string[]; errors: string[] };
}

/** Picks the plan of a new batch; `number` counts batches created since start or reset (1-based). */
export type BatchPlanner = (batch: { id: string; number: number; lines: any[] }) => BatchPlan;

export interface TestBatch {
  id: string;
  inputFileId: string;
  lines: any[];
  status: string;
  retrieves: number;
  plan: BatchPlan;
  outputFileId?: string;
  errorFileId?: string;
  metadata: unknown;
}

export interface OpenAiServerOptions {
  /** Default latency of every reply (a scripted reply's latencyMs wins). */
  latencyMs?: number;
  chat?: Responder;
  embeddings?: Responder;
}

export interface OpenAiTestServer {
  /** e.g. http://127.0.0.1:41234/v1 (what OPENAI_BASE_URL would hold). */
  readonly baseURL: string;
  readonly requests: RecordedRequest[];
  /** Requests seen, for one endpoint or all. */
  count(endpoint?: Endpoint): number;
  /** Replies for the next requests to `endpoint`, used in order before the responder. */
  enqueue(endpoint: Endpoint, ...replies: ScriptedReply[]): void;
  setResponder(endpoint: Endpoint, responder: Responder): void;
  setLatency(ms: number): void;
  /** The most requests that were open at the same time. */
  readonly maxInFlight: number;
  /** The most requests that arrived within any span shorter than `windowMs`. */
  maxInWindow(windowMs: number, endpoint?: Endpoint): number;
  /** Batches created, in order. */
  readonly batches: readonly TestBatch[];
  setBatchPlanner(planner: BatchPlanner): void;
  /** While held, every batch answers `in_progress` (a run waits between submit and collect). */
  holdBatches(hold: boolean): void;
  /** The next `n` batch creates make their batch but drop the connection instead of answering (a lost answer). */
  dropCreateAnswers(n: number): void;
  /** Uploaded or generated file contents, by id. */
  fileContent(id: string): string | undefined;
  /** Forgets requests, queued replies and counters. */
  reset(): void;
  close(): Promise<void>;
}

/** The most of `times` (ms) that fall within any span shorter than `windowMs`. */
export function mostWithin(times: number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let best = 0;
  for (let i = 0, j = 0; j < sorted.length; j++) {
    while (sorted[j] - sorted[i] >= windowMs) i++;
    best = Math.max(best, j - i + 1);
  }
  return best;
}

/** The default chat answer: `{"echo": <last user message>}`. */
export const echoChat: Responder = (request) => {
  const messages = (request.body?.messages ?? []) as { role: string; content: string }[];
  const last = [...messages].reverse().find((m) => m.role === 'user');
  return { content: JSON.stringify({ echo: last?.content ?? '' }) };
};

/** Deterministic 8-dimensional vectors from each text's hash. */
export function fakeEmbedding(text: string): number[] {
  const digest = createHash('sha256').update(text).digest();
  return Array.from({ length: 8 }, (_, i) => (digest[i] - 128) / 128);
}

const defaultEmbeddings: Responder = (request) => {
  const input = request.body?.input;
  const texts: string[] = Array.isArray(input) ? input : [input];
  return { embeddings: texts.map((t) => fakeEmbedding(String(t))) };
};

export async function startOpenAiServer(options: OpenAiServerOptions = {}): Promise<OpenAiTestServer> {
  const requests: RecordedRequest[] = [];
  const queues: Record<Endpoint, ScriptedReply[]> = { chat: [], embeddings: [] };
  const responders: Record<Endpoint, Responder> = { chat: options.chat ?? echoChat, embeddings: options.embeddings ?? defaultEmbeddings };
  let latencyMs = options.latencyMs ?? 0;
  let inFlight = 0;
  let maxInFlight = 0;
  let sequence = 0;
  const sockets = new Set<Socket>();
  const files = new Map<string, { filename: string; purpose: string; content: string }>();
  const batches: TestBatch[] = [];
  let planner: BatchPlanner = () => ({});
  let held = false;
  let dropCreates = 0;

  const server = createServer((req, res) => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    let done = false;
    const finish = () => {
      if (!done) (done = true), inFlight--;
    };
    res.on('close', finish);
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void handle(req, res, Buffer.concat(chunks).toString('utf8')).catch((error) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `test server: ${(error as Error).message}`, type: 'server_error' } }));
      });
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.keepAliveTimeout = 30_000;

  async function handle(req: IncomingMessage, res: ServerResponse, text: string): Promise<void> {
    const path = (req.url ?? '/').split('?')[0];
    const endpoint: RecordedRequest['endpoint'] = path.endsWith('/chat/completions')
      ? 'chat'
      : path.endsWith('/embeddings')
        ? 'embeddings'
        : /\/v1\/files(\/|$)/.test(path)
          ? 'files'
          : /\/v1\/batches(\/|$)/.test(path)
            ? 'batches'
            : 'other';
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    const request: RecordedRequest = { endpoint, method: req.method ?? 'GET', path, headers: req.headers, body, at: performance.now() };
    requests.push(request);
    if (endpoint === 'files' || endpoint === 'batches') return batchApi(req, res, request, text);
    if (endpoint === 'other') return send(res, 404, {}, { error: { message: `no route ${path}`, type: 'invalid_request_error' } });
    const reply = queues[endpoint].shift() ?? (await responders[endpoint](request));
    const wait = reply.latencyMs ?? latencyMs;
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    if (reply.hang) return; // the client's timeout (or close()) ends it
    if (reply.reset) {
      req.socket.destroy();
      return;
    }
    const status = reply.status ?? 200;
    if (reply.rawBody !== undefined) return send(res, status, reply.headers ?? {}, reply.rawBody);
    let payload: unknown;
    if (reply.body !== undefined) payload = reply.body;
    else if (status >= 400) payload = { error: { message: 'scripted error', type: 'server_error', code: null, param: null, ...reply.error } };
    else if (endpoint === 'chat') payload = completion(request, reply, await contentOf(request, reply));
    else payload = embeddingsOf(request, reply);
    if (reply.stallBody) {
      const json = JSON.stringify(payload);
      res.writeHead(status, { 'content-type': 'application/json', ...reply.headers });
      res.write(json.slice(0, Math.floor(json.length / 2)));
      return;
    }
    send(res, status, reply.headers ?? {}, payload);
  }

  async function contentOf(request: RecordedRequest, reply: ScriptedReply): Promise<string | null> {
    if (reply.content !== undefined) return reply.content;
    const fallback = await responders.chat(request);
    return fallback.content ?? '';
  }

  function completion(request: RecordedRequest, reply: ScriptedReply, content: string | null): unknown {
    const messages = (request.body?.messages ?? []) as { content: string }[];
    const promptChars = messages.reduce((sum, m) => sum + String(m.content ?? '').length, 0);
    const usage = reply.usage === null ? undefined : (reply.usage ?? { prompt_tokens: Math.ceil(promptChars / 4), completion_tokens: Math.ceil((content ?? '').length / 4) });
    return {
      id: `chatcmpl-test-${++sequence}`,
      object: 'chat.completion',
      created: 1700000000,
      model: request.body?.model ?? 'test-model',
      choices: [{ index: 0, message: { role: 'assistant', content, refusal: reply.refusal ?? null }, finish_reason: reply.finishReason ?? 'stop', logprobs: null }],
      ...(usage ? { usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } } : {}),
    };
  }

  function embeddingsOf(request: RecordedRequest, reply: ScriptedReply): unknown {
    const input = request.body?.input;
    const texts: string[] = Array.isArray(input) ? input : [input];
    const vectors = reply.embeddings ?? texts.map((t) => fakeEmbedding(String(t)));
    const tokens = texts.reduce((sum, t) => sum + Math.ceil(String(t).length / 4), 0);
    return {
      object: 'list',
      model: request.body?.model ?? 'test-embedding',
      data: vectors.map((embedding, index) => ({ object: 'embedding', index, embedding })),
      ...(reply.usage === null ? {} : { usage: { prompt_tokens: reply.usage?.prompt_tokens ?? tokens, total_tokens: reply.usage?.prompt_tokens ?? tokens } }),
    };
  }

  async function batchApi(req: IncomingMessage, res: ServerResponse, request: RecordedRequest, text: string): Promise<void> {
    const notFound = (what: string) => send(res, 404, {}, { error: { message: `No such ${what}`, type: 'invalid_request_error', code: null, param: null } });
    const path = request.path;
    if (request.method === 'POST' && path === '/v1/files') {
      const parts = multipart(text, String(req.headers['content-type'] ?? ''));
      if (parts.file === undefined) return send(res, 400, {}, { error: { message: 'no file part', type: 'invalid_request_error' } });
      const id = `file-${++sequence}`;
      files.set(id, { filename: parts.filename ?? 'upload.jsonl', purpose: parts.purpose ?? '', content: parts.file });
      return send(res, 200, {}, fileObject(id));
    }
    let match = /^\/v1\/files\/([^/]+)(\/content)?$/.exec(path);
    if (request.method === 'GET' && match) {
      const file = files.get(match[1]);
      if (!file) return notFound('file');
      if (!match[2]) return send(res, 200, {}, fileObject(match[1]));
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': Buffer.byteLength(file.content) });
      res.end(file.content);
      return;
    }
    if (request.method === 'POST' && path === '/v1/batches') {
      const input = files.get(request.body?.input_file_id);
      if (!input) return notFound('file');
      const lines = input.content.split('\n').filter(Boolean).map((line) => JSON.parse(line));
      const id = `batch_${++sequence}`;
      const batch: TestBatch = { id, inputFileId: request.body.input_file_id, lines, status: 'validating', retrieves: 0, plan: {}, metadata: request.body.metadata ?? null };
      batch.plan = planner({ id, number: batches.length + 1, lines });
      batches.push(batch);
      if (dropCreates > 0) {
        dropCreates--;
        req.socket.destroy();
        return;
      }
      return send(res, 200, {}, batchObject(batch));
    }
    if (request.method === 'GET' && path === '/v1/batches') {
      const data = [...batches].reverse().map(batchObject);
      return send(res, 200, {}, { object: 'list', data, first_id: batches.at(-1)?.id ?? null, last_id: batches[0]?.id ?? null, has_more: false });
    }
    match = /^\/v1\/batches\/([^/]+)$/.exec(path);
    if (request.method === 'GET' && match) {
      const batch = batches.find((b) => b.id === match![1]);
      if (!batch) return notFound('batch');
      if (batch.status === 'validating' || batch.status === 'in_progress') {
        batch.retrieves++;
        if (held || batch.retrieves <= (batch.plan.polls ?? 1)) batch.status = 'in_progress';
        else await finish(batch);
      }
      return send(res, 200, {}, batchObject(batch));
    }
    return send(res, 404, {}, { error: { message: `no route ${request.method} ${path}`, type: 'invalid_request_error' } });
  }

  /** Ends a batch as planned: output and error files in the Batch API's line format. */
  async function finish(batch: TestBatch): Promise<void> {
    const status = batch.plan.status ?? 'completed';
    batch.status = status;
    if (status === 'failed') return;
    const output: string[] = [];
    const errors: string[] = [];
    for (const [index, line] of batch.lines.entries()) {
      const outcome = batch.plan.line?.(line, index) ?? (status === 'expired' ? 'expired' : 'ok');
      const id = `batch_req_${++sequence}`;
      if (outcome === 'expired') {
        errors.push(JSON.stringify({ id, custom_id: line.custom_id, response: null, error: { code: 'batch_expired', message: 'This request could not be executed before the completion window expired.' } }));
      } else if (outcome === 'error') {
        const body = { error: { message: 'scripted batch line error', type: 'server_error', code: null, param: null } };
        errors.push(JSON.stringify({ id, custom_id: line.custom_id, response: { status_code: 500, request_id: `req_${sequence}`, body }, error: null }));
      } else {
        const request: RecordedRequest = { endpoint: 'chat', method: 'POST', path: '/v1/chat/completions', headers: {}, body: line.body, at: performance.now() };
        const reply = await responders.chat(request);
        const body = completion(request, reply, await contentOf(request, reply));
        output.push(JSON.stringify({ id, custom_id: line.custom_id, response: { status_code: 200, request_id: `req_${sequence}`, body }, error: null }));
      }
    }
    const store = (lines: string[]) => {
      const id = `file-${++sequence}`;
      files.set(id, { filename: `${batch.id}.jsonl`, purpose: 'batch_output', content: lines.map((l) => l + '\n').join('') });
      return id;
    };
    const written = batch.plan.files?.({ output, errors }) ?? { output, errors };
    if (written.output.length) batch.outputFileId = store(written.output);
    if (written.errors.length) batch.errorFileId = store(written.errors);
  }

  function fileObject(id: string): unknown {
    const file = files.get(id)!;
    return { id, object: 'file', bytes: Buffer.byteLength(file.content), created_at: 1700000000, filename: file.filename, purpose: file.purpose, status: 'processed' };
  }

  function batchObject(batch: TestBatch): unknown {
    const answered = batch.outputFileId ? files.get(batch.outputFileId)!.content.split('\n').filter(Boolean).length : 0;
    const ended = batch.status === 'completed' || batch.status === 'expired' || batch.status === 'failed';
    return {
      id: batch.id,
      object: 'batch',
      endpoint: '/v1/chat/completions',
      input_file_id: batch.inputFileId,
      completion_window: '24h',
      status: batch.status,
      created_at: 1700000000,
      output_file_id: batch.outputFileId ?? null,
      error_file_id: batch.errorFileId ?? null,
      errors: batch.status === 'failed' ? { object: 'list', data: [{ code: 'invalid_request', message: 'scripted batch failure', line: null, param: null }] } : null,
      request_counts: { total: batch.lines.length, completed: answered, failed: ended ? batch.lines.length - answered : 0 },
      metadata: batch.metadata,
    };
  }

  function send(res: ServerResponse, status: number, headers: Record<string, string>, payload: unknown): void {
    const json = typeof payload === 'string' ? payload : JSON.stringify(payload);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json), ...headers });
    res.end(json);
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    count: (endpoint) => (endpoint ? requests.filter((r) => r.endpoint === endpoint).length : requests.length),
    enqueue: (endpoint, ...replies) => void queues[endpoint].push(...replies),
    setResponder: (endpoint, responder) => void (responders[endpoint] = responder),
    setLatency: (ms) => void (latencyMs = ms),
    get maxInFlight() {
      return maxInFlight;
    },
    maxInWindow: (windowMs, endpoint) => mostWithin(requests.filter((r) => !endpoint || r.endpoint === endpoint).map((r) => r.at), windowMs),
    get batches() {
      return batches;
    },
    setBatchPlanner: (next) => void (planner = next),
    holdBatches: (hold) => void (held = hold),
    dropCreateAnswers: (n) => void (dropCreates = n),
    fileContent: (id) => files.get(id)?.content,
    reset() {
      requests.length = 0;
      batches.length = 0;
      files.clear();
      dropCreates = 0;
      queues.chat.length = 0;
      queues.embeddings.length = 0;
      maxInFlight = inFlight;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The fields of a multipart/form-data body (text parts only), with the file part's name. */
function multipart(text: string, contentType: string): Record<string, string | undefined> & { filename?: string } {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/.exec(contentType);
  const fields: Record<string, string | undefined> & { filename?: string } = {};
  if (!boundary) return fields;
  for (const part of text.split(`--${boundary[1] ?? boundary[2]}`)) {
    const split = part.indexOf('\r\n\r\n');
    if (split < 0) continue;
    const headers = part.slice(0, split);
    const name = /name="([^"]+)"/.exec(headers)?.[1];
    if (!name) continue;
    fields[name] = part.slice(split + 4).replace(/\r\n$/, '');
    const filename = /filename="([^"]*)"/.exec(headers)?.[1];
    if (filename !== undefined) fields.filename = filename;
  }
  return fields;
}
