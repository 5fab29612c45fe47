import { isRef, parseRef, type ArgValue, type Call, type Json, type Sample, type ToolSpec } from '../../core/records.ts';
import { pythonJson, pythonRepr } from '../../core/python-json.ts';
import { DEFAULT_INSTRUCTIONS, renderInstructions, type InstructionTemplates, type MtuSetting } from '../../prompts/mtu-instructions.ts';
import { readPythonLiteral } from '../../core/python-literal.ts';
import { assistantIndexes, categoryOf, turnCalls } from './sample.ts';

/**
 * MTU-Bench's own record shape: `{id, question, answer}`. `question` is the whole prompt — the
 * instructions of the setting, the tool document after "The following is a list of APIs …", the
 * history (multi-turn) and the current `User:` message; `answer` is `{Tool: {param: value}}` with
 * `"Tool.field"` for a value taken from an earlier call's result, and `{"": {}}` or `{}` (by setting)
 * when no call is due. Each setting is written as its released file writes it (see RENDERING).
 * `parseMtuRecord` reads both what this module writes and every variant of the released files.
 */

export const TOOL_LIST_MARKER = 'The following is a list of APIs and their parameters that you can use:';

export interface MtuParameterDoc {
  name: string;
  type?: Json;
  description?: string;
  format?: string;
  pattern?: string;
  enum?: Json[];
  default?: Json;
}

/** One entry of the tool document (the paper's Figure 9). */
export interface MtuToolDoc {
  name: string;
  description: string;
  required_parameters: MtuParameterDoc[];
  optional_parameters: MtuParameterDoc[];
  result_parameters: MtuParameterDoc[];
}

export interface MtuRecord {
  id: string;
  question: string;
  answer: Record<string, Json>;
}

// ---------------------------------------------------------------- writing

function parameterDoc(name: string, property: Record<string, unknown>): MtuParameterDoc {
  const doc: MtuParameterDoc = { name };
  for (const key of ['type', 'description', 'format', 'pattern', 'enum', 'default'] as const) {
    if (property[key] !== undefined && property[key] !== '') (doc as unknown as Record<string, unknown>)[key] = property[key];
  }
  return doc;
}

export function toMtuDoc(tool: ToolSpec): MtuToolDoc {
  const properties = tool.parameters.properties;
  const required = tool.parameters.required.filter((name) => name in properties);
  return {
    name: tool.name,
    description: tool.description,
    required_parameters: required.map((name) => parameterDoc(name, properties[name])),
    optional_parameters: Object.keys(properties)
      .filter((name) => !required.includes(name))
      .map((name) => parameterDoc(name, properties[name])),
    result_parameters: Object.entries(tool.returns.properties).map(([name, property]) => parameterDoc(name, property)),
  };
}

/** The tool document as toolkiln's own prompts show it: a compact JSON list of entries. */
export function renderToolList(tools: ToolSpec[]): string {
  return `[${tools.map(renderedDoc).join(',')}]`;
}

/**
 * Each tool's entry as JSON, made once per tool object: the prompts of every record show the
 * run's library tools (shared objects, never edited), so a tool is rendered once, not per record.
 */
const rendered = new WeakMap<ToolSpec, string>();

function renderedDoc(tool: ToolSpec): string {
  let text = rendered.get(tool);
  if (text === undefined) rendered.set(tool, (text = JSON.stringify(toMtuDoc(tool))));
  return text;
}

/** An argument as MTU writes it: a reference becomes `"Tool.field"` (the tool of the referenced call). */
function mtuValue(value: ArgValue, toolOfCall: Map<string, string>): Json {
  if (isRef(value)) {
    const { callId, field } = parseRef(value);
    return `${toolOfCall.get(callId) ?? callId}.${field}`;
  }
  if (Array.isArray(value)) return value.map((v) => mtuValue(v, toolOfCall));
  return value as Json;
}

/** A call's arguments in MTU notation (references as `"Tool.field"`). */
export function mtuArguments(call: Call, toolOfCall: Map<string, string>): Record<string, Json> {
  // Plain values only (most calls): the arguments read as they are (nothing edits them).
  if (!Object.values(call.arguments).some((value) => value !== null && typeof value === 'object')) return call.arguments as Record<string, Json>;
  return Object.fromEntries(Object.entries(call.arguments).map(([k, v]) => [k, mtuValue(v, toolOfCall)]));
}

