import type { Json } from './records.ts';

/**
 * JSON as Python's `json.dumps` writes it, for released files that must come back byte for byte.
 * One line with `", "` and `": "` separators by default, or `indent` spaces per level with `","`
 * item separators (`json.dump(obj, f, indent=4)`); non-ASCII escaped as `\uXXXX` unless
 * `ensureAscii` is false; no final newline. Python floats keep their decimal point (`3.0`) and
 * Python's exponent form (`1e-05`, `1e+16`). JavaScript parses `3.0` to `3`, so which numbers were
 * floats travels beside the data: by key name (`floatKeys`, see `decimalKeys`) or by position
 * (`floatPaths`: JSON pointers, see `parseJsonKeepingFloats`).
 */
export interface PythonJsonOptions {
  /** Spaces per nesting level; absent: everything on one line, as `json.dumps` does by default. */
  indent?: number;
  /** Escape every character outside space..~ (Python's default: true). */
  ensureAscii?: boolean;
  /** Keys whose numbers are floats. */
  floatKeys?: ReadonlySet<string>;
  /** JSON pointers (`/a/0/b`) of the numbers that are floats. */
  floatPaths?: ReadonlySet<string>;
}

export function pythonJson(value: Json, options: PythonJsonOptions = {}): string {
  const { indent, ensureAscii = true, floatKeys, floatPaths } = options;
  const string = ensureAscii ? pythonString : (text: string) => JSON.stringify(text);
  const parts: string[] = [];
  // Pointers are built only when floats are known by position.
  write(value, '', null, floatPaths ? '' : null);
  return parts.join('');

  function write(node: Json, margin: string, key: string | null, path: string | null): void {
    if (node === null || typeof node === 'boolean') parts.push(String(node));
    else if (typeof node === 'number') parts.push(pythonNumber(node, (key !== null && !!floatKeys?.has(key)) || (path !== null && !!floatPaths?.has(path))));
    else if (typeof node === 'string') parts.push(string(node));
    else if (Array.isArray(node)) {
      if (!node.length) return void parts.push('[]');
      const inner = indent === undefined ? '' : `${margin}${' '.repeat(indent)}`;
      parts.push('[');
      node.forEach((item, i) => {
        parts.push(separator(i, inner));
        write(item, inner, key, path === null ? null : `${path}/${i}`);
      });
      parts.push(indent === undefined ? ']' : `\n${margin}]`);
    } else {
      const entries = Object.entries(node);
      if (!entries.length) return void parts.push('{}');
      const inner = indent === undefined ? '' : `${margin}${' '.repeat(indent)}`;
      parts.push('{');
      entries.forEach(([name, item], i) => {
        parts.push(`${separator(i, inner)}${string(name)}: `);
        write(item, inner, name, path === null ? null : `${path}/${pointerToken(name)}`);
      });
      parts.push(indent === undefined ? '}' : `\n${margin}}`);
    }
  }

  function separator(index: number, inner: string): string {
    if (indent === undefined) return index ? ', ' : '';
    return `${index ? ',' : ''}\n${inner}`;
  }
}

/** A number as Python prints it: ints as digits, floats as `repr(float)`. */
export function pythonNumber(value: number, isFloat: boolean): string {
  if (!Number.isFinite(value)) return value > 0 ? 'Infinity' : value < 0 ? '-Infinity' : 'NaN';
  if (!isFloat && Number.isInteger(value)) return Math.abs(value) < 1e21 ? String(value) : BigInt(value).toString();
  // repr(float): the shortest digits that read back, in exponent form below 1e-4 and from 1e16 on.
  const [mantissa, exponentText] = value.toExponential().split('e');
  const exponent = Number(exponentText);
  if (exponent < -4 || exponent >= 16) return `${mantissa}e${exponent < 0 ? '-' : '+'}${String(Math.abs(exponent)).padStart(2, '0')}`;
  const fixed = Object.is(value, -0) ? '-0' : String(value);
  return fixed.includes('.') ? fixed : `${fixed}.0`;
}

