import type { Json } from '../../core/records.ts';

/**
 * JSON as ToolTalk's Python writes it: `json.dump(obj, f, indent=4)` — four-space indent, `", "`-free
 * item separators, non-ASCII escaped as `\uXXXX` (ensure_ascii), no final newline — and numbers that
 * were floats in Python written with a decimal point (`3.0`). JavaScript parses `3.0` to `3`, so the
 * keys whose numbers are floats travel beside the data (`floatKeys`, see `decimalKeys`).
 */
export function pythonJson(value: Json, floatKeys: ReadonlySet<string> = new Set()): string {
  const parts: string[] = [];
  write(value, '', null);
  return parts.join('');

  function write(node: Json, indent: string, key: string | null): void {
    if (node === null || typeof node === 'boolean') parts.push(String(node));
    else if (typeof node === 'number') parts.push(pythonNumber(node, key !== null && floatKeys.has(key)));
    else if (typeof node === 'string') parts.push(pythonString(node));
    else if (Array.isArray(node)) {
      if (!node.length) return void parts.push('[]');
      const inner = `${indent}    `;
      parts.push('[');
      node.forEach((item, i) => {
        parts.push(`${i ? ',' : ''}\n${inner}`);
        write(item, inner, key);
      });
      parts.push(`\n${indent}]`);
    } else {
      const entries = Object.entries(node);
      if (!entries.length) return void parts.push('{}');
      const inner = `${indent}    `;
      parts.push('{');
      entries.forEach(([name, item], i) => {
        parts.push(`${i ? ',' : ''}\n${inner}${pythonString(name)}: `);
        write(item, inner, name);
      });
      parts.push(`\n${indent}}`);
    }
  }
}

function pythonNumber(value: number, isFloat: boolean): string {
  if (!Number.isFinite(value)) return value > 0 ? 'Infinity' : value < 0 ? '-Infinity' : 'NaN';
  if (isFloat && Number.isInteger(value) && Math.abs(value) < 1e16) return `${value}.0`;
  return String(value);
}

/** `json.dumps(text)` with ensure_ascii: JSON's escapes, then every character outside space..~ as \uXXXX. */
export function pythonString(text: string): string {
  return JSON.stringify(text).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
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
