import { UserError } from '../../../core/errors.ts';
import { pythonNumber, pythonRepr } from '../../../core/python-json.ts';
import type { Json } from '../../../core/records.ts';

/**
 * ACEBench's call strings (`mile_stone`, `path`, model outputs): a Python list of calls with
 * keyword arguments, `[login_food_platform(username='Eve', password='password123'), turn_on_wifi()]`.
 * ACEBench's harness reads them with `ast.parse` after stripping outer brackets; this reader
 * accepts the same literals (strings, numbers, True/False/None, lists, tuples, dicts) and gives
 * JSON values (a tuple becomes a list; JSON has one number type, so `1.0` reads as 1).
 */

/** One call: the method name and its keyword arguments, in written order. */
export interface StructuredCall {
  name: string;
  arguments: Record<string, Json>;
}

export interface ParsedCalls {
  calls: StructuredCall[];
  /**
   * Quotes taken as part of a string because what follows them cannot end one ('Domino's'):
   * Python's ast.parse, and so ACEBench's harness, rejects such a string; the lenient reader
   * takes the quote as text. Zero for a string Python reads as is.
   */
  repairedQuotes: number;
}

export interface ParseOptions {
  /** Take a quote followed by a letter as text instead of failing (default true). */
  lenient?: boolean;
}

const ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', '\\': '\\', "'": "'", '"': '"', '0': '\0' };
/** What may follow a string's closing quote; a quote followed by anything else is text to the lenient reader. */
const CLOSERS = new Set([',', ')', ']', '}', ':']);
// Python 3 identifiers: letters of any script (the Chinese records name parameters in Chinese), digits, underscores.
const IDENTIFIER = /[\p{L}\p{Nl}_][\p{L}\p{Nl}\p{Mn}\p{Mc}\p{Nd}\p{Pc}]*/uy;
const NUMBER = /[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?)/y;

/** Sets a key as an own property, '__proto__' included (plain assignment would set the prototype). */
function setOwn(target: Record<string, Json>, key: string, value: Json): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

class Reader {
  pos = 0;
  repairs = 0;
  constructor(readonly text: string, readonly lenient: boolean) {}

  fail(what: string): never {
    const near = this.text.slice(this.pos, this.pos + 20);
    throw new UserError(`call string ${JSON.stringify(this.text)}: ${what} at column ${this.pos + 1}${near ? ` (near ${JSON.stringify(near)})` : ''}`);
  }

  skipSpace(): void {
    while (this.pos < this.text.length && /\s/.test(this.text[this.pos])) this.pos++;
  }

  peek(): string {
    this.skipSpace();
    return this.text[this.pos] ?? '';
  }

  expect(char: string): void {
    if (this.peek() !== char) this.fail(`expected '${char}'`);
    this.pos++;
  }

  identifier(): string | null {
    this.skipSpace();
    IDENTIFIER.lastIndex = this.pos;
    const match = IDENTIFIER.exec(this.text);
    if (!match) return null;
    this.pos += match[0].length;
    return match[0];
  }

  /** `a, b, c` up to `close`, trailing comma allowed. */
  sequence(close: string, item: () => void): void {
    while (this.peek() !== close) {
      if (this.pos >= this.text.length) this.fail(`missing '${close}'`);
      item();
      if (this.peek() === ',') this.pos++;
      else if (this.peek() !== close) this.fail(`expected ',' or '${close}'`);
    }
    this.pos++;
  }

  call(): StructuredCall {
    let name = this.identifier();
    if (!name) this.fail('expected a function name');
    while (this.text[this.pos] === '.') {
      this.pos++;
      const part = this.identifier();
      if (!part) this.fail('expected a name after "."');
      name += `.${part}`;
    }
    this.expect('(');
    const args: Record<string, Json> = {};
    this.sequence(')', () => {
      const keyStart = this.pos;
      const key = this.identifier();
      if (!key || this.peek() !== '=') {
        this.pos = keyStart;
        this.skipSpace();
        this.fail(`${name}: positional argument; ACEBench calls pass every argument by keyword (name=value)`);
      }
      this.pos++;
      if (Object.hasOwn(args, key)) this.fail(`${name}: argument '${key}' given twice`);
      setOwn(args, key, this.value());
    });
    return { name, arguments: args };
  }