export function mtuAnswer(calls: Call[], toolOfCall: Map<string, string>): Record<string, Json> {
  return Object.fromEntries(calls.map((call) => [call.tool, mtuArguments(call, toolOfCall)]));
}

/** Call id → tool name over a whole sample (to write references as `Tool.field`). */
export function toolsOfCalls(sample: Pick<Sample, 'dialogue' | 'expected'>): Map<string, string> {
  return new Map(assistantIndexes(sample).flatMap((i) => turnCalls(sample, i)).map((c) => [c.id, c.tool]));
}

/** A tool's entry as SGD-derived tools appear in the released files: parameter names, optional ones with their default. */
export function toSchemaStyleDoc(tool: ToolSpec): Record<string, Json> {
  const doc = toMtuDoc(tool);
  return {
    name: doc.name,
    description: doc.description,
    required_parameters: doc.required_parameters.map((p) => p.name),
    // SGD's "dontcare" (no preference) stands in for an optional parameter that documents no default.
    optional_parameters: Object.fromEntries(doc.optional_parameters.map((p) => [p.name, p.default ?? 'dontcare'])),
    result_parameters: doc.result_parameters.map((p) => p.name),
  };
}

/**
 * How each setting's released file writes its records. S-S and M-S print the tool list with
 * Python's `str()` on the line after the marker, every entry in the schema style; S-M and M-M
 * print it with `json.dumps` right after the marker, schema-derived tools in the schema style and
 * the others with parameter objects. M-S writes the history in ReAct lines (`function:` /
 * `Thought:` / `Action:` / `Action Input:` / `observation: :` / `assistant: :`), M-M as rounds of
 * `User:` / `Action: {answer}` / `Assistant:`. The OOD file writes each record in the shape of its
 * setting, but every list and value with `json.dumps`. A turn with no call is `{"": {}}` in S-S and M-S
 * and `{}` in S-M and M-M, an OOD record taking the form of its setting: MTU's cal_score.py scores
 * an OOD record by its setting's rules, which read the first key of every single-tool answer (the
 * released OOD file keys those by `""` too, its arguments as a JSON string the script cannot read).
 */
const RENDERING: Record<MtuSetting, { toolList: 'python' | 'json'; history: 'react' | 'rounds' | 'none'; noCall: Record<string, Json> }> = {
  'S-S': { toolList: 'python', history: 'none', noCall: { '': {} } },
  'S-M': { toolList: 'json', history: 'none', noCall: {} },
  'M-S': { toolList: 'python', history: 'react', noCall: { '': {} } },
  'M-M': { toolList: 'json', history: 'rounds', noCall: {} },
};

/** Schema-derived tools in the schema style, the others with parameter objects. */
const mixedDocs = (tools: ToolSpec[]): Json[] => tools.map((t) => (t.provenance?.schema === true ? toSchemaStyleDoc(t) : (toMtuDoc(t) as unknown as Json)));

function toolListText(tools: ToolSpec[], notation: 'python' | 'json', ood: boolean): string {
  // The released OOD file prints every tool list and history value with json.dumps.
  if (ood) return `${notation === 'python' ? '\n' : ''}${pythonJson(mixedDocs(tools))}`;
  if (notation === 'python') return `\n${pythonRepr(tools.map(toSchemaStyleDoc))}`;
  return pythonJson(mixedDocs(tools));
}

/** M-S history: ReAct lines; a turn without a call repeats the latest observation (empty before the first). */
function reactHistory(sample: Sample, upTo: number, toolOfCall: Map<string, string>, literal: (value: Json) => string): string[] {
  const lines: string[] = [];
  let latest: Json | undefined;
  sample.dialogue.slice(0, upTo).forEach((turn, i) => {
    if (turn.role === 'user') return void lines.push(`user: ${turn.content}`);
    lines.push('function: ');
    if (turn.thought) lines.push(`Thought: ${turn.thought}`);
    const calls = turnCalls(sample, i);
    for (const call of calls) {
      lines.push(`Action: ${call.tool} `, `Action Input: ${literal(mtuArguments(call, toolOfCall))}`);
      // An empty result reads as nothing observed (the released files never print an empty one).
      const observation = turn.observations?.[call.id];
      const empty = observation === undefined || observation === null || (typeof observation === 'object' && !Object.keys(observation).length);
      if (!empty) latest = observation;
      lines.push(empty ? 'observation: ' : `observation: : ${literal(observation)}`);
    }
    if (!calls.length) lines.push(latest === undefined ? 'observation: ' : `observation: : ${literal(latest)}`);
    lines.push(`assistant: : ${turn.response ?? turn.content}`);
  });
  return lines;
}

