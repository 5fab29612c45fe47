import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseJsonKeepingFloats, pointerToken } from '../../core/python-json.ts';
import type { Call, Json, Sample } from '../../core/records.ts';
import { bfclLine, PyFloat } from '../../stages/export/bfcl.ts';

/**
 * BFCL's AST checker (`bfcl_eval/eval_checker/ast_eval/ast_checker.py`, ShishirPatil/gorilla) for
 * Python entries, rule for rule, over values as Python's `json.load` gives them: a number written
 * with a decimal point is a float (`PyFloat`), one without an int, and `True == 1 == 1.0` as in Python.
 * Also the reading of an export the way BFCL reads its data folder, and the gold answers of its
 * entries as a model's decoded output.
 */

/** A Python value; a float (a JSON number written with a decimal point or an exponent) is a `PyFloat`, the marker the export writes floats with. */
export type Py = string | number | boolean | null | PyFloat | Py[] | { [key: string]: Py };

const isDict = (v: Py): v is { [key: string]: Py } => !!v && typeof v === 'object' && !Array.isArray(v) && !(v instanceof PyFloat);

/** Python's `type(v).__name__`. */
export function pyType(v: Py): string {
  if (v === null) return 'NoneType';
  if (typeof v === 'string') return 'str';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return 'int';
  if (v instanceof PyFloat) return 'float';
  return Array.isArray(v) ? 'list' : 'dict';
}

const numeric = (v: Py): number | undefined => (typeof v === 'number' ? v : typeof v === 'boolean' ? Number(v) : v instanceof PyFloat ? v.value : undefined);

/** Python's `==`. */
export function pyEq(a: Py, b: Py): boolean {
  const x = numeric(a);
  const y = numeric(b);
  if (x !== undefined || y !== undefined) return x === y;
  if (typeof a === 'string' || typeof b === 'string' || a === null || b === null) return a === b;
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, i) => pyEq(item, b[i]));
  if (!isDict(a) || !isDict(b)) return false;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => key in b && pyEq(a[key], b[key]));
}
const pyIn = (v: Py, list: Py[]) => list.some((item) => pyEq(v, item));

/** A JSON line as Python reads it. */
export function parsePy(text: string): Py {
  const { value, floatPaths } = parseJsonKeepingFloats(text);
  const floats = new Set(floatPaths);
  const convert = (node: Json, path: string): Py => {
    if (typeof node === 'number') return floats.has(path) || !Number.isInteger(node) ? new PyFloat(node) : node;
    if (Array.isArray(node)) return node.map((item, i) => convert(item, `${path}/${i}`));
    if (node && typeof node === 'object') return Object.fromEntries(Object.entries(node).map(([key, item]) => [key, convert(item, `${path}/${pointerToken(key)}`)]));
    return node;
  };
  return convert(value, '');
}

/** A Python value as a JSON line Python reads back to it (floats keep their decimal point). */
export const pyJson = (value: Py): string => bfclLine(value);

// ------------------------------------------------------------------ the checker, for Language.PYTHON

export interface CheckResult {
  valid: boolean;
  error: string[];
  error_type?: string;
  is_variable?: boolean;
}

const PYTHON_TYPE_MAPPING: Record<string, string> = { string: 'str', integer: 'int', float: 'float', boolean: 'bool', array: 'list', tuple: 'list', dict: 'dict', any: 'str' };
const PYTHON_NESTED_TYPE_CHECK_LIST = ['array', 'tuple'];

type FunctionDoc = { name: string; parameters: { properties: Record<string, { type: string; items?: { type: string } }>; required: string[] } };
type Output = Record<string, Record<string, Py>>[];
type Answer = Record<string, Record<string, Py[]>>;

export function astChecker(functions: FunctionDoc[], output: Output, possibleAnswer: Answer[], category: string): CheckResult {
  if (category.includes('parallel')) return parallelFunctionCheckerNoOrder(functions, output, possibleAnswer);
  if (category.includes('multiple')) return multipleFunctionChecker(functions, output, possibleAnswer);
  if (output.length !== 1) return { valid: false, error: ['Wrong number of functions.'], error_type: 'simple_function_checker:wrong_count' };
  return simpleFunctionChecker(functions[0], output[0], possibleAnswer[0]);
}

const findDescription = (functions: FunctionDoc[], name: string) => functions.find((fn) => fn.name === name);

