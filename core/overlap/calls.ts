import { normalizeText } from '../dedup/near-duplicates.ts';
import { isJsonObject, isRef, parseRef, type ArgValue, type Call, type Sample, type ToolSpec } from '../records.ts';
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
  if (!turns) return sample.expected.calls ?? [];
  const keys = Object.keys(turns);
  if (!keys.length) return sample.expected.calls ?? [];
  // Turn numbers an object lists in ascending order already (as it lists array indexes) are not sorted again.
  let ascending = true;
  for (let k = 1; k < keys.length && ascending; k++) ascending = Number(keys[k - 1]) < Number(keys[k]);
  if (!ascending) keys.sort((a, b) => Number(a) - Number(b));
  const calls: Call[] = [];
  for (const turn of keys) calls.push(...turns[turn]);
  return calls;
}

/** Whether a call has arguments (an own key). */
function hasArguments(call: Call): boolean {
  for (const key in call.arguments) if (Object.hasOwn(call.arguments, key)) return true;
  return false;
}

/** The tool of `name` a sample shows (of several, the last, as a map made of them keeps). */
function shownTool(tools: readonly ToolSpec[], name: string): ToolSpec | undefined {
  for (let t = tools.length - 1; t >= 0; t--) if (tools[t].name === name) return tools[t];
  return undefined;
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

/** Text order as `sort` orders text by default (UTF-16 code units). */
const textBefore = (a: string, b: string) => a < b;

const ARRAY_INDEX = /^(?:0|[1-9]\d{0,9})$/;
/** A key an object lists first, in the order of its number (an array index: up to 2^32 - 2). */
const isIndex = (key: string) => ARRAY_INDEX.test(key) && Number(key) < 4294967295;
/** The order in which an object built with its keys sorted lists them: array indexes by number, then the others as sorted. */
const keyBefore = (a: [string, string | undefined], b: [string, string | undefined]) => {
  const ai = isIndex(a[0]);
  if (ai !== isIndex(b[0])) return ai;
  return ai ? Number(a[0]) < Number(b[0]) : a[0] < b[0];
};

/**
 * The JSON text `stableStringify` writes for an object of `entries` (keys with their values' JSON
 * texts; of one key the last stands, as `Object.fromEntries`), written directly: keys sorted, as the
 * object it builds lists them (array indexes first), `__proto__` and undefined values left out (its
 * object takes the one as its prototype and drops the other).
 */
function objectText(entries: [string, string | undefined][]): string {
  // A stable sort keeps the entries of one key in order: the last one stands.
  sortFew(entries, keyBefore);
  let text = '';
  for (let k = 0; k < entries.length; k++) {
    const [key, value] = entries[k];
    if (value === undefined || key === '__proto__' || (k + 1 < entries.length && entries[k + 1][0] === key)) continue;
    text += `${text ? ',' : ''}${JSON.stringify(key)}:${value}`;
  }
  return `{${text}}`;
}

/** The JSON text of a list of values' JSON texts (an undefined one written null, as `JSON.stringify` writes it). */
const listText = (items: (string | undefined)[]) => `[${items.map((item) => item ?? 'null').join(',')}]`;

/** The exact form of an argument value (see the module comment), as JSON text; `positions` maps call ids to their index. */
function exactText(value: ArgValue, schema: Schema, positions: Map<string, number>): string | undefined {
  if (isRef(value)) {
    const { callId, field } = parseRef(value);
    return `{"$ref":${JSON.stringify(`#${positions.get(callId) ?? callId}.${field}`)}}`;
  }
  if (Array.isArray(value)) return listText(value.map((item) => exactText(item, childSchema(schema), positions)));
  if (isJsonObject(value)) return objectText(Object.entries(value).map(([key, inner]) => [key, exactText(inner as ArgValue, childSchema(schema, key), positions)]));
  if (typeof value !== 'string') return JSON.stringify(value);
  const plain = plainValue(value);
  return JSON.stringify(typeof plain === 'string' && isEnum(schema) ? plain.toLowerCase() : plain);
}

const looseName = (name: string) => name.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');

/** The near form of a plain value (not a list, an object or a reference). */
function nearPlain(value: ArgValue): unknown {
  if (typeof value !== 'string') return value;
  const plain = plainValue(value);
  return typeof plain === 'string' ? normalizeText(plain) : plain;
}

/** The near form of an argument value, as JSON text. */
function nearText(value: ArgValue): string | undefined {
  if (isRef(value)) return `{"$ref":${JSON.stringify(looseName(parseRef(value).field))}}`;
  if (Array.isArray(value)) {
    // A list of plain values in any order: their texts sorted, each written as a JSON string.
    if (value.every((item) => item === null || typeof item !== 'object'))
      return listText(
        sortFew(
          value.map((item) => JSON.stringify(nearPlain(item))),
          textBefore,
        ).map((text) => JSON.stringify(text)),
      );
    return listText(value.map(nearText));
  }
  if (isJsonObject(value)) return objectText(Object.entries(value).map(([key, inner]) => [looseName(key), nearText(inner as ArgValue)]));
  return JSON.stringify(nearPlain(value));
}

/** One call's near signature (see the module comment). */
export function nearCallSignature(call: Call): number {
  return hash53(listText([JSON.stringify(looseName(call.tool)), nearText(call.arguments as ArgValue)]));
}

export function callSignatures(sample: Sample): CallSignatures {
  const calls = goldCalls(sample);
  const withArguments = calls.filter(hasArguments);
  if (!withArguments.length) return { exact: null, near: [] };
  const positions = new Map<string, number>();
  for (let i = 0; i < calls.length; i++) positions.set(calls[i].id, i);
  const exact = sortFew(
    withArguments.map((call) => {
      const parameters = shownTool(sample.tools, call.tool)?.parameters as Schema;
      return listText([JSON.stringify(call.tool), exactText(call.arguments as ArgValue, parameters, positions)]);
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
