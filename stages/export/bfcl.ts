import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { AtomicJsonlFile, writeFileAtomic } from '../../core/jsonl.ts';
import { hasType, jsonTypeOf } from '../../core/json-schema.ts';
import type { ExportOptions } from '../../core/pipeline.ts';
import { pointerToken, pythonJson } from '../../core/python-json.ts';
import { isJsonObject, isRef, type ArgValue, type Call, type Json, type Sample, type ToolSpec, type Turn } from '../../core/records.ts';
import type { SampleSource } from '../../core/sample-source.ts';

/**
 * `--format bfcl`: the Berkeley Function Calling Leaderboard's own layout (ShishirPatil/gorilla,
 * `berkeley-function-call-leaderboard/bfcl_eval/data/`), one folder per split:
 *
 *   <split>/BFCL_v4_<category>.json                  question and function lines
 *   <split>/possible_answer/BFCL_v4_<category>.json  ground truth lines (none for irrelevance)
 *   <split>/toolkiln_ids.jsonl                       which sample each entry was made from
 *   report.json                                      entries per split and category, samples left out by reason
 *
 * Files are JSON lines as BFCL's Python writes them (`json.dumps`: `", "` separators, ASCII, floats
 * with their decimal point); ids are `<category>_<index>`, counted from 0 per file. A sample goes
 * to the non-live category its gold fits: one call and one offered tool → `simple_python`, one call
 * among several → `multiple`, several calls of the one tool offered → `parallel`, several calls among
 * several tools → `parallel_multiple`, no call → `irrelevance`. The question is the dialogue up to
 * the answer: user and assistant text, as in BFCL's live entries that carry a history.
 *
 * What BFCL's single-turn entries cannot hold is left out, counted by reason in the report and told
 * through `options.notice`: calls before the answer or in several turns (a question has no message
 * for a call and its result, and BFCL's multi_turn categories execute every call on BFCL's own Python
 * classes, not on a sample's tools), `$ref` arguments (possible answers are literal values), gold
 * that is labels or an end state, and gold calls BFCL's checker would refuse (a tool not offered, a
 * required parameter missing, a parameter not declared, a value not of its parameter's type).
 */

export const BFCL_VERSION_PREFIX = 'BFCL_v4';
export const BFCL_CATEGORIES = ['simple_python', 'multiple', 'parallel', 'parallel_multiple', 'irrelevance'] as const;
export type BfclCategory = (typeof BFCL_CATEGORIES)[number];

/** BFCL's Python type names (its ast_checker's PYTHON_TYPE_MAPPING). */
export type BfclType = 'string' | 'integer' | 'float' | 'boolean' | 'array' | 'tuple' | 'dict' | 'any';

const BFCL_TYPE_OF_JSON: Record<string, BfclType> = { string: 'string', integer: 'integer', number: 'float', boolean: 'boolean', array: 'array', object: 'dict' };

/** Why a sample has no BFCL entry; the report and the notices say it in these words. */
export const LEFT_OUT_REASONS = {
  'no-candidate-tools': 'no candidate tools: every BFCL entry offers at least one function',
  'multi-turn-calls':
    "calls in an assistant turn before the answer, or in several turns: a BFCL single-turn question has no message for a call and its result, and BFCL's multi_turn categories execute every call on instances of BFCL's own Python classes (involved_classes: GorillaFileSystem, TwitterAPI, TradingBot, …) and compare their state; the sample's tools are not among them",
  'not-calls': "the gold is not calls (an end state or a call path checked by running the benchmark's own classes): BFCL's multi_turn categories run only BFCL's classes",
  'labels': 'the gold is labels, not calls (what BFCL scores)',
  'nested-call': "an argument takes an earlier call's result ($ref): BFCL's possible answers hold literal values only",
  'no-user-message': 'no user message before the answer: a BFCL question asks from a user message',
  'unknown-tool': 'a gold call names a tool the sample does not offer',
  'missing-required': "a gold call leaves out a required parameter, which BFCL's checker refuses",
  'undeclared-parameter': "a gold call passes a parameter its tool does not declare, which BFCL's checker refuses",
  'value-type': "a gold value is not of its parameter's type",
} as const;
export type LeftOutReason = keyof typeof LEFT_OUT_REASONS;