/** M-M history: per round the user's message, the round's answer as JSON and the reply, rounds apart by a blank line. */
function roundsHistory(sample: Sample, upTo: number, toolOfCall: Map<string, string>): string[] {
  const lines: string[] = [];
  sample.dialogue.slice(0, upTo).forEach((turn, i) => {
    if (turn.role === 'user') return void lines.push(`User:  ${turn.content}`);
    lines.push(`Action: ${pythonJson(mtuAnswer(turnCalls(sample, i), toolOfCall))}`, `Assistant:  ${turn.response ?? turn.content}`, '');
  });
  return lines;
}

/**
 * The MTU-Eval records of a sample: one per user turn answered by an assistant turn (a single-turn
 * sample gives one). `key` numbers the sample within its file: `S-S_12`, `M-S_12_3`, and
 * `OOD_12_0` for every OOD record (the released OOD file numbers all its records so).
 */
export function toMtuRecords(sample: Sample, key: number, today: string, instructions: InstructionTemplates = DEFAULT_INSTRUCTIONS): MtuRecord[] {
  // OOD samples too are written in the shape of their own setting.
  const setting = categoryOf(sample);
  const rendering = RENDERING[setting];
  const ood = sample.split === 'ood';
  const toolOfCall = toolsOfCalls(sample);
  const head = `\n${renderInstructions(instructions[setting], today)}\n${TOOL_LIST_MARKER}${toolListText(sample.tools, rendering.toolList, ood)}`;
  const literal = ood ? pythonJson : pythonRepr;
  const records: MtuRecord[] = [];
  let ordinal = 0;
  for (const a of assistantIndexes(sample)) {
    const u = a - 1;
    if (sample.dialogue[u]?.role !== 'user') continue;
    const message = sample.dialogue[u].content;
    const tail =
      rendering.history === 'react'
        ? ['History Dialog: ', ...reactHistory(sample, u, toolOfCall, literal), `User: ${message}`]
        : rendering.history === 'rounds'
          ? ['History Dialog: ', ...roundsHistory(sample, u, toolOfCall), `User:  ${message}`]
          : [`User: ${message}`];
    const calls = turnCalls(sample, a);
    records.push({
      id: ood ? `OOD_${key}_${ordinal}` : rendering.history === 'none' ? `${setting}_${key}` : `${setting}_${key}_${ordinal}`,
      question: [head, ...tail].join('\n'),
      answer: calls.length ? mtuAnswer(calls, toolOfCall) : rendering.noCall,
    });
    ordinal++;
  }
  return records;
}

// ---------------------------------------------------------------- reading

export interface ParsedHistoryTurn {
  role: 'user' | 'assistant';
  content: string;
  thought?: string;
  calls?: { tool: string; arguments: Record<string, Json> }[];
  observations?: Json[];
}

export interface ParsedMtuRecord {
  id: string;
  instructions: string;
  tools: MtuToolDoc[];
  history: ParsedHistoryTurn[];
  user: string;
  /** The gold calls in order; `references` lists the `"Tool.field"` values among their arguments. */
  calls: { tool: string; arguments: Record<string, Json>; references: { parameter: string; tool: string; field: string }[] }[];
}

function parameterList(value: Json | undefined): MtuParameterDoc[] {
  if (value === undefined || value === null) return [];
  if (Array.isArray(value)) {
    return value.map((p) => {
      if (typeof p === 'string') return { name: p };
      if (p && typeof p === 'object' && !Array.isArray(p) && typeof p.name === 'string') return p as unknown as MtuParameterDoc;
      throw new Error(`a parameter entry is neither a name nor {"name": …}: ${JSON.stringify(p)}`);
    });
  }
  // Compact form: {name: default}.
  if (typeof value === 'object') return Object.entries(value).map(([name, fallback]) => ({ name, default: fallback }));
  throw new Error(`a parameter list is ${JSON.stringify(value)}`);
}

