import { readFileSync } from 'node:fs';
import { pythonRepr } from '../../core/python-json.ts';
import type { Json } from '../../core/records.ts';

/**
 * Rules of ACEBench's own evaluation code (github.com/ACEBench/ACEBench: eval_main.py,
 * model_eval/checker.py, model_inference/multi_*), written again in TypeScript so that tests can hold
 * an export to them without Python. Each is applied to a gold answer given back as the prediction,
 * which a benchmark must accept.
 */

type Obj = Record<string, Json>;
const isObj = (value: Json | undefined): value is Obj => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The lines of a JSON Lines file. */
export function readLines<T = Obj>(path: string): T[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as T);
}

// ------------------------------------------------------------------ normal: eval_main + checker.py

/**
 * What `"".join(answer.split())` in eval_main.py leaves of a value a model writes into its answer as a
 * Python literal: every string (keys too) without its spaces. The literal escapes every other
 * whitespace character (`\n`, `\xa0`, `\u3000`), so only the plain space is lost.
 */
export function withoutWhitespace(value: Json): Json {
  if (typeof value === 'string') return value.replaceAll(' ', '');
  if (Array.isArray(value)) return value.map(withoutWhitespace);
  if (isObj(value)) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key.replaceAll(' ', ''), withoutWhitespace(item)]));
  return value;
}

/** checker.py `standardize_string`. */
export function standardize(text: string): string {
  return text.replace(/[ ,./\-_*^]/g, '').toLowerCase().replaceAll("'", '"');
}

/** Python's `str(value)`: a string as it is, anything else as its repr. */
const pyStr = (value: Json): string => (typeof value === 'string' ? value : pythonRepr(value));

/** Python's `==` on JSON values (an int equals its float). */
function pyEqual(a: Json, b: Json): boolean {
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, i) => pyEqual(item, b[i]));
  if (isObj(a) || isObj(b)) return isObj(a) && isObj(b) && Object.keys(a).length === Object.keys(b).length && Object.keys(a).every((key) => key in b && pyEqual(a[key], b[key]));
  return a === b;
}

/** checker.py `PYTHON_TYPE_MAPPING`, as the Python type's name. */
const PY_TYPE: Record<string, string> = {
  string: 'str', integer: 'int', float: 'float', boolean: 'bool', array: 'list', tuple: 'list', dict: 'dict', any: 'str', list: 'list', object: 'dict',
  objectArray: 'list', 'list(string)': 'list', 'list(enum)': 'list', int: 'int', enum: 'enumerate', number: 'int',
};
const NESTED_CHECKED = new Set(['array', 'tuple', 'list(string)', 'list(enum)', 'object', 'objectArray']);

function pyTypeOf(value: Json): string {
  if (typeof value === 'string') return 'str';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'float';
  if (Array.isArray(value)) return 'list';
  return value === null ? 'NoneType' : 'dict';
}

/** checker.py `dict_checker`: problems, empty when the output passes. */
function dictProblems(output: Json, gold: Obj, where: string): string[] {
  if (!isObj(output)) return [`${where}: not a dict in the output`];
  if (Object.keys(output).length !== Object.keys(gold).length) return [`${where}: ${Object.keys(output).length} keys in the output, ${Object.keys(gold).length} in the answer`];
  for (let [key, value] of Object.entries(output)) {
    if (value === 'true') value = true;
    if (value === 'false') value = false;
    if (!(key in gold)) return [`${where}.${key}: not a key of the answer`];
    const expected = gold[key];
    if (isObj(expected)) {
      const nested = dictProblems(value, expected, `${where}.${key}`);
      if (nested.length) return nested;
      continue;
    }
    const got = typeof value === 'string' ? standardize(value) : value;
    const want = typeof expected === 'string' ? standardize(expected) : expected;
    // `str(answer) in str(output)`: anything but a string is compared as Python prints it.
    if (!pyStr(got).includes(pyStr(want))) return [`${where}.${key}: ${pyStr(want)} is not in ${pyStr(got)}`];
  }
  return [];
}

/**
 * What checker.py's `simple_function_checker` finds wrong with a gold call's arguments given back as
 * the output, after eval_main's whitespace removal: the type check (an empty list or dict for a
 * list or dict parameter fails it) and the value checks by declared type (strings standardised and
 * contained, lists equal after standardising their strings, dicts key by key, lists of dicts dict by
 * dict). Numbers and booleans are checked for type only, as there.
 */
