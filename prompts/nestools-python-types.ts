/**
 * Python type names (as NesTools and Seal-Tools write them: `str`, `int`, `float`, `bool`, `list`,
 * `dict`) ↔ JSON-Schema type names (as canonical ToolSpecs hold them), and when a value of one type
 * may fill a parameter of another.
 */

const JSON_OF_PYTHON: Record<string, string> = {
  str: 'string',
  int: 'integer',
  float: 'number',
  bool: 'boolean',
  list: 'array',
  dict: 'object',
};
const PYTHON_OF_JSON: Record<string, string> = Object.fromEntries(Object.entries(JSON_OF_PYTHON).map(([py, js]) => [js, py]));

/** Extra names an LLM writes in annotations and docstrings, folded onto the six above. */
const PYTHON_ALIASES: Record<string, string> = {
  string: 'str',
  integer: 'int',
  number: 'float',
  boolean: 'bool',
  tuple: 'list',
  set: 'list',
  array: 'list',
  sequence: 'list',
  iterable: 'list',
  mapping: 'dict',
  object: 'dict',
  json: 'dict',
};

/**
 * The base of an annotation: `List[str]` → `list`, `Optional[int]` → `int`, `Dict[str, Any]` →
 * `dict`, `int | None` → `int`. Unknown names come back lower-cased (`datetime`, `any`).
 */
export function basePythonType(annotation: string): string {
  let text = annotation.trim();
  const optional = /^Optional\[(.*)\]$/i.exec(text);
  if (optional) text = optional[1];
  const union = text.split('|').map((part) => part.trim()).filter((part) => part && part.toLowerCase() !== 'none');
  if (union.length === 1) text = union[0];
  const head = text.replace(/\[.*$/, '').replace(/^typing\./, '').trim().toLowerCase();
  return PYTHON_ALIASES[head] ?? head;
}

/** `List[str]` → `str`; undefined when the annotation names no element type. */
export function elementPythonType(annotation: string): string | undefined {
  const inner = /^\s*(?:list|List|Sequence|Iterable|tuple|Tuple|set|Set)\[(.+)\]\s*$/.exec(annotation);
  return inner ? basePythonType(inner[1]) : undefined;
}

/** `str` → `string`; an unknown type name stays as it is. */
export function jsonTypeOfPython(annotation: string): string {
  const base = basePythonType(annotation);
  return JSON_OF_PYTHON[base] ?? base;
}

/** `string` → `str`; an unknown type name stays as it is. */
export function pythonTypeOfJson(type: string): string {
  return PYTHON_OF_JSON[type] ?? type;
}

/** True when `python` comes back unchanged through JSON Schema (so it needs no side note). */
export function isLosslessPythonType(python: string): boolean {
  return pythonTypeOfJson(jsonTypeOfPython(python)) === python;
}

const OPEN_TYPES = new Set(['', 'any', 'object_', 'typing.any']);

/**
 * Whether a value of type `produced` may fill a parameter of type `consumed` (Python names, either
 * spelling). Equal types fit, an int fits a float, and an unknown or `Any` type fits anything.
 */
export function typesCompatible(produced: string | undefined, consumed: string | undefined): boolean {
  if (!produced || !consumed) return true;
  const p = basePythonType(produced);
  const c = basePythonType(consumed);
  if (OPEN_TYPES.has(p) || OPEN_TYPES.has(c)) return true;
  if (p === c) return true;
  return p === 'int' && c === 'float';
}

/** The Python type of a JSON literal: `"x"` → `str`, `3` → `int`, `2.5` → `float`, … */
export function pythonTypeOfValue(value: unknown): string {
  if (typeof value === 'string') return 'str';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'float';
  if (Array.isArray(value)) return 'list';
  if (value === null) return 'none';
  return 'dict';
}

/**
 * Whether a literal fits a declared type. A float-typed parameter takes an integer literal (JSON
 * does not keep `3.0` apart from `3`), `None` fits any optional value, unknown types fit anything.
 */
export function literalFits(value: unknown, declared: string | undefined): boolean {
  if (value === null) return true;
  return typesCompatible(pythonTypeOfValue(value), declared);
}
