import { UserError } from './errors.ts';
import type { Rejection, Sample, ToolSpec, Turn } from './records.ts';

/**
 * The line form: how a Sample, a ToolSpec and a Rejection are written as one line of a published
 * file (and of the canonical export), so that every line of a file has one shape and a columnar
 * reader (Arrow, Hugging Face `datasets`, pandas) infers one schema for the whole file:
 *
 * - every key is present in every line, an absent value written as `null`;
 * - a value whose shape varies from record to record (a tool's JSON Schemas and provenance, call
 *   arguments, observations, `expected`, `meta`, a reject's record) is carried as its JSON text,
 *   as OpenAI carries `function.arguments`.
 *
 * Everything else keeps its JSON type. The codec is lossless: `sampleFromLine(sampleToLine(s))`
 * equals `s`. Only the store and the exporters that write canonical files use it; the rest of
 * the code works on `Sample` objects.
 */

/** The line form a version's manifest records (`lineForm`); a version without it holds plain JSON records. */
export const LINE_FORM = 2;

export interface ToolLine {
  name: string;
  description: string;
  /** JSON text of the parameters' JSON-Schema object. */
  parameters: string;
  /** JSON text of the returns' JSON-Schema object. */
  returns: string;
  domain: string | null;
  plugin: string | null;
  isAction: boolean | null;
  /** JSON text of the provenance object. */
  provenance: string | null;
}

export interface CallLine {
  id: string;
  tool: string;
  /** JSON text of the arguments object (literals and `$ref`s). */
  arguments: string;
}

export interface TurnLine {
  role: 'user' | 'assistant';
  content: string;
  thought: string | null;
  calls: CallLine[] | null;
  /** JSON text of the results per call id. */
  observations: string | null;
  response: string | null;
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
  detail: string | null;
  recordId: string | null;
  duplicateOf: string | null;
  /** JSON text of the rejected record (null when there was none). */
  record: string | null;
}

const EMPTY_OBJECT_SCHEMA = { type: 'object', properties: {}, required: [] };

const json = (value: unknown): string => JSON.stringify(value);
const jsonOrNull = (value: unknown): string | null => (value === undefined ? null : JSON.stringify(value));
const orNull = <T>(value: T | undefined): T | null => (value === undefined ? null : value);

// ---------------------------------------------------------------- encode

export function toolToLine(tool: ToolSpec): ToolLine {
  return {
    name: tool.name,
    description: tool.description ?? '',
    parameters: json(tool.parameters ?? EMPTY_OBJECT_SCHEMA),
    returns: json(tool.returns ?? EMPTY_OBJECT_SCHEMA),
    domain: orNull(tool.domain),
    plugin: orNull(tool.plugin),
    isAction: orNull(tool.isAction),
    provenance: jsonOrNull(tool.provenance),
  };
}

function turnToLine(turn: Turn): TurnLine {
  return {
    role: turn.role,
    content: turn.content,
    thought: orNull(turn.thought),
    calls: turn.calls ? turn.calls.map((call) => ({ id: call.id, tool: call.tool, arguments: json(call.arguments ?? {}) })) : null,
    observations: jsonOrNull(turn.observations),
    response: orNull(turn.response),
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
    detail: orNull(rejection.detail),
    recordId: orNull(rejection.recordId),
    duplicateOf: orNull(rejection.duplicateOf),
    record: jsonOrNull(rejection.record),
  };
}

/** A sample line of plain JSON (as a stage wrote it) in the line form, as text: one parse and one stringify, no validation. */
export function sampleTextToLineText(text: string): string {
  return JSON.stringify(sampleToLine(JSON.parse(text) as Sample));
}

// ---------------------------------------------------------------- decode

/** Where a line was read from, for errors: `path:line`. */
export type LineWhere = string;

class LineReader {
  constructor(
    private readonly record: Record<string, unknown>,
    private readonly where: LineWhere,
    private readonly path: string,
  ) {}