export function normalCheckProblems(fn: Obj, args: Obj): string[] {
  const parameters = isObj(fn.parameters) ? fn.parameters : {};
  const details = isObj(parameters.properties) ? parameters.properties : {};
  const problems: string[] = [];
  for (const [param, gold] of Object.entries(args)) {
    const where = `${String(fn.name)}.${param}`;
    const detail = isObj(details[param]) ? details[param] : {};
    const declared = String(detail.type);
    const expected = PY_TYPE[declared];
    if (!expected) {
      problems.push(`${where}: type ${JSON.stringify(detail.type)} is not in PYTHON_TYPE_MAPPING (KeyError)`);
      continue;
    }
    let nested: string | undefined;
    if (NESTED_CHECKED.has(declared)) {
      const items = isObj(detail.items) ? detail.items : undefined;
      const itemType = items && 'type' in items ? String(items.type) : declared.includes('string') ? 'string' : declared.includes('enum') ? 'enum' : 'dict';
      nested = PY_TYPE[itemType];
      if (!nested) {
        problems.push(`${where}: item type ${JSON.stringify(itemType)} is not in PYTHON_TYPE_MAPPING (KeyError)`);
        continue;
      }
    }
    const output = withoutWhitespace(gold);
    // type_checker: a value of the answer's own type other than the declared one is a "variable", not checked further.
    if (pyTypeOf(output) !== expected) continue;
    if (nested !== undefined && (Array.isArray(gold) || isObj(gold)) && (Array.isArray(gold) ? gold.length : Object.keys(gold).length) === 0) {
      problems.push(`${where}: an empty ${pyTypeOf(gold)} fails the nested type check`);
      continue;
    }
    if (expected === 'dict') problems.push(...(isObj(gold) ? dictProblems(output, gold, where) : []));
    else if (expected === 'list' && nested === 'dict') {
      const [out, want] = [output as Json[], gold as Json[]];
      if (out.length !== want.length) problems.push(`${where}: ${out.length} items, ${want.length} in the answer`);
      else for (const [i, item] of out.entries()) problems.push(...(isObj(want[i]) ? dictProblems(item, want[i] as Obj, `${where}[${i}]`) : [`${where}[${i}]: not a dict in the answer`]));
    } else if (expected === 'str') {
      if (!standardize(output as string).includes(standardize(gold as string))) problems.push(`${where}: "${String(gold)}" is not in "${String(output)}" once standardised`);
    } else if (expected === 'list') {
      const norm = (list: Json[]) => list.map((item) => (typeof item === 'string' ? standardize(item) : item));
      if (!pyEqual(norm(output as Json[]), norm(gold as Json[]))) problems.push(`${where}: ${pyStr(gold)} is not ${pyStr(output)} once standardised`);
    }
  }
  return problems;
}

// ------------------------------------------------------------------ special: eval_main special_eval

/** eval_main.py checks each wrong value with `value not in answer`: Python raises a TypeError unless the value is a string. */
export function errorParamProblems(groundTruth: Json): string[] {
  if (!isObj(groundTruth)) return ['ground_truth is not {parameter: [values]}'];
  return Object.entries(groundTruth).flatMap(([param, values]) =>
    (Array.isArray(values) ? values : [values]).filter((value) => typeof value !== 'string').map((value) => `${param}: ${JSON.stringify(value)} is a ${pyTypeOf(value)} ("'in <string>' requires string as left operand")`),
  );
}

// ------------------------------------------------------------------ agent: the classes its harness loads

/** The keys of CLASS_FILE_PATH_MAPPING_EN / _ZH in model_inference/multi_step/multi_step_utils.py and multi_turn/multi_turn_utils.py. */
export const ACEBENCH_CLASS_TABLE: readonly string[] = ['BaseApi', 'MessageApi', 'ReminderApi', 'FoodPlatform', 'Travel'];

/** The involved classes of an agent record that ACEBench's harness cannot load: `CLASS_FILE_PATH_MAPPING[class_name]` raises a KeyError. */
export function unloadableClasses(data: Obj): string[] {
  return (Array.isArray(data.involved_classes) ? data.involved_classes : []).map(String).filter((name) => !ACEBENCH_CLASS_TABLE.includes(name));
}

// ------------------------------------------------------------------ ranges

/** Start and end words of a range in property names (`from`/`to` for dates and times only). */
const BOUNDS: [string, string, boolean][] = [
  ['start', 'end', true], ['begin', 'end', true], ['min', 'max', true], ['minimum', 'maximum', true], ['lower', 'upper', true], ['earliest', 'latest', true], ['from', 'to', false],
];
const words = (name: string) => name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase().split(/[\s_.-]+/).filter(Boolean);

function bound(value: Json, numbers: boolean): [string, string | number] | undefined {
  if (typeof value === 'number') return numbers ? ['number', value] : undefined;
  if (typeof value !== 'string') return undefined;
  let m: RegExpExecArray | null;
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) return ['date', value];
  if ((m = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}):(\d{2})(?::(\d{2}))?/.exec(value))) return ['date-time', `${m[1]} ${m[2]}:${m[3]}:${m[4] ?? '00'}`];
  if ((m = /^(\d{1,2}):(\d{2})(?::(\d{2}))?$/.exec(value))) return ['time', `${m[1].padStart(2, '0')}:${m[2]}:${m[3] ?? '00'}`];
  return undefined;
}

/** Every pair of bounds in a value (at any depth): `{kind, ordered, where}` for bounds of one kind. */
export function rangesIn(value: Json, where = ''): { kind: string; ordered: boolean; where: string }[] {
  if (Array.isArray(value)) return value.flatMap((item, i) => rangesIn(item, `${where}[${i}]`));
  if (!isObj(value)) return [];
  const found: { kind: string; ordered: boolean; where: string }[] = [];
  const keyOf = new Map(Object.keys(value).map((key) => [words(key).join(' '), key]));
  for (const key of Object.keys(value)) {
    const w = words(key);
    for (const [i, word] of w.entries()) {
      for (const [start, end, numbers] of BOUNDS) {
        const other = word === start ? keyOf.get([...w.slice(0, i), end, ...w.slice(i + 1)].join(' ')) : undefined;
        if (other === undefined || other === key) continue;
        const [a, b] = [bound(value[key], numbers), bound(value[other], numbers)];
        if (a && b && a[0] === b[0]) found.push({ kind: a[0], ordered: a[1] <= b[1], where: `${where}.${key}/${other}` });
      }
    }
  }
  return [...found, ...Object.entries(value).flatMap(([key, item]) => rangesIn(item, `${where}.${key}`))];
}
