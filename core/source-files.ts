import { closeSync, fstatSync, openSync, readSync, statSync, type Stats } from 'node:fs';
import { UserError } from './errors.ts';

/**
 * Reading source files (datasets a loader turns into records): JSON documents, JSONL and plain
 * line files. Errors name the file, line and column and say what to do; a line longer than
 * `MAX_LINE_BYTES` is refused after reading at most that much of it, so one huge line cannot
 * take the process's memory.
 */

/** Longest line a line-based source may have: 1 MB. */
export const MAX_LINE_BYTES = 1_048_576;

/** Bytes read at a time by the line reader. */
const CHUNK_BYTES = 65_536;

export interface SourceFileOptions {
  /** How the path is shown in messages (default: the path itself). */
  shown?: string;
}

export interface JsonFileOptions extends SourceFileOptions {
  /** What the file should hold, said after a syntax error, e.g. `a JSON list of "Domain/Subdomain" strings`. */
  expected?: string;
}

export interface LineFileOptions extends SourceFileOptions {
  /** Longest line accepted, in bytes without the line break (default `MAX_LINE_BYTES`). */
  maxLineBytes?: number;
}

/** Where a JSON text stops being JSON, and why. */
export interface JsonSyntaxError {
  line: number;
  column: number;
  message: string;
}

/** Parses a JSON text; a syntax error comes back with its 1-based line and column. */
/** The value of a JSON text, or undefined when it is not JSON. */
export function jsonValueOf(text: string): unknown {
  const parsed = parseJsonText(text);
  return 'value' in parsed ? parsed.value : undefined;
}

export function parseJsonText(text: string): { value: unknown } | { error: JsonSyntaxError } {
  try {
    return { value: JSON.parse(text) };
  } catch (error) {
    // A text JSON.parse refused but the scan accepts (not expected) is blamed on its end.
    const scanned = jsonErrorOffset(text);
    const offset = scanned < 0 ? text.length : scanned;
    const before = text.slice(0, offset);
    const line = before.split('\n').length;
    return { error: { line, column: offset - before.lastIndexOf('\n'), message: syntaxMessage((error as Error).message) } };
  }
}

/** `file:line:column: not valid JSON (…); <what to do> (expected …)`. */
export function jsonErrorMessage(shown: string, error: JsonSyntaxError, options: { todo: string; expected?: string }): string {
  return `${shown}:${error.line}:${error.column}: not valid JSON (${error.message}); ${options.todo}${options.expected ? ` (expected ${options.expected})` : ''}`;
}

/** Reads and parses a JSON source file; an unreadable file or a syntax error is a `UserError`. */
export function readJsonFile(path: string, options: JsonFileOptions = {}): unknown {
  const shown = options.shown ?? path;
  const parsed = parseJsonText(readSourceText(path, shown));
  if ('error' in parsed) throw new UserError(jsonErrorMessage(shown, parsed.error, { todo: 'fix the JSON there', expected: options.expected }));
  return parsed.value;
}

/** A source file read whole as UTF-8 text, bounded as `readSourceFile` says. */
export function readSourceText(path: string, shown = path): string {
  return readSourceFile(path, { shown }).toString('utf8');
}

/** Largest source file by default: 256 MiB (a line file read as a stream has its line limit instead). */
export const DEFAULT_MAX_SOURCE_BYTES = 256 * 1_048_576;

/**
 * The most a source file may hold: `TOOLKILN_MAX_SOURCE_BYTES` (bytes, or with a K / M / G
 * suffix) or `DEFAULT_MAX_SOURCE_BYTES`. A bad value is a `UserError` naming the variable.
 */
export function maxSourceBytes(env: NodeJS.ProcessEnv = process.env): number {
  const given = env.TOOLKILN_MAX_SOURCE_BYTES?.trim();
  if (!given) return DEFAULT_MAX_SOURCE_BYTES;
  const match = /^(\d+)\s*([kmg]i?b?)?$/i.exec(given);
  if (!match) throw new UserError(`TOOLKILN_MAX_SOURCE_BYTES=${given}: give a size in bytes, e.g. 536870912 or 512M`);
  const unit = (match[2] ?? '').charAt(0).toLowerCase();
  return Number(match[1]) * ({ k: 1024, m: 1_048_576, g: 1_073_741_824 }[unit] ?? 1);
}

export interface SourceReadOptions extends SourceFileOptions {
  /** The most the file may hold (default `maxSourceBytes()`). */
  maxBytes?: number;
}

/** Why a file cannot be a source: a device, pipe or folder could never end, and a file over the limit is refused. */
function sourceFileProblem(stat: Stats, shown: string, max: number): string | null {
  if (!stat.isFile()) return `${shown}: not a regular file (${stat.isDirectory() ? 'a folder' : 'a device, pipe or socket'}); give the path of a file`;
  if (stat.size > max) return tooLargeMessage(shown, max);
  return null;
}

