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
    while (this.pos < this.text.length && /\s/.test(this.text[this.pos])) this.pos++;
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
    for (const [word, value] of [['True', true], ['False', false], ['None', null], ['true', true], ['false', false], ['null', null]] as const) {
      if (this.text.startsWith(word, this.pos) && !/\w/.test(this.text[this.pos + word.length] ?? '')) {
        this.pos += word.length;
        return value;
      }
    }
    const number = /^-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?/.exec(this.text.slice(this.pos, this.pos + 40));
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
    const quote = this.text[this.pos++];
    let out = '';
    for (;;) {
      const c = this.text[this.pos++];
      if (c === undefined) this.fail('unterminated string');
      if (c === quote) return out;
      if (c !== '\\') {
        out += c;
        continue;
      }
      const e = this.text[this.pos++];
      const simple: Record<string, string> = { n: '\n', t: '\t', r: '\r', b: '\b', f: '\f', '\\': '\\', "'": "'", '"': '"', '/': '/', '\n': '' };
      if (e in simple) out += simple[e];
      else if (e === 'x' || e === 'u') {
        const length = e === 'x' ? 2 : 4;
        const hex = this.text.slice(this.pos, this.pos + length);
        if (!/^[0-9a-fA-F]+$/.test(hex) || hex.length !== length) this.fail(`bad \\${e} escape`);
        out += String.fromCharCode(parseInt(hex, 16));
        this.pos += length;
      } else out += `\\${e}`; // Python keeps unknown escapes as written
    }
  }
}
