import { join } from 'node:path';
import { UserError } from '../../core/errors.ts';
import { jsonTypeOf } from '../../core/json-schema.ts';
import { eachJsonlLine } from '../../core/jsonl.ts';
import { parseRecord } from '../../core/validate.ts';
import { Sample, type ArgValue, type Call, type Json, type PropertySchema, type ToolSpec, type Turn } from '../../core/records.ts';
import { mtuRecordReader, type MtuParameterDoc, type MtuToolDoc, type ParsedHistoryTurn, type ParsedMtuRecord } from './mtu-format.ts';

/**
 * The released MTU-Eval files (`<setting>_eval.jsonl`) as canonical samples, to audit them like any
 * version: a record's tool list becomes its candidate tools (parameters from the documented
 * required and optional ones, with the type, format, pattern and enum a parameter documents), its
 * history the dialogue, its `User:` line the last user turn, its answer the expected calls, a
 * `"Tool.field"` value a reference to the latest earlier call of that tool. The sample id is the
 * record's own (`S-S_12`, `OOD_3_0`), so what the audit says names the released record.
 */

/** The released MTU-Eval files, by setting (`<setting>_eval.jsonl`). */
export const RELEASED_MTU_FILES = ['S-S', 'S-M', 'M-S', 'M-M', 'OOD'] as const;

export function* releasedMtuSamples(dir: string): Generator<Sample> {
  for (const setting of RELEASED_MTU_FILES) {
    const path = join(dir, `${setting}_eval.jsonl`);
    // A file shows a few dozen tool lists across its records: each is read, and made tool entries, once.
    const lists: ToolLists = { read: mtuRecordReader(new Map()), specs: new Map() };
    let line = 0;
    for (const { value } of eachJsonlLine<{ id: string; question: string; answer: unknown }>(path)) {
      line++;
      try {
        yield releasedMtuSample(value, setting, lists);
      } catch (error) {
        throw new UserError(`${path}:${line}: ${(error as Error).message}`);
      }
    }
  }
}

/** The records of one file, read with the tool lists read so far, and the tool entries made of each list (shared by the samples that show it). */
interface ToolLists {
  read: (record: { id: string; question: string; answer: unknown }) => ParsedMtuRecord;
  specs: Map<MtuToolDoc[], ToolSpec[]>;
}

function releasedMtuSample(record: { id: string; question: string; answer: unknown }, setting: string, lists: ToolLists): Sample {
  const parsed = lists.read(record);
  let tools = lists.specs.get(parsed.tools);
  if (!tools) lists.specs.set(parsed.tools, (tools = parsed.tools.map(toolSpecOf)));
  const calls: { id: string; tool: string }[] = [];
  const dialogue: Turn[] = parsed.history.map((turn, t) => historyTurn(turn, t, calls));
  dialogue.push({ role: 'user', content: parsed.user });
  const expected: Call[] = parsed.calls.map((call, k) => {
    const made = { id: `call_${k}`, tool: call.tool, arguments: withReferences(call.arguments, calls) };
    calls.push(made);
    return made;
  });
  // Checked without zod's deep copy where the sample is valid as it is (zod's own error otherwise).
  const sample = parseRecord(Sample, {
    id: record.id,
    benchmark: 'mtu',
    category: setting,
    split: 'test',
    tools: [...tools],
    dialogue,
    expected: { calls: expected },
    meta: { source: { dataset: 'mtu-bench', id: record.id, file: `${setting}_eval.jsonl` }, lineage: [], checks: [], tags: [] },
  });
  if (!sample.success) throw sample.error;
  return sample.data;
}

function historyTurn(turn: ParsedHistoryTurn, t: number, calls: { id: string; tool: string }[]): Turn {
  if (turn.role === 'user') return { role: 'user', content: turn.content };
  const made = (turn.calls ?? []).map((call, k) => {
    const out = { id: `h${t}_${k}`, tool: call.tool, arguments: withReferences(call.arguments, calls) };
    calls.push(out);
    return out;
  });
  return {
    role: 'assistant',
    content: turn.content,
    ...(turn.thought ? { thought: turn.thought } : {}),
    ...(made.length ? { calls: made } : {}),
    ...(made.length && turn.observations?.length ? { observations: Object.fromEntries(made.map((call, k) => [call.id, turn.observations?.[k] ?? null])) } : {}),
  };
}

/** `"Tool.field"` naming an earlier call's tool → a reference to the latest such call. */
function withReferences(args: Record<string, Json>, earlier: readonly { id: string; tool: string }[]): Record<string, ArgValue> {
  const convert = (value: Json): ArgValue => {
    if (Array.isArray(value)) return value.map(convert);
    const match = typeof value === 'string' ? /^([A-Za-z_][\w-]*)\.(\w+)$/.exec(value) : null;
    const producer = match ? [...earlier].reverse().find((call) => call.tool === match[1]) : undefined;
    return producer ? { $ref: `${producer.id}.${match![2]}` } : value;
  };
  return Object.fromEntries(Object.entries(args).map(([name, value]) => [name, convert(value)]));
}

function toolSpecOf(doc: MtuToolDoc): ToolSpec {
  const properties = (docs: MtuParameterDoc[]) => Object.fromEntries(docs.map((p) => [p.name, propertyOf(p)]));
  return {
    name: doc.name,
    description: doc.description,
    parameters: { type: 'object', properties: { ...properties(doc.optional_parameters), ...properties(doc.required_parameters) }, required: [...new Set(doc.required_parameters.map((p) => p.name))] },
    returns: { type: 'object', properties: properties(doc.result_parameters), required: [] },
  };
}

/** A documented parameter as a property: what a validator reads (a type it knows, format, pattern, enum), its description and default. */
function propertyOf(doc: MtuParameterDoc): PropertySchema {
  const property: PropertySchema = {};
  const type = jsonTypeOf(doc.type);
  if (type && ['string', 'number', 'integer', 'boolean', 'object', 'array', 'null'].includes(type)) property.type = type;
  if (typeof doc.description === 'string') property.description = doc.description;
  if (typeof doc.format === 'string') property.format = doc.format;
  if (typeof doc.pattern === 'string') property.pattern = doc.pattern;
  if (Array.isArray(doc.enum) && doc.enum.length) property.enum = doc.enum;
  if (doc.default !== undefined) property.default = doc.default;
  return property;
}
