import { UserError } from './errors.ts';
import { JsonTexts } from './json-texts.ts';
import { lineString, type LineText } from './jsonl.ts';
import type { Call, Rejection, Sample, ToolSpec, Turn } from './records.ts';

/**
 * The line form: how a Sample, a ToolSpec and a Rejection are written as one line of a published
 * file (and of the canonical and hf exports), so that every line of a file has one shape and a
 * columnar reader (Arrow, Hugging Face `datasets`, pandas) infers one schema for the whole file:
 *
 * - every key is present in every line, and no value is ever null: `datasets` reads a JSONL file
 *   in blocks and keeps the first block's types, so a key that is null through a whole first block
 *   and typed later does not load ("Couldn't cast array of type bool to null"). An absent optional
 *   text is written as `""` (an empty optional text and an absent one are the same here, and read
 *   back as absent), an absent JSON value as the JSON text `null`, and the tri-state `isAction` as
 *   `"yes"`, `"no"` or `"unknown"`;
 * - a value whose shape varies from record to record (a tool's JSON Schemas and provenance, a
 *   turn's calls and observations, `expected`, `meta`, a reject's record) is carried as its JSON
 *   text, as OpenAI carries `function.arguments`.
 *
 * Everything else keeps its JSON type. Apart from empty optional texts the codec is lossless:
 * `sampleFromLine(sampleToLine(s))` equals `s`. Only the store and the exporters that write
 * canonical files use it; the rest of the code works on `Sample` objects.
 */

/**
 * The line form a version's manifest records (`lineForm`); a version without it holds plain JSON
 * records. Form 2 wrote absent values as null (and `calls` as a list); both still read.
 */
export const LINE_FORM = 3;

/** A tool's `isAction` in the line form: whether calling it changes state, `unknown` when its source does not say. */
export type ActionLine = 'yes' | 'no' | 'unknown';

export interface ToolLine {
  name: string;
  description: string;
  /** JSON text of the parameters' JSON-Schema object. */
  parameters: string;
  /** JSON text of the returns' JSON-Schema object. */
  returns: string;
  /** `""` when the tool has none. */
  domain: string;
  /** `""` when the tool has none. */
  plugin: string;
  isAction: ActionLine;
  /** JSON text of the provenance object (`null` when there is none). */
  provenance: string;
}

export interface TurnLine {
  role: 'user' | 'assistant';
  content: string;
  /** `""` when the turn has none. */
  thought: string;
  /** JSON text of the calls, each `{id, tool, arguments}` (arguments hold literals and `$ref`s); `null` when the turn has none. */
  calls: string;
  /** JSON text of the results per call id (`null` when there are none). */
  observations: string;
  /** `""` when the turn has none. */
  response: string;
}

export interface SampleLineForm {
  id: string;
  benchmark: string;
  category: string;
  split: string;
  tools: ToolLine[];
  dialogue: TurnLine[];
  /** JSON text of the gold answer (`calls`, `turns`, `labels`, …). */
  expected: string;
  /** JSON text of the sample's meta (source, lineage, checks, tags, review, …). */
  meta: string;
}

export interface RejectionLine {
  stage: string;
  reason: string;
  /** `""` when there is none. */
  detail: string;
  /** `""` when the rejected record has no id. */
  recordId: string;
  /** `""` unless this is a de-duplication reject. */
  duplicateOf: string;
  /** JSON text of the rejected record (`null` when there was none). */
  record: string;
}

const EMPTY_OBJECT_SCHEMA = { type: 'object', properties: {}, required: [] };

const json = (value: unknown): string => JSON.stringify(value);
/** JSON text of an optional value: the JSON text `null` when it is absent. */
const jsonOrNullText = (value: unknown): string => (value === undefined ? 'null' : JSON.stringify(value));
const textOrEmpty = (value: string | undefined): string => value ?? '';
const actionLine = (isAction: boolean | undefined): ActionLine => (isAction === undefined ? 'unknown' : isAction ? 'yes' : 'no');

// ---------------------------------------------------------------- encode

export function toolToLine(tool: ToolSpec): ToolLine {
  return {
    name: tool.name,
    description: tool.description ?? '',
    parameters: json(tool.parameters ?? EMPTY_OBJECT_SCHEMA),
    returns: json(tool.returns ?? EMPTY_OBJECT_SCHEMA),
    domain: textOrEmpty(tool.domain),
    plugin: textOrEmpty(tool.plugin),
    isAction: actionLine(tool.isAction),
    provenance: jsonOrNullText(tool.provenance),
  };
}

