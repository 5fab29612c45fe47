import type { z } from 'zod';
import type { JournalEntry } from './journal-line.ts';
import type { LineText } from './jsonl.ts';
import type { LlmGateway } from './llm/types.ts';
import { formatZodError } from './records.ts';
import { isReject, recordKey, type MapStage, type Stage, type StageContext } from './stage.ts';
import { parseRecord, parseRecordFrom } from './validate.ts';

/**
 * One record of a stage, checked and turned into its journal entry: the same steps wherever the
 * record runs (the runner, a worker behind a queue, a worker thread), kept apart from the runner so
 * that a worker thread loads only these.
 */

/**
 * The stage's outputs, checked against its output schema (once, where they are made: not again
 * downstream). `base`: the input record they were made from, when it was checked against the same
 * schema: what an output shares with it is not walked again.
 */
export function validateOutputs(stage: Stage, outputs: unknown[], where: string, base?: unknown): unknown[] {
  return outputs.map((output) => {
    const parsed = base === undefined ? parseRecord(stage.output as z.ZodType, output) : parseRecordFrom(stage.output as z.ZodType, output, base);
    if (!parsed.success) {
      throw new Error(`stage ${stage.name} emitted a record that fails its own output schema (${where}): ${formatZodError(parsed.error)}`);
    }
    return parsed.data;
  });
}

/** A per-record stage's input record `i`, checked against its input schema when `check`, and its key. */
export function prepareRecord(stage: MapStage<unknown, unknown>, raw: unknown, i: number, check: boolean): { record: unknown; key: string } {
  const record = validateInput(stage, raw, i, check);
  return { record, key: recordKey(stage, record) };
}

/** The journal entry of record `i` from what the stage returned for it: its checked outputs or its reject (`base`: see validateOutputs). */
export function entryOf(stage: MapStage<unknown, unknown>, i: number, key: string, result: Awaited<ReturnType<MapStage<unknown, unknown>['run']>>, base?: unknown): JournalEntry {
  if (isReject(result)) {
    const { reject: _flag, ...reason } = result;
    return { i, reject: reason };
  }
  const outputs = Array.isArray(result) && stage.fanOut ? result : [result];
  if (outputs.length > 1 && !stage.fanOut) throw new Error(`stage ${stage.name} emitted ${outputs.length} records for one input without declaring fanOut`);
  return outputs.length
    ? { i, out: validateOutputs(stage, outputs, `record ${key}`, base) }
    : { i, reject: { reason: 'no_output', detail: `${stage.name} emitted nothing for this record` } };
}

/** The context one record of a per-record stage runs with: its key, randomness derived from the key, its gateway. */
export function recordContext(ctx: StageContext, key: string, llm: LlmGateway): StageContext & { key: string } {
  // Object.assign, not a spread with added keys: V8 builds such a literal through a runtime call, several times slower, once per record.
  return Object.assign({}, ctx, { key, rng: (...keys: (string | number)[]) => ctx.rng(key, ...keys), llm });
}

export function validateInput(stage: Stage, record: unknown, index: number, check: boolean): unknown {
  if (!check) return record;
  const parsed = parseRecord(stage.input as z.ZodType, record);
  if (!parsed.success) {
    throw new Error(`stage ${stage.name}: input record ${index} does not match its input schema (the stage before it emits another shape): ${formatZodError(parsed.error)}`);
  }
  return parsed.data;
}

/**
 * A record on its way from one stage to the next: the object and its line of JSON (what the
 * stage's file holds). Handed on in memory it is the object the stage made and checked, not
 * parsed again from its line.
 */
export interface StageRecord {
  value: unknown;
  text: LineText;
}

/** A record read from its line. */
export function parsedRecord(text: string): StageRecord {
  return { value: JSON.parse(text) as unknown, text };
}

/** Whether a stage returned its input record itself ("unchanged": its line is copied, not checked and written again). */
export function returnsInput(stage: { fanOut?: boolean }, result: unknown, record: unknown): boolean {
  return result === record || (!!stage.fanOut && Array.isArray(result) && result.length === 1 && result[0] === record);
}