function possibleAnswerType(possible: Py[]): string | null {
  for (const answer of possible) if (answer !== '') return pyType(answer);
  return null;
}

function typeChecker(param: string, value: Py, possible: Py[], expectedDescription: string, expected: string, nested: string | null): CheckResult {
  const result: CheckResult = { valid: true, error: [], is_variable: false, error_type: 'type_error:simple' };
  let isVariable = false;
  const answerType = possibleAnswerType(possible);
  if (answerType !== null && answerType !== expected) isVariable = true;
  if (pyType(value) === expected) {
    if (nested === null) return { ...result, is_variable: isVariable };
    for (const item of possible) {
      let flag = true;
      if (Array.isArray(item)) {
        for (const valueItem of value as Py[]) {
          if (!typeChecker(param, valueItem, item, nested, nested, null).valid) {
            flag = false;
            break;
          }
        }
      }
      if (flag) return { valid: true, error: [], is_variable: isVariable };
    }
    result.valid = false;
    result.error = [`Nested type checking failed for parameter ${param}.`];
    result.error_type = 'type_error:nested';
  }
  if (answerType !== null && pyType(value) === answerType) return { ...result, is_variable: true };
  result.valid = false;
  result.error.push(`Incorrect type for parameter ${param}. Expected type ${expectedDescription}, got ${pyType(value)}.`);
  result.error_type = 'type_error:simple';
  return result;
}

