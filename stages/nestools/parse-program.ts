import type { SyntaxNode } from '@lezer/common';
import { parser } from '@lezer/python';
import type { Json } from '../../core/records.ts';
import { parseDocstring, type ParsedDocstring } from '../../prompts/nestools-docstring.ts';
import { decodePythonNumber, decodePythonString } from '../../prompts/nestools-python-values.ts';

/**
 * Reads a generated NesTools program (Python stubs with docstrings and a `main()` of tuple-unpacking
 * calls ending in a `# task` comment) by walking the syntax tree `@lezer/python` builds. Nothing here
 * judges the program; `check-program.ts` does, from what this module records.
 */

/** An argument expression as far as the chain cares about it. */
export type ArgExpr =
  | { kind: 'literal'; value: Json }
  | { kind: 'variable'; name: string; line: number }
  /** A list / tuple / set literal that holds variables among literals. */
  | { kind: 'list'; items: ArgExpr[] }
  /** A dict literal that holds variables among its values. */
  | { kind: 'dict'; entries: [string, ArgExpr][] }
  /** A call inside an argument: `len(x)`, `g(x)`. */
  | { kind: 'call'; callee: string; text: string; line: number }
  /** `x[0]`, `x.y`. */
  | { kind: 'access'; text: string; line: number }
  | { kind: 'unsupported'; what: string; text: string; line: number };

export interface StubParam {
  name: string;
  /** Annotation text, e.g. `str`, `List[int]`. */
  annotation?: string;
  hasDefault: boolean;
  /** The default's value when it is a literal other than None. */
  default?: Json;
  keywordOnly: boolean;
}

export interface FunctionStub {
  name: string;
  line: number;
  params: StubParam[];
  /** `*args` / `**kwargs` in the signature (a tool schema cannot express them). */
  variadic: string[];
  returnAnnotation?: string;
  docstring?: ParsedDocstring;
}

export type Callee = { kind: 'name'; name: string } | { kind: 'access'; text: string } | { kind: 'other'; text: string };

export interface CallStatement {
  kind: 'call';
  line: number;
  text: string;
  /** Unpack targets; empty for a bare call statement. */
  targets: string[];
  /** What is wrong with the targets, when something is (`x[0] = f()`, `a, *b = f()`). */
  targetProblem?: { code: 'subscript_or_attribute' | 'unsupported_syntax'; text: string };
  callee: Callee;
  positional: ArgExpr[];
  keywords: { name: string; value: ArgExpr }[];
  /** `*xs` / `**kw` / a generator in the argument list. */
  unsupportedArgs: string[];
}

/** A statement in main() that is not a call the chain can hold (loops, arithmetic, prints of …). */
export interface OtherStatement {
  kind: 'other';
  line: number;
  text: string;
  what: string;
  /** A call found inside it (so `print(x)` reads as a builtin call). */
  callee?: Callee;
}

export interface MainFunction {
  line: number;
  statements: (CallStatement | OtherStatement)[];
  /** Line of main's last statement (the task comment follows it). */
  lastLine: number;
}

export interface ParsedProgram {
  /** The Python text that was parsed (the code block of an LLM answer). */
  code: string;
  /** Line of the answer where `code` starts (1-based); line numbers below count in the answer. */
  firstLine: number;
  syntaxErrors: { line: number; message: string }[];
  functions: FunctionStub[];
  main?: MainFunction;
  /** The natural-language task: the comment lines after main's calls. */
  task: string;
  /** Top-level code that is neither a stub, main, an import nor the `__main__` guard. */
  extras: { line: number; text: string }[];
}

// ---------------------------------------------------------------- code block extraction

const CODE_START = ['def ', 'async def ', 'import ', 'from ', '@', 'class '];

/**
 * The Python part of an LLM answer: the fenced block holding `def main` (else the first python
 * block, else the first block); without fences, from the first line that starts code to the end.
 */
