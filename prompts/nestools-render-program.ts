import { isRef, type ArgValue, type Call, type Json, type PropertySchema, type ToolSpec } from '../core/records.ts';
import { renderDocstring, type DocField } from './nestools-docstring.ts';
import { basePythonType, pythonTypeOfJson } from './nestools-python-types.ts';
import { pythonLiteral, pythonString } from './nestools-python-values.ts';

/**
 * A canonical chain → the program text the generation prompt asks an LLM for: one stub per tool
 * (signature + docstring), a `main()` of tuple-unpacking calls whose variables are numbered like the
 * NesTools placeholders (`data3` is `API_call_3`), and the task as a trailing comment. The offline
 * generator writes its answers with this, so they go through the same parser and checks.
 */

/** A chain of calls over its tools (what the offline generator samples). */
export interface SampledChain {
  tools: ToolSpec[];
  calls: Call[];
}

export interface RenderableChain extends SampledChain {
  task: string;
}

/** Declared return fields of a tool, in order: the order NesTools numbers its placeholders in. */
export function returnFields(tool: ToolSpec): string[] {
  return Object.keys(tool.returns.properties);
}

const PYTHON_KEYWORDS = new Set(
  'False None True and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield'.split(' '),
);

/** Whether `name` can be a Python parameter or function name. */
export function isPythonIdentifier(name: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && !PYTHON_KEYWORDS.has(name);
}

function pythonTypeOf(property: PropertySchema): string {
  const declared = (property as { 'x-python-type'?: unknown })['x-python-type'];
  if (typeof declared === 'string') return declared;
  const type = Array.isArray(property.type) ? property.type.find((t) => t !== 'null') : property.type;
  return pythonTypeOfJson(type ?? 'any');
}

/** An annotation only when the type is written like one (`List[str]`, not `str or int`). */
function annotation(type: string): string {
  return /^[A-Za-z_][\w.]*(\[[\w.,\s[\]]*\])?$/.test(type) && type !== 'any' ? `: ${type}` : '';
}

function docFields(properties: Record<string, PropertySchema>, names: string[]): DocField[] {
  return names.map((name) => ({ name, type: pythonTypeOf(properties[name]), description: properties[name].description ?? '' }));
}

function signatureOrder(tool: ToolSpec): { required: string[]; optional: string[] } {
  const names = Object.keys(tool.parameters.properties);
  const required = names.filter((name) => tool.parameters.required.includes(name));
  return { required, optional: names.filter((name) => !required.includes(name)) };
}

/** Escapes what would end or alter a docstring literal. */
function docstringBody(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/"""/g, '\\"\\"\\"');
}

export function renderStub(tool: ToolSpec): string {
  const { properties } = tool.parameters;
  const { required, optional } = signatureOrder(tool);
  for (const name of [tool.name, ...required, ...optional, ...returnFields(tool)]) {
    if (!isPythonIdentifier(name)) throw new Error(`tool ${tool.name}: "${name}" is not a Python identifier, so it cannot be written as a stub`);
  }
  const params = [
    ...required.map((name) => `${name}${annotation(pythonTypeOf(properties[name]))}`),
    ...optional.map((name) => {
      const fallback = properties[name].default;
      return `${name}${annotation(pythonTypeOf(properties[name]))} = ${fallback === undefined ? 'None' : pythonLiteral(fallback as Json)}`;
    }),
  ];
  const doc = renderDocstring({
    description: tool.description || tool.name.replace(/_/g, ' '),
    required: docFields(properties, required),
    optional: docFields(properties, optional),
    returns: docFields(tool.returns.properties, returnFields(tool)),
  });
  return [`def ${tool.name}(${params.join(', ')}):`, `    """${docstringBody(doc)}`, '    """', '    ...'].join('\n');
}

function argText(value: ArgValue, variables: Map<string, string>, floatHint: boolean): string {
  if (isRef(value)) {
    const name = variables.get(value.$ref);
    if (!name) throw new Error(`reference ${value.$ref} has no earlier call producing it`);
    return name;
  }
  if (Array.isArray(value)) return `[${value.map((item) => argText(item, variables, false)).join(', ')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.entries(value).map(([key, item]) => `${pythonString(key)}: ${argText(item as ArgValue, variables, false)}`).join(', ')}}`;
  }
  return pythonLiteral(value as Json, floatHint);
}

/** Wraps text into comment lines of at most `width` characters. */
export function commentLines(text: string, indent: string, width = 88): string[] {
  const lines: string[] = [];
  let current = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (current && indent.length + 2 + current.length + 1 + word.length > width) {
      lines.push(current);
      current = word;
    } else current = current ? `${current} ${word}` : word;
  }
  if (current) lines.push(current);
  return lines.map((line) => `${indent}# ${line}`);
}

function renderCall(call: Call, tool: ToolSpec, variables: Map<string, string>, nextVariable: () => string): string {
  const { required } = signatureOrder(tool);
  const entries = Object.entries(call.arguments);
  // Required arguments go positionally while they come in signature order; the rest by keyword.
  let positional = 0;
  while (positional < entries.length && positional < required.length && entries[positional][0] === required[positional]) positional++;
  const floatParam = (name: string) => basePythonType(pythonTypeOf(tool.parameters.properties[name] ?? {})) === 'float';
  const args = entries.map(([name, value], i) => {
    const text = argText(value, variables, floatParam(name));
    return i < positional ? text : `${name}=${text}`;
  });
  const targets = returnFields(tool).map((field) => {
    const variable = nextVariable();
    variables.set(`${call.id}.${field}`, variable);
    return variable;
  });
  const invocation = `${call.tool}(${args.join(', ')})`;
  return `    ${targets.length ? `${targets.join(', ')} = ` : ''}${invocation}`;
}

export interface RenderOptions {
  /** Wrap the program in a ```python fence, as an LLM answer would be. */
  fenced?: boolean;
  /** A `Domain: …` line before the code, as in the paper's example answers. */
  domain?: string;
}

export function renderProgram(chain: RenderableChain, options: RenderOptions = {}): string {
  const byName = new Map(chain.tools.map((tool) => [tool.name, tool]));
  const variables = new Map<string, string>();
  let counter = 0;
  const body = chain.calls.map((call) => {
    const tool = byName.get(call.tool);
    if (!tool) throw new Error(`call ${call.id} uses ${call.tool}, which is not among the tools`);
    return renderCall(call, tool, variables, () => `data${counter++}`);
  });
  const code = [
    ...chain.tools.map(renderStub).flatMap((stub) => [stub, '', '']),
    'def main():',
    ...(body.length ? body : ['    pass']),
    ...commentLines(chain.task.replace(/\s+/g, ' ').trim(), '    '),
    '',
    '',
    'if __name__ == "__main__":',
    '    main()',
  ].join('\n');
  if (!options.fenced) return `${code}\n`;
  return `${options.domain ? `Domain: ${options.domain}\n` : ''}\`\`\`python\n${code}\n\`\`\`\n`;
}
