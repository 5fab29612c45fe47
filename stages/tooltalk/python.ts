/**
 * The bits of Python behaviour ToolTalk's tools show in their exception strings: `datetime.strptime`
 * for the three formats the tools use (its error messages included), `repr` of strings and dates,
 * `KeyError`/`TypeError` messages and type names. The released conversations carry these strings
 * (a failed call's `exception` is `str(e)`), so the simulators reproduce them.
 */

/** An exception a Python tool would raise; `message` is what `str(e)` gives. */
export class PyException extends Error {
  constructor(
    message: string,
    /** The Python exception class, where a caller catches one kind only (`except ValueError`). */
    readonly pyType = 'Exception',
  ) {
    super(message);
    this.name = 'PyException';
  }
}

/** Python's type name of a JSON value, as in `TypeError` messages. */
export function pyTypeName(value: unknown): string {
  if (value === null || value === undefined) return 'NoneType';
  if (typeof value === 'string') return 'str';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'float';
  if (Array.isArray(value)) return 'list';
  return 'dict';
}

import { pythonRepr as pyRepr, pythonReprString as pyReprString } from '../../core/python-json.ts';

export { pyRepr, pyReprString };

/** `str(value)` as an f-string would print it. */
export function pyStr(value: unknown): string {
  return typeof value === 'string' ? value : pyRepr(value);
}

/** Python truthiness of a JSON value (`if query`, `not attendees`). */
export function pyTruthy(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0;
  if (value !== null && typeof value === 'object') return Object.keys(value).length > 0;
  return Boolean(value);
}

/** The `KeyError` raised by `mapping[key]` for a missing key. */
export function keyError(key: unknown): PyException {
  return new PyException(typeof key === 'object' && key instanceof PyDate ? key.repr() : pyRepr(key));
}

/** `value.<method>()` on a value that is not a str raises AttributeError. */
export function requireString(value: unknown, method: string): string {
  if (typeof value !== 'string') throw new PyException(`'${pyTypeName(value)}' object has no attribute '${method}'`);
  return value;
}

// ---------------------------------------------------------------- dates

/** A `datetime.date`, for keys of the weather tables and the message of a missing one. */
export class PyDate {
  constructor(
    readonly year: number,
    readonly month: number,
    readonly day: number,
  ) {}

  /** ISO form, the key the tables use. */
  key(): string {
    return `${String(this.year).padStart(4, '0')}-${pad2(this.month)}-${pad2(this.day)}`;
  }

  repr(): string {
    return `datetime.date(${this.year}, ${this.month}, ${this.day})`;
  }

  addDays(days: number): PyDate {
    const d = new Date(Date.UTC(this.year, this.month - 1, this.day + days));
    return new PyDate(d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate());
  }
}

/** A naive `datetime`: comparable by `ms`, date part by `date`. */
export interface PyDateTime {
  ms: number;
  date: PyDate;
}

export type DateFormat = '%Y-%m-%d %H:%M:%S' | '%H:%M:%S' | '%Y-%m-%d';

// CPython's _strptime regular expressions for the directives used here (matched case-insensitively
// from the start; a run of whitespace in the format matches any run of whitespace).
const DIRECTIVES: Record<string, string> = {
  Y: '(\\d\\d\\d\\d)',
  m: '(1[0-2]|0[1-9]|[1-9])',
  d: '(3[01]|[12]\\d|0[1-9]|[1-9]| [1-9])',
  H: '(2[0-3]|[0-1]\\d|\\d)',
  M: '([0-5]\\d|\\d)',
  S: '(6[0-1]|[0-5]\\d|\\d)',
};
const COMPILED = new Map<string, { re: RegExp; fields: string[] }>();

function compile(format: DateFormat): { re: RegExp; fields: string[] } {
  let cached = COMPILED.get(format);
  if (!cached) {
    const fields: string[] = [];
    const source = format.replace(/%([YmdHMS])|\s+|[^%\s]/g, (token, directive: string | undefined) => {
      if (directive) {
        fields.push(directive);
        return DIRECTIVES[directive];
      }
      return /^\s+$/.test(token) ? '\\s+' : token.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&');
    });
    cached = { re: new RegExp(`^${source}`, 'i'), fields };
    COMPILED.set(format, cached);
  }
  return cached;
}

function pad2(n: number): string {
  return String(n).padStart(2, '0');
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** `datetime.strptime(value, format)`, raising what CPython raises for bad input. */
export function strptime(value: unknown, format: DateFormat): PyDateTime {
  if (typeof value !== 'string') throw new PyException(`strptime() argument 1 must be str, not ${value === null || value === undefined ? 'None' : pyTypeName(value)}`, 'TypeError');
  const { re, fields } = compile(format);
  const found = re.exec(value);
  if (!found) throw new PyException(`time data ${pyReprString(value)} does not match format ${pyReprString(format)}`, 'ValueError');
  if (found[0].length !== value.length) throw new PyException(`unconverted data remains: ${value.slice(found[0].length)}`, 'ValueError');
  const parts: Record<string, number> = { Y: 1900, m: 1, d: 1, H: 0, M: 0, S: 0 };
  fields.forEach((field, i) => (parts[field] = Number(found[i + 1].trim())));
  if (parts.d > daysInMonth(parts.Y, parts.m)) throw new PyException('day is out of range for month', 'ValueError');
  if (parts.S > 59) throw new PyException('second must be in 0..59', 'ValueError');
  const date = new PyDate(parts.Y, parts.m, parts.d);
  const ms = Date.UTC(parts.Y, parts.m - 1, parts.d, parts.H, parts.M, parts.S);
  return { ms: parts.Y < 100 ? fixEarlyYear(ms, parts.Y) : ms, date };
}

/** Date.UTC reads years 0–99 as 1900–1999; shift them back. */
function fixEarlyYear(ms: number, year: number): number {
  const d = new Date(ms);
  d.setUTCFullYear(year);
  return d.getTime();
}

/** Formats a datetime back in `%Y-%m-%d %H:%M:%S`. */
export function formatDateTime(dt: PyDateTime): string {
  const d = new Date(dt.ms);
  return `${dt.date.key()} ${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}:${pad2(d.getUTCSeconds())}`;
}

/** f"{n:0{width}x}". */
export function hex(n: number, width: number): string {
  return n.toString(16).padStart(width, '0');
}