/** A number Python holds as a float: written with its decimal point (`3.0`). */
export class PyFloat {
  constructor(readonly value: number) {}
}
/** JSON with its floats marked, as BFCL's Python reads it back. */
export type PyTree = string | number | boolean | null | PyFloat | PyTree[] | { [key: string]: PyTree };

/** A parameter schema in BFCL's types: its type, items and properties converted, every other key kept. */
export interface BfclParam {
  type: BfclType;
  items?: BfclParam;
  properties?: Record<string, BfclParam>;
  /** The source schema's other keys (description, enum, default, required, constraints), enum and default typed. */
  rest: Record<string, PyTree>;
}

/** The BFCL type a JSON-Schema type means: a nullable type is its other type, no type or several types `any`. */
export function bfclTypeOf(declared: unknown): BfclType {
  if (declared === 'tuple') return 'tuple';
  const types = (Array.isArray(declared) ? declared : [declared]).map(jsonTypeOf).filter((type) => type && type !== 'null');
  return types.length === 1 ? (BFCL_TYPE_OF_JSON[types[0]!] ?? 'any') : 'any';
}

/** A JSON-Schema property in BFCL's types. `described`: a property (not an array's items), which BFCL's handlers append text to. */
export function bfclParam(schema: Record<string, unknown>, described = true): BfclParam {
  const param: BfclParam = { type: bfclTypeOf(schema.type), rest: {} };
  if (param.type === 'array' || param.type === 'tuple') param.items = bfclParam(isJsonObject(schema.items) ? schema.items : {}, false);
  if (param.type === 'dict' && isJsonObject(schema.properties)) {
    param.properties = Object.fromEntries(Object.entries(schema.properties).map(([name, property]) => [name, bfclParam(isJsonObject(property) ? property : {})]));
  }
  if (described) param.rest.description = typeof schema.description === 'string' ? schema.description : '';
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'type' || key === 'items' || key === 'properties' || key === 'description' || value === undefined) continue;
    if (key === 'default') param.rest.default = typedValue(value as Json, param);
    else if (key === 'enum' && Array.isArray(value)) param.rest.enum = value.map((item) => typedValue(item as Json, param));
    else param.rest[key] = value as Json;
  }
  return param;
}

/** A parameter as BFCL's function docs write it. */
function paramDoc(param: BfclParam): { [key: string]: PyTree } {
  const { description, ...rest } = param.rest;
  return {
    type: param.type,
    ...(description !== undefined ? { description } : {}),
    ...rest,
    ...(param.items ? { items: paramDoc(param.items) } : {}),
    ...(param.properties ? { properties: Object.fromEntries(Object.entries(param.properties).map(([name, p]) => [name, paramDoc(p)])) } : {}),
  };
}

/** A tool as a BFCL function doc: `{name, description, parameters: {type: "dict", properties, required}}`. */
export function bfclFunction(tool: ToolSpec): { params: Record<string, BfclParam>; doc: { [key: string]: PyTree } } {
  const params = Object.fromEntries(Object.entries(tool.parameters.properties).map(([name, schema]) => [name, bfclParam(schema)]));
  const properties = Object.fromEntries(Object.entries(params).map(([name, param]) => [name, paramDoc(param)]));
  return { params, doc: { name: tool.name, description: tool.description, parameters: { type: 'dict', properties, required: [...tool.parameters.required] } } };
}

/** A value with the numbers its BFCL type makes floats marked, so that Python reads them as floats. */
export function typedValue(value: Json, param: BfclParam): PyTree {
  if (param.type === 'float' && typeof value === 'number') return new PyFloat(value);
  if (param.items && Array.isArray(value)) return value.map((item) => typedValue(item, param.items!));
  if (param.properties && isJsonObject(value)) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, param.properties![key] ? typedValue(item, param.properties![key]) : item]));
  return value;
}

/** The JSON-Schema type of each BFCL type but `any` (any value but null). */
const JSON_TYPE_OF_BFCL: Record<Exclude<BfclType, 'any'>, string> = { string: 'string', integer: 'integer', float: 'number', boolean: 'boolean', array: 'array', tuple: 'array', dict: 'object' };