export function extractCode(answer: string): { code: string; firstLine: number } {
  const lines = answer.replace(/\r\n?/g, '\n').split('\n');
  const blocks: { info: string; start: number; end: number }[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = lines[i].trim();
    if (!fence.startsWith('```')) continue;
    let end = i + 1;
    while (end < lines.length && !lines[end].trim().startsWith('```')) end++;
    blocks.push({ info: fence.slice(3).trim().toLowerCase(), start: i + 1, end });
    i = end;
  }
  const text = (b: { start: number; end: number }) => lines.slice(b.start, b.end).join('\n');
  if (blocks.length) {
    const python = blocks.filter((b) => b.info === 'python' || b.info === 'py' || b.info === 'python3');
    const withMain = [...python, ...blocks].find((b) => lines.slice(b.start, b.end).some((line) => line.trimStart().startsWith('def main')));
    const chosen = withMain ?? python[0] ?? blocks[0];
    return { code: text(chosen), firstLine: chosen.start + 1 };
  }
  const start = lines.findIndex((line) => CODE_START.some((prefix) => line.startsWith(prefix)));
  const from = start === -1 ? 0 : start;
  return { code: lines.slice(from).join('\n'), firstLine: from + 1 };
}

// ---------------------------------------------------------------- tree helpers

const PUNCTUATION = new Set(['(', ')', '[', ']', '{', '}', ',', ':', ';', 'Comment']);

class Source {
  private readonly lineStarts: number[] = [0];

  constructor(readonly text: string, private readonly lineOffset: number) {
    for (let i = 0; i < text.length; i++) if (text[i] === '\n') this.lineStarts.push(i + 1);
  }

  of(node: SyntaxNode): string {
    return this.text.slice(node.from, node.to);
  }

  /** 1-based line in the answer of a position in the code. */
  line(pos: number): number {
    let lo = 0;
    let hi = this.lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.lineStarts[mid] <= pos) lo = mid;
      else hi = mid - 1;
    }
    return lo + this.lineOffset;
  }

  short(node: SyntaxNode): string {
    const text = this.of(node).replace(/\s+/g, ' ').trim();
    return text.length > 60 ? `${text.slice(0, 57)}...` : text;
  }
}

/** Child nodes, comments and punctuation left out. */
function children(node: SyntaxNode): SyntaxNode[] {
  const out: SyntaxNode[] = [];
  for (let child = node.firstChild; child; child = child.nextSibling) if (!PUNCTUATION.has(child.name)) out.push(child);
  return out;
}

// ---------------------------------------------------------------- expressions

function readExpr(node: SyntaxNode, src: Source): ArgExpr {
  const line = src.line(node.from);
  const unsupported = (what: string): ArgExpr => ({ kind: 'unsupported', what, text: src.short(node), line });
  switch (node.name) {
    case 'String': {
      const value = decodePythonString(src.of(node));
      return value === undefined ? unsupported('a bytes literal') : { kind: 'literal', value };
    }
    case 'FormatString': {
      if (node.getChild('FormatReplacement')) return unsupported('an f-string with a value inside');
      // Without replacement fields an f-string is a plain string whose doubled braces stand for one.
      const value = decodePythonString(src.of(node));
      return value === undefined ? unsupported('a bytes literal') : { kind: 'literal', value: value.split('{{').join('{').split('}}').join('}') };
    }
    case 'ContinuedString': {
      let value = '';
      for (const part of children(node)) {
        const piece = readExpr(part, src);
        if (piece.kind !== 'literal' || typeof piece.value !== 'string') return unsupported('a string joined with a non-literal');
        value += piece.value;
      }
      return { kind: 'literal', value };
    }
    case 'Number': {
      const value = decodePythonNumber(src.of(node));
      return value === undefined ? unsupported('a complex number') : { kind: 'literal', value };
    }
    case 'Boolean':
      return { kind: 'literal', value: src.of(node) === 'True' };
    case 'None':
      return { kind: 'literal', value: null };
    case 'UnaryExpression': {
      const [op, operand] = children(node);
      const sign = op ? src.of(op) : '';
      if ((sign === '-' || sign === '+') && operand) {
        const inner = readExpr(operand, src);
        if (inner.kind === 'literal' && typeof inner.value === 'number') return { kind: 'literal', value: sign === '-' ? -inner.value : inner.value };
      }
      return unsupported(`the expression ${src.short(node)}`);
    }
    case 'ParenthesizedExpression': {
      const inner = children(node);
      return inner.length === 1 ? readExpr(inner[0], src) : unsupported(`the expression ${src.short(node)}`);
    }
    case 'ArrayExpression':
    case 'TupleExpression':
    case 'SetExpression':
      return readList(node, src);
    case 'DictionaryExpression':
      return readDict(node, src);
    case 'VariableName':
      return { kind: 'variable', name: src.of(node), line };
    case 'MemberExpression':
      return { kind: 'access', text: src.short(node), line };
    case 'CallExpression': {
      const callee = node.firstChild!;
      return { kind: 'call', callee: callee.name === 'VariableName' ? src.of(callee) : src.short(callee), text: src.short(node), line };
    }
    default:
      return unsupported(describeNode(node, src));
  }
}

