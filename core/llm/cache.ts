import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, openSync, readdirSync, readSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { makeFolder } from '../folders.ts';

interface Location {
  segment: string;
  start: number;
  length: number;
}

export interface CacheStats {
  segments: number;
  entries: number;
  /** Lines dropped while loading: a torn last write, or garbage. */
  skippedLines: number;
}

const KEY_LENGTH = 64;
const TAB = 9;
const NEWLINE = 10;
/** Bytes read at a time while indexing a segment. */
const SCAN_CHUNK = 1 << 20;
/** A segment past this size is closed and the next answer starts a new one. */
export const SEGMENT_CAP_BYTES = 256 * 1024 * 1024;

/**
 * A content-addressed answer store on disk, shared by runs and processes.
 *
 * Layout: `<dir>/*.jsonl` segments, each line `<64-hex key>\t<json>\n`. Each process appends only to
 * its own new segment, one write per line, so concurrent processes never interleave and a process
 * killed mid-write leaves at most a torn last line, which loading skips. Loading indexes keys and
 * byte offsets only; values are read and parsed on demand. When segments hold the same key the
 * newest segment wins (segment names sort by creation time), so every reader picks the same answer
 * and a replaced entry stays replaced. Copying the folder copies the cache.
 */
export class ResponseCache {
  private readonly index = new Map<string, Location>();
  private writer: { fd: number; path: string; size: number } | null = null;
  private skipped = 0;
  private segmentCount = 0;

  private constructor(
    readonly dir: string,
    private readonly log: (message: string) => void,
    private readonly segmentCapBytes: number,
  ) {}

  static open(dir: string, log: (message: string) => void = () => {}, segmentCapBytes = SEGMENT_CAP_BYTES): ResponseCache {
    const cache = new ResponseCache(dir, log, segmentCapBytes);
    cache.load();
    return cache;
  }

  private load(): void {
    if (!existsSync(this.dir)) return;
    const segments = readdirSync(this.dir).filter((name) => name.endsWith('.jsonl')).sort();
    this.segmentCount = segments.length;
    for (const name of segments) this.indexSegment(join(this.dir, name));
  }

  /**
   * Indexes one segment's keys and byte offsets, reading it in 1 MiB chunks (segments are never
   * read whole: a long run's cache may be larger than a Buffer can hold). Only the head of a line
   * spanning two chunks is kept.
   */
  private indexSegment(path: string): void {
    const fd = openSync(path, 'r');
    try {
      const chunk = Buffer.allocUnsafe(SCAN_CHUNK);
      let head = Buffer.alloc(0); // the first bytes (at most key + tab) of the line being read
      let lineStart = 0;
      let position = 0;
      for (let read = readSync(fd, chunk, 0, SCAN_CHUNK, null); read > 0; read = readSync(fd, chunk, 0, SCAN_CHUNK, null)) {
        let from = 0;
        for (let end = chunk.indexOf(NEWLINE, from); end !== -1 && end < read; end = chunk.indexOf(NEWLINE, from)) {
          const line = head.length ? Buffer.concat([head, chunk.subarray(from, Math.min(end, from + KEY_LENGTH + 1))]) : chunk.subarray(from, end);
          const length = position + end - lineStart;
          this.indexLine(path, line, lineStart, length);
          head = Buffer.alloc(0);
          from = end + 1;
          lineStart = position + from;
        }
        if (from < read && head.length <= KEY_LENGTH) head = Buffer.concat([head, chunk.subarray(from, Math.min(read, from + KEY_LENGTH + 1 - head.length))]);
        position += read;
      }
      if (position > lineStart) this.skip(path, 'a torn last write (no newline)');
    } finally {
      closeSync(fd);
    }
  }

  /** `line` holds at least the line's first key + tab bytes; `length` is the whole line's, without `\n`. */
  private indexLine(path: string, line: Buffer, start: number, length: number): void {
    if (length > KEY_LENGTH + 1 && line[KEY_LENGTH] === TAB && isHexKey(line, 0)) {
      const key = line.toString('latin1', 0, KEY_LENGTH);
      this.index.set(key, { segment: path, start: start + KEY_LENGTH + 1, length: length - KEY_LENGTH - 1 });
    } else if (length > 0) {
      this.skip(path, 'a line that is not `<key>\\t<json>`');
    }
  }

  private skip(path: string, what: string): void {
    this.skipped++;
    this.log(`cache: skipped ${what} in ${path}`);
  }

  get size(): number {
    return this.index.size;
  }

  stats(): CacheStats {
    return { segments: this.segmentCount, entries: this.index.size, skippedLines: this.skipped };
  }

  has(key: string): boolean {
    return this.index.has(key);
  }

  /** The stored value, or undefined on a miss. An unreadable entry counts as a miss (and is forgotten). */
  get(key: string): unknown {
    const location = this.index.get(key);
    if (!location) return undefined;
    const fd = openSync(location.segment, 'r');
    try {
      const buffer = Buffer.allocUnsafe(location.length);
      let read = 0;
      while (read < location.length) {
        const n = readSync(fd, buffer, read, location.length - read, location.start + read);
        if (n === 0) break;
        read += n;
      }
      return JSON.parse(buffer.toString('utf8', 0, read));
    } catch {
      this.index.delete(key);
      this.skip(location.segment, `an unreadable entry for key ${key.slice(0, 12)}`);
      return undefined;
    } finally {
      closeSync(fd);
    }
  }

  /** Forgets an entry for this process, so that `put` can replace it. */
  forget(key: string): void {
    this.index.delete(key);
  }

  /** Stores a value under its key (a key already present keeps its value; `forget` it first to replace it). */
  put(key: string, value: unknown): void {
    if (!/^[0-9a-f]{64}$/.test(key)) throw new Error(`cache key must be 64 hex characters, got "${key}"`);
    if (this.index.has(key)) return;
    const json = JSON.stringify(value);
    const writer = this.openWriter();
    const line = Buffer.from(`${key}\t${json}\n`, 'utf8');
    try {
      let written = 0;
      while (written < line.length) written += writeSync(writer.fd, line, written, line.length - written);
    } catch (error) {
      // A half-written line stays torn at the end of this segment; later entries go to a fresh one.
      closeSync(writer.fd);
      this.writer = null;
      throw error;
    }
    this.index.set(key, { segment: writer.path, start: writer.size + KEY_LENGTH + 1, length: line.length - KEY_LENGTH - 2 });
    writer.size += line.length;
  }

  /** Every stored value (parsed), in no particular order. */
  *values(): Generator<unknown> {
    for (const key of [...this.index.keys()]) {
      const value = this.get(key);
      if (value !== undefined) yield value;
    }
  }

  private openWriter(): { fd: number; path: string; size: number } {
    // Segments rotate at a size cap, so no segment grows past what one process should index or copy at once.
    if (this.writer && this.writer.size >= this.segmentCapBytes) this.close();
    if (this.writer) return this.writer;
    makeFolder(this.dir);
    // Time first so that names sort oldest first; pid and random bytes keep processes apart.
    const name = `${Date.now().toString(36).padStart(10, '0')}-${process.pid}-${randomBytes(4).toString('hex')}.jsonl`;
    const path = join(this.dir, name);
    this.writer = { fd: openSync(path, 'a'), path, size: 0 };
    this.segmentCount++;
    return this.writer;
  }

  close(): void {
    if (this.writer) closeSync(this.writer.fd);
    this.writer = null;
  }
}

function isHexKey(buffer: Buffer, start: number): boolean {
  for (let i = start; i < start + KEY_LENGTH; i++) {
    const c = buffer[i];
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return false;
  }
  return true;
}
