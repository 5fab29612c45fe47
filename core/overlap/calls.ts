import { normalizeText } from '../dedup/near-duplicates.ts';
import { isJsonObject, isRef, parseRef, type ArgValue, type Call, type Sample } from '../records.ts';
import { hash53 } from './text.ts';

/**
 * The call side of overlap: what a test item leaks even when its wording changes, its gold calls.
 *
 *   - exact: the tool set shown (its names) and every gold call, the tool's name as written and its
 *     arguments canonicalised: keys in order, a number written as text read as the number ("5",
 *     "5.0" → 5), "true"/"false" as booleans, whitespace collapsed, a value of an enum parameter in
 *     lower case, a reference to an earlier call by that call's position rather than its id.
 *   - near: each call alone, looser still: names and keys in lower case without `_`, `-` or spaces
 *     (`ProductName` = `product_name`), every text value normalised (case, punctuation), lists of
 *     plain values in order; compared as a multiset, whatever the tool set.
 *
 * A call without arguments carries nothing of its sample beyond the tool's name (ToolE's gold is a
 * tool choice): such calls are left out, and a sample with no other call has no call signature.
 */

export interface CallSignatures {
  /** The hash of the tool set and the calls canonicalised; null without a call that has arguments. */
  exact: number | null;
  /** One hash per call with arguments, the looser form (sorted). */
  near: number[];
}

/** A sample's gold calls: per assistant turn in dialogue order when it has them, else its calls. */
export function goldCalls(sample: Sample): Call[] {
  const turns = sample.expected.turns;
  if (turns && Object.keys(turns).length)
    return Object.keys(turns)
      .sort((a, b) => Number(a) - Number(b))
      .flatMap((turn) => turns[turn]);
  return sample.expected.calls ?? [];
}

type Schema = Record<string, unknown> | undefined;

const NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;

/** A text as the value it spells: a number, a boolean, or the text with its whitespace collapsed. */
function plainValue(text: string): string | number | boolean {
  const trimmed = text.trim().replace(/\s+/g, ' ');
  if (NUMBER.test(trimmed)) return Number(trimmed);
  const lower = trimmed.toLowerCase();
  if (lower === 'true' || lower === 'false') return lower === 'true';
  return trimmed;
}

function isEnum(schema: Schema): boolean {
  return Array.isArray(schema?.enum) && (schema.enum as unknown[]).some((v) => typeof v === 'string');
}

function childSchema(schema: Schema, key?: string): Schema {
  if (!schema) return undefined;
  const next = key === undefined ? schema.items : (schema.properties as Record<string, unknown> | undefined)?.[key];
  return next && typeof next === 'object' && !Array.isArray(next) ? (next as Record<string, unknown>) : undefined;
}

/**
 * Sorts an array in place, stably (`before(a, b)`: a goes first): the order of `Array.prototype.sort`
 * with the same order; a short one (as a signature's lists mostly are) by insertion, without the copy `sort` makes.
 */
function sortFew<T>(items: T[], before: (a: T, b: T) => boolean): T[] {
  if (items.length > 16) return items.sort((a, b) => (before(a, b) ? -1 : before(b, a) ? 1 : 0));
  for (let i = 1; i < items.length; i++) {
    const item = items[i];
    let at = i;
    while (at > 0 && before(item, items[at - 1])) {
      items[at] = items[at - 1];
      at--;
    }
    items[at] = item;
  }
  return items;
}

/**
 * An object of `entries` with its keys in sorted order, as `stableStringify` writes it (the last of a
 * key standing, as `Object.fromEntries`; one undefined is left out by `JSON.stringify`). The
 * signatures are made of such objects at every depth, so `JSON.stringify` writes them as
 * `stableStringify` would, with no second copy sorted.
 */
/** Text order as `sort` orders text by default (UTF-16 code units). */
const textBefore = (a: string, b: string) => a < b;

function sortedObject(entries: [string, unknown][]): Record<string, unknown> {
  // A stable sort keeps the entries of one key in order: the last one written stands.
  sortFew(entries, (a, b) => a[0] < b[0]);
  const out: Record<string, unknown> = {};
  for (const [key, value] of entries) out[key] = value;
  return out;
}

/** The exact form of an argument value (see the module comment); `positions` maps call ids to their index. */
function exactValue(value: ArgValue, schema: Schema, positions: Map<string, number>): unknown {
  if (isRef(value)) {
    const { callId, field } = parseRef(value);
    return { $ref: `#${positions.get(callId) ?? callId}.${field}` };
  }
  if (Array.isArray(value)) return value.map((item) => exactValue(item, childSchema(schema), positions));
  if (isJsonObject(value)) return sortedObject(Object.entries(value).map(([key, inner]) => [key, exactValue(inner as ArgValue, childSchema(schema, key), positions)]));
  if (typeof value !== 'string') return value;
  const plain = plainValue(value);
  return typeof plain === 'string' && isEnum(schema) ? plain.toLowerCase() : plain;
}

const looseName = (name: string) => name.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');

/** The near form of an argument value. */
function nearValue(value: ArgValue): unknown {
  if (isRef(value)) return { $ref: looseName(parseRef(value).field) };
  if (Array.isArray(value)) {
    const items = value.map(nearValue);
    return items.every((item) => item === null || typeof item !== 'object') ? sortFew(
          items.map((item) => JSON.stringify(item)),
          textBefore,
        )
      : items;
  }
  if (isJsonObject(value)) return sortedObject(Object.entries(value).map(([key, inner]) => [looseName(key), nearValue(inner as ArgValue)]));
  if (typeof value !== 'string') return value;
  const plain = plainValue(value);
  return typeof plain === 'string' ? normalizeText(plain) : plain;
}

/** One call's near signature (see the module comment). */
export function nearCallSignature(call: Call): number {
  return hash53(JSON.stringify([looseName(call.tool), nearValue(call.arguments as ArgValue)]));
}

export function callSignatures(sample: Sample): CallSignatures {
  const calls = goldCalls(sample);
  const positions = new Map(calls.map((call, i) => [call.id, i]));
  const withArguments = calls.filter((call) => Object.keys(call.arguments).length > 0);
  if (!withArguments.length) return { exact: null, near: [] };
  const tools = new Map(sample.tools.map((tool) => [tool.name, tool]));
  const exact = sortFew(
    withArguments.map((call) => {
      const parameters = tools.get(call.tool)?.parameters as Schema;
      return JSON.stringify([call.tool, exactValue(call.arguments as ArgValue, parameters, positions)]);
    }),
    textBefore,
  );
  const toolSet = sortFew(
    sample.tools.map((tool) => tool.name),
    textBefore,
  );
  return {
    exact: hash53(JSON.stringify([toolSet, exact])),
    near: sortFew(withArguments.map(nearCallSignature), (a, b) => a < b),
  };
}