function turnToLine(turn: Turn): TurnLine {
  return {
    role: turn.role,
    content: turn.content,
    thought: textOrEmpty(turn.thought),
    calls: jsonOrNullText(turn.calls?.map((call) => ({ id: call.id, tool: call.tool, arguments: call.arguments ?? {} }))),
    observations: jsonOrNullText(turn.observations),
    response: textOrEmpty(turn.response),
  };
}

export function sampleToLine(sample: Sample): SampleLineForm {
  return {
    id: sample.id,
    benchmark: sample.benchmark,
    category: sample.category,
    split: sample.split,
    tools: sample.tools.map(toolToLine),
    dialogue: sample.dialogue.map(turnToLine),
    expected: json(sample.expected ?? {}),
    meta: json(sample.meta ?? {}),
  };
}

export function rejectionToLine(rejection: Rejection): RejectionLine {
  return {
    stage: rejection.stage,
    reason: rejection.reason,
    detail: textOrEmpty(rejection.detail),
    recordId: textOrEmpty(rejection.recordId),
    duplicateOf: textOrEmpty(rejection.duplicateOf),
    record: jsonOrNullText(rejection.record),
  };
}

/**
 * Samples' line-form text, `JSON.stringify(sampleToLine(sample))` byte for byte, with what samples
 * share made once: a tool's line by the tool object (the samples of a version offer tools of one
 * library: the MTU recipe's 10,000 samples offer 42), `meta` and `expected` through the run's
 * record texts (the last stage made their text when it wrote the sample). Given as parts (a
 * LineText): the tools' lines are written where they go, not copied into one string first.
 */
export class SampleLineTexts {
  private readonly tools = new WeakMap<object, string>();

  constructor(private readonly parts: JsonTexts = new JsonTexts()) {}

  text(sample: Sample): LineText {
    const { id, benchmark, category, split, tools, dialogue } = sample;
    if (typeof id !== 'string' || typeof benchmark !== 'string' || typeof category !== 'string' || typeof split !== 'string' || !Array.isArray(tools) || !Array.isArray(dialogue)) return JSON.stringify(sampleToLine(sample));
    const line = [`{"id":${JSON.stringify(id)},"benchmark":${JSON.stringify(benchmark)},"category":${JSON.stringify(category)},"split":${JSON.stringify(split)},"tools":[`];
    for (let i = 0; i < tools.length; i++) {
      if (i) line.push(',');
      line.push(this.toolText(tools[i]));
    }
    line.push('],"dialogue":', JSON.stringify(dialogue.map(turnToLine)), ',"expected":', jsonTextOf(this.parts.line(sample.expected ?? {})), ',"meta":', jsonTextOf(this.parts.line(sample.meta ?? {})), '}');
    return line;
  }

  private toolText(tool: ToolSpec): string {
    if (typeof tool !== 'object' || tool === null) return JSON.stringify(toolToLine(tool));
    let text = this.tools.get(tool);
    if (text === undefined) this.tools.set(tool, (text = JSON.stringify(toolToLine(tool))));
    return text;
  }
}

/** A JSON text as a JSON string (the line form's JSON-text fields). */
const jsonTextOf = (text: LineText): string => JSON.stringify(lineString(text));

/** A sample line of plain JSON (as a stage wrote it) in the line form, as text: one parse and one stringify, no validation. */
export function sampleTextToLineText(text: string): string {
  return JSON.stringify(sampleToLine(JSON.parse(text) as Sample));
}

// ---------------------------------------------------------------- decode

/** Where a line was read from, for errors: `path:line`. */
export type LineWhere = string;

/** Reads the fields of one line-form record, of form 3 or of form 2 (where absent values were null). */
class LineReader {
  constructor(
    private readonly record: Record<string, unknown>,
    private readonly where: LineWhere,
    private readonly path: string,
  ) {}

  private fail(key: string, what: string): never {
    throw new UserError(`${this.where}: "${this.path}${key}" ${what}; this is not a toolkiln line-form record: restore the file from a copy or publish the version again`);
  }

