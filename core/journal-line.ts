import { crc32 } from 'node:zlib';
import type { RejectReason } from './stage.ts';

/** What one record of a per-record stage came to. */
export interface JournalEntry {
  i: number;
  /** The key of the record it was made for. */
  k?: string;
  out?: unknown[];
  reject?: RejectReason;
  /** The record's LLM requests failed to reach the endpoint: a resumed run does it again. */
  transport?: true;
}

/**
 * A journal line of a per-record stage: the entry as one JSON document whose outputs are written
 * last, as the exact text they go to `out.jsonl` with, led by their byte lengths (`n`) and a
 * CRC-32 of their text (`sum`):
 *
 *     {"n":[812,790],"sum":3735928559,"i":3,"k":"mtu-…","out":[{…812 bytes…},{…790 bytes…}]}
 *
 * so the stage's outputs are copied from the journal to `out.jsonl` as bytes, neither parsed nor
 * serialised again, and a line altered on disk is found on resume even where it is still JSON. An
 * entry without outputs (a reject) is plain JSON without `n`, as are the lines of journals written
 * before `n` existed. Appended to `journal`; returns where the line is there.
 */
export function appendJournalLine(journal: LineAppender, rest: Omit<JournalEntry, 'out'>, outputs: readonly string[]): { start: number; length: number } {
  if (!outputs.length) {
    const text = JSON.stringify(rest);
    return journal.appendWith(text.length * 3, (target, at) => target.write(text, at, 'utf8'));
  }
  // The outputs encoded once: their lengths, their checksum and the line's bytes all come from these bytes.
  let most = outputs.length;
  for (const output of outputs) most += output.length * 3;
  if (scratch.length < most) scratch = Buffer.allocUnsafe(Math.max(most, scratch.length * 2));
  const n: number[] = [];
  let size = 0;
  for (const output of outputs) {
    if (size) scratch[size++] = COMMA;
    const length = scratch.write(output, size, 'utf8');
    n.push(length);
    size += length;
  }
  const text = scratch.subarray(0, size);
  const head = JSON.stringify(Object.assign({ n, sum: crc32(text) }, rest));
  const lead = `${head.slice(0, -1)},"out":[`;
  return journal.appendWith(lead.length * 3 + size + 2, (target, at) => {
    const written = target.write(lead, at, 'utf8');
    text.copy(target, at + written);
    let end = at + written + size;
    target[end++] = CLOSE_BRACKET;
    target[end++] = CLOSE_BRACE;
    return end - at;
  });
}

/** Where journal lines go: `write` puts one line's bytes (no newline) into `target` at `at`, at most `most` of them, and says how many. */
export interface LineAppender {
  appendWith(most: number, write: (target: Buffer, at: number) => number): { start: number; length: number };
}

/** The outputs of the line being made, encoded (grown as needed, reused by the next line). */
let scratch = Buffer.allocUnsafe(1 << 16);
const COMMA = 44;
const CLOSE_BRACE = 125;

const LENGTHS_PREFIX = Buffer.from('{"n":[');
const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;

/** A journal line's outputs as the bytes of their JSON text, or null when it does not lead with their lengths. */
export function rawOutputs(line: Buffer): Buffer[] | null {
  if (line.length < LENGTHS_PREFIX.length || line.compare(LENGTHS_PREFIX, 0, LENGTHS_PREFIX.length, 0, LENGTHS_PREFIX.length) !== 0) return null;
  const close = line.indexOf(CLOSE_BRACKET, LENGTHS_PREFIX.length);
  if (close === -1) return null;
  const lengths = line.toString('latin1', LENGTHS_PREFIX.length, close).split(',').map(Number);
  // The outputs end the line, separated by commas, before its closing `]}`.
  const size = lengths.reduce((sum, n) => sum + n, 0) + lengths.length - 1;
  let at = line.length - 2 - size;
  if (!lengths.every((n) => Number.isInteger(n) && n > 0) || at <= close) return null;
  const outputs: Buffer[] = [];
  for (const n of lengths) {
    outputs.push(line.subarray(at, at + n));
    at += n + 1;
  }
  return outputs;
}

/**
 * Whether a journal line read back on resume is whole: an entry with raw outputs must have as many
 * as it holds, where its lengths say, with the checksum it was written with (a line altered on
 * disk that is still JSON is caught here, not copied into `out.jsonl`).
 */
export function isConsistent(entry: JournalEntry & { n?: unknown; sum?: unknown }, line: Buffer): boolean {
  if (entry.n === undefined) return true;
  const outputs = rawOutputs(line);
  if (!outputs || !Array.isArray(entry.out) || outputs.length !== entry.out.length) return false;
  const from = outputs[0].byteOffset - line.byteOffset;
  if (line[from - 1] !== OPEN_BRACKET) return false;
  return crc32(line.subarray(from, line.length - 2)) === entry.sum;
}

/** The outputs of a journal line, as bytes of JSON text, whichever way the line holds them. */
export function outputBytes(line: Buffer): { outputs: Buffer[]; entry: JournalEntry | null } {
  const raw = rawOutputs(line);
  if (raw) return { outputs: raw, entry: null };
  const entry = JSON.parse(line.toString('utf8')) as JournalEntry;
  return { outputs: (entry.out ?? []).map((record) => Buffer.from(JSON.stringify(record), 'utf8')), entry };
}
