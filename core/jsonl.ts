import { createHash, type Hash } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, ftruncateSync, openSync, readFileSync, readSync, renameSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { UserError, withPath } from './errors.ts';
import { makeFolder } from './folders.ts';

/** Bytes read or buffered at a time when a file is read or written line by line. */
const LINE_CHUNK = 1 << 20;

/**
 * A record's line of JSON (no newline): one string, or parts that make the line one after the
 * other. A line put together from parts kept for many records (the texts of shared tools) is
 * written part by part: never built as one string, nor copied flat by its write. A part is whole
 * JSON tokens and punctuation, so no character is split between two parts.
 */
export type LineText = string | readonly string[];

/** A line's UTF-16 code units (its UTF-8 bytes are at most three times as many). */
export function lineTextLength(text: LineText): number {
  if (typeof text === 'string') return text.length;
  let length = 0;
  for (const part of text) length += part.length;
  return length;
}

/** A line as one string (for a reader that parses it). */
export function lineString(text: LineText): string {
  return typeof text === 'string' ? text : text.join('');
}

/** Encodes a line as UTF-8 into `target` at `at` (room for three bytes per code unit is there); returns the bytes written. */
export function putLineText(target: Buffer, at: number, text: LineText): number {
  if (typeof text === 'string') return putText(target, at, text);
  let end = at;
  for (const part of text) end += putText(target, end, part);
  return end - at;
}

/** Parts at most this long are copied code unit by code unit while they are ASCII: a field name or a comma costs less so than a call into the encoder. */
const SHORT_PART = 48;

function putText(target: Buffer, at: number, text: string): number {
  const length = text.length;
  if (length <= SHORT_PART) {
    let i = 0;
    for (; i < length; i++) {
      const code = text.charCodeAt(i);
      if (code >= 0x80) break;
      target[at + i] = code;
    }
    if (i === length) return length;
  }
  return target.write(text, at, 'utf8');
}

/** One line of a file: its bytes without the `\n`, where it starts, and whether a `\n` ended it. */
export interface FileLine {
  bytes: Buffer;
  start: number;
  complete: boolean;
}

/**
 * The lines of a file, read in 1 MiB chunks: no file is ever held whole, so files past V8's longest
 * string (~512 MB) or a Buffer's 2 GiB read like small ones. A last line without `\n` comes with
 * `complete: false` (for a journal: a torn write). `onChunk` sees every byte read (for hashing).
 */
export function* fileLines(path: string, onChunk?: (bytes: Buffer) => void): Generator<FileLine> {
  // Copied: the chunk buffer is reused by the next read.
  for (const { line, start, complete } of scanLines(path, (chunk, from, to) => Buffer.from(chunk.subarray(from, to)), onChunk)) yield { bytes: line, start, complete };
}

/**
 * The lines of a file made into `T` by `make` straight from the chunk they were read into (a line
 * that spans chunks is joined first), with where each starts and whether a `\n` ended it.
 */