  value(): Json {
    const char = this.peek();
    if (char === "'" || char === '"') return this.string(char);
    if (char === '[') {
      this.pos++;
      const items: Json[] = [];
      this.sequence(']', () => items.push(this.value()));
      return items;
    }
    if (char === '(') {
      this.pos++;
      const items: Json[] = [];
      this.sequence(')', () => items.push(this.value()));
      return items;
    }
    if (char === '{') {
      this.pos++;
      const object: Record<string, Json> = {};
      this.sequence('}', () => {
        const key = this.value();
        if (typeof key !== 'string' && typeof key !== 'number') this.fail('a dict key must be a string or a number');
        this.expect(':');
        setOwn(object, String(key), this.value());
      });
      return object;
    }
    NUMBER.lastIndex = this.pos;
    const number = NUMBER.exec(this.text);
    if (number) {
      this.pos += number[0].length;
      return Number(number[0]);
    }
    const word = this.identifier();
    if (word === 'True') return true;
    if (word === 'False') return false;
    if (word === 'None') return null;
    if (word !== null) this.fail(`'${word}' is not a literal (a string needs quotes)`);
    return this.fail('expected a value');
  }

  string(quote: string): string {
    this.pos++;
    let out = '';
    for (;;) {
      if (this.pos >= this.text.length) this.fail('unterminated string');
      const char = this.text[this.pos++];
      if (char === '\\') {
        const next = this.text[this.pos++];
        if (Object.hasOwn(ESCAPES, next)) out += ESCAPES[next];
        else if (next === 'u' || next === 'x') {
          const width = next === 'u' ? 4 : 2;
          const hex = this.text.slice(this.pos, this.pos + width);
          if (!/^[0-9a-fA-F]+$/.test(hex) || hex.length !== width) this.fail(`bad \\${next} escape`);
          out += String.fromCharCode(parseInt(hex, 16));
          this.pos += width;
        } else out += `\\${next}`;
        continue;
      }
      if (char !== quote) {
        out += char;
        continue;
      }
      let after = this.pos;
      while (after < this.text.length && /\s/.test(this.text[after])) after++;
      if (after >= this.text.length || CLOSERS.has(this.text[after])) return out;
      if (!this.lenient) {
        this.pos--;
        this.fail(`unescaped ${quote} inside a string (Python's ast.parse, and so ACEBench's harness, rejects it; escape it or parse leniently)`);
      }
      this.repairs++;
      out += char;
    }
  }
}

/**
 * Parses one call string: `[f(a=1), g()]`, a bare `f(a=1)` or `f(), g()`; surrounding spaces
 * and one pair of outer brackets are optional, as in ACEBench's decode_function_list.
 * Throws a UserError naming the string, the column and what was expected.
 */
export function parseCallString(text: string, options: ParseOptions = {}): ParsedCalls {
  const reader = new Reader(text, options.lenient ?? true);
  const calls: StructuredCall[] = [];
  const bracketed = reader.peek() === '[';
  if (bracketed) reader.pos++;
  const close = bracketed ? ']' : '';
  while (reader.peek() !== close) {
    if (reader.pos >= text.length && bracketed) reader.fail("missing ']'");
    calls.push(reader.call());
    if (reader.peek() === ',') reader.pos++;
    else if (reader.peek() !== close) reader.fail(bracketed ? "expected ',' or ']'" : "expected ','");
  }
  if (bracketed) reader.pos++;
  if (reader.peek() !== '') reader.fail('unexpected text after the calls');
  return { calls, repairedQuotes: reader.repairs };
}

/** Python's repr of a float: always a decimal point or an exponent (88 → '88.0'). */
export function pyFloat(value: number): string {
  return Number.isFinite(value) ? pythonNumber(value, true) : pythonRepr(value);
}

/** A JSON value as a Python literal, the way ACEBench renders arguments (repr). */
export const renderValue = (value: Json): string => pythonRepr(value);

/** `name(key=value, …)` with Python literals. */
export function renderCall(call: StructuredCall): string {
  const args = Object.entries(call.arguments).map(([key, value]) => `${key}=${renderValue(value)}`);
  return `${call.name}(${args.join(', ')})`;
}

/** One released mile_stone entry: the calls of one step in a Python list. */
export function renderCallString(calls: readonly StructuredCall[]): string {
  return `[${calls.map(renderCall).join(', ')}]`;
}
