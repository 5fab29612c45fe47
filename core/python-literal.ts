import type { Json } from './records.ts';

/**
 * Python literals as Python prints them (`str(dict)`, as in the released MTU-Eval prompts): single- or
 * double-quoted strings, True / False / None, numbers, lists, tuples and dicts. JSON is a subset,
 * so this reads both notations.
 */
export function parsePythonLiteral(text: string): Json {
  const parser = new LiteralParser(text);
  const value = parser.value();
  parser.end();
  return value;
}

/** Reads one literal at `start` and says where it ends (for literals embedded in prose). */
export function readPythonLiteral(text: string, start: number): { value: Json; end: number } {
  const parser = new LiteralParser(text, start);
  const value = parser.value();
  return { value, end: parser.pos };
}

/** The literal words and their values, tried in this order. */
const WORDS = [
  ['True', true],
  ['False', false],
  ['None', null],
  ['true', true],
  ['false', false],
  ['null', null],
] as const;
const WORD_CHAR = /\w/;
const SPACE = /\s/;
const NUMBER = /-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?/y;
const SIMPLE_ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', b: '\b', f: '\f', '\\': '\\', "'": "'", '"': '"', '/': '/', '\n': '' };

class LiteralParser {
  constructor(
    private readonly text: string,
    public pos = 0,
  ) {}

  private fail(what: string): never {
    const near = this.text.slice(Math.max(0, this.pos - 20), this.pos + 20);
    throw new Error(`not a Python literal: ${what} at character ${this.pos} (near ${JSON.stringify(near)})`);
  }

  private skip(): void {
    while (this.pos < this.text.length && SPACE.test(this.text[this.pos])) this.pos++;
  }

  end(): void {
    this.skip();
    if (this.pos !== this.text.length) this.fail('unexpected text after the value');
  }

  value(): Json {
    this.skip();
    const c = this.text[this.pos];
    if (c === '{') return this.dict();
    if (c === '[') return this.sequence('[', ']');
    if (c === '(') return this.sequence('(', ')');
    if (c === "'" || c === '"') return this.string();
    for (const [word, value] of WORDS) {
      if (this.text.startsWith(word, this.pos) && !WORD_CHAR.test(this.text[this.pos + word.length] ?? '')) {
        this.pos += word.length;
        return value;
      }
    }
    NUMBER.lastIndex = this.pos;
    let number = NUMBER.exec(this.text);
    // A number is read from its first 40 characters at most.
    if (number && number[0].length > 40) {
      NUMBER.lastIndex = 0;
      number = NUMBER.exec(this.text.slice(this.pos, this.pos + 40));
    }
    if (number) {
      this.pos += number[0].length;
      return Number(number[0]);
    }
    return this.fail(c === undefined ? 'unexpected end' : `unexpected ${JSON.stringify(c)}`);
  }

  private dict(): Json {
    const out: Record<string, Json> = {};
    this.pos++;
    for (;;) {
      this.skip();
      if (this.text[this.pos] === '}') {
        this.pos++;
        return out;
      }
      const key = this.value();
      this.skip();
      if (this.text[this.pos] !== ':') this.fail('expected ":"');
      this.pos++;
      out[typeof key === 'string' ? key : JSON.stringify(key)] = this.value();
      this.skip();
      if (this.text[this.pos] === ',') this.pos++;
      else if (this.text[this.pos] !== '}') this.fail('expected "," or "}"');
    }
  }

  private sequence(open: string, close: string): Json {
    const out: Json[] = [];
    this.pos++;
    for (;;) {
      this.skip();
      if (this.text[this.pos] === close) {
        this.pos++;
        return out;
      }
      out.push(this.value());
      this.skip();
      if (this.text[this.pos] === ',') this.pos++;
      else if (this.text[this.pos] !== close) this.fail(`expected "," or "${close}" after an item of ${open}${close}`);
    }
  }

  private string(): string {
    const text = this.text;
    const quote = text[this.pos++];
    let out = '';
    // Runs of plain characters are copied whole.
    let from = this.pos;
    for (;;) {
      const c = text[this.pos];
      if (c === undefined) {
        this.pos++;
        this.fail('unterminated string');
      }
      if (c === quote) {
        out += text.slice(from, this.pos++);
        return out;
      }
      if (c !== '\\') {
        this.pos++;
        continue;
      }
      out += text.slice(from, this.pos++);
      const e = text[this.pos++];
      if (e in SIMPLE_ESCAPES) out += SIMPLE_ESCAPES[e];
      else if (e === 'x' || e === 'u') {
        const length = e === 'x' ? 2 : 4;
        const hex = text.slice(this.pos, this.pos + length);
        if (!/^[0-9a-fA-F]+$/.test(hex) || hex.length !== length) this.fail(`bad \\${e} escape`);
        out += String.fromCharCode(parseInt(hex, 16));
        this.pos += length;
      } else out += `\\${e}`; // Python keeps unknown escapes as written
      from = this.pos;
    }
  }
}