function toolDocs(value: Json): MtuToolDoc[] {
  // One released variant wraps the list as {"apis": [...], "available_parameters": [...]}: the
  // parameters are shared, so every API lists them as optional.
  if (value && typeof value === 'object' && !Array.isArray(value) && Array.isArray(value.apis)) {
    const shared = parameterList(value.available_parameters);
    return toolDocs(value.apis).map((doc) => ({ ...doc, optional_parameters: doc.optional_parameters.length ? doc.optional_parameters : shared }));
  }
  const list = Array.isArray(value) ? value : [value];
  return list.flatMap((entry) => {
    if (!entry || typeof entry !== 'object' || Array.isArray(entry)) return []; // placeholder text such as ['api_descriptions']
    if (typeof entry.name !== 'string') throw new Error(`a tool entry has no "name": ${JSON.stringify(entry).slice(0, 120)}`);
    return [
      {
        name: entry.name,
        description: typeof entry.description === 'string' ? entry.description : '',
        required_parameters: parameterList(entry.required_parameters),
        optional_parameters: parameterList(entry.optional_parameters),
        result_parameters: parameterList(entry.result_parameters),
      },
    ];
  });
}

const LINE_MARKERS: [RegExp, string][] = [
  [/^(?:user|User):\s?/, 'user'],
  [/^function:\s?/, 'function'],
  [/^Thought:\s?/, 'thought'],
  [/^Action Input\s?:\s?/, 'input'],
  [/^Action:\s?/, 'action'],
  [/^(?:observation|Observation):\s?(?::\s?)?/, 'observation'],
  [/^(?:assistant|Assistant):\s?(?::\s?)?/, 'assistant'],
];

function literal(text: string): Json {
  const trimmed = text.trim();
  if (!trimmed) return {};
  try {
    return readPythonLiteral(trimmed, 0).value;
  } catch {
    return trimmed;
  }
}

function callsOfAnswerDict(value: Json): { tool: string; arguments: Record<string, Json> }[] {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return [];
  return Object.entries(value)
    .filter(([tool]) => tool !== '')
    .map(([tool, args]) => ({ tool, arguments: argumentsOf(args) }));
}

function argumentsOf(args: Json): Record<string, Json> {
  // Some released answers hold the arguments as a JSON string.
  const value = typeof args === 'string' ? literal(args) : args;
  return value && typeof value === 'object' && !Array.isArray(value) ? value : {};
}

/** The history part of a question: `user:` / `function:` blocks, or `User:` / `Action: {…}` / `Assistant:` lines. */
export function parseHistory(text: string): ParsedHistoryTurn[] {
  const turns: ParsedHistoryTurn[] = [];
  let field: { turn: ParsedHistoryTurn; key: 'content' | 'thought' } | undefined;
  const assistant = (): ParsedHistoryTurn => {
    const last = turns.at(-1);
    if (last?.role === 'assistant' && !last.content) return last;
    const turn: ParsedHistoryTurn = { role: 'assistant', content: '' };
    turns.push(turn);
    return turn;
  };
  for (const line of text.split('\n')) {
    const marker = LINE_MARKERS.find(([pattern]) => pattern.test(line));
    if (!marker) {
      if (field && line.trim()) field.turn[field.key] = `${field.turn[field.key] ?? ''}\n${line}`.trim();
      continue;
    }
    const rest = line.replace(marker[0], '');
    switch (marker[1]) {
      case 'user': {
        const turn: ParsedHistoryTurn = { role: 'user', content: rest.trim() };
        turns.push(turn);
        field = { turn, key: 'content' };
        break;
      }
      case 'function':
        field = undefined;
        assistant();
        break;
      case 'thought': {
        const turn = assistant();
        turn.thought = rest.trim();
        field = { turn, key: 'thought' };
        break;
      }
      case 'action': {
        const turn = assistant();
        const value = rest.trim();
        if (value.startsWith('{')) (turn.calls ??= []).push(...callsOfAnswerDict(literal(value)));
        else if (value) (turn.calls ??= []).push({ tool: value, arguments: {} });
        field = undefined;
        break;
      }
      case 'input': {
        const turn = assistant();
        const call = turn.calls?.at(-1);
        if (call) call.arguments = argumentsOf(literal(rest));
        field = undefined;
        break;
      }
      case 'observation':
        // An empty `observation: ` line stands for "nothing observed yet".
        if (rest.trim()) (assistant().observations ??= []).push(literal(rest));
        else assistant();
        field = undefined;
        break;
      case 'assistant': {
        const turn = assistant();
        turn.content = rest.trim();
        field = { turn, key: 'content' };
        break;
      }
    }
  }
  return turns;
}

