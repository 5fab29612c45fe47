import { z } from 'zod';
import { UserError } from '../../core/errors.ts';
import { jsonTypeOf } from '../../core/json-schema.ts';
import { parseJsonKeepingFloats, pythonJson } from '../../core/python-json.ts';
import { Call, Expected, Sample, ToolSpec, formatZodError, sampleId, type Json, type Turn, isJsonObject } from '../../core/records.ts';
import { ACE_AGENT_CATEGORIES, ACE_LANGUAGES, aceFileName, functionParameters, type AceCategory, type AceFunction, type AceRecord } from './record.ts';

/**
 * An ACEBench record (a released data line and its answer line) ↔ a canonical Sample.
 *
 * Canonical view: `tools` are the offered functions as ToolSpecs (Python type names such as `dict`
 * or `list` read as JSON-Schema's `object`, `array`; `arguments`/`_arguments` read as `parameters`,
 * `results` as `returns`); `dialogue` is the `question` split at its `user: ` / `system: ` lines
 * (system → assistant). An agent record's question is the instruction or persona the simulated user
 * acts from, not a dialogue: it is one user turn, marked `questionKind: 'instruction'`.
 * `expected` holds the gold answer by kind of category (see `AceExpected`).
 *
 * `meta.acebench` keeps what the canonical record has no slot for, so that an export writes the
 * released lines back byte for byte (see `AceMeta`).
 */

// ---------------------------------------------------------------- kinds of category

export type AceAnswerKind = 'calls' | 'incomplete' | 'error_param' | 'irrelevant' | 'agent';

export function answerKindOf(category: AceCategory): AceAnswerKind {
  if (category === 'special_incomplete') return 'incomplete';
  if (category === 'special_error_param') return 'error_param';
  if (category === 'special_irrelevant') return 'irrelevant';
  return (ACE_AGENT_CATEGORIES as readonly string[]).includes(category) ? 'agent' : 'calls';
}

// ---------------------------------------------------------------- expected and meta

/**
 * The gold answer of an ACEBench sample:
 * - normal categories: `calls` (several for parallel calls; for multi_turn_user_adjust/switch the
 *   call(s) after the last user turn), `alternatives` for the other accepted answers when the
 *   release lists several;
 * - special_incomplete: `missing` {function: [parameters the user did not give]}, `calls: []`;
 * - special_error_param: `wrongValues` {parameter: [wrong values in the question]}, `calls: []`;
 * - special_irrelevant: `refusal` (the sentence expected instead of a call), `calls: []`;
 * - agent categories: `finalState` (the classes' states at the end, as released: a list of
 *   {Class: state}) and `milestones` (accepted call sequences, each a list of call strings).
 */
/**
 * A JSON value checked no deeper than its presence: samples come from JSON (lines or files), and
 * these parts (function lists, class states) are large, so a deep check on every read costs more than
 * it can find.
 */
const AnyJson = z.custom<Json>((value) => value !== undefined);

export const AceExpected = Expected.extend({
  alternatives: z.array(z.array(Call)).optional(),
  missing: z.record(z.string(), z.array(z.string())).optional(),
  wrongValues: z.record(z.string(), z.array(AnyJson)).optional(),
  refusal: z.string().optional(),
  finalState: z.array(z.record(z.string(), AnyJson)).optional(),
  milestones: z.array(z.array(z.string())).optional(),
});
export type AceExpected = z.infer<typeof AceExpected>;