/**
 * Whether a value is of a BFCL type, one level deep as BFCL's type_checker looks: an array's items
 * each of the items' type, where items of `any` (Python's `str` to the checker) must be strings or
 * all of the first item's Python type.
 */
export function hasBfclType(value: Json, param: BfclParam): boolean {
  const top = (v: Json, type: BfclType) => (type === 'any' ? v !== null : hasType(v, JSON_TYPE_OF_BFCL[type]));
  if (!top(value, param.type)) return false;
  if (!param.items) return true;
  const items = value as Json[];
  if (param.items.type !== 'any') return items.every((item) => top(item, param.items!.type));
  const first = items.find((item) => item !== '');
  return items.every((item) => item !== null && (typeof item === 'string' || pythonTypeOf(item) === pythonTypeOf(first!)));
}

/** The Python type `json.load` gives a JSON value written as JSON.stringify writes it (a whole number is an int). */
function pythonTypeOf(value: Json): string {
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'float';
  return value === null ? 'None' : Array.isArray(value) ? 'list' : typeof value;
}

/**
 * One acceptable value of a parameter in a possible answer. A dict (and each dict of a list of
 * dicts) is written key by key with a list of acceptable values, the form BFCL's dict_checker and
 * list_dict_checker read.
 */
function acceptableValue(value: Json, param: BfclParam): PyTree {
  const dictAnswer = (dict: Record<string, Json>, of: BfclParam): PyTree =>
    Object.fromEntries(Object.entries(dict).map(([key, item]) => [key, [of.properties?.[key] ? typedValue(item, of.properties[key]) : item]]));
  if (param.type === 'dict' && isJsonObject(value)) return dictAnswer(value, param);
  if (param.items?.type === 'dict' && Array.isArray(value) && value.every(isJsonObject)) return value.map((item) => dictAnswer(item as Record<string, Json>, param.items!));
  return typedValue(value, param);
}

type LeftOut = { reason: LeftOutReason; detail: string };

/** A gold call's possible answer `{tool: {param: [acceptable values]}}`, or why BFCL's checker could not take it. */
export function possibleAnswer(call: Call, tool: ToolSpec): { answer: { [key: string]: PyTree } } | LeftOut {
  const { params } = bfclFunction(tool);
  const required = tool.parameters.required;
  const args = call.arguments as Record<string, Json>;
  const undeclared = Object.keys(args).filter((name) => !(name in params));
  if (undeclared.length) return { reason: 'undeclared-parameter', detail: `${call.tool}(${undeclared.join(', ')})` };
  const missing = required.filter((name) => !(name in args));
  if (missing.length) return { reason: 'missing-required', detail: `${call.tool}: ${missing.join(', ')}` };
  const mistyped = Object.entries(args).find(([name, value]) => !hasBfclType(value, params[name]));
  if (mistyped) return { reason: 'value-type', detail: `${call.tool}.${mistyped[0]}: ${params[mistyped[0]].type}, given ${JSON.stringify(mistyped[1])}` };
  const answer: { [key: string]: PyTree[] } = {};
  for (const [name, param] of Object.entries(params)) {
    const fallback = tool.parameters.properties[name].default as Json | undefined;
    const usable = fallback !== undefined && hasBfclType(fallback, param);
    if (name in args) {
      answer[name] = [acceptableValue(args[name], param)];
      // An optional parameter given its default may as well be left out.
      if (!required.includes(name) && usable && isDeepStrictEqual(fallback, args[name])) answer[name].push('');
    } else answer[name] = ['', ...(usable ? [acceptableValue(fallback, param)] : [])];
  }
  return { answer: { [call.tool]: answer } };
}

/** Where a sample goes: a category, its question, its gold calls' possible answers, and what of the sample the entry does not carry. */
export type BfclPlacement = { category: BfclCategory; question: Turn[]; groundTruth: { [key: string]: PyTree }[]; notCarried: string[] } | LeftOut;

const GOLD_KEYS = new Set(['calls', 'turns', 'labels']);