function tooLargeMessage(shown: string, max: number): string {
  return `${shown}: larger than ${max.toLocaleString('en-US')} bytes, the most a source file may hold; split it, or raise TOOLKILN_MAX_SOURCE_BYTES`;
}

/** Refuses a path that is no regular file or is over the size limit, naming it; reads nothing. */
export function checkSourceFile(path: string, options: SourceReadOptions = {}): void {
  const shown = options.shown ?? path;
  let stat: Stats;
  try {
    stat = statSync(path);
  } catch (error) {
    throw cannotRead(shown, error);
  }
  const problem = sourceFileProblem(stat, shown, options.maxBytes ?? maxSourceBytes());
  if (problem) throw new UserError(problem);
}

/** `path` opened for reading; refused as `checkSourceFile` says (checked on the open file, so it cannot change in between). */
function openSourceFile(path: string, shown: string, max: number): number {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    throw cannotRead(shown, error);
  }
  const problem = sourceFileProblem(fstatSync(fd), shown, max);
  if (problem) {
    closeSync(fd);
    throw new UserError(problem);
  }
  return fd;
}

/**
 * A source file's bytes, read in chunks up to the size limit: a larger file (or one that grows past
 * it while read) is refused naming it before more is read, so one huge file cannot take the memory.
 */
export function readSourceFile(path: string, options: SourceReadOptions = {}): Buffer {
  const shown = options.shown ?? path;
  const max = options.maxBytes ?? maxSourceBytes();
  const fd = openSourceFile(path, shown, max);
  try {
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.min(CHUNK_BYTES * 16, max + 1 - total));
      const read = readSync(fd, chunk, 0, chunk.length, null);
      if (read === 0) break;
      total += read;
      if (total > max) throw new UserError(tooLargeMessage(shown, max));
      chunks.push(chunk.subarray(0, read));
    }
    return Buffer.concat(chunks, total);
  } finally {
    closeSync(fd);
  }
}

function cannotRead(shown: string, error: unknown): UserError {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return new UserError(`${shown}: no such file; check the path`);
  return new UserError(`${shown}: cannot read the file (${code ?? (error as Error).message}); check the path and its permissions`);
}

/**
 * The lines of a text file (without their `\n`), numbered from 1, read in chunks. A trailing
 * line break ends the last line rather than starting an empty one. A line over the limit is a
 * `UserError` naming the file and line, raised before the rest of that line is read.
 */
export function* readLines(path: string, options: LineFileOptions = {}): Generator<{ line: number; text: string }> {
  const shown = options.shown ?? path;
  const max = options.maxLineBytes ?? MAX_LINE_BYTES;
  // Streamed, so no size limit; a device or pipe is still refused (it may never end).
  const fd = openSourceFile(path, shown, Number.POSITIVE_INFINITY);
  try {
    const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
    let pieces: Buffer[] = [];
    let pending = 0;
    let line = 1;
    const tooLong = () =>
      new UserError(`${shown}:${line}: line is longer than ${max.toLocaleString('en-US')} bytes${max === MAX_LINE_BYTES ? ' (1 MB)' : ''}, the most a source line may hold; split that record or check that the file has line breaks`);
    for (;;) {
      const read = readSync(fd, chunk, 0, CHUNK_BYTES, null);
      if (read === 0) break;
      const bytes = chunk.subarray(0, read);
      let start = 0;
      for (let end = bytes.indexOf(10, start); end !== -1; end = bytes.indexOf(10, start)) {
        if (pending + end - start > max) throw tooLong();
        const text = Buffer.concat([...pieces, bytes.subarray(start, end)]).toString('utf8');
        pieces = [];
        pending = 0;
        yield { line, text };
        line++;
        start = end + 1;
      }
      pending += read - start;
      if (pending > max) throw tooLong();
      // The chunk buffer is reused: keep a copy of the unfinished line.
      if (start < read) pieces.push(Buffer.from(bytes.subarray(start)));
    }
    if (pending) yield { line, text: Buffer.concat(pieces).toString('utf8') };
  } finally {
    closeSync(fd);
  }
}

/** The lines of a line file as a list (see `readLines`). */
export function readLineFile(path: string, options: LineFileOptions = {}): string[] {
  return Array.from(readLines(path, options), (entry) => entry.text);
}

/** One line of a JSONL file: its parsed value, or where and why it is not JSON. */
export type JsonlLine = { line: number; value: unknown } | { line: number; column: number; error: string };

/**
 * The non-blank lines of a JSONL file, parsed. A line that is not JSON becomes an error entry
 * instead of stopping the read (a checker reports it with the others); an over-long line stops it.
 */
export function readJsonlLines(path: string, options: LineFileOptions = {}): JsonlLine[] {
  return [...eachJsonlLine(path, options)];
}