  /** A JSON-text field, parsed (undefined when it is null or, if `optional`, the JSON text null); with `shared`, a text seen before gives the value it gave then. */
  parsed(key: string, optional = false, shared?: SharedDecodes): unknown {
    const value = this.record[key];
    if (value === null && optional) return undefined;
    if (typeof value !== 'string') this.fail(key, `should be JSON text, found ${value === null ? 'null' : typeof value}`);
    let parsed: unknown = shared?.get(value);
    if (parsed === undefined) {
      try {
        parsed = JSON.parse(value);
      } catch (error) {
        this.fail(key, `is not valid JSON text (${(error as Error).message})`);
      }
      shared?.set(value, parsed);
    }
    return parsed === null && optional ? undefined : parsed;
  }

  /** A plain field, kept as it is (undefined when null). */
  plain(key: string): any {
    const value = this.record[key];
    return value === null ? undefined : value;
  }

  /** An optional text: undefined when it is empty (or null, form 2). */
  text(key: string): string | undefined {
    const value = this.record[key];
    if (value === null || value === '') return undefined;
    if (typeof value !== 'string') this.fail(key, `should be text, found ${typeof value}`);
    return value;
  }

  /** The tri-state `isAction`: "yes" / "no" / "unknown" (true / false / null in form 2). */
  action(key: string): boolean | undefined {
    const value = this.record[key];
    if (value === 'yes' || value === true) return true;
    if (value === 'no' || value === false) return false;
    if (value === 'unknown' || value === null) return undefined;
    this.fail(key, `should be "yes", "no" or "unknown", found ${JSON.stringify(value)}`);
  }

  list(key: string, optional = false): Record<string, unknown>[] | undefined {
    const value = this.record[key];
    if (value === null && optional) return undefined;
    if (!Array.isArray(value)) this.fail(key, 'should be a list');
    return value as Record<string, unknown>[];
  }

  /** A turn's calls: JSON text of the list (form 3) or a list whose arguments are JSON text (form 2). */
  calls(key: string): Call[] | undefined {
    const value = this.record[key];
    const form2 = Array.isArray(value) || value === null;
    const calls = form2 ? this.list(key, true) : this.parsed(key, true);
    if (calls === undefined) return undefined;
    if (!Array.isArray(calls)) this.fail(key, 'should be the JSON text of a list of calls');
    return calls.map((call, c) => {
      const cr = this.child(call, `${key}.${c}`);
      return { id: cr.plain('id'), tool: cr.plain('tool'), arguments: form2 ? cr.parsed('arguments') : cr.plain('arguments') } as Call;
    });
  }

  child(record: unknown, path: string): LineReader {
    if (!record || typeof record !== 'object' || Array.isArray(record)) this.fail(path, 'should be an object');
    return new LineReader(record as Record<string, unknown>, this.where, `${this.path}${path}.`);
  }
}

/** Keeps only the keys whose value is defined, in the order given (the schema's). */
function defined<T>(entries: [string, unknown][]): T {
  return Object.fromEntries(entries.filter(([, value]) => value !== undefined)) as T;
}

function readerOf(line: unknown, where: LineWhere): LineReader {
  if (!line || typeof line !== 'object' || Array.isArray(line)) throw new UserError(`${where}: not a JSON object; each line must be one record`);
  return new LineReader(line as Record<string, unknown>, where, '');
}

function toolFrom(r: LineReader, shared?: SharedDecodes): ToolSpec {
  return defined<ToolSpec>([
    ['name', r.plain('name')],
    ['description', r.plain('description')],
    ['parameters', r.parsed('parameters', false, shared)],
    ['returns', r.parsed('returns', false, shared)],
    ['domain', r.text('domain')],
    ['plugin', r.text('plugin')],
    ['isAction', r.action('isAction')],
    ['provenance', r.parsed('provenance', true, shared)],
  ]);
}

/**
 * The tools' JSON texts (schemas, provenance) of many sample lines, each decoded once: the samples of
 * a version offer tools of one library, so the same texts come again line after line. The values
 * are shared by the samples decoded with it: for a reader that only reads them (the overlap gate).
 */
export class SharedDecodes {
  /** Distinct texts kept at most; past it, the oldest half is forgotten. */
  private static readonly LIMIT = 4096;
  private readonly values = new Map<string, unknown>();

  get(text: string): unknown {
    return this.values.get(text);
  }

