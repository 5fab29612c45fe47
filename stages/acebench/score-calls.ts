import { isJsonObject } from '../../core/records.ts';
import { pythonRepr } from '../../core/python-json.ts';
import type { Json } from '../../core/records.ts';

import { parseCallString } from './sandbox/python-call.ts';

/**
 * ACEBench's check of a function-call answer (model_eval/checker.py `normal_checker` and helpers,
 * run by eval_main.py for the normal categories), rule for rule:
 *   - the output must read as a Python list of calls (`[f(a=1), g(b='x')]`);
 *   - as many calls as the answer, each function name as often (a `_1` suffix on an answer key
 *     stands for a repeated call);
 *   - per answer call, some output call of that name passes: required parameters present, no
 *     parameter the function or the answer lacks, each value of the declared type (Python's types;
 *     an int is accepted for a float), then strings compared after standardising both (spaces and
 *     `,./-_*^` removed, lower case) with the answer contained in the output, lists equal after
 *     standardising their strings, objects key by key with each answer value contained in the
 *     output's. Numbers and booleans are checked for type only, as the repository does.
 * Deliberate differences: the repository removes every whitespace character from the output before
 * parsing, inside strings too, which makes it reject a correct answer holding a list of strings with
 * spaces inside an object (`['time savings']` is not found in `['timesavings']`); here whitespace
 * inside strings is kept. An `objectArray` parameter is checked item by item as a list of objects
 * (the repository's check of it raises a TypeError).
 */

export interface CheckResult {
  valid: boolean;
  error?: string;
}

const OK: CheckResult = { valid: true };
const fail = (error: string): CheckResult => ({ valid: false, error });

/** Python's type of a JSON value, as `type(value)` names it. */
type PyType = 'str' | 'int' | 'float' | 'bool' | 'list' | 'dict' | 'NoneType' | 'enumerate';

function pyType(value: Json | undefined): PyType {
  if (value === null || value === undefined) return 'NoneType';
  if (typeof value === 'string') return 'str';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'float';
  return Array.isArray(value) ? 'list' : 'dict';
}

/** The checker's type names → Python types (PYTHON_TYPE_MAPPING). */
const TYPE_MAPPING: Record<string, PyType> = {
  string: 'str', integer: 'int', float: 'float', boolean: 'bool', array: 'list', tuple: 'list', dict: 'dict', any: 'str', list: 'list',
  object: 'dict', objectArray: 'list', 'list(string)': 'list', 'list(enum)': 'list', int: 'int', enum: 'enumerate', number: 'int',
};
const NESTED_TYPES = new Set(['array', 'tuple', 'list(string)', 'list(enum)', 'object', 'objectArray']);

/** Python's `==` on JSON values (True == 1, 1 == 1.0, dicts regardless of key order). */
export function pyEqual(a: Json | undefined, b: Json | undefined): boolean {
  if ((typeof a === 'number' || typeof a === 'boolean') && (typeof b === 'number' || typeof b === 'boolean')) return Number(a) === Number(b);
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, i) => pyEqual(item, b[i]));
  if (isJsonObject(a) && isJsonObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && pyEqual(a[key], b[key]));
  }
  return a === b;
}

/** `str(value)` in Python. */
export function pyStr(value: Json | undefined): string {
  return typeof value === 'string' ? value : pythonRepr(value);
}

/** What `for item in value` walks in Python (list items, dict keys, characters); nothing for a scalar. */
function pyIter(value: Json | undefined): Json[] {
  if (Array.isArray(value)) return value;
  if (isJsonObject(value)) return Object.keys(value);
  return typeof value === 'string' ? [...value] : [];
}

/** standardize_string: drop spaces and `,./-_*^`, lower case, single quotes as double. */
export function standardizeString(text: string): string {
  return text.replace(/[ ,./\-_*^]/g, '').toLowerCase().replaceAll("'", '"');
}

/** The checker reads the strings "true" and "false" as booleans. */
const boolFromText = (value: Json): Json => (value === 'true' ? true : value === 'false' ? false : value);

/**
 * Reads a model's answer as ACEBench's decoder does: a Python list (or tuple) of calls, each
 * `{name: {argument: value}}`. Null with the reason when it does not read.
 */
export function decodeCalls(output: string | null): { calls: Record<string, Record<string, Json>>[] } | { error: string } {
  if (output === null) return { error: 'no output' };
  const text = output.trim();
  let parsed;
  try {
    parsed = parseCallString(text, { lenient: false });
  } catch (error) {
    return { error: `Invalid syntax. Failed to decode AST. ${(error as Error).message}` };
  }
  // ast.parse(mode='eval') must give a list or tuple: a bare call has no elements to read.
  if (!text.startsWith('[') && parsed.calls.length === 1 && !text.endsWith(',')) return { error: 'Invalid syntax. Failed to decode AST. the output is one call, not a list of calls' };
  return { calls: parsed.calls.map((call) => ({ [call.name]: call.arguments })) };
}