function describeNode(node: SyntaxNode, src: Source): string {
  const kind = node.name.replace(/(Expression|Statement)$/, '').replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
  return `${kind} ${src.short(node)}`.trim();
}

function readList(node: SyntaxNode, src: Source): ArgExpr {
  const parts = children(node);
  if (parts.some((part) => part.name === 'for')) return { kind: 'unsupported', what: 'a comprehension', text: src.short(node), line: src.line(node.from) };
  const items = parts.map((part) => readExpr(part, src));
  if (items.every((item) => item.kind === 'literal')) return { kind: 'literal', value: items.map((item) => (item as { value: Json }).value) };
  return { kind: 'list', items };
}

function readDict(node: SyntaxNode, src: Source): ArgExpr {
  const line = src.line(node.from);
  const parts = children(node);
  if (parts.some((part) => part.name === 'for' || part.name === '**')) return { kind: 'unsupported', what: 'a dict comprehension or unpacking', text: src.short(node), line };
  const entries: [string, ArgExpr][] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const key = readExpr(parts[i], src);
    if (key.kind !== 'literal') return { kind: 'unsupported', what: `a dict key that is not a literal (${src.short(parts[i])})`, text: src.short(node), line };
    entries.push([typeof key.value === 'string' ? key.value : JSON.stringify(key.value), readExpr(parts[i + 1], src)]);
  }
  if (entries.every(([, value]) => value.kind === 'literal')) {
    return { kind: 'literal', value: Object.fromEntries(entries.map(([key, value]) => [key, (value as { value: Json }).value])) };
  }
  return { kind: 'dict', entries };
}

// ---------------------------------------------------------------- functions

function readParams(list: SyntaxNode, src: Source): { params: StubParam[]; variadic: string[] } {
  const params: StubParam[] = [];
  const variadic: string[] = [];
  let keywordOnly = false;
  let star: '*' | '**' | undefined;
  const nodes = children(list);
  for (let i = 0; i < nodes.length; i++) {
    const node = nodes[i];
    if (node.name === '*' || node.name === '**') {
      // A bare `*` (followed by a comma) only makes the parameters after it keyword-only.
      star = node.nextSibling?.name === 'VariableName' ? node.name : undefined;
      keywordOnly = true;
      continue;
    }
    if (node.name !== 'VariableName') continue;
    const name = src.of(node);
    if (star) {
      variadic.push(`${star}${name}`);
      star = undefined;
      continue;
    }
    const param: StubParam = { name, hasDefault: false, keywordOnly };
    if (nodes[i + 1]?.name === 'TypeDef') param.annotation = annotationText(nodes[++i], src);
    if (nodes[i + 1]?.name === 'AssignOp' && nodes[i + 2]) {
      param.hasDefault = true;
      const value = readExpr(nodes[i + 2], src);
      if (value.kind === 'literal' && value.value !== null) param.default = value.value;
      i += 2;
    }
    params.push(param);
  }
  return { params, variadic };
}

function annotationText(typeDef: SyntaxNode, src: Source): string {
  const inner = children(typeDef);
  if (!inner.length) return '';
  return src.text.slice(inner[0].from, inner[inner.length - 1].to).trim();
}

function docstringOf(body: SyntaxNode | null, src: Source): ParsedDocstring | undefined {
  const first = body ? children(body)[0] : undefined;
  if (first?.name !== 'ExpressionStatement') return undefined;
  const value = readExpr(children(first)[0], src);
  return value.kind === 'literal' && typeof value.value === 'string' ? parseDocstring(value.value) : undefined;
}

