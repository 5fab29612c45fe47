import type { Json } from '../core/records.ts';

/**
 * Python literal tokens ↔ JSON values: decoding the text of one `String` or `Number` token the
 * parser found, and writing a JSON value back as Python source.
 */

/** The value of one Python string token (`"a\n"`, `r'\d'`, `'''x'''`, `u"é"`); undefined for bytes. */
export function decodePythonString(token: string): string | undefined {
  let i = 0;
  let raw = false;
  while (i < token.length && token[i] !== '"' && token[i] !== "'") {
    const prefix = token[i].toLowerCase();
    if (prefix === 'b') return undefined;
    if (prefix === 'r') raw = true;
    i++;
  }
  const quote = token[i];
  const triple = token.startsWith(quote.repeat(3), i);
  const open = triple ? 3 : 1;
  const body = token.slice(i + open, token.length - open);
  return raw ? body : unescape(body);
}

const SIMPLE_ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', '\\': '\\', "'": "'", '"': '"', a: '\x07', b: '\b', f: '\f', v: '\v', '0': '\0' };

function unescape(body: string): string {
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const ch = body[i];
    if (ch !== '\\' || i === body.length - 1) {
      out += ch;
      continue;
    }
    const next = body[++i];
    if (next === '\n') continue; // line continuation inside a string
    const width = next === 'x' ? 2 : next === 'u' ? 4 : next === 'U' ? 8 : 0;
    if (width) {
      const code = Number.parseInt(body.slice(i + 1, i + 1 + width), 16);
      if (Number.isFinite(code)) {
        out += String.fromCodePoint(code);
        i += width;
        continue;
      }
    }
    if (next >= '0' && next <= '7') {
      let digits = next;
      while (digits.length < 3 && body[i + 1] >= '0' && body[i + 1] <= '7') digits += body[++i];
      out += String.fromCharCode(Number.parseInt(digits, 8));
      continue;
    }
    out += next in SIMPLE_ESCAPES ? SIMPLE_ESCAPES[next] : `\\${next}`;
  }
  return out;
}

/** The value of one Python number token (`12`, `1_000`, `0x1F`, `2.5e3`); undefined for complex. */
export function decodePythonNumber(token: string): number | undefined {
  const text = token.replace(/_/g, '').toLowerCase();
  if (text.endsWith('j')) return undefined;
  if (/^0[box]/.test(text)) {
    const base = text[1] === 'b' ? 2 : text[1] === 'o' ? 8 : 16;
    return Number.parseInt(text.slice(2), base);
  }
  const value = Number(text);
  return Number.isFinite(value) ? value : undefined;
}

/** A string as a double-quoted Python literal. */
export function pythonString(text: string): string {
  let out = '"';
  for (const ch of text) {
    if (ch === '\\') out += '\\\\';
    else if (ch === '"') out += '\\"';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch < ' ') out += `\\x${ch.charCodeAt(0).toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

/**
 * A JSON value as Python source. `floatHint` writes a whole number as `3.0` where the declared type
 * is float, so the program says what the tool expects.
 */
export function pythonLiteral(value: Json, floatHint = false): string {
  if (value === null) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'number') {
    const text = String(value);
    return floatHint && /^-?\d+$/.test(text) ? `${text}.0` : text;
  }
  if (typeof value === 'string') return pythonString(value);
  if (Array.isArray(value)) return `[${value.map((item) => pythonLiteral(item)).join(', ')}]`;
  return `{${Object.entries(value).map(([key, item]) => `${pythonString(key)}: ${pythonLiteral(item)}`).join(', ')}}`;
}