interface TypeCheck extends CheckResult {
  isVariable: boolean;
}

/** type_checker: is the value of the declared type (or of the answer's own type, or equal to the answer)? */
function typeChecker(param: string, value: Json, possible: Json, expected: PyType, nested: PyType | null, funcName: string): TypeCheck {
  let result: TypeCheck = { valid: true, isVariable: false };
  const possibleType = possible !== '' ? pyType(possible) : null;
  const isVariable = possibleType !== null && possibleType !== expected;
  value = boolFromText(value);
  // Python lets an int stand for a float (JSON numbers carry no int/float difference anyway).
  const valueType = expected === 'float' && pyType(value) === 'int' ? 'float' : pyType(value);
  if (valueType === expected) {
    if (nested === null) return { valid: true, isVariable };
    // An empty answer list or object has no item to compare types with (the repository then rejects every value).
    if (pyIter(possible).length === 0) return { valid: true, isVariable };
    for (const item of pyIter(possible)) {
      let flag = true;
      if (pyType(item) === 'list') {
        for (const element of pyIter(value)) {
          if (!typeChecker(param, element, item, nested, null, funcName).valid) {
            flag = false;
            break;
          }
        }
      }
      if (flag) return { valid: true, isVariable };
    }
    result = { valid: false, isVariable: false, error: `Nested type checking failed for parameter '${param}'. Expected outer type ${expected} with inner type ${nested}. Parameter value: ${pythonRepr(value)}.` };
  }
  if (possibleType !== null && (valueType === possibleType || pyEqual(possible, value))) return { ...result, isVariable: true };
  return { valid: false, isVariable: false, error: `wrong type for parameter (${param}) of api (${funcName}):[excepted: ${expected}, real: ${valueType}]` };
}

function stringChecker(param: string, value: string, possible: Json, funcName: string, category: string): CheckResult {
  const output = standardizeString(value);
  const answer = standardizeString(pyStr(possible));
  const ok = category.includes('agent') ? output === answer : output.includes(answer);
  return ok ? OK : fail(`wrong value for parameter (${param}) of api (${funcName}): [excepted: ${pyStr(possible)}, real: [${value}]]`);
}

function listChecker(param: string, value: Json[], possible: Json, funcName: string): CheckResult {
  const standard = (list: Json[]) => list.map((item) => (typeof item === 'string' ? standardizeString(item) : item));
  const answer = Array.isArray(possible) ? standard(possible) : possible;
  return pyEqual(standard(value), answer) ? OK : fail(`wrong value for parameter ('${param}') of api (${funcName}): [expected ${pyStr(possible)}, real: [${pythonRepr(value)}]]`);
}

function dictChecker(param: string, value: Json, possible: Json, funcName: string): CheckResult {
  const wrong = fail(`wrong value for parameter (${param}) of api (${funcName}): [excepted: ${pyStr(possible)}, real: [${pyStr(value)}]]`);
  if (!isJsonObject(value) || !isJsonObject(possible)) return wrong;
  if (Object.keys(value).length !== Object.keys(possible).length) return wrong;
  for (const [key, raw] of Object.entries(value)) {
    const item = boolFromText(raw);
    if (!Object.hasOwn(possible, key)) return wrong;
    const expected = possible[key];
    if (isJsonObject(expected)) {
      const inner = dictChecker(param, item, expected, funcName);
      if (!inner.valid) return inner;
      continue;
    }
    const output = typeof item === 'string' ? standardizeString(item) : item;
    const answer = typeof expected === 'string' ? standardizeString(expected) : expected;
    if (!pyStr(output).includes(pyStr(answer))) return wrong;
  }
  return OK;
}

function listDictChecker(param: string, value: Json[], possible: Json, funcName: string): CheckResult {
  if (!Array.isArray(possible) || value.length !== possible.length) return fail(`wrong value for parameter (${param}) of api (${funcName}): [excepted: ${pyStr(possible)}, real: [${pythonRepr(value)}]]`);
  for (let i = 0; i < value.length; i++) {
    const result = dictChecker(param, value[i], possible[i], funcName);
    if (!result.valid) return result;
  }
  return OK;
}