function readFunction(node: SyntaxNode, src: Source): FunctionStub {
  const name = node.getChild('VariableName');
  const paramList = node.getChild('ParamList');
  const { params, variadic } = paramList ? readParams(paramList, src) : { params: [], variadic: [] };
  const returns = node.getChildren('TypeDef').find((typeDef) => typeDef.from > (paramList?.to ?? node.from));
  return {
    name: name ? src.of(name) : '',
    line: src.line(node.from),
    params,
    variadic,
    returnAnnotation: returns ? annotationText(returns, src) : undefined,
    docstring: docstringOf(node.getChild('Body'), src),
  };
}

// ---------------------------------------------------------------- main()

function readTargets(nodes: SyntaxNode[], src: Source): Pick<CallStatement, 'targets' | 'targetProblem'> {
  const targets: string[] = [];
  for (const node of nodes) {
    if (node.name === 'VariableName') targets.push(src.of(node));
    else if (node.name === 'TupleExpression' || node.name === 'ArrayExpression' || node.name === 'ParenthesizedExpression') {
      const inner = readTargets(children(node), src);
      if (inner.targetProblem) return inner;
      targets.push(...inner.targets);
    } else if (node.name === 'MemberExpression') return { targets, targetProblem: { code: 'subscript_or_attribute', text: src.short(node) } };
    else if (node.name === 'TypeDef') continue;
    else return { targets, targetProblem: { code: 'unsupported_syntax', text: src.short(node) } };
  }
  return { targets };
}

function calleeOf(node: SyntaxNode, src: Source): Callee {
  if (node.name === 'VariableName') return { kind: 'name', name: src.of(node) };
  if (node.name === 'MemberExpression') return { kind: 'access', text: src.short(node) };
  return { kind: 'other', text: src.short(node) };
}

function readCall(statement: SyntaxNode, call: SyntaxNode, targetNodes: SyntaxNode[], src: Source): CallStatement {
  const parts = children(call);
  const out: CallStatement = {
    kind: 'call',
    line: src.line(statement.from),
    text: src.short(statement),
    ...readTargets(targetNodes, src),
    callee: calleeOf(parts[0], src),
    positional: [],
    keywords: [],
    unsupportedArgs: [],
  };
  const args = call.getChild('ArgList');
  const nodes = args ? children(args) : [];
  for (let i = 0; i < nodes.length; i++) {
    const node = nodes[i];
    if (node.name === '*' || node.name === '**') {
      out.unsupportedArgs.push(`${node.name}${nodes[i + 1] ? src.of(nodes[++i]) : ''}`);
    } else if (node.name === 'for' || node.name === 'in' || node.name === 'if') {
      out.unsupportedArgs.push('a generator expression');
      break;
    } else if (node.name === 'VariableName' && nodes[i + 1]?.name === 'AssignOp' && nodes[i + 2]) {
      out.keywords.push({ name: src.of(node), value: readExpr(nodes[i + 2], src) });
      i += 2;
    } else {
      // Python refuses this outright; record it so the check can say so.
      if (out.keywords.length) out.unsupportedArgs.push(`the positional argument ${src.short(node)} after a keyword argument`);
      out.positional.push(readExpr(node, src));
    }
  }
  return out;
}

/** Flattens `a = f(x); b = g(a)` groups into single statements. */
function statementsOf(body: SyntaxNode): SyntaxNode[] {
  return children(body).flatMap((node) => (node.name === 'StatementGroup' ? children(node) : [node]));
}

function readMainStatement(node: SyntaxNode, src: Source): CallStatement | OtherStatement | undefined {
  const parts = children(node);
  const other = (what: string): OtherStatement => {
    const inner = firstCall(node);
    return { kind: 'other', line: src.line(node.from), text: src.short(node), what, callee: inner ? calleeOf(inner.firstChild!, src) : undefined };
  };
  switch (node.name) {
    case 'PassStatement':
      return undefined;
    case 'ExpressionStatement': {
      const expr = parts[0];
      if (!expr || expr.name === 'String' || expr.name === 'Ellipsis' || expr.name === 'ContinuedString') return undefined;
      if (expr.name === 'CallExpression') return readCall(node, expr, [], src);
      return other(`the expression ${src.short(expr)}`);
    }
    case 'AssignStatement': {
      const ops = parts.filter((part) => part.name === 'AssignOp');
      const value = parts[parts.length - 1];
      if (ops.length !== 1) return other('a chained assignment');
      if (value?.name !== 'CallExpression') return other(`an assignment of ${src.short(value ?? node)} (only function calls belong in main)`);
      return readCall(node, value, parts.slice(0, parts.indexOf(ops[0])), src);
    }
    case 'ReturnStatement':
      // `return data3` at the end of main changes nothing in the chain.
      return parts.every((part) => part.name === 'return' || part.name === 'VariableName') ? undefined : other('a return of an expression');
    default:
      return other(describeNode(node, src));
  }
}