export const AceMeta = z.object({
  /** The released id (`normal_multi_turn_user_adjust_3_1`). */
  id: z.string().min(1),
  language: z.enum(ACE_LANGUAGES),
  /** The released `function` list, verbatim: what an export writes (`tools` is its normalised view). */
  function: z.array(AnyJson),
  /** `dialogue`: the question's turns; `instruction`: an agent's instruction, one user turn; `text`: a question not in turns, one user turn. */
  questionKind: z.enum(['dialogue', 'instruction', 'text']),
  /** A dialogue question ends with a line break. */
  questionFinalNewline: z.boolean().default(false),
  /** The data line's keys in order. */
  dataKeys: z.array(z.string()),
  /** The data line's other fields, verbatim: `time` | `profile`, or `initial_config`, `path`, `involved_classes`. */
  fields: z.record(z.string(), AnyJson).default({}),
  /** The answer line's keys in order; null when the release has no answer for this record. */
  answerKeys: z.array(z.string()).nullable(),
  /** The answer line's fields other than id, ground_truth and mile_stone, verbatim. */
  answerFields: z.record(z.string(), AnyJson).default({}),
  /** `ground_truth` is a list of accepted answers (normal categories), not one. */
  groundTruthList: z.boolean().default(false),
  /** `mile_stone` is a list of accepted call sequences, not one. */
  mileStoneNested: z.boolean().default(false),
  /** The ground_truth key of each gold call, per accepted answer (`Tool_1` for a second call of `Tool`). */
  callKeys: z.array(z.array(z.string())).default([]),
  /** JSON pointers of the whole numbers the lines write as floats (`412.0`). */
  floats: z.object({ data: z.array(z.string()).default([]), answer: z.array(z.string()).default([]) }).default({ data: [], answer: [] }),
  /** Released lines the writer does not reproduce (hand-edited spacing): written as they are while their content is unchanged. */
  lines: z.object({ data: z.string().optional(), answer: z.string().optional() }).default({}),
  /** The record's line is the last of its file and has no line break. */
  unterminated: z.object({ data: z.boolean().optional(), answer: z.boolean().optional() }).default({}),
});
export type AceMeta = z.infer<typeof AceMeta>;

/** The released text of a record's lines (without line breaks) when it was read from files. */
export interface AceRecordText {
  data: string;
  answer: string | null;
  /** The line is its file's last and has no line break. */
  dataUnterminated?: boolean;
  answerUnterminated?: boolean;
}

/** Check name of a record the release gives no answer for (a soft check: it goes to review). */
export const NO_ANSWER_CHECK = 'acebench-answer';

// ---------------------------------------------------------------- record → sample

/**
 * A released record → a canonical Sample. With `text` (the lines as read), the sample also keeps
 * which whole numbers were floats and any line the writer would not give back as it was; without
 * it (a record made in memory) whole numbers are written as ints.
 */
export function aceRecordToSample(record: AceRecord, text?: AceRecordText): Sample {
  const { data, answer, category, language } = record;
  const where = `${language}/${category} ${data.id}`;
  const { id: _id, question, function: functions, ...fields } = data;
  const kind = answerKindOf(category);
  const parsedQuestion = kind === 'agent' ? null : parseDialogue(question);
  const { expected, callKeys, groundTruthList, mileStoneNested, answerFields } = answer ? expectedOf(answer, kind, functions, where) : { expected: {}, callKeys: [], groundTruthList: false, mileStoneNested: false, answerFields: {} };
  const acebench: AceMeta = {
    id: data.id,
    language,
    function: functions as Json[],
    questionKind: kind === 'agent' ? 'instruction' : parsedQuestion ? 'dialogue' : 'text',
    questionFinalNewline: parsedQuestion?.finalNewline ?? false,
    dataKeys: Object.keys(data),
    fields,
    answerKeys: answer ? Object.keys(answer) : null,
    answerFields,
    groundTruthList,
    mileStoneNested,
    callKeys,
    floats: { data: text ? parseJsonKeepingFloats(text.data).floatPaths : [], answer: text?.answer ? parseJsonKeepingFloats(text.answer).floatPaths : [] },
    lines: {},
    unterminated: { ...(text?.dataUnterminated ? { data: true } : {}), ...(text?.answerUnterminated ? { answer: true } : {}) },
  };
  const checks = answer ? [] : [{ name: NO_ANSWER_CHECK, pass: false, soft: true, reason: `the release has no answer line for ${data.id} in possible_answer/${aceFileName(category)}` }];
  const parsed = Sample.safeParse({
    id: sampleId('acebench', { language, category, id: data.id }),
    benchmark: 'acebench',
    category,
    split: 'test',
    tools: functions.map((fn) => toolSpecOf(fn, data.id)),
    dialogue: parsedQuestion?.turns ?? [{ role: 'user', content: question }],
    expected,
    meta: { source: { dataset: 'acebench', id: data.id, file: `data_${language}/${aceFileName(category)}` }, lineage: [], checks, tags: [], acebench },
  });
  if (!parsed.success) throw new UserError(`${where}: not a valid sample: ${formatZodError(parsed.error)}`);
  const sample = parsed.data;
  // Lines the writer does not give back as released are kept as they are (see `aceRecordLines`).
  if (text) {
    const lines = aceRecordLines(sample);
    const kept = { ...(lines.data !== text.data ? { data: text.data } : {}), ...(text.answer !== null && lines.answer !== text.answer ? { answer: text.answer } : {}) };
    if (Object.keys(kept).length) sample.meta = { ...sample.meta, acebench: { ...acebench, lines: kept } };
  }
  return sample;
}