/** The BFCL category a sample fits and the part of it that becomes the entry, or why it has none. */
export function bfclPlacement(sample: Sample): BfclPlacement {
  const { expected, dialogue } = sample;
  const otherGold = Object.keys(expected).filter((key) => !GOLD_KEYS.has(key));
  const callTurnsOfDialogue = dialogue.flatMap((turn, index) => (turn.calls?.length ? [index] : []));
  let answer: { index: number; calls: Call[] } | undefined;
  if (expected.turns) {
    const turns = Object.entries(expected.turns).filter(([, calls]) => calls.length);
    if (turns.length > 1) return { reason: 'multi-turn-calls', detail: `calls in turns ${turns.map(([index]) => index).join(', ')}` };
    if (turns.length) answer = { index: Number(turns[0][0]), calls: turns[0][1] };
  } else if (expected.calls?.length) {
    if (callTurnsOfDialogue.length > 1) return { reason: 'multi-turn-calls', detail: `calls in turns ${callTurnsOfDialogue.join(', ')}` };
    answer = { index: callTurnsOfDialogue[0] ?? dialogue.length, calls: expected.calls };
  }
  if (!answer) {
    if (!('calls' in expected) && !('turns' in expected) && !('labels' in expected)) return { reason: 'not-calls', detail: `expected holds ${otherGold.join(', ') || 'nothing'}` };
    if (expected.labels?.length) return { reason: 'labels', detail: expected.labels.join(', ') };
    // The answer that makes no call is the reply to the last user message.
    const lastUser = dialogue.map((turn) => turn.role).lastIndexOf('user');
    answer = { index: lastUser + 1, calls: [] };
  }
  if (!sample.tools.length) return { reason: 'no-candidate-tools', detail: '' };
  const earlier = callTurnsOfDialogue.filter((index) => index !== answer.index);
  if (earlier.length) return { reason: 'multi-turn-calls', detail: `calls in turns ${[...earlier, answer.index].sort((a, b) => a - b).join(', ')}` };
  const question = dialogue.slice(0, answer.index);
  if (!question.some((turn) => turn.role === 'user')) return { reason: 'no-user-message', detail: '' };
  const ref = answer.calls.flatMap((call) => Object.values(call.arguments).flatMap(refsIn))[0];
  if (ref) return { reason: 'nested-call', detail: ref };
  const groundTruth: { [key: string]: PyTree }[] = [];
  for (const call of answer.calls) {
    const tool = sample.tools.find((t) => t.name === call.tool);
    if (!tool) return { reason: 'unknown-tool', detail: call.tool };
    const possible = possibleAnswer(call, tool);
    if ('reason' in possible) return possible;
    groundTruth.push(possible.answer);
  }
  const notCarried = otherGold.map((key) => `expected.${key}`);
  if (dialogue.slice(answer.index + 1).length) notCarried.push('turns after the answer');
  const offered = sample.tools.length;
  const n = answer.calls.length;
  const category: BfclCategory = n === 0 ? 'irrelevance' : n === 1 ? (offered === 1 ? 'simple_python' : 'multiple') : offered === 1 ? 'parallel' : 'parallel_multiple';
  return { category, question, groundTruth, notCarried };
}

function refsIn(value: ArgValue): string[] {
  if (isRef(value)) return [value.$ref];
  if (Array.isArray(value)) return value.flatMap(refsIn);
  if (isJsonObject(value)) return Object.values(value).flatMap((item) => refsIn(item as ArgValue));
  return [];
}

/** A BFCL question's messages: user text and the assistant's text replies. */
function questionMessages(turns: Turn[]): { role: string; content: string }[] {
  return turns.map((turn) => ({ role: turn.role, content: turn.role === 'assistant' ? (turn.response ?? turn.content) : turn.content }));
}

/** One line of a BFCL file as Python's json.dumps writes it, floats with their decimal point. */
export function bfclLine(tree: PyTree): string {
  const floatPaths = new Set<string>();
  const plain = (node: PyTree, path: string): Json => {
    if (node instanceof PyFloat) {
      floatPaths.add(path);
      return node.value;
    }
    if (Array.isArray(node)) return node.map((item, i) => plain(item, `${path}/${i}`));
    if (node && typeof node === 'object') return Object.fromEntries(Object.entries(node).map(([key, item]) => [key, plain(item, `${path}/${pointerToken(key)}`)]));
    return node;
  };
  return pythonJson(plain(tree, ''), { floatPaths });
}