  set(text: string, value: unknown): void {
    if (this.values.size >= SharedDecodes.LIMIT) for (const old of [...this.values.keys()].slice(0, SharedDecodes.LIMIT / 2)) this.values.delete(old);
    this.values.set(text, value);
  }
}

export function toolFromLine(line: unknown, where: LineWhere): ToolSpec {
  return toolFrom(readerOf(line, where));
}

/** A sample from its line; `shared`: its tools' texts decoded once for many lines (see SharedDecodes). */
export function sampleFromLine(line: unknown, where: LineWhere, shared?: SharedDecodes): Sample {
  const r = readerOf(line, where);
  const dialogue = r.list('dialogue')!.map((turn, t) => {
    const tr = r.child(turn, `dialogue.${t}`);
    return defined<Turn>([
      ['role', tr.plain('role')],
      ['content', tr.plain('content')],
      ['thought', tr.text('thought')],
      ['calls', tr.calls('calls')],
      ['observations', tr.parsed('observations', true)],
      ['response', tr.text('response')],
    ]);
  });
  return { ...sampleHeadFrom(r, shared), dialogue, expected: r.parsed('expected') as Sample['expected'], meta: r.parsed('meta') as Sample['meta'] };
}

/** A sample line's fields before its dialogue, in the schema's order. */
function sampleHeadFrom(r: LineReader, shared?: SharedDecodes): Pick<Sample, 'id' | 'benchmark' | 'category' | 'split' | 'tools'> {
  return {
    id: r.plain('id'),
    benchmark: r.plain('benchmark'),
    category: r.plain('category'),
    split: r.plain('split'),
    tools: r.list('tools')!.map((tool, i) => toolFrom(r.child(tool, `tools.${i}`), shared)),
  };
}

/**
 * What test overlap reads of a sample line, decoded: its ids, every turn's role and content, its
 * tools and `expected`. Its `meta` is left empty and a turn's other parts out (calls, observations,
 * thought, response: their JSON text is the larger part of a line): only for a reader that needs
 * no more (the overlap gate, which decodes a sample it rejects whole with `sampleFromLine`).
 */
export function overlapSampleFromLine(line: unknown, where: LineWhere, shared?: SharedDecodes): Sample {
  const r = readerOf(line, where);
  return {
    ...sampleHeadFrom(r, shared),
    dialogue: r.list('dialogue')!.map((turn, t) => {
      const tr = r.child(turn, `dialogue.${t}`);
      return { role: tr.plain('role'), content: tr.plain('content') } as Turn;
    }),
    expected: r.parsed('expected') as Sample['expected'],
    meta: {} as Sample['meta'],
  };
}

export function rejectionFromLine(line: unknown, where: LineWhere): Rejection {
  const r = readerOf(line, where);
  return defined<Rejection>([
    ['stage', r.plain('stage')],
    ['reason', r.plain('reason')],
    ['detail', r.text('detail')],
    ['recordId', r.text('recordId')],
    ['duplicateOf', r.text('duplicateOf')],
    ['record', r.parsed('record', true)],
  ]);
}

/** How the records of one kind of published file are read back: by the line form, or (older versions) as they are. */
export interface LineDecoders {
  sample: (line: unknown, where: LineWhere) => Sample;
  tool: (line: unknown, where: LineWhere) => ToolSpec;
  rejection: (line: unknown, where: LineWhere) => Rejection;
}

const AS_IS: LineDecoders = { sample: (line) => line as Sample, tool: (line) => line as ToolSpec, rejection: (line) => line as Rejection };
const LINE_FORM_DECODERS: LineDecoders = { sample: sampleFromLine, tool: toolFromLine, rejection: rejectionFromLine };
/** Line forms this toolkiln reads: the current one and form 2, whose absent values were null. */
const READABLE_LINE_FORMS = [2, LINE_FORM];

/** The decoders for a version whose manifest records `lineForm` (undefined: published before the line form, records as they are). */
export function lineDecoders(lineForm: number | undefined, where: string): LineDecoders {
  if (lineForm === undefined) return AS_IS;
  if (READABLE_LINE_FORMS.includes(lineForm)) return LINE_FORM_DECODERS;
  throw new UserError(`${where}: published in line form ${lineForm}, which this toolkiln (line form ${LINE_FORM}) cannot read; upgrade toolkiln`);
}
