import { randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { hostname } from 'node:os';
import { isIP } from 'node:net';
import { extname, sep } from 'node:path';
import { fileSystemMessage, messageOf, UserError } from '../../core/errors.ts';
import { projectFile } from '../../core/project-dir.ts';
import type { ItemKind } from './item-kind.ts';
import type { ReviewSession } from './session.ts';

export interface ReviewServerOptions {
  session: ReviewSession;
  /** Default 127.0.0.1: only this machine can connect. */
  host?: string;
  /** Default 0: any free port. */
  port?: number;
  /** Default: 24 random bytes, hex. Every request must carry it as the first path segment. */
  token?: string;
}

export interface ReviewServer {
  /** The page's address, token included: `http://127.0.0.1:<port>/<token>/`. */
  url: string;
  port: number;
  close(): Promise<void>;
}

/** The page's files (plain HTML, CSS and ES modules; nothing is built or fetched from elsewhere). */
const STATIC_DIR = projectFile('review', 'app', 'static') + sep;
const STATIC_PATH = /^(?:[a-z0-9-]+\/)*[a-z0-9-]+\.(?:html|js|css|svg)$/;
const CONTENT_TYPES: Record<string, string> = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8', '.svg': 'image/svg+xml' };
const MAX_BODY = 1 << 20;
/** After refusing an oversize body: how long the rest of it is read and dropped before the socket closes. */
const LINGER_MS = 2_000;

const SECURITY_HEADERS = {
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  // The token is in the path: never send it anywhere else.
  'Referrer-Policy': 'no-referrer',
  'Content-Security-Policy': "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
};

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The review app's HTTP server (node:http). Every path starts with the access token, so other users
 * of the machine, who can reach 127.0.0.1 but not read the printed URL, get 403 for everything.
 * `GET <token>/` the page, `GET <token>/api/state` the items and their decisions,
 * `GET <token>/api/items/<id>` one item's view, `POST <token>/api/items/<id>` a decision (JSON: the
 * answer's fields), answered 200 with the item's summary or 422 with the problems import reports.
 */
export async function startReviewServer(options: ReviewServerOptions): Promise<ReviewServer> {
  const { session } = options;
  const token = options.token ?? randomBytes(24).toString('hex');
  const host = options.host ?? '127.0.0.1';
  let hosts: Set<string> | 'any-ip' = new Set();
  const respond = (req: IncomingMessage, res: ServerResponse) => {
    handle(req, res, session, token, hosts).catch((error) => {
      const status = error instanceof HttpError ? error.status : 500;
      const message = error instanceof HttpError || error instanceof UserError ? error.message : (fileSystemMessage(error) ?? messageOf(error).split('\n')[0]);
      if (status === 413) refuseOversize(req, res, message);
      else send(res, status, { error: message });
    });
  };
  const server = createServer(respond);
  // `Expect: 100-continue`: an oversize body is refused before the client sends it.
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    if (!declaredTooLarge(req)) res.writeContinue();
    respond(req, res);
  });
  await listen(server, host, options.port ?? 0);
  const { port, address } = server.address() as { port: number; address: string };
  hosts = allowedHosts(host, address, port);
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}/${token}/`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * The Host headers a browser sends for the bound address: a page on another name that resolves to
 * this address (DNS rebinding) is refused. The address as bound (`127.0.0.1:<port>`, `[::1]:<port>`)
 * and the name it was given; a loopback address also as `localhost`. An address on every interface
 * answers to any IP literal, `localhost` and this machine's name.
 */
function allowedHosts(given: string, address: string, port: number): Set<string> | 'any-ip' {
  const literal = (name: string) => (isIP(name) === 6 ? `[${name}]` : name).toLowerCase();
  const bound = address.toLowerCase();
  if (bound === '0.0.0.0' || bound === '::') return 'any-ip';
  const names = new Set([literal(bound), literal(given.replace(/^\[|\]$/g, ''))]);
  if (bound.startsWith('127.') || bound === '::1') names.add('localhost');
  return new Set([...names].flatMap((name) => [`${name}:${port}`, ...(port === 80 ? [name] : [])]));
}

function hostAllowed(header: string | undefined, hosts: Set<string> | 'any-ip', port: number): boolean {
  const given = (header ?? '').trim().toLowerCase();
  if (hosts !== 'any-ip') return hosts.has(given);
  const match = /^(\[[0-9a-f:.]+\]|[^:]+)(?::(\d+))?$/.exec(given);
  if (!match || Number(match[2] ?? 80) !== port) return false;
  const name = match[1].replace(/^\[|\]$/g, '');
  return isIP(name) !== 0 || name === 'localhost' || name === hostname().toLowerCase();
}

function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') reject(new UserError(`port ${port} on ${host} is in use: give another --port, or --port 0 for any free one`));
      else if (error.code === 'EADDRNOTAVAIL') reject(new UserError(`cannot listen on ${host}: it is not an address of this machine (--host)`));
      else if (error.code === 'EACCES') reject(new UserError(`port ${port} needs privileges: give a port above 1023 (--port)`));
      else reject(error);
    });
    server.listen(port, host, () => resolve());
  });
}

async function handle(req: IncomingMessage, res: ServerResponse, session: ReviewSession, token: string, hosts: Set<string> | 'any-ip'): Promise<void> {
  const port = req.socket.localPort ?? 0;
  if (!hostAllowed(req.headers.host, hosts, port)) {
    const shown = hosts === 'any-ip' ? `an address of this machine on port ${port}` : [...hosts].join(', ');
    throw new HttpError(421, `this review server answers only as ${shown}, not as Host "${req.headers.host ?? ''}": open the address toolkiln review serve printed`);
  }
  const path = new URL(req.url ?? '/', 'http://localhost').pathname;
  const [, first = '', ...rest] = path.split('/');
  if (!sameToken(first, token)) throw new HttpError(403, 'forbidden: open the address toolkiln review serve printed (it carries the access token)');
  if (!rest.length) {
    res.writeHead(308, { ...SECURITY_HEADERS, Location: `/${token}/` }).end();
    return;
  }
  const route = rest.join('/');
  if (route === '' || route === 'index.html') return allow(req, 'GET'), sendStatic(res, 'index.html');
  if (route === 'api/state') {
    allow(req, 'GET');
    return send(res, 200, state(session));
  }
  const item = /^api\/items\/([^/]+)$/.exec(route);
  if (item) {
    const id = decodedSegment(item[1]);
    const kind = session.kinds.find((k) => k.summary(id) !== undefined);
    if (!kind) throw new HttpError(404, `no item ${id} in this review`);
    if (req.method === 'POST') return decide(req, res, kind, id);
    allow(req, 'GET');
    return send(res, 200, { summary: kind.summary(id), view: kind.view(id) });
  }
  if (STATIC_PATH.test(route)) return allow(req, 'GET'), sendStatic(res, route);
  throw new HttpError(404, `no such page: ${route}`);
}

/** A path segment as the page encoded it; a broken %-escape is the request's fault, not the server's. */
function decodedSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new HttpError(400, `the item id in the address is not a valid URL escape: ${segment}`);
  }
}

function sameToken(given: string, token: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

function allow(req: IncomingMessage, method: string): void {
  if (req.method !== method && !(method === 'GET' && req.method === 'HEAD')) throw new HttpError(405, `${req.method} is not allowed here (${method} is)`);
}

function state(session: ReviewSession) {
  return {
    dataset: session.dataset,
    annotator: session.annotator,
    kinds: session.kinds.map((k) => ({ kind: k.kind, decisions: k.decisions, file: k.file })),
    items: session.kinds.flatMap((k) => k.summaries()),
  };
}

async function decide(req: IncomingMessage, res: ServerResponse, kind: ItemKind, id: string): Promise<void> {
  // JSON only: a cross-site form cannot send it without a preflight (and does not know the token).
  if (!/^application\/json\b/.test(req.headers['content-type'] ?? '')) throw new HttpError(415, 'send the decision as application/json');
  if (declaredTooLarge(req)) throw new HttpError(413, tooLargeMessage());
  const body = await readBody(req);
  let answer: unknown;
  try {
    answer = JSON.parse(body);
  } catch (error) {
    throw new HttpError(400, `the decision is not valid JSON (${messageOf(error)})`);
  }
  if (!answer || typeof answer !== 'object' || Array.isArray(answer)) throw new HttpError(400, 'the decision must be a JSON object of text fields');
  const notText = Object.entries(answer).filter(([, v]) => typeof v !== 'string');
  if (notText.length) throw new HttpError(400, `the field(s) ${notText.map(([k]) => k).join(', ')} must be text`);
  const outcome = kind.decide(id, answer as Record<string, string>);
  send(res, outcome.ok ? 200 : 422, outcome);
}

function tooLargeMessage(): string {
  return `the decision is larger than ${MAX_BODY} bytes`;
}

/** A Content-Length over the limit: refused before a byte of the body is read. */
function declaredTooLarge(req: IncomingMessage): boolean {
  const length = Number(req.headers['content-length']);
  return Number.isFinite(length) && length > MAX_BODY;
}

/** The body, up to MAX_BODY bytes; a streamed body that goes past it stops there (413). */
function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY) return void chunks.push(chunk);
      req.off('data', onData);
      req.pause();
      reject(new HttpError(413, tooLargeMessage()));
    };
    req.on('data', onData);
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/**
 * 413 for a body over the limit, written before the connection closes. Closing a socket with
 * unread data in it sends a reset, which can reach the client before it has read the answer: so the
 * answer goes out, the sending side closes, and what the client still sends is read and dropped
 * until it stops (or LINGER_MS), then the socket is destroyed.
 */
function refuseOversize(req: IncomingMessage, res: ServerResponse, message: string): void {
  const socket = req.socket;
  if (res.headersSent || socket.destroyed) return void socket.destroy();
  const body = JSON.stringify({ error: message });
  const headers = { ...SECURITY_HEADERS, 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': String(Buffer.byteLength(body)), Connection: 'close' };
  // Written on the socket itself: the server's response object would destroy it as soon as the answer is out.
  socket.end(`HTTP/1.1 413 ${STATUS_CODES[413]}\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n${body}`);
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  socket.once('close', () => clearTimeout(timer));
  socket.once('end', () => socket.destroy());
  req.on('data', () => {});
  req.resume();
}

function send(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) return void res.end();
  res.writeHead(status, { ...SECURITY_HEADERS, 'Content-Type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
}

function sendStatic(res: ServerResponse, route: string): void {
  const file = STATIC_DIR + route;
  if (!existsSync(file)) throw new HttpError(404, `no such page: ${route}`);
  res.writeHead(200, { ...SECURITY_HEADERS, 'Content-Type': CONTENT_TYPES[extname(route)] }).end(readFileSync(file));
}