/** Like `readJsonlLines`, one line at a time (the file is read as it is iterated). */
export function* eachJsonlLine(path: string, options: LineFileOptions = {}): Generator<JsonlLine> {
  for (const { line, text } of readLines(path, options)) {
    if (!text.trim()) continue;
    const parsed = parseJsonText(text);
    yield 'error' in parsed ? { line, column: parsed.error.column, error: parsed.error.message } : { line, value: parsed.value };
  }
}

/** The values of a JSONL file; a line that is not JSON is a `UserError` naming file, line and column. */
export function readJsonlValues(path: string, options: JsonFileOptions & LineFileOptions = {}): { line: number; value: unknown }[] {
  const shown = options.shown ?? path;
  return readJsonlLines(path, options).map((entry) => {
    if ('error' in entry) throw new UserError(jsonlErrorMessage(shown, entry, options.expected));
    return entry;
  });
}

/** The message of a JSONL error entry: `file:line:column: not valid JSON (…); fix or remove that line`. */
export function jsonlErrorMessage(shown: string, entry: { line: number; column: number; error: string }, expected?: string): string {
  return jsonErrorMessage(shown, { line: entry.line, column: entry.column, message: entry.error }, { todo: 'fix or remove that line', expected });
}

/** V8's message without its position (the caller gives line and column) or its echo of the text. */
function syntaxMessage(message: string): string {
  return message
    .replace(/ at position \d+( \(line \d+ column \d+\))?$/, '')
    .replace(/ in JSON$/, '')
    .replace(/^(Unexpected token '.+?'), (?:\.\.\.)?"[\s\S]*is not valid JSON$/, '$1');
}

/**
 * Offset of the first character that breaks JSON syntax (the text's length when it ends too
 * early; -1 when there is none). V8 gives no position for some errors ("Unexpected token"), so
 * the text is scanned again; this runs only after `JSON.parse` failed. Iterative, so deep
 * nesting cannot overflow the stack.
 */
function jsonErrorOffset(text: string): number {
  const n = text.length;
  const stack: string[] = [];
  let i = 0;
  let state: 'value' | 'key' | 'after' = 'value';
  const skipSpace = () => {
    while (i < n && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  };
  for (skipSpace(); i < n; skipSpace()) {
    const c = text[i];
    if (state === 'after') {
      const top = stack.at(-1);
      if (!top) return i;
      if (c === ',') {
        i++;
        state = top === '{' ? 'key' : 'value';
      } else if (c === (top === '{' ? '}' : ']')) {
        i++;
        stack.pop();
      } else return i;
      continue;
    }
    if (state === 'key') {
      if (c !== '"') return i;
      const end = stringEnd(text, i);
      if (end < 0) return -end - 1;
      i = end;
      skipSpace();
      if (i >= n) return n;
      if (text[i] !== ':') return i;
      i++;
      state = 'value';
      continue;
    }
    if (c === '{' || c === '[') {
      stack.push(c);
      i++;
      skipSpace();
      if (text[i] === (c === '{' ? '}' : ']')) {
        i++;
        stack.pop();
        state = 'after';
      } else state = c === '{' ? 'key' : 'value';
      continue;
    }
    const end = c === '"' ? stringEnd(text, i) : c === '-' || (c >= '0' && c <= '9') ? numberEnd(text, i) : literalEnd(text, i);
    if (end < 0) return -end - 1;
    i = end;
    state = 'after';
  }
  return state === 'after' && !stack.length ? -1 : n;
}

// The scanners return the offset after the token, or -(error offset) - 1.

function stringEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) return i + 1;
    if (c < 0x20) return -i - 1;
    if (c === 0x5c) {
      const escape = text[i + 1];
      if (escape === 'u') {
        for (let k = i + 2; k < i + 6; k++) if (!/[0-9a-fA-F]/.test(text[k] ?? '')) return -Math.min(k, text.length) - 1;
        i += 5;
      } else if (escape !== undefined && '"\\/bfnrt'.includes(escape)) i++;
      else return -Math.min(i + 1, text.length) - 1;
    }
  }
  return -text.length - 1;
}

function numberEnd(text: string, start: number): number {
  let i = start;
  const digits = () => {
    const from = i;
    while (text[i] >= '0' && text[i] <= '9') i++;
    return i > from;
  };
  if (text[i] === '-') i++;
  if (text[i] === '0') i++;
  else if (!digits()) return -i - 1;
  if (text[i] === '.') {
    i++;
    if (!digits()) return -i - 1;
  }
  if (text[i] === 'e' || text[i] === 'E') {
    i++;
    if (text[i] === '+' || text[i] === '-') i++;
    if (!digits()) return -i - 1;
  }
  return i;
}

function literalEnd(text: string, start: number): number {
  const literal = ['true', 'false', 'null'].find((word) => word[0] === text[start]);
  if (!literal) return -start - 1;
  for (let k = 1; k < literal.length; k++) if (text[start + k] !== literal[k]) return -(start + k) - 1;
  return start + literal.length;
}