/** `user: …\nsystem: …` → turns (system → assistant); null when the text is not in that shape. */
function parseDialogue(question: string): { turns: Turn[]; finalNewline: boolean } | null {
  const finalNewline = question.endsWith('\n');
  const body = finalNewline ? question.slice(0, -1) : question;
  const pieces = body.split(/\n(?=(?:user|system): )/);
  const turns: Turn[] = [];
  for (const piece of pieces) {
    const match = /^(user|system): /.exec(piece);
    if (!match) return null;
    turns.push({ role: match[1] === 'user' ? 'user' : 'assistant', content: piece.slice(match[0].length) });
  }
  return renderDialogue(turns, finalNewline) === question ? { turns, finalNewline } : null;
}

function renderDialogue(turns: readonly Turn[], finalNewline: boolean): string {
  return turns.map((turn) => `${turn.role === 'user' ? 'user' : 'system'}: ${turn.content}`).join('\n') + (finalNewline ? '\n' : '');
}


/** The expected answer of one answer line, and how to write it back. */
function expectedOf(answer: NonNullable<AceRecord['answer']>, kind: AceAnswerKind, functions: readonly AceFunction[], where: string) {
  const { id: _id, ground_truth: truth, mile_stone: mileStone, ...answerFields } = answer;
  const bad = (what: string) => new UserError(`${where}: ground_truth ${what}; fix the answer line`);
  const base = { callKeys: [] as string[][], groundTruthList: false, mileStoneNested: false, answerFields };
  if (kind === 'calls') {
    const options = Array.isArray(truth) ? truth : [truth];
    if (!options.length || !options.every((option) => isJsonObject(option) && Object.values(option).every(isJsonObject))) throw bad('must map function names to argument objects (or list such maps)');
    const names = new Set(functions.map((fn) => fn.name));
    const answers = (options as Record<string, Record<string, Json>>[]).map((option, n) =>
      Object.entries(option).map(([key, args], i): Call => ({ id: n ? `alt${n}_call_${i + 1}` : `call_${i + 1}`, tool: toolOfKey(key, names), arguments: args })),
    );
    return {
      ...base,
      expected: { calls: answers[0], ...(answers.length > 1 ? { alternatives: answers.slice(1) } : {}) },
      callKeys: (options as Record<string, Json>[]).map((option) => Object.keys(option)),
      groundTruthList: Array.isArray(truth),
    };
  }
  if (kind === 'incomplete') {
    if (!isJsonObject(truth) || !Object.values(truth).every((v) => Array.isArray(v) && v.every((p) => typeof p === 'string'))) throw bad('must map function names to lists of missing parameter names');
    return { ...base, expected: { calls: [], missing: truth as Record<string, string[]> } };
  }
  if (kind === 'error_param') {
    if (!isJsonObject(truth) || !Object.values(truth).every(Array.isArray)) throw bad('must map parameter names to lists of wrong values');
    return { ...base, expected: { calls: [], wrongValues: truth as Record<string, Json[]> } };
  }
  if (kind === 'irrelevant') {
    if (typeof truth !== 'string') throw bad('must be the refusal sentence');
    return { ...base, expected: { calls: [], refusal: truth } };
  }
  if (!Array.isArray(truth) || !truth.every(isJsonObject)) throw bad('must list the classes\' final states ({Class: state})');
  const nested = Array.isArray(mileStone) && mileStone.length > 0 && mileStone.every(Array.isArray);
  const sequences = nested ? mileStone : [mileStone];
  if (!(sequences as Json[]).every((s) => Array.isArray(s) && s.every((call) => typeof call === 'string'))) throw new UserError(`${where}: mile_stone must list call strings (or lists of them); fix the answer line`);
  return { ...base, expected: { finalState: truth as Record<string, Json>[], milestones: sequences as string[][] }, mileStoneNested: nested };
}

