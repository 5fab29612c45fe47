import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import { UserError } from '../core/errors.ts';
import type { ModelReply } from '../core/eval.ts';
import { fileLines } from '../core/jsonl.ts';
import { readReply, REPLY_FIELDS, ReplyError } from './chat-reply.ts';

/** One line's answer: the benchmark's own answer text (null: none), or a chat model's reply to map into it. */
export type PredictedAnswer = { output: string | null } | { reply: ModelReply };

const SHAPES = '{"id": …, "output": "<answer text>"}, or a chat model\'s reply as {"id": …, "message" | "messages" | "tool_calls" | "text": …} (docs/eval.md)';

/**
 * A predictions file: one JSON object a line, `{"id": "<item id>", "output": "<what the model wrote>"}`
 * (`output` null: the model gave none), or, from a model trained on a chat export, `{"id", "message"
 * | "messages" | "tool_calls" | "text"}` (eval/chat-reply.ts), which the scorer writes as its answer.
 * Every id must name an item of the version, once; an item with no line counts as no output.
 *
 * The file is read once to check every line and note where each id's line is; an output is read
 * back from there when its item is answered, so the outputs are never held together.
 */
export class Predictions {
  private readonly lines = new Map<string, { number: number; start: number; length: number; known: boolean }>();

  private constructor(
    private readonly path: string,
    private readonly shown: string,
  ) {}

  /** Reads and checks every line: JSON objects with a string id, once each, and a string or null output. */
  static open(path: string, shown = path): Predictions {
    if (!existsSync(path)) throw new UserError(`predictions file not found: ${shown}`);
    if (!statSync(path).isFile()) throw new UserError(`predictions file ${shown} is a folder; give a JSONL file`);
    const predictions = new Predictions(path, shown);
    let number = 0;
    for (const { bytes, start } of fileLines(path)) {
      number++;
      const text = bytes.toString('utf8');
      if (!text.trim()) continue;
      const { id } = predictions.parse(text, number);
      const first = predictions.lines.get(id);
      if (first !== undefined) throw new UserError(`${shown} line ${number}: item "${id}" again (first on line ${first.number}); keep one prediction per item`);
      predictions.lines.set(id, { number, start, length: bytes.length, known: false });
    }
    return predictions;
  }

  private parse(text: string, number: number): { id: string; answer: PredictedAnswer } {
    const at = `${this.shown} line ${number}`;
    let line: unknown;
    try {
      line = JSON.parse(text);
    } catch (error) {
      throw new UserError(`${at}: not valid JSON (${(error as Error).message}); each line is ${SHAPES}`);
    }
    if (!line || typeof line !== 'object' || Array.isArray(line)) throw new UserError(`${at}: not a JSON object; each line is ${SHAPES}`);
    const record = line as Record<string, unknown>;
    const { id } = record;
    if (typeof id !== 'string' || !id) throw new UserError(`${at}: "id" is missing or not a string (the item id: items.jsonl of an oracle run, or the "items" column of a trl export); each line is ${SHAPES}`);
    const given = ['output', ...REPLY_FIELDS].filter((field) => field in record);
    if (given.length !== 1) throw new UserError(`${at}: item ${id} has ${given.length ? `both ${given.map((f) => `"${f}"`).join(' and ')}` : 'no answer'}; give exactly one of "output", ${REPLY_FIELDS.map((f) => `"${f}"`).join(', ')}`);
    if (given[0] !== 'output') {
      try {
        return { id, answer: { reply: readReply(record) } };
      } catch (error) {
        if (error instanceof ReplyError) throw new UserError(`${at}: item ${id}: ${error.message}`);
        throw error;
      }
    }
    const { output } = record;
    if (output !== null && typeof output !== 'string') throw new UserError(`${at}: "output" of ${id} must be the model's text (a string) or null`);
    return { id, answer: { output } };
  }

  /** An id of the version that is not scored (past `--limit`): its line, if any, is known and ignored. */
  know(itemId: string): void {
    const line = this.lines.get(itemId);
    if (line) line.known = true;
  }

  /** The answer for an item (no output when the file has no line for it), read back from the file. */
  answerOf(itemId: string): PredictedAnswer {
    const line = this.lines.get(itemId);
    if (!line) return { output: null };
    line.known = true;
    const bytes = Buffer.allocUnsafe(line.length);
    const fd = openSync(this.path, 'r');
    try {
      for (let read = 0; read < line.length; ) {
        const n = readSync(fd, bytes, read, line.length - read, line.start + read);
        if (n === 0) throw new UserError(`${this.shown} changed while it was read; run again`);
        read += n;
      }
    } finally {
      closeSync(fd);
    }
    return this.parse(bytes.toString('utf8'), line.number).answer;
  }

  /** After every item of the version was answered or known: an id that names none is an error at its line. */
  assertAllKnown(): void {
    let first: { id: string; number: number } | undefined;
    for (const [id, line] of this.lines) if (!line.known && (!first || line.number < first.number)) first = { id, number: line.number };
    if (first) throw new UserError(`${this.shown} line ${first.number}: unknown item id "${first.id}": not an item of this version (toolkiln eval --model oracle lists every id in its items.jsonl)`);
  }
}