function* scanLines<T>(path: string, make: (chunk: Buffer, from: number, to: number) => T, onChunk?: (bytes: Buffer) => void): Generator<{ line: T; start: number; complete: boolean }> {
  const fd = openSync(path, 'r');
  try {
    const chunk = Buffer.allocUnsafe(LINE_CHUNK);
    let carry: Buffer[] = [];
    let lineStart = 0;
    let position = 0;
    for (;;) {
      const read = readSync(fd, chunk, 0, LINE_CHUNK, null);
      if (read === 0) break;
      const bytes = chunk.subarray(0, read);
      onChunk?.(bytes);
      let from = 0;
      for (let end = bytes.indexOf(10, from); end !== -1; end = bytes.indexOf(10, from)) {
        let line: T;
        if (carry.length) {
          const joined = Buffer.concat([...carry, bytes.subarray(from, end)]);
          line = make(joined, 0, joined.length);
        } else line = make(chunk, from, end);
        carry = [];
        yield { line, start: lineStart, complete: true };
        from = end + 1;
        lineStart = position + from;
      }
      if (from < read) carry.push(Buffer.from(bytes.subarray(from)));
      position += read;
    }
    if (carry.length) {
      const joined = Buffer.concat(carry);
      yield { line: make(joined, 0, joined.length), start: lineStart, complete: false };
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * The records of a JSONL file, one at a time; a bad line is an error naming the file and line.
 * `onChunk` sees every byte read (a reader can hash the file as it parses it).
 */
export function* eachJsonl<T = unknown>(path: string, onChunk?: (bytes: Buffer) => void): Generator<T> {
  for (const { value } of eachJsonlLine<T>(path, onChunk)) yield value;
}

/** Like `eachJsonl`, with each record's line text (to copy a record unchanged without writing it again). */
export function* eachJsonlLine<T = unknown>(path: string, onChunk?: (bytes: Buffer) => void): Generator<{ value: T; text: string }> {
  for (const { text, number } of jsonlTexts(path, onChunk)) yield { value: parseJsonLine<T>(text, path, number), text };
}

/** The non-blank lines of a JSONL file as text, not parsed (with their 1-based line numbers); none when it is missing. */
export function* jsonlTexts(path: string, onChunk?: (bytes: Buffer) => void): Generator<{ text: string; number: number }> {
  if (!existsSync(path)) return;
  let number = 0;
  for (const { line } of scanLines(path, (chunk, from, to) => chunk.toString('utf8', from, to), onChunk)) {
    number++;
    const text = line.trim();
    if (text) yield { text, number };
  }
}

/** A non-blank line of a JSONL file, decoded only when its text is asked for: `text()` holds until the next line is taken. */
export interface JsonlLine {
  /** 1-based. */
  readonly number: number;
  /** The line's text, trimmed. */
  text(): string;
}

/**
 * The lines `jsonlTexts` gives, none decoded until asked (for a reader that needs the text of a
 * few: a stage's rejects, a sample of its records); none when it is missing.
 */
export function* jsonlLines(path: string, onChunk?: (bytes: Buffer) => void): Generator<JsonlLine> {
  if (!existsSync(path)) return;
  let number = 0;
  for (const { line } of scanLines(path, (chunk, from, to) => new ChunkLine(chunk, from, to), onChunk)) {
    line.number = ++number;
    if (!line.blank()) yield line;
  }
}

/** A line where the chunk read holds it (until the next read). */
class ChunkLine implements JsonlLine {
  number = 0;

  constructor(
    private readonly chunk: Buffer,
    private readonly from: number,
    private readonly to: number,
  ) {}

  text(): string {
    return this.chunk.toString('utf8', this.from, this.to).trim();
  }

  /** Whether the line is whitespace only, as `trim` sees it: judged by its bytes up to the first that is not ASCII whitespace. */
  blank(): boolean {
    for (let i = this.from; i < this.to; i++) {
      const byte = this.chunk[i];
      if (byte === 32 || (byte >= 9 && byte <= 13)) continue;
      // Past ASCII: `trim` also strips Unicode spaces.
      return byte < 0x80 ? false : this.text() === '';
    }
    return true;
  }
}

/** One line's record; a bad line is an error naming the file and line. */
export function parseJsonLine<T = unknown>(text: string, path: string, number: number): T {
  try {
    return JSON.parse(text) as T;
  } catch (error) {
    throw new UserError(`${path}:${number}: not valid JSON (${(error as Error).message}); fix or remove that line`);
  }
}

/** Parses a JSONL file; a bad line is an error naming the file and line. */
export function readJsonl<T = unknown>(path: string): T[] {
  return [...eachJsonl<T>(path)];
}

/** JSONL text of a few records (small files only: large ones go through `writeJsonlAtomic`). */
export function toJsonl(records: readonly unknown[]): string {
  return records.map((r) => JSON.stringify(r) + '\n').join('');
}

/**
 * Writes records as JSONL, whole or not at all (a temporary file renamed into place), through a
 * 1 MiB buffer: the file is never built as one string. Returns its sha256 and line count.
 */
export function writeJsonlAtomic(path: string, records: Iterable<unknown>): { sha256: string; count: number } {
  const file = new AtomicJsonlFile(path, { sha256: true });
  try {
    for (const record of records) file.write(record);
  } catch (error) {
    file.discard();
    throw withPath(error, path);
  }
  file.commit();
  return { sha256: file.sha256(), count: file.count };
}

/**
 * A JSONL file written whole or not at all, for a writer that fills several files at once: lines go
 * to a temporary file, `commit` renames it into place, `discard` removes it.
 */
export class AtomicJsonlFile {
  private readonly writer: JsonlWriter;

  constructor(
    readonly path: string,
    options: { sha256?: boolean } = {},
  ) {
    this.writer = new JsonlWriter(`${path}.tmp-${process.pid}`, options);
  }

  get count(): number {
    return this.writer.count;
  }

  write(record: unknown): void {
    this.writer.write(record);
  }

  writeText(text: LineText): void {
    this.writer.writeText(text);
  }

  /** Closes the file and renames it into place; returns its path. */
  commit(): string {
    try {
      this.writer.close();
      renameSync(this.writer.path, this.path);
    } catch (error) {
      rmSync(this.writer.path, { force: true });
      throw withPath(error, this.path);
    }
    return this.path;
  }

  discard(): void {
    try {
      this.writer.close();
    } catch {
      // Already closed, or the disk failed: the temporary file goes either way.
    }
    rmSync(this.writer.path, { force: true });
  }

  sha256(): string {
    return this.writer.sha256();
  }
}

/**
 * Writes a JSON array whole or not at all, element by element, as `JSON.stringify(items, null, indent)`
 * and a line break would (the same bytes), without building it as one string.
 */
export function writeJsonArrayAtomic(path: string, items: Iterable<unknown>, indent = 2): void {
  const file = new AtomicJsonlFile(path);
  const space = ' '.repeat(indent);
  try {
    let pending: string | undefined;
    for (const item of items) {
      if (pending === undefined) file.writeText('[');
      else file.writeText(`${pending},`);
      // JSON text holds no raw line break but those the indentation puts between its lines.
      pending = `${space}${String(JSON.stringify(item, null, indent)).replaceAll('\n', `\n${space}`)}`;
    }
    if (pending === undefined) file.writeText('[]');
    else {
      file.writeText(pending);
      file.writeText(']');
    }
  } catch (error) {
    file.discard();
    throw withPath(error, path);
  }
  file.commit();
}

/** Writes JSON lines to a new file through a 1 MiB buffer, hashing what it writes when asked to. */
export class JsonlWriter {
  private readonly fd: number;
  private readonly hash: Hash | undefined;
  private readonly buffer = Buffer.allocUnsafe(LINE_CHUNK);
  private used = 0;
  count = 0;

  constructor(
    readonly path: string,
    options: { sha256?: boolean } = {},
  ) {
    makeFolder(dirname(path));
    try {
      this.fd = openSync(path, 'w');
    } catch (error) {
      throw withPath(error, path);
    }
    if (options.sha256) this.hash = createHash('sha256');
  }

  write(record: unknown): void {
    this.writeText(String(JSON.stringify(record)));
  }

  /** A record already serialised as one line of JSON (no newline), encoded straight into the buffer. */
  writeText(text: LineText): void {
    // UTF-8 takes at most 3 bytes per UTF-16 code unit.
    const most = lineTextLength(text) * 3 + 1;
    if (this.used + most > LINE_CHUNK) {
      this.flush();
      if (most > LINE_CHUNK) return this.writeLine(Buffer.from(lineString(text), 'utf8'));
    }
    this.used += putLineText(this.buffer, this.used, text);
    this.buffer[this.used++] = 10;
    this.count++;
  }

  /** A record as the bytes of one line of JSON (no newline), copied as they are. */
  writeBytes(bytes: Uint8Array): void {
    if (this.used + bytes.length + 1 > LINE_CHUNK) {
      this.flush();
      if (bytes.length + 1 > LINE_CHUNK) return this.writeLine(bytes);
    }
    this.buffer.set(bytes, this.used);
    this.used += bytes.length;
    this.buffer[this.used++] = 10;
    this.count++;
  }

  /** A line too long for the buffer, written on its own (the buffer is empty). */
  private writeLine(bytes: Uint8Array): void {
    this.writeOut(bytes);
    this.writeOut(NEWLINE);
    this.count++;
  }

  private flush(): void {
    if (!this.used) return;
    // Emptied first: after a failed write (a full disk), closing must not try the same bytes again.
    const used = this.used;
    this.used = 0;
    this.writeOut(this.buffer.subarray(0, used));
  }

  private writeOut(bytes: Uint8Array): void {
    this.hash?.update(bytes);
    try {
      for (let written = 0; written < bytes.length; ) written += writeSync(this.fd, bytes, written);
    } catch (error) {
      throw withPath(error, this.path);
    }
  }

  close(): void {
    try {
      this.flush();
    } finally {
      closeSync(this.fd);
    }
  }

  /** The sha256 of everything written (after `close`; only for a writer made with `sha256: true`). */
  sha256(): string {
    if (!this.hash) throw new Error(`${this.path}: written without a hash`);
    return this.hash.digest('hex');
  }
}

const NEWLINE = Buffer.from('\n');

/** Writes a file whole or not at all: a temporary file renamed into place (removed again if writing fails). */
export function writeFileAtomic(path: string, content: string, options: { durable?: boolean } = {}): void {
  makeFolder(dirname(path));
  const tmp = `${path}.tmp-${process.pid}`;
  try {
    writeFileSync(tmp, content, options.durable ? { flush: true } : undefined);
    renameSync(tmp, path);
  } catch (error) {
    rmSync(tmp, { force: true });
    // Named after the file asked for, not its temporary copy.
    if ((error as NodeJS.ErrnoException).path === tmp) (error as NodeJS.ErrnoException).path = path;
    throw withPath(error, path);
  }
  if (options.durable) syncFolder(dirname(path));
}

/** Syncs a folder, so that a rename in it reaches the disk (for `durable` writes: a decision saved is there after a power cut). */
export function syncFolder(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } catch {
    // Some file systems cannot fsync a folder; the rename is still atomic there.
  } finally {
    closeSync(fd);
  }
}

/**
 * An append-only journal of JSON lines. Entries go through a buffer written out (one write(2) of
 * whole lines) once the event loop turns (`setImmediate`), when it is full, and on `flush` and
 * `close`: records finished together are journalled with one system call, and an entry waits on
 * disk for no other work than what finished in the same turn. A process killed at any moment leaves
 * whole lines and at most a torn last one, which `open` cuts off before appending; entries still in
 * the buffer are lost, and their records run again.
 */
export class Journal<T> {
  private readonly buffer = Buffer.allocUnsafe(LINE_CHUNK);
  private used = 0;
  private pending: NodeJS.Immediate | undefined;
  /** A write that failed after `appendText` returned: thrown by the next call. */
  private failure: unknown;
  private earlier: (() => void) | undefined;

  private constructor(
    readonly path: string,
    private readonly fd: number,
    private size: number,
  ) {}

  /**
   * Opens (creating) the journal, calling `visit` with each entry already in it, where it is (byte
   * offset and length, for reading it back later without holding it) and its bytes. An entry
   * `visit` finds inconsistent (returns false), like one that is not JSON, is cut off with
   * everything after it: those records run again.
   */
  static open<T>(path: string, visit: (entry: T, start: number, length: number, bytes: Buffer) => boolean | void = () => {}): Journal<T> {
    makeFolder(dirname(path));
    let goodBytes = 0;
    if (existsSync(path)) {
      for (const line of fileLines(path)) {
        if (!line.complete) break; // torn last line: no newline, dropped
        let entry: T;
        try {
          entry = JSON.parse(line.bytes.toString('utf8')) as T;
        } catch {
          break; // a torn line and anything after it is dropped; those records run again
        }
        if (visit(entry, line.start, line.bytes.length, line.bytes) === false) break;
        goodBytes = line.start + line.bytes.length + 1;
      }
    }
    const fd = openSync(path, 'a+');
    ftruncateSync(fd, goodBytes);
    return new Journal<T>(path, fd, goodBytes);
  }

  /** Appends one entry as one whole line; returns where its JSON is in the file (readable there after `flush`). */
  append(entry: T): { start: number; length: number } {
    return this.appendText(JSON.stringify(entry));
  }

  /** Appends an entry already serialised as one line of JSON (no newline). */
  appendText(text: string): { start: number; length: number } {
    // UTF-8 takes at most 3 bytes per UTF-16 code unit.
    return this.appendWith(text.length * 3, (target, at) => target.write(text, at, 'utf8'));
  }

  /** Appends one line whose bytes (no newline, at most `most`) `write` puts into `target` at `at`, returning how many. */
  appendWith(most: number, write: (target: Buffer, at: number) => number): { start: number; length: number } {
    this.throwFailure();
    if (this.used + most + 1 > LINE_CHUNK) this.flush();
    let length: number;
    if (most + 1 > LINE_CHUNK) {
      const line = Buffer.allocUnsafe(most + 1);
      length = write(line, 0);
      line[length] = 10;
      this.writeOut(line.subarray(0, length + 1));
    } else {
      length = write(this.buffer, this.used);
      this.used += length;
      this.buffer[this.used++] = 10;
      this.pending ??= setImmediate(() => {
        this.pending = undefined;
        try {
          this.flush();
        } catch (error) {
          this.failure ??= error;
        }
      });
    }
    const start = this.size;
    this.size += length + 1;
    return { start, length };
  }

  /**
   * `flushEarlier` writes out a journal whose entries this one's depend on (the stage before, whose
   * records this stage took in memory): called before each write here, so a killed process never
   * leaves an entry on disk made from one that is not.
   */
  writesAfter(flushEarlier: () => void): void {
    this.earlier = flushEarlier;
  }

  /** Writes out the entries in the buffer. */
  flush(): void {
    this.throwFailure();
    if (this.pending) clearImmediate(this.pending);
    this.pending = undefined;
    if (!this.used) return;
    // Emptied first: after a failed write (a full disk), closing must not try the same bytes again.
    const used = this.used;
    this.used = 0;
    this.writeOut(this.buffer.subarray(0, used));
  }

  private writeOut(bytes: Uint8Array): void {
    this.earlier?.();
    try {
      for (let written = 0; written < bytes.length; ) written += writeSync(this.fd, bytes, written);
    } catch (error) {
      throw withPath(error, this.path);
    }
  }

  private throwFailure(): void {
    if (this.failure === undefined) return;
    const failure = this.failure;
    this.failure = undefined;
    throw failure;
  }

  close(): void {
    try {
      this.flush();
      fsyncSync(this.fd);
    } finally {
      if (this.pending) clearImmediate(this.pending);
      closeSync(this.fd);
    }
  }
}

/** A small JSON file's value, or null when it is missing or unreadable (status files written atomically). */
export function readJsonFileOrNull<T>(path: string): T | null {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as T;
  } catch {
    return null;
  }
}

/**
 * Records a whole-set stage keeps for a later pass, on disk instead of in memory: each appended as
 * JSON to a file of its own and read back by its number, so that what stays in memory is 12 bytes
 * a record (where its text is) however large the record. `close` removes the file.
 */
export class SpilledRecords<T> {
  private readonly fd: number;
  private readonly buffer = Buffer.allocUnsafe(LINE_CHUNK);
  private used = 0;
  /** Bytes written to the file so far (what the buffer holds comes after). */
  private flushed = 0;
  private starts = new Float64Array(256);
  private lengths = new Uint32Array(256);
  length = 0;

  constructor(readonly path: string) {
    makeFolder(dirname(path));
    try {
      this.fd = openSync(path, 'w+');
    } catch (error) {
      throw withPath(error, path);
    }
  }

  /** Keeps a record; returns its number. */
  push(record: T): number {
    const text = JSON.stringify(record);
    if (this.length === this.starts.length) {
      const starts = new Float64Array(this.length * 2);
      starts.set(this.starts);
      const lengths = new Uint32Array(this.length * 2);
      lengths.set(this.lengths);
      [this.starts, this.lengths] = [starts, lengths];
    }
    // Encoded straight into the buffer when it fits (UTF-8 takes at most 3 bytes per UTF-16 code unit).
    const most = text.length * 3;
    if (this.used + most > LINE_CHUNK) this.flush();
    this.starts[this.length] = this.flushed + this.used;
    let length: number;
    if (most > LINE_CHUNK) {
      const bytes = Buffer.from(text, 'utf8');
      length = bytes.length;
      this.writeOut(bytes);
    } else {
      length = this.buffer.write(text, this.used, 'utf8');
      this.used += length;
    }
    this.lengths[this.length] = length;
    return this.length++;
  }

  /** The record numbered `i`, parsed again from its line. */
  get(i: number): T {
    if (!(i >= 0 && i < this.length)) throw new RangeError(`${this.path}: no record ${i} (${this.length} kept)`);
    const start = this.starts[i];
    const bytes = Buffer.allocUnsafe(this.lengths[i]);
    if (start >= this.flushed) this.buffer.copy(bytes, 0, start - this.flushed, start - this.flushed + bytes.length);
    else for (let read = 0; read < bytes.length; ) read += readSync(this.fd, bytes, read, bytes.length - read, start + read);
    return JSON.parse(bytes.toString('utf8')) as T;
  }

  private flush(): void {
    const used = this.used;
    this.used = 0;
    this.writeOut(this.buffer.subarray(0, used));
  }

  private writeOut(bytes: Uint8Array): void {
    try {
      for (let written = 0; written < bytes.length; ) written += writeSync(this.fd, bytes, written, bytes.length - written, this.flushed + written);
    } catch (error) {
      throw withPath(error, this.path);
    }
    this.flushed += bytes.length;
  }

  /** Forgets the records and removes the file. */
  close(): void {
    closeSync(this.fd);
    rmSync(this.path, { force: true });
  }
}