/** simple_function_checker: one output call against one answer call of the same name. */
function simpleFunctionChecker(description: Json | undefined, output: Record<string, Record<string, Json>>, answer: Record<string, Json>, category: string): CheckResult {
  const possible = Object.values(answer)[0];
  const modelParams = Object.values(output)[0];
  if (!isJsonObject(description)) return fail(`no function description for ${Object.keys(answer)[0]}`);
  const parameters = description.parameters;
  const emptyParams = isJsonObject(parameters) && Object.keys(parameters).length === 0;
  if (Object.keys(modelParams).length === 0 && emptyParams) return OK;
  if (Object.keys(modelParams).length === 0 || emptyParams || !isJsonObject(parameters)) return fail('wrong_param');
  const properties = isJsonObject(parameters.properties) ? parameters.properties : {};
  if (pyEqual(possible, properties)) return OK;
  if (isJsonObject(possible) && Object.keys(possible).length === 0) return fail('wrong_param');
  const funcName = String(description.name);
  if (!Object.hasOwn(output, funcName)) return fail(`wrong function name: expected ${funcName}, real ${Object.keys(output)[0]}`);
  const required = Array.isArray(parameters.required) ? parameters.required : [];
  for (const name of required) if (typeof name === 'string' && !Object.hasOwn(modelParams, name)) return fail(`lack required_params: ${name}`);
  for (const [param, value] of Object.entries(modelParams)) {
    if (!Object.hasOwn(properties, param) || !isJsonObject(possible) || !Object.hasOwn(possible, param)) return fail(`addition params: ${param}`);
    const details = properties[param];
    const typeName = isJsonObject(details) ? details.type : undefined;
    const expected = typeof typeName === 'string' ? TYPE_MAPPING[typeName] : undefined;
    if (!expected || !isJsonObject(details)) return fail(`parameter ${param} of ${funcName}: type ${JSON.stringify(typeName ?? null)} is not one ACEBench's checker knows`);
    let nested: PyType | null = null;
    if (NESTED_TYPES.has(typeName as string)) {
      const itemsType = isJsonObject(details.items) ? details.items.type : undefined;
      const guessed = (typeName as string).includes('string') ? 'string' : (typeName as string).includes('enum') ? 'enum' : 'dict';
      // Without an item type the repository takes a list for a list of objects; here only when the answer's items are objects.
      const answerItems = Array.isArray(possible[param]) ? (possible[param] as Json[]) : [];
      const untypedList = guessed === 'dict' && expected === 'list' && answerItems.some((item) => !isJsonObject(item));
      const nestedName = typeof itemsType === 'string' ? itemsType : untypedList ? 'string' : guessed;
      nested = TYPE_MAPPING[nestedName] ?? null;
      if (!nested) return fail(`parameter ${param} of ${funcName}: item type ${JSON.stringify(nestedName)} is not one ACEBench's checker knows`);
    }
    const typed = typeChecker(param, value, possible[param], expected, nested, funcName);
    if (!typed.valid) return typed;
    if (typed.isVariable) continue;
    if (expected === 'dict') {
      const result = dictChecker(param, value, possible[param], funcName);
      if (!result.valid) return result;
    } else if (expected === 'list' && nested === 'dict') {
      const result = listDictChecker(param, value as Json[], possible[param], funcName);
      if (!result.valid) return result;
    } else if (expected === 'str') {
      const result = stringChecker(param, value as string, possible[param], funcName, category);
      if (!result.valid) return result;
    } else if (expected === 'list') {
      const result = listChecker(param, value as Json[], possible[param], funcName);
      if (!result.valid) return result;
    }
  }
  return OK;
}

/** normal_checker: the output calls against one accepted answer (`{name or name_k: arguments}`). */
export function normalChecker(functions: readonly Json[], output: readonly Record<string, Record<string, Json>>[], answer: Record<string, Json>, category: string): CheckResult {
  const answerKeys = Object.keys(answer);
  if (output.length !== answerKeys.length) return fail('The number of functions does not match the answer.');
  const offered = new Set(functions.map((fn) => (isJsonObject(fn) ? fn.name : undefined)));
  // `Tool_1` is a second call of Tool; a function whose own name ends so keeps it (the repository strips it regardless).
  const answers = answerKeys.map((key) => ({ key, name: offered.has(key) ? key : key.replace(/_\d+$/, ''), args: answer[key] }));
  const count = (names: string[]) => names.reduce((counts, name) => counts.set(name, (counts.get(name) ?? 0) + 1), new Map<string, number>());
  const outputCounts = count(output.map((call) => Object.keys(call)[0]));
  const answerCounts = count(answers.map((a) => a.name));
  for (const name of outputCounts.keys()) if (!answerCounts.has(name)) return fail(`extra function detected: ${name} is not in the ground truth`);
  for (const name of answerCounts.keys()) if (!outputCounts.has(name)) return fail(`function ${name} of the ground truth is missing`);
  for (const [name, n] of outputCounts) if (n !== answerCounts.get(name)) return fail(`incorrect count for function ${name}: [expected: ${answerCounts.get(name)}, actual: ${n}]`);
  for (const { key, name, args } of answers) {
    // find_description: the first function whose name is contained in the answer key.
    const description = functions.find((fn) => isJsonObject(fn) && typeof fn.name === 'string' && key.includes(fn.name));
    let result: CheckResult = fail('wrong_function');
    for (const call of output) {
      if (Object.keys(call)[0] !== name) continue;
      result = simpleFunctionChecker(description, call, { [name]: args }, category);
      if (result.valid) break;
    }
    if (!result.valid) return result;
  }
  return OK;
}