/**
 * Tool lists already read, by the text of their literal: the records of one dialogue (and many
 * others) show the same list, read once. The caller keeps one per file (a few dozen lists) and
 * reads each record's `tools` as shared, never edited.
 */
export type ToolListMemo = Map<string, MtuToolDoc[]>;

/**
 * The tool list of a question from `start`, and where it ends. A list or dict literal ends at its
 * closing bracket, whatever follows it, so a text read before is the same list again: the text up
 * to the end of its line (a released list is one line) is looked up first.
 */
function readToolList(id: string, question: string, start: number, memo: ToolListMemo | undefined): { tools: MtuToolDoc[]; end: number } {
  if (memo) {
    const lineEnd = question.indexOf('\n', start);
    const line = question.slice(start, lineEnd === -1 ? question.length : lineEnd).trimEnd();
    const known = memo.get(line);
    if (known) return { tools: known, end: start + line.length };
  }
  let parsed: { value: Json; end: number };
  try {
    parsed = readPythonLiteral(question, start);
  } catch (error) {
    throw new Error(`${id}: the tool list is not a JSON / Python literal: ${(error as Error).message}`);
  }
  const tools = toolDocs(parsed.value);
  const opens = question[start];
  if (memo && (opens === '[' || opens === '{')) memo.set(question.slice(start, parsed.end), tools);
  return { tools, end: parsed.end };
}

/** Reads one MTU-Eval record (released or exported); throws naming what does not fit. */
export function parseMtuRecord(record: { id: string; question: string; answer: unknown }): ParsedMtuRecord {
  return parseMtuRecordWith(record, undefined);
}

/** `parseMtuRecord` reading each tool list once among the records it reads (see {@link ToolListMemo}). */
export function mtuRecordReader(toolLists: ToolListMemo): (record: { id: string; question: string; answer: unknown }) => ParsedMtuRecord {
  return (record) => parseMtuRecordWith(record, toolLists);
}

function parseMtuRecordWith(record: { id: string; question: string; answer: unknown }, toolLists: ToolListMemo | undefined): ParsedMtuRecord {
  const { id, question } = record;
  const at = question.indexOf(TOOL_LIST_MARKER);
  if (at === -1) throw new Error(`${id}: the question has no tool list ("${TOOL_LIST_MARKER}")`);
  const listStart = at + TOOL_LIST_MARKER.length;
  const start = listStart + (question.slice(listStart).length - question.slice(listStart).trimStart().length);
  const { tools, end } = readToolList(id, question, start, toolLists);
  const rest = question.slice(end);
  const last = rest.lastIndexOf('\nUser:');
  if (last === -1) throw new Error(`${id}: the question has no "User:" line after the tool list`);
  const user = rest.slice(last + '\nUser:'.length).trim();
  const history = parseHistory(rest.slice(0, last).replace(/^\s*History Dialog:\s*/, ''));

  const answer = (typeof record.answer === 'string' ? literal(record.answer) : record.answer) as Json;
  const calls = callsOfAnswerDict(answer);
  const known = new Set([...tools.map((t) => t.name), ...calls.map((c) => c.tool)]);
  return {
    id,
    instructions: question.slice(0, at).trim(),
    tools,
    history,
    user,
    calls: calls.map((call) => ({
      ...call,
      references: Object.entries(call.arguments).flatMap(([parameter, value]) => {
        const match = typeof value === 'string' ? /^([A-Za-z_][\w-]*)\.(\w+)$/.exec(value) : null;
        return match && known.has(match[1]) ? [{ parameter, tool: match[1], field: match[2] }] : [];
      }),
    })),
  };
}