/** A ground_truth key names a function, or a function and a repeat number (`Tool_1`), as ACEBench's checker reads it. */
function toolOfKey(key: string, names: ReadonlySet<string>): string {
  if (names.has(key)) return key;
  const stripped = key.replace(/_\d+$/, '');
  return names.has(stripped) ? stripped : key;
}

// ---------------------------------------------------------------- tools

/** A released function → a ToolSpec (JSON-Schema type names; invalid schema parts left out of this view). */
export function toolSpecOf(fn: AceFunction, recordId: string): ToolSpec {
  const parameters = functionParameters(fn);
  const parsed = ToolSpec.safeParse({
    name: fn.name,
    description: typeof fn.description === 'string' ? fn.description : '',
    parameters: objectSchemaOf(parameters),
    returns: objectSchemaOf(fn.results),
    provenance: { source: 'acebench', id: recordId },
  });
  if (!parsed.success) throw new UserError(`function ${fn.name}: not a usable definition: ${formatZodError(parsed.error)}; fix it in the record's function list`);
  return parsed.data;
}

function objectSchemaOf(node: Json | undefined): Record<string, unknown> {
  const schema = isJsonObject(node) ? propertySchemaOf(node) : {};
  const properties = isJsonObject(schema.properties) ? schema.properties : {};
  const required = Array.isArray(schema.required) ? (schema.required as Json[]).filter((name): name is string => typeof name === 'string' && name in properties) : [];
  return { ...schema, type: 'object', properties, required };
}

function propertySchemaOf(node: Json): Record<string, unknown> {
  if (!isJsonObject(node)) return {};
  const out: Record<string, unknown> = { ...node };
  // Python's names (`dict`, `list`, …) as JSON Schema's; a type that means nothing (`any`) is left out.
  const type = Array.isArray(node.type) ? node.type.map(jsonTypeOf) : jsonTypeOf(node.type);
  if (typeof type === 'string' || (Array.isArray(type) && type.length && type.every((t) => t !== undefined))) out.type = type;
  else delete out.type;
  for (const key of ['description', 'format', 'pattern'] as const) if (key in node && typeof node[key] !== 'string') delete out[key];
  if ('enum' in node && !Array.isArray(node.enum)) delete out.enum;
  if (isJsonObject(node.items)) out.items = propertySchemaOf(node.items);
  else delete out.items;
  if (isJsonObject(node.properties)) {
    out.properties = Object.fromEntries(Object.entries(node.properties).map(([name, child]) => [name, propertySchemaOf(child)]));
    if (Array.isArray(node.required)) out.required = node.required.filter((name) => typeof name === 'string' && name in (out.properties as object));
  } else delete out.properties;
  return out;
}

// ---------------------------------------------------------------- sample → record

export function aceMetaOf(sample: Sample): AceMeta {
  const parsed = AceMeta.safeParse((sample.meta as { acebench?: unknown }).acebench);
  if (!parsed.success) throw new UserError(`sample ${sample.id}: not an ACEBench sample (meta.acebench: ${formatZodError(parsed.error)})`);
  return parsed.data;
}