/** `json.dumps(text)` with ensure_ascii: JSON's escapes, then every character outside space..~ as \uXXXX. */
export function pythonString(text: string): string {
  return JSON.stringify(text).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** One JSON-pointer token: `~` → `~0`, `/` → `~1`. */
export function pointerToken(name: string): string {
  return name.replace(/~/g, '~0').replace(/\//g, '~1');
}

/**
 * The keys whose values a JSON text writes as decimals (`"avg_rainfall": 3.0`): the keys Python
 * held floats under. Read from the text because parsing loses the difference.
 */
export function decimalKeys(text: string): string[] {
  const keys = new Set<string>();
  for (const match of text.matchAll(/"((?:[^"\\]|\\.)*)"\s*:\s*-?\d+(?:\.\d+(?:[eE][-+]?\d+)?|[eE][-+]?\d+)/g)) keys.add(JSON.parse(`"${match[1]}"`) as string);
  return [...keys].sort();
}

/**
 * Parses a JSON text (JSON.parse: its errors as usual) and lists the JSON pointers of the numbers
 * written as decimals or with an exponent whose value is a whole number (`412.0`): the ones
 * `pythonJson` must be told about (`floatPaths`) to write them back as they were.
 */
export function parseJsonKeepingFloats(text: string): { value: Json; floatPaths: string[] } {
  const value = JSON.parse(text) as Json;
  const floatPaths: string[] = [];
  // The text is valid JSON from here on: a scan that follows the nesting is enough.
  const path: (string | number)[] = [];
  const containers: ('{' | '[')[] = [];
  let i = 0;
  let expectKey = false;
  while (i < text.length) {
    const c = text[i];
    if (c === '"') {
      const end = stringEnd(text, i);
      if (expectKey) {
        path[path.length - 1] = pointerToken(JSON.parse(text.slice(i, end)) as string);
        expectKey = false;
      }
      i = end;
    } else if (c === '{' || c === '[') {
      containers.push(c);
      path.push(c === '[' ? 0 : '');
      expectKey = c === '{';
      i++;
    } else if (c === '}' || c === ']') {
      containers.pop();
      path.pop();
      i++;
    } else if (c === ',') {
      const top = path.length - 1;
      if (containers.at(-1) === '[') path[top] = (path[top] as number) + 1;
      else expectKey = true;
      i++;
    } else if (c === '-' || (c >= '0' && c <= '9')) {
      NUMBER.lastIndex = i;
      const match = NUMBER.exec(text)!;
      if ((match[1] || match[2]) && Number.isInteger(Number(match[0]))) floatPaths.push(path.map((p) => `/${p}`).join(''));
      i += match[0].length;
    } else i++;
  }
  return { value, floatPaths };
}

const NUMBER = /-?\d+(\.\d+)?([eE][-+]?\d+)?/y;

/** Index just after the string literal that starts at `start`. */
function stringEnd(text: string, start: number): number {
  let i = start + 1;
  while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
  return i + 1;
}

/** `repr(s)` of a str: single quotes unless the text holds a single quote and no double quote. */
export function pythonReprString(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let out = '';
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    if (ch === '\\') out += '\\\\';
    else if (ch === quote) out += `\\${quote}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return quote + out + quote;
}

/** `repr(value)` of a JSON value as Python prints it (ints as ints, other numbers as repr(float)). */
export function pythonRepr(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'number') {
    if (Number.isInteger(value)) return String(value);
    return Number.isNaN(value) ? 'nan' : !Number.isFinite(value) ? (value > 0 ? 'inf' : '-inf') : pythonNumber(value, true);
  }
  if (typeof value === 'string') return pythonReprString(value);
  if (Array.isArray(value)) return `[${value.map(pythonRepr).join(', ')}]`;
  return `{${Object.entries(value as Record<string, unknown>).map(([k, v]) => `${pythonReprString(k)}: ${pythonRepr(v)}`).join(', ')}}`;
}