  private fail(key: string, what: string): never {
    throw new UserError(`${this.where}: "${this.path}${key}" ${what}; this is not a toolkiln line-form record: restore the file from a copy or publish the version again`);
  }

  /** A JSON-text field, parsed (undefined when it is null and `optional`). */
  parsed(key: string, optional = false): unknown {
    const value = this.record[key];
    if (value === null && optional) return undefined;
    if (typeof value !== 'string') this.fail(key, `should be JSON text, found ${value === null ? 'null' : typeof value}`);
    try {
      return JSON.parse(value);
    } catch (error) {
      this.fail(key, `is not valid JSON text (${(error as Error).message})`);
    }
  }

  /** A plain field, kept as it is (undefined when null). */
  plain(key: string): any {
    const value = this.record[key];
    return value === null ? undefined : value;
  }

  list(key: string, optional = false): Record<string, unknown>[] | undefined {
    const value = this.record[key];
    if (value === null && optional) return undefined;
    if (!Array.isArray(value)) this.fail(key, 'should be a list');
    return value as Record<string, unknown>[];
  }

  child(record: Record<string, unknown>, path: string): LineReader {
    if (!record || typeof record !== 'object' || Array.isArray(record)) this.fail(path, 'should be an object');
    return new LineReader(record, this.where, `${this.path}${path}.`);
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

function toolFrom(r: LineReader): ToolSpec {
  return defined<ToolSpec>([
    ['name', r.plain('name')],
    ['description', r.plain('description')],
    ['parameters', r.parsed('parameters')],
    ['returns', r.parsed('returns')],
    ['domain', r.plain('domain')],
    ['plugin', r.plain('plugin')],
    ['isAction', r.plain('isAction')],
    ['provenance', r.parsed('provenance', true)],
  ]);
}

export function toolFromLine(line: unknown, where: LineWhere): ToolSpec {
  return toolFrom(readerOf(line, where));
}

export function sampleFromLine(line: unknown, where: LineWhere): Sample {
  const r = readerOf(line, where);
  const dialogue = r.list('dialogue')!.map((turn, t) => {
    const tr = r.child(turn, `dialogue.${t}`);
    const calls = tr.list('calls', true)?.map((call, c) => {
      const cr = tr.child(call, `calls.${c}`);
      return { id: cr.plain('id'), tool: cr.plain('tool'), arguments: cr.parsed('arguments') };
    });
    return defined<Turn>([
      ['role', tr.plain('role')],
      ['content', tr.plain('content')],
      ['thought', tr.plain('thought')],
      ['calls', calls],
      ['observations', tr.parsed('observations', true)],
      ['response', tr.plain('response')],
    ]);
  });
  return {
    id: r.plain('id'),
    benchmark: r.plain('benchmark'),
    category: r.plain('category'),
    split: r.plain('split'),
    tools: r.list('tools')!.map((tool, i) => toolFrom(r.child(tool, `tools.${i}`))),
    dialogue,
    expected: r.parsed('expected') as Sample['expected'],
    meta: r.parsed('meta') as Sample['meta'],
  };
}

export function rejectionFromLine(line: unknown, where: LineWhere): Rejection {
  const r = readerOf(line, where);
  return defined<Rejection>([
    ['stage', r.plain('stage')],
    ['reason', r.plain('reason')],
    ['detail', r.plain('detail')],
    ['recordId', r.plain('recordId')],
    ['duplicateOf', r.plain('duplicateOf')],
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

/** The decoders for a version whose manifest records `lineForm` (undefined: published before the line form, records as they are). */
export function lineDecoders(lineForm: number | undefined, where: string): LineDecoders {
  if (lineForm === undefined) return AS_IS;
  if (lineForm === LINE_FORM) return LINE_FORM_DECODERS;
  throw new UserError(`${where}: published in line form ${lineForm}, which this toolkiln (line form ${LINE_FORM}) cannot read; upgrade toolkiln`);
}