export function aceExpectedOf(sample: Sample): AceExpected {
  const parsed = AceExpected.safeParse(sample.expected);
  if (!parsed.success) throw new UserError(`sample ${sample.id}: expected is not an ACEBench answer: ${formatZodError(parsed.error)}`);
  return parsed.data;
}

/** A canonical Sample → its released record (answer null when it has none); `aceRecordLines` writes it. */
export function sampleToAceRecord(sample: Sample): AceRecord {
  return recordOf(sample, aceMetaOf(sample));
}

function recordOf(sample: Sample, meta: AceMeta): AceRecord {
  const category = sample.category as AceCategory;
  const question = meta.questionKind === 'dialogue' ? renderDialogue(sample.dialogue, meta.questionFinalNewline) : sample.dialogue.map((turn) => turn.content).join('\n');
  const dataValues: Record<string, Json> = { ...meta.fields, id: meta.id, question, function: meta.function };
  const data = Object.fromEntries([...meta.dataKeys, ...Object.keys(dataValues).filter((key) => !meta.dataKeys.includes(key))].map((key) => [key, dataValues[key]]));
  let answer: AceRecord['answer'] = null;
  if (meta.answerKeys) {
    const expected = aceExpectedOf(sample);
    const values: Record<string, Json> = { ...meta.answerFields, id: meta.id, ground_truth: groundTruthOf(sample, expected, meta) };
    if (expected.milestones) values.mile_stone = meta.mileStoneNested ? expected.milestones : (expected.milestones[0] ?? []);
    answer = Object.fromEntries([...meta.answerKeys.filter((key) => key in values), ...Object.keys(values).filter((key) => !meta.answerKeys!.includes(key))].map((key) => [key, values[key]])) as AceRecord['answer'];
  }
  return { category, language: meta.language, data: data as AceRecord['data'], answer };
}

function groundTruthOf(sample: Sample, expected: AceExpected, meta: AceMeta): Json {
  switch (answerKindOf(sample.category as AceCategory)) {
    case 'incomplete':
      return expected.missing ?? {};
    case 'error_param':
      return expected.wrongValues ?? {};
    case 'irrelevant':
      return expected.refusal ?? '';
    case 'agent':
      return expected.finalState ?? [];
    case 'calls': {
      const answers = [expected.calls ?? [], ...(expected.alternatives ?? [])].map((calls, n) =>
        Object.fromEntries(
          calls.map((call, i) => {
            // The released key when it still names this call's tool (`Tool_1`), else the tool's name.
            const key = meta.callKeys[n]?.[i];
            return [key !== undefined && toolOfKey(key, new Set([call.tool])) === call.tool ? key : call.tool, call.arguments as Json];
          }),
        ),
      );
      return meta.groundTruthList || answers.length > 1 ? answers : answers[0];
    }
  }
}

// ---------------------------------------------------------------- lines

/**
 * A sample's released lines (without line breaks): `json.dumps` of its data and answer records
 * (ensure_ascii off, whole floats as `412.0`), or the released line kept in meta when its content
 * is still what the sample holds. `answer` is null when the sample has no answer line.
 */
export function aceRecordLines(sample: Sample): { data: string; answer: string | null } {
  const meta = aceMetaOf(sample);
  const record = recordOf(sample, meta);
  const line = (value: Json, floats: string[], kept: string | undefined) =>
    kept !== undefined && sameJson(kept, value) ? kept : pythonJson(value, { ensureAscii: false, floatPaths: new Set(floats) });
  return {
    data: line(record.data, meta.floats.data, meta.lines.data),
    answer: record.answer ? line(record.answer, meta.floats.answer, meta.lines.answer) : null,
  };
}

function sameJson(text: string, value: Json): boolean {
  try {
    return JSON.stringify(JSON.parse(text)) === JSON.stringify(value);
  } catch {
    return false;
  }
}
