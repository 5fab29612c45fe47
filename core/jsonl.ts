import { closeSync, existsSync, fsyncSync, ftruncateSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { UserError, withPath } from './errors.ts';

/** Parses a JSONL file; a bad line is an error naming the file and line. */
export function readJsonl<T = unknown>(path: string): T[] {
  if (!existsSync(path)) return [];
  return parseJsonl<T>(readFileSync(path, 'utf8'), path);
}

/** Parses JSONL text read from `path` (named in errors). */
export function parseJsonl<T = unknown>(text: string, path: string): T[] {
  const out: T[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (!line) continue;
    try {
      out.push(JSON.parse(line) as T);
    } catch (error) {
      throw new UserError(`${path}:${i + 1}: not valid JSON (${(error as Error).message}); fix or remove that line`);
    }
  }
  return out;
}

export function toJsonl(records: readonly unknown[]): string {
  return records.map((r) => JSON.stringify(r) + '\n').join('');
}

/** Writes a file whole or not at all: a temporary file renamed into place (removed again if writing fails). */
export function writeFileAtomic(path: string, content: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.tmp-${process.pid}`;
  try {
    writeFileSync(tmp, content);
    renameSync(tmp, path);
  } catch (error) {
    rmSync(tmp, { force: true });
    throw withPath(error, path);
  }
}

/**
 * An append-only journal of JSON lines. Each entry is one write(2) of one whole line, so a process
 * killed at any moment leaves at most a torn last line, which `open` cuts off before appending.
 */
export class Journal<T> {
  private fd: number;

  private constructor(readonly path: string, fd: number) {
    this.fd = fd;
  }

  /** Opens (creating) the journal and returns it with the entries already in it. */
  static open<T>(path: string): { journal: Journal<T>; entries: T[] } {
    mkdirSync(dirname(path), { recursive: true });
    const entries: T[] = [];
    let goodBytes = 0;
    if (existsSync(path)) {
      const buffer = readFileSync(path);
      let start = 0;
      while (start < buffer.length) {
        const end = buffer.indexOf(10, start);
        if (end === -1) break; // torn last line: no newline, dropped
        try {
          entries.push(JSON.parse(buffer.subarray(start, end).toString('utf8')) as T);
        } catch {
          break; // a torn line and anything after it is dropped; those records run again
        }
        start = end + 1;
        goodBytes = start;
      }
    }
    const fd = openSync(path, 'a+');
    ftruncateSync(fd, goodBytes);
    return { journal: new Journal<T>(path, fd), entries };
  }

  append(entry: T): void {
    try {
      writeSync(this.fd, JSON.stringify(entry) + '\n');
    } catch (error) {
      throw withPath(error, this.path);
    }
  }

  close(): void {
    fsyncSync(this.fd);
    closeSync(this.fd);
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
