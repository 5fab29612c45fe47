/**
 * The docstring of a generated tool stub: a description, then `required parameters:`,
 * `optional parameters:` and `Returns:` sections whose lines read `name (type): description`.
 * Google-style `Args:` is read too (required-ness then comes from the signature's defaults).
 */

export interface DocField {
  name: string;
  /** As written, e.g. `str`, `List[str]`; empty when the line gives none. */
  type: string;
  description: string;
}

export type ParamSection = 'required' | 'optional' | 'unsectioned';

export interface ParsedDocstring {
  description: string;
  params: (DocField & { section: ParamSection })[];
  returns: DocField[];
  /** Whether a `Returns:` section exists (a stub without one returns nothing). */
  hasReturns: boolean;
  /** Lines that are not `name (type): description` where one is expected. */
  problems: string[];
}

type Section = ParamSection | 'returns' | 'ignored';

const SECTION_OF_HEADER: Record<string, Section> = {
  'required parameters': 'required',
  'required params': 'required',
  'required arguments': 'required',
  'required': 'required',
  'optional parameters': 'optional',
  'optional params': 'optional',
  'optional arguments': 'optional',
  'optional': 'optional',
  'args': 'unsectioned',
  'arguments': 'unsectioned',
  'parameters': 'unsectioned',
  'params': 'unsectioned',
  'returns': 'returns',
  'return': 'returns',
  'return parameters': 'returns',
  'returns parameters': 'returns',
  'outputs': 'returns',
  'raises': 'ignored',
  'example': 'ignored',
  'examples': 'ignored',
  'note': 'ignored',
  'notes': 'ignored',
};

/** Dedents like Python's `inspect.cleandoc`: the first line as is, the rest by their common indent. */
function cleanLines(text: string): string[] {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const rest = lines.slice(1).filter((line) => line.trim());
  const indent = rest.length ? Math.min(...rest.map((line) => line.length - line.trimStart().length)) : 0;
  const out = [lines[0].trim(), ...lines.slice(1).map((line) => line.slice(indent).trimEnd())];
  while (out.length && !out[0].trim()) out.shift();
  while (out.length && !out[out.length - 1].trim()) out.pop();
  return out;
}

function sectionOf(line: string): Section | undefined {
  const text = line.trim();
  if (!text.endsWith(':')) return undefined;
  return SECTION_OF_HEADER[text.slice(0, -1).trim().toLowerCase()];
}

function isIdentifierChar(ch: string): boolean {
  return /[\p{L}\p{N}_]/u.test(ch);
}

/**
 * `name (type): description`, also `- name (type): description` and `name: description`.
 * The type may hold brackets and commas (`Dict[str, int]`) and nested parentheses.
 */
export function parseDocFieldLine(line: string): DocField | undefined {
  let text = line.trim();
  if (text.startsWith('- ') || text.startsWith('* ')) text = text.slice(2).trimStart();
  let i = 0;
  while (i < text.length && isIdentifierChar(text[i])) i++;
  const name = text.slice(0, i);
  if (!name || /^\d/.test(name)) return undefined;
  let j = i;
  while (text[j] === ' ') j++;
  let type = '';
  if (text[j] === '(') {
    let depth = 0;
    let k = j;
    for (; k < text.length; k++) {
      if (text[k] === '(') depth++;
      else if (text[k] === ')' && --depth === 0) break;
    }
    if (k >= text.length) return undefined;
    type = text.slice(j + 1, k).replace(/,\s*optional\s*$/i, '').trim();
    j = k + 1;
    while (text[j] === ' ') j++;
  }
  if (text[j] !== ':') return undefined;
  return { name, type, description: text.slice(j + 1).trim() };
}

export function parseDocstring(text: string): ParsedDocstring {
  const result: ParsedDocstring = { description: '', params: [], returns: [], hasReturns: false, problems: [] };
  const descriptionLines: string[] = [];
  let section: Section | 'description' = 'description';
  let last: DocField | undefined;
  let lastIndent = 0;
  for (const line of cleanLines(text)) {
    const header = sectionOf(line);
    if (header) {
      section = header;
      last = undefined;
      if (header === 'returns') result.hasReturns = true;
      continue;
    }
    if (section === 'description') {
      descriptionLines.push(line.trim());
      continue;
    }
    if (section === 'ignored' || !line.trim()) continue;
    if (section === 'returns' && /^none\.?$/i.test(line.trim())) continue;
    const field = parseDocFieldLine(line);
    const indent = line.length - line.trimStart().length;
    // A line indented deeper than the entry above continues that entry's description.
    if (field && !(last && indent > lastIndent)) {
      const entry = section === 'returns' ? field : { ...field, section };
      if (section === 'returns') result.returns.push(entry);
      else result.params.push(entry as DocField & { section: ParamSection });
      last = entry;
      lastIndent = indent;
    } else if (last) {
      last.description = `${last.description} ${line.trim()}`.trim();
    } else {
      result.problems.push(`"${line.trim()}" under ${section === 'returns' ? 'Returns' : `${section} parameters`} is not "name (type): description"`);
    }
  }
  // Wrapped lines of one paragraph are joined; paragraphs stay apart.
  result.description = descriptionLines
    .join('\n')
    .split(/\n\s*\n/)
    .map((paragraph) => paragraph.replace(/\s*\n\s*/g, ' ').trim())
    .filter(Boolean)
    .join('\n\n');
  return result;
}

/** Writes the docstring body (without quotes) in the same format, indented by `indent`. */
export function renderDocstring(
  doc: { description: string; required: DocField[]; optional: DocField[]; returns: DocField[] },
  indent = '    ',
): string {
  const lines: string[] = [...doc.description.split('\n').map((line) => line.trim()), ''];
  const section = (title: string, fields: DocField[]) => {
    if (!fields.length) return;
    lines.push(`${title}:`);
    for (const field of fields) lines.push(`${field.name} (${field.type}): ${oneLine(field.description)}`);
    lines.push('');
  };
  section('required parameters', doc.required);
  section('optional parameters', doc.optional);
  section('Returns', doc.returns);
  while (lines[lines.length - 1] === '') lines.pop();
  return lines.map((line, i) => (i === 0 || !line ? line : indent + line)).join('\n');
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}