function firstCall(node: SyntaxNode): SyntaxNode | undefined {
  const cursor = node.cursor();
  do {
    if (cursor.name === 'CallExpression') return cursor.node;
  } while (cursor.next() && cursor.from < node.to);
  return undefined;
}

// ---------------------------------------------------------------- the program

function isMainGuard(node: SyntaxNode, src: Source): boolean {
  if (node.name !== 'IfStatement') return false;
  const condition = children(node)[1];
  return !!condition && src.of(condition).replace(/\s+/g, '').replace(/'/g, '"') === '__name__=="__main__"';
}

function commentText(text: string): string {
  return text.replace(/^#+\s?/, '').trim();
}

/** Joins the task comment lines; a leading `Task:` label is dropped. */
function taskOf(lines: string[]): string {
  return lines
    .map(commentText)
    .filter(Boolean)
    .join(' ')
    .replace(/^task\s*:\s*/i, '')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Parses the Python text of one program (already cut out of its answer). */
export function parseProgramCode(code: string, firstLine = 1): ParsedProgram {
  const src = new Source(code, firstLine);
  const tree = parser.parse(code);
  const program: ParsedProgram = { code, firstLine, syntaxErrors: [], functions: [], task: '', extras: [] };
  const comments: { from: number; text: string }[] = [];
  tree.iterate({
    enter(node) {
      if (node.type.isError) {
        const around = code.slice(node.from, Math.max(node.to, node.from + 1)).split('\n')[0].trim();
        program.syntaxErrors.push({ line: src.line(node.from), message: around ? `cannot parse "${around.slice(0, 40)}"` : 'the code ends or breaks off unexpectedly' });
      }
      if (node.name === 'Comment') comments.push({ from: node.from, text: code.slice(node.from, node.to) });
    },
  });

  const top = children(tree.topNode);
  let mainNode: SyntaxNode | undefined;
  let afterMain = code.length;
  for (let i = 0; i < top.length; i++) {
    const node = top[i];
    const fn = node.name === 'DecoratedStatement' ? node.getChild('FunctionDefinition') : node.name === 'FunctionDefinition' ? node : null;
    if (fn) {
      const stub = readFunction(fn, src);
      if (stub.name === 'main') {
        mainNode = fn;
        afterMain = top[i + 1]?.from ?? code.length;
      } else program.functions.push(stub);
    } else if (node.name === 'ImportStatement' || isMainGuard(node, src)) {
      continue;
    } else {
      program.extras.push({ line: src.line(node.from), text: src.short(node) });
    }
  }

  if (mainNode) {
    const body = mainNode.getChild('Body');
    const nodes = body ? statementsOf(body) : [];
    const statements = nodes.map((node) => readMainStatement(node, src)).filter((s): s is CallStatement | OtherStatement => !!s);
    const lastEnd = nodes.length ? nodes[nodes.length - 1].to : mainNode.from;
    program.main = { line: src.line(mainNode.from), statements, lastLine: src.line(lastEnd) };
    const inMain = comments.filter((c) => c.from > mainNode!.from && c.from < afterMain);
    const trailing = inMain.filter((c) => c.from >= lastEnd);
    program.task = taskOf((trailing.length ? trailing : inMain).map((c) => c.text));
  }
  return program;
}

/** Cuts the code out of an LLM answer (or a .py file) and parses it. */
export function parseProgram(answer: string): ParsedProgram {
  const { code, firstLine } = extractCode(answer);
  return parseProgramCode(code, firstLine);
}