export function standardizeString(text: string): string {
  return text.replace(/[ ,./\-_*^]/g, '').toLowerCase().replace(/'/g, '"');
}

function stringChecker(param: string, value: string, possible: Py[]): CheckResult {
  const standard = possible.filter((p): p is string => typeof p === 'string').map(standardizeString);
  if (!standard.includes(standardizeString(value))) return { valid: false, error: [`Invalid value for parameter ${param}: ${JSON.stringify(value)}.`], error_type: 'value_error:string' };
  return { valid: true, error: [] };
}

function listChecker(param: string, value: Py[], possible: Py[]): CheckResult {
  const standardItem = (item: Py) => (typeof item === 'string' ? standardizeString(item) : item);
  const output = value.map(standardItem);
  // Python's len() and indexing on each possible answer: a string ("" for optional) gives its characters.
  const answers = possible.map((answer) => (typeof answer === 'string' ? [...answer] : (answer as Py[])).map(standardItem));
  if (!pyIn(output, answers)) return { valid: false, error: [`Invalid value for parameter ${param}.`], error_type: 'value_error:list/tuple' };
  return { valid: true, error: [] };
}

function dictChecker(param: string, value: { [key: string]: Py }, possibleAnswers: Py[]): CheckResult {
  let result: CheckResult = { valid: false, error: [], error_type: 'dict_checker:unclear' };
  for (const possible of possibleAnswers) {
    if (possible === '') continue;
    result = { valid: false, error: [], error_type: 'dict_checker:unclear' };
    let flag = true;
    const answer = possible as Record<string, Py[]>;
    for (const [key, item] of Object.entries(value)) {
      if (!(key in answer)) {
        result.error.push(`Unexpected dict key parameter: '${key}'.`);
        result.error_type = 'value_error:dict_key';
        flag = false;
        break;
      }
      const standard = typeof item === 'string' ? standardizeString(item) : item;
      const standardAnswers = answer[key].map((a) => (typeof a === 'string' ? standardizeString(a) : a));
      if (!pyIn(standard, standardAnswers)) {
        result.error.push(`Invalid value for parameter '${key}'.`);
        result.error_type = 'value_error:dict_value';
        flag = false;
        break;
      }
    }
    for (const [key, values] of Object.entries(answer)) {
      if (!(key in value) && !values.includes('')) {
        result.error.push(`Missing dict key parameter: '${key}'.`);
        result.error_type = 'value_error:dict_key';
        flag = false;
        break;
      }
    }
    if (flag) return { valid: true, error: [] };
  }
  return result;
}

function listDictChecker(param: string, value: Py[], possibleAnswers: Py[]): CheckResult {
  let result: CheckResult = { valid: false, error: [], error_type: 'list_dict_checker:unclear' };
  for (const possible of possibleAnswers) {
    let flag = true;
    const answer = typeof possible === 'string' ? [...possible] : (possible as Py[]);
    if (value.length !== answer.length) {
      result = { valid: false, error: ['Wrong number of dictionaries in the list.'], error_type: 'value_error:list_dict_count' };
      continue;
    }
    for (let i = 0; i < value.length; i++) {
      result = dictChecker(param, value[i] as { [key: string]: Py }, [answer[i]]);
      if (!result.valid) {
        flag = false;
        break;
      }
    }
    if (flag) return { valid: true, error: [] };
  }
  return result;
}

export function simpleFunctionChecker(description: FunctionDoc | undefined, output: Record<string, Record<string, Py>>, possibleAnswer: Answer): CheckResult {
  // find_description gives None for an unknown name, and the checker then fails reading it.
  if (!description) return { valid: false, error: ['no function description for the expected call'], error_type: 'TypeError' };
  const possible = Object.values(possibleAnswer)[0];
  const name = description.name;
  const details = description.parameters.properties;
  if (!(name in output)) return { valid: false, error: [`Function name '${name}' not found in model output.`], error_type: 'simple_function_checker:wrong_func_name' };
  const params = output[name];
  for (const required of description.parameters.required) {
    if (!(required in params)) return { valid: false, error: [`Missing required parameter: '${required}'.`], error_type: 'simple_function_checker:missing_required' };
  }
  for (const [param, given] of Object.entries(params)) {
    if (!(param in details) || !(param in possible)) return { valid: false, error: [`Unexpected parameter: '${param}'.`], error_type: 'simple_function_checker:unexpected_param' };
    const expectedDescription = details[param].type;
    const expected = PYTHON_TYPE_MAPPING[expectedDescription];
    if (expected === undefined) return { valid: false, error: [`KeyError: '${expectedDescription}'`], error_type: 'KeyError' };
    let nested: string | null = null;
    if (PYTHON_NESTED_TYPE_CHECK_LIST.includes(expectedDescription)) {
      const itemsType = details[param].items?.type;
      if (itemsType === undefined || PYTHON_TYPE_MAPPING[itemsType] === undefined) return { valid: false, error: [`KeyError: items type of ${param}`], error_type: 'KeyError' };
      nested = PYTHON_TYPE_MAPPING[itemsType];
    }
    // Python converts an int to a float where a float is expected.
    const value = expectedDescription === 'float' && typeof given === 'number' ? new PyFloat(given) : given;
    const typeResult = typeChecker(param, value, possible[param], expectedDescription, expected, nested);
    if (!typeResult.valid) return typeResult;
    if (!typeResult.is_variable) {
      let special: CheckResult | undefined;
      if (expected === 'dict') special = dictChecker(param, value as { [key: string]: Py }, possible[param]);
      else if (expected === 'list' && nested === 'dict') special = listDictChecker(param, value as Py[], possible[param]);
      else if (expected === 'str') special = stringChecker(param, value as string, possible[param]);
      else if (expected === 'list') special = listChecker(param, value as Py[], possible[param]);
      if (special) {
        if (!special.valid) return special;
        continue;
      }
    }
    if (!pyIn(value, possible[param])) return { valid: false, error: [`Invalid value for parameter '${param}'.`], error_type: 'value_error:others' };
  }
  for (const [param, values] of Object.entries(possible)) {
    if (!(param in params) && !values.includes('')) return { valid: false, error: [`Optional parameter '${param}' not provided and not marked as optional.`], error_type: 'simple_function_checker:missing_optional' };
  }
  return { valid: true, error: [] };
}

function parallelFunctionCheckerNoOrder(functions: FunctionDoc[], output: Output, possibleAnswers: Answer[]): CheckResult {
  if (output.length !== possibleAnswers.length) return { valid: false, error: ['Wrong number of functions.'], error_type: 'parallel_function_checker_no_order:wrong_count' };
  const matched: number[] = [];
  for (let i = 0; i < possibleAnswers.length; i++) {
    const description = findDescription(functions, Object.keys(possibleAnswers[i])[0]);
    let result: CheckResult = { valid: false, error: [] };
    for (let index = 0; index < output.length; index++) {
      if (matched.includes(index)) continue;
      result = simpleFunctionChecker(description, output[index], possibleAnswers[i]);
      if (result.valid) {
        matched.push(index);
        break;
      }
    }
    if (!result.valid) return { valid: false, error: [`Could not find a matching function for index ${i} of possible answers: ${result.error.join(' ')}`], error_type: 'parallel_function_checker_no_order:cannot_find_match' };
  }
  return { valid: true, error: [] };
}

function multipleFunctionChecker(functions: FunctionDoc[], output: Output, possibleAnswers: Answer[]): CheckResult {
  if (output.length !== possibleAnswers.length) return { valid: false, error: ['Wrong number of functions.'], error_type: 'multiple_function_checker:wrong_count' };
  return simpleFunctionChecker(findDescription(functions, Object.keys(possibleAnswers[0])[0]), output[0], possibleAnswers[0]);
}

// ------------------------------------------------------------------ an export as BFCL reads it

export interface BfclEntry {
  split: string;
  category: string;
  id: string;
  /** The sample it was made from (toolkiln_ids.jsonl). */
  sample: string;
  question: { role: string; content: string }[][];
  function: (FunctionDoc & { description: string; parameters: { type: string } })[];
  /** The possible answer's ground truth; undefined for irrelevance. */
  groundTruth?: Answer[];
}

const readLines = (path: string) => readFileSync(path, 'utf8').split('\n').filter(Boolean);

/** Every entry of an export: each split folder's `BFCL_v4_<category>.json` files, prompt and answer aligned by index as BFCL aligns them. */
export function readBfclExport(dir: string): BfclEntry[] {
  const entries: BfclEntry[] = [];
  for (const split of readdirSync(dir, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort()) {
    const ids = new Map(readLines(join(dir, split, 'toolkiln_ids.jsonl')).map((line) => JSON.parse(line) as { id: string; sample: string }).map((r) => [r.id, r.sample]));
    for (const file of readdirSync(join(dir, split)).filter((f) => f.endsWith('.json')).sort()) {
      const category = /^BFCL_v4_(\w+?)\.json$/.exec(file)?.[1];
      if (!category) throw new Error(`${split}/${file}: not a BFCL data file name`);
      const prompts = readLines(join(dir, split, file)).map((line) => parsePy(line) as unknown as Omit<BfclEntry, 'split' | 'category' | 'sample' | 'groundTruth'>);
      const answerFile = join(dir, split, 'possible_answer', file);
      const answers = existsSync(answerFile) ? readLines(answerFile).map((line) => parsePy(line) as unknown as { id: string; ground_truth: Answer[] }) : undefined;
      if (answers && answers.length !== prompts.length) throw new Error(`${split}/${file}: ${prompts.length} entries, ${answers.length} possible answers`);
      prompts.forEach((prompt, i) => {
        if (answers && answers[i].id !== prompt.id) throw new Error(`${split}/${file}: entry ${prompt.id} and answer ${answers[i].id} on line ${i + 1}`);
        entries.push({ ...prompt, split, category, sample: ids.get(prompt.id) ?? '', groundTruth: answers?.[i].ground_truth });
      });
    }
  }
  return entries;
}

/** A sample's gold calls: the one answer turn's of a multi-turn sample, or its gold calls. */
export function goldCallsOf(sample: Sample): Call[] {
  const turns = Object.values(sample.expected.turns ?? {}).filter((calls) => calls.length);
  return turns.length ? turns.flat() : (sample.expected.calls ?? []);
}

type DocParam = { type: string; items?: DocParam; properties?: Record<string, DocParam> };

/** A value as a model writes it for a parameter of this documented type: a float where the doc says float. */
function asDocumented(value: Json, param: DocParam | undefined): Py {
  if (!param) return value as Py;
  if (param.type === 'float' && typeof value === 'number') return new PyFloat(value);
  if (param.items && Array.isArray(value)) return value.map((item) => asDocumented(item, param.items));
  if (param.properties && value && typeof value === 'object' && !Array.isArray(value)) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, asDocumented(item, param.properties![key])]));
  return value as Py;
}

/** The gold calls of an entry's sample as BFCL's decoder gives a model's output: `[{tool: {param: value}}]`, typed as the entry's function docs say. */
export function goldOutput(entry: BfclEntry, sample: Sample): Output {
  return goldCallsOf(sample).map((call) => {
    const doc = entry.function.find((fn) => fn.name === call.tool);
    const properties = (doc?.parameters.properties ?? {}) as unknown as Record<string, DocParam>;
    return { [call.tool]: Object.fromEntries(Object.entries(call.arguments).map(([name, value]) => [name, asDocumented(value as Json, properties[name])])) };
  });
}