interface CategoryFiles {
  questions: AtomicJsonlFile;
  answers?: AtomicJsonlFile;
}

export interface BfclReport {
  format: 'bfcl';
  samples: number;
  entries: number;
  /** Entries per split and category. */
  bySplit: Record<string, Partial<Record<BfclCategory, number>>>;
  /** Samples with no entry, by reason: the reason in words and every sample with what in it is the cause. */
  leftOut: Partial<Record<LeftOutReason, { reason: string; count: number; samples: { id: string; split: string; detail: string }[] }>>;
  /** Parts of samples that have an entry but that the entry does not hold, with how many entries leave each out. */
  notCarried: Record<string, number>;
}

/** Writes the BFCL files of a version under `outDir` (see the top of this file); the paths written. */
export async function exportBfcl(samples: SampleSource, _tools: ToolSpec[], outDir: string, _version?: { dir: string }, options: ExportOptions = {}): Promise<string[]> {
  const report: BfclReport = { format: 'bfcl', samples: 0, entries: 0, bySplit: {}, leftOut: {}, notCarried: {} };
  const open: AtomicJsonlFile[] = [];
  const written: string[] = [];
  const opened = (path: string) => {
    const file = new AtomicJsonlFile(path);
    open.push(file);
    return file;
  };
  try {
    for (const split of [...samples.splits].sort()) {
      const files = new Map<BfclCategory, CategoryFiles>();
      let ids: AtomicJsonlFile | undefined;
      const counts: Partial<Record<BfclCategory, number>> = {};
      for (const sample of samples.inSplit(split)) {
        report.samples++;
        const placed = bfclPlacement(sample);
        if ('reason' in placed) {
          const entry = (report.leftOut[placed.reason] ??= { reason: LEFT_OUT_REASONS[placed.reason], count: 0, samples: [] });
          entry.count++;
          entry.samples.push({ id: sample.id, split, detail: placed.detail });
          continue;
        }
        const category = placed.category;
        let file = files.get(category);
        if (!file) {
          const name = `${BFCL_VERSION_PREFIX}_${category}.json`;
          file = { questions: opened(join(outDir, split, name)), ...(category === 'irrelevance' ? {} : { answers: opened(join(outDir, split, 'possible_answer', name)) }) };
          files.set(category, file);
        }
        const id = `${category}_${counts[category] ?? 0}`;
        counts[category] = (counts[category] ?? 0) + 1;
        file.questions.writeText(bfclLine({ id, question: [questionMessages(placed.question)], function: sample.tools.map((tool) => bfclFunction(tool).doc) }));
        file.answers?.writeText(bfclLine({ id, ground_truth: placed.groundTruth }));
        (ids ??= opened(join(outDir, split, 'toolkiln_ids.jsonl'))).write({ id, sample: sample.id });
        for (const part of placed.notCarried) report.notCarried[part] = (report.notCarried[part] ?? 0) + 1;
        report.entries++;
      }
      if (Object.keys(counts).length) report.bySplit[split] = Object.fromEntries(BFCL_CATEGORIES.filter((c) => counts[c]).map((c) => [c, counts[c]!]));
    }
    // A commit that fails removes its own temporary file; the ones after it are discarded below.
    while (open.length) written.push(open.shift()!.commit());
  } catch (error) {
    for (const file of open) file.discard();
    throw error;
  }
  const reportPath = join(outDir, 'report.json');
  writeFileAtomic(reportPath, `${JSON.stringify(report, null, 2)}\n`);
  for (const [key, entry] of Object.entries(report.leftOut)) options.notice?.(`bfcl: ${entry.count} sample(s) left out (${key}): ${entry.reason}`);
  for (const [part, count] of Object.entries(report.notCarried)) options.notice?.(`bfcl: ${count} entr${count === 1 ? 'y does' : 'ies do'} not carry the sample's ${part}`);
  return [...written, reportPath];
}
