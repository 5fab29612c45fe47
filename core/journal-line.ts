import { crc32 } from 'node:zlib';
import { lineTextLength, putLineText, type LineText } from './jsonl.ts';
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
export function appendJournalLine(journal: LineAppender, rest: Omit<JournalEntry, 'out'>, outputs: readonly LineText[]): { start: number; length: number } {
  if (!outputs.length) {
    const text = JSON.stringify(rest);
    return journal.appendWith(text.length * 3, (target, at) => target.write(text, at, 'utf8'));
  }
  // The outputs encoded once, into the journal's buffer past room for the line's head: their
  // lengths, their checksum and the line's bytes all come from these bytes, moved up behind the head.
  const fields = JSON.stringify(rest).slice(1, -1);
  // The head: `{"n":[` and `],"sum":` around a length (at most 16 digits) per output, a checksum (at most 10 digits), the fields, `,"out":[`.
  const room = 3 * (fields.length + 40 + 17 * outputs.length);
  let most = room + outputs.length + 2;
  for (const output of outputs) most += lineTextLength(output) * 3;
  return journal.appendWith(most, (target, at) => {
    const n: number[] = [];
    let end = at + room;
    for (let k = 0; k < outputs.length; k++) {
      if (k) target[end++] = COMMA;
      const length = putLineText(target, end, outputs[k]);
      n.push(length);
      end += length;
    }
    const sum = crc32(target.subarray(at + room, end));
    // JSON.stringify({ n, sum, ...rest }) without its closing brace: the head's fields never include `n` or `sum`.
    const lead = `{"n":[${n.join(',')}],"sum":${sum}${fields ? `,${fields}` : ''},"out":[`;
    const written = target.write(lead, at, 'utf8');
    target.copyWithin(at + written, at + room, end);
    end -= room - written;
    target[end++] = CLOSE_BRACKET;
    target[end++] = CLOSE_BRACE;
    return end - at;
  });
}

/** Where journal lines go: `write` puts one line's bytes (no newline) into `target` at `at`, at most `most` of them, and says how many. */
export interface LineAppender {
  appendWith(most: number, write: (target: Buffer, at: number) => number): { start: number; length: number };
}

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
