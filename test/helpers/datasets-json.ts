import { readFileSync } from 'node:fs';
import { parse } from 'csv-parse/sync';

/**
 * How Hugging Face `datasets` (5.x, its packaged `json` builder, `packaged_modules/json/json.py`)
 * loads a JSON or JSONL file, replayed in TypeScript so that the tests need no Python:
 *
 * 1. A JSON Lines file is read in chunks of `chunksize` bytes (10 MiB), each extended to the end of
 *    the line it stops in (`f.read(chunksize)` then `f.readline()`). A file that starts with `[` is
 *    one chunk of its elements (objects as they are, anything else as `{"text": …}`); a file holding
 *    one (pretty-printed) object is one chunk of one row, if it fits in a chunk.
 * 2. pyarrow infers each chunk's Arrow types (`pyarrow.json.read_json`; its blocks inside a chunk
 *    promote to one another): null takes any type; integers (int64) and other numbers make double;
 *    a string of an ISO date or date-time with whole seconds (`2024-01-31`, `2024-01-31 10:20:30Z`)
 *    is `timestamp[s]`, and becomes string beside other strings; objects merge their keys; a list's
 *    items share one type. Anything else in one column (a bool and a number, text and an object, …)
 *    is pyarrow's "changed from X to Y" error.
 * 3. `datasets` turns some columns into JSON text (`on_mixed_types="use_json"`, the default): on the
 *    first chunk, objects whose keys differ from record to record (or an empty first object) and
 *    values that mix objects or lists with other kinds; on any chunk, a column pyarrow reports as
 *    changed — from then on in every chunk. A multi-line single object cannot be re-encoded so:
 *    a conflict in it fails the load.
 * 4. The first chunk's types are the dataset's features; every later chunk is cast to them
 *    (`datasets.table.cast_array_to_feature` / `array_cast`): a column typed null in the first chunk
 *    takes nothing else ("Couldn't cast array of type bool to null"); an object may lack keys of the
 *    features but not bring new ones (nor may a record bring a new column); a list or object never
 *    becomes a scalar or the reverse; scalars cast as pyarrow casts them — anything to string, int64
 *    to double (|n| ≤ 2^53), double to int64 when whole, bool and numbers to one another, a string to
 *    a number, bool or timestamp only when every value parses.
 *
 * Numbers are read with `JSON.parse`, which cannot tell `1.0` from `1`: a literal like `1.0` counts
 * as int64 (stricter than pyarrow, never laxer). Files written by `JSON.stringify` have no such literal.
 */

/** Bytes `datasets` reads per chunk (`JsonConfig.chunksize`, 10 MiB). */
export const DATASETS_JSON_CHUNK_BYTES = 10 << 20;

export type ArrowType =
  | { kind: 'null' | 'bool' | 'int64' | 'double' | 'string' | 'timestamp[s]' | 'json' }
  | { kind: 'list'; item: ArrowType }
  | { kind: 'struct'; fields: Map<string, ArrowType> };

/** A column path as `datasets` keeps it: keys, and 0 for "the items of a list". */
type JsonPath = (string | 0)[];

export interface DatasetsJsonLoad {
  /** Rows the loader would give. */
  rows: number;
  chunks: number;
  /** The features the first chunk fixed, as pyarrow names types (`json`: JSON text); empty when the load failed before. */
  schema: string;
  /** Columns `datasets` turns into JSON text because their shape varies (`/a/[]/b`); older `datasets` versions without `on_mixed_types` fail on some. */
  jsonColumns: string[];
  /** Columns the first chunk typed null (`/a/[]`: lists empty in every row of it): a later chunk with a value there fails. */
  nullColumns: string[];
  /** Why the load fails (with the chunk and the first offending path), empty when it succeeds. */
  problems: string[];
}

/** Loads a JSON or JSONL file as `datasets.load_dataset("json", data_files=path)` does (see above). */
export function loadLikeDatasetsJson(path: string, options: { chunkBytes?: number } = {}): DatasetsJsonLoad {
  const bytes = readFileSync(path);
  const chunkBytes = options.chunkBytes ?? DATASETS_JSON_CHUNK_BYTES;
  const report: DatasetsJsonLoad = { rows: 0, chunks: 0, schema: '', jsonColumns: [], nullColumns: [], problems: [] };
  const fail = (problem: string) => {
    report.problems.push(`${path}: ${problem}`);
    return report;
  };
  const text = (from: number, to: number) => bytes.subarray(from, to).toString('utf8');
  const start = text(0, Math.min(bytes.length, 64)).trimStart();
  if (!start) return fail('empty file: `datasets` finds no rows');

  // Whole-file shapes: an array, or one object over several lines.
  let whole: { rows: unknown[]; reencodable: boolean } | undefined;
  if (start.startsWith('[')) {
    const all = parseJson(text(0, bytes.length));
    if (!all.ok) return fail(`not valid JSON (${all.error})`);
    const items = all.value as unknown[];
    whole = { rows: items.length && isObject(items[0]) ? items : items.map((item) => ({ text: item })), reencodable: true };
  } else {
    const newline = bytes.indexOf(0x0a);
    if (!parseJson(text(0, newline === -1 ? bytes.length : newline)).ok) {
      const all = parseJson(text(0, bytes.length));
      if (!all.ok) return fail(`neither JSON Lines nor one JSON value (${all.error})`);
      // pyarrow reads it only whole; past the first chunk datasets falls back to pandas.read_json, which refuses most objects.
      if (bytes.length > chunkBytes) return fail(`one JSON object over several lines, longer than a chunk (${chunkBytes} bytes)`);
      whole = { rows: [all.value], reencodable: false };
    }
  }

  const jsonPaths: JsonPath[] = [];
  let features: ArrowType | undefined;
  const chunks = whole ? [whole.rows] : jsonLineChunks(bytes, chunkBytes);
  for (const rows of chunks) {
    if (typeof rows === 'string') return fail(rows);
    const chunk = report.chunks++;
    const where = chunks.length === 1 ? '' : `chunk ${chunk + 1} (rows ${report.rows + 1}–${report.rows + rows.length}): `;
    const notObject = rows.findIndex((row) => !isObject(row));
    if (notObject !== -1) return fail(`row ${report.rows + notObject + 1} is ${kindName(rows[notObject])}, not an object`);
    if (chunk === 0 && (!whole || whole.reencodable)) for (const mixed of mixedShapePaths(rows)) jsonPaths.push(mixed);
    let type: ArrowType;
    for (;;) {
      const encoded = jsonPaths.length ? rows.map((row) => jsonPaths.reduce(encodeAt, row)) : rows;
      const inferred = inferRows(encoded);
      if (!('conflict' in inferred)) {
        type = inferred.type;
        if (chunk > 0) {
          const problem = chunkCastProblem(type, features!, encoded);
          if (problem) return fail(`${where}${problem}`);
        }
        break;
      }
      const { path: conflict, message } = inferred.conflict;
      if (whole && !whole.reencodable) return fail(`${message}: a single multi-line object cannot be re-encoded as JSON text`);
      if (jsonPaths.some((p) => samePath(p, conflict))) return fail(`${where}${message}`);
      insertJsonPath(jsonPaths, conflict);
    }
    if (chunk === 0) {
      features = asJsonAt(type, jsonPaths);
      report.nullColumns = nullPaths(features).map(showPath);
    }
    report.rows += rows.length;
  }
  report.schema = features ? typeName(features) : '';
  report.jsonColumns = jsonPaths.map(showPath);
  return report;
}

/** A file's problems for `datasets` (empty when it loads). */
export function datasetsJsonProblems(path: string): string[] {
  return loadLikeDatasetsJson(path).problems;
}

/**
 * Whether a CSV file reads as `pandas.read_csv` (and `datasets`' csv builder, which uses it) needs:
 * a header row of unique, non-empty names and every row of its column count (a quoted field may span lines).
 */
export function csvProblems(path: string): string[] {
  let rows: string[][];
  try {
    rows = parse(readFileSync(path), { relax_column_count: true, bom: true, skip_empty_lines: true }) as string[][];
  } catch (error) {
    return [`${path}: not CSV (${(error as Error).message})`];
  }
  if (!rows.length) return [`${path}: empty file: pandas reads no columns`];
  const [header, ...body] = rows;
  const problems: string[] = [];
  if (header.some((name) => !name.trim())) problems.push(`${path}: the header has an empty column name`);
  if (new Set(header).size !== header.length) problems.push(`${path}: the header repeats a column name`);
  const bad = body.findIndex((row) => row.length !== header.length);
  if (bad !== -1) problems.push(`${path}: row ${bad + 2} has ${body[bad].length} fields where the header has ${header.length}`);
  return problems;
}

// ---------------------------------------------------------------- reading

function parseJson(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return { ok: false, error: (error as Error).message };
  }
}

/** The rows of each chunk `datasets` reads, or the problem with a line. */
function jsonLineChunks(bytes: Buffer, chunkBytes: number): (unknown[] | string)[] {
  const chunks: (unknown[] | string)[] = [];
  let line = 0;
  for (let from = 0; from < bytes.length; ) {
    let to = Math.min(from + chunkBytes, bytes.length);
    if (to < bytes.length) {
      const newline = bytes.indexOf(0x0a, to);
      to = newline === -1 ? bytes.length : newline + 1;
    }
    const rows: unknown[] = [];
    const lines = bytes.subarray(from, to).toString('utf8').split('\n');
    if (lines.at(-1) === '') lines.pop();
    for (const text of lines) {
      line++;
      if (!text.trim()) continue;
      const parsed = parseJson(text);
      if (!parsed.ok) {
        chunks.push(`line ${line} is not JSON (${parsed.error})`);
        return chunks;
      }
      rows.push(parsed.value);
    }
    chunks.push(rows);
    from = to;
  }
  return chunks;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function kindName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'object') return 'object';
  if (typeof value === 'boolean') return 'boolean';
  return typeof value;
}

// ---------------------------------------------------------------- JSON text columns

/** `datasets.utils.json.find_mixed_struct_types_field_paths` on the first chunk's rows. */
function mixedShapePaths(rows: unknown[]): JsonPath[] {
  const found: JsonPath[] = [];
  const queue: [JsonPath, unknown[]][] = [[[], rows.filter((row) => row !== null)]];
  while (queue.length) {
    const [path, content] = queue.shift()!;
    if (!content.length) continue;
    if (content.every(isObject)) {
      const first = Object.keys(content[0] as object);
      const keysDiffer = content.some((value) => {
        const keys = Object.keys(value as object);
        return keys.length !== first.length || keys.some((key) => !(key in (content[0] as object)));
      });
      if (path.length && (keysDiffer || first.length === 0)) found.push(path);
      else {
        const keys = new Set(content.flatMap((value) => Object.keys(value as object)));
        for (const key of keys) queue.push([[...path, key], content.map((value) => (value as Record<string, unknown>)[key]).filter((v) => v !== undefined && v !== null)]);
      }
    } else if (content.every(Array.isArray)) {
      queue.push([[...path, 0], (content as unknown[][]).flat().filter((v) => v !== null)]);
    } else if (content.some((value) => typeof value === 'object')) {
      found.push(path);
    }
  }
  return found;
}

/** `datasets.utils.json.json_encode_field`: the value at `path` as JSON text (a string that is already JSON text stays). */
function encodeAt(value: unknown, path: JsonPath): unknown {
  if (path.length) {
    const [head, ...rest] = path;
    if (value === null || value === undefined) return null;
    if (head === 0) return Array.isArray(value) ? value.map((item) => encodeAt(item, rest)) : value;
    return isObject(value) ? { ...value, [head]: encodeAt(value[head], rest) } : value;
  }
  if (value === null || value === undefined) return null;
  if (typeof value === 'string' && parseJson(value).ok) return value;
  return JSON.stringify(value);
}

/** `datasets.utils.json.insert_json_field_path`: a path replaces a deeper one it is the start of. */
function insertJsonPath(paths: JsonPath[], path: JsonPath): void {
  const deeper = paths.findIndex((p) => samePath(p.slice(0, path.length), path));
  if (deeper === -1) paths.push(path);
  else paths[deeper] = path;
}

const samePath = (a: JsonPath, b: JsonPath) => a.length === b.length && a.every((part, i) => part === b[i]);
const showPath = (path: JsonPath) => `/${path.map((part) => (part === 0 ? '[]' : part)).join('/')}`;

/** The features with JSON text (`json`) at the paths `datasets` encodes. */
function asJsonAt(type: ArrowType, paths: JsonPath[], at: JsonPath = []): ArrowType {
  if (paths.some((path) => samePath(path, at))) return { kind: 'json' };
  if (type.kind === 'list') return { kind: 'list', item: asJsonAt(type.item, paths, [...at, 0]) };
  if (type.kind === 'struct') return { kind: 'struct', fields: new Map([...type.fields].map(([key, field]) => [key, asJsonAt(field, paths, [...at, key])])) };
  return type;
}

function nullPaths(type: ArrowType, at: JsonPath = []): JsonPath[] {
  if (type.kind === 'null') return [at];
  if (type.kind === 'list') return nullPaths(type.item, [...at, 0]);
  if (type.kind === 'struct') return [...type.fields].flatMap(([key, field]) => nullPaths(field, [...at, key]));
  return [];
}

// ---------------------------------------------------------------- pyarrow's inference

const INT64_LIMIT = 2 ** 63;
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2})(?::(\d{2})(?::(\d{2}))?)?(Z|[+-](\d{2})(?::?(\d{2}))?)?)?$/;

/** Whether pyarrow reads a string as `timestamp[s]` (inferring), or casts it to one (`cast`: no zone). */
function isTimestamp(text: string, cast = false): boolean {
  const m = TIMESTAMP.exec(text);
  if (!m) return false;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map((part) => (part === undefined ? 0 : Number(part)));
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1];
  if (!days || day < 1 || day > days || hour > 23 || minute > 59 || second > 59) return false;
  if (m[7] !== undefined && (cast || Number(m[8] ?? 0) > 23 || Number(m[9] ?? 0) > 59)) return false;
  return true;
}

function scalarKind(value: unknown): ArrowType['kind'] {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number') return Number.isInteger(value) && Math.abs(value) < INT64_LIMIT ? 'int64' : 'double';
  return isTimestamp(value as string) ? 'timestamp[s]' : 'string';
}

/** pyarrow's name for a JSON value's kind in its "changed from" error. */
const PYARROW_KIND: Record<string, string> = { bool: 'boolean', int64: 'number', double: 'number', string: 'string', 'timestamp[s]': 'string', list: 'array', struct: 'object' };

class Conflict {
  constructor(
    readonly path: JsonPath,
    readonly message: string,
  ) {}
}

/** The Arrow type of a chunk's rows, or pyarrow's first conflict. */
function inferRows(rows: unknown[]): { type: ArrowType } | { conflict: Conflict } {
  const path: JsonPath = [];
  try {
    let type: ArrowType = { kind: 'null' };
    for (const row of rows) type = widen(type, row, path);
    return { type };
  } catch (error) {
    if (error instanceof Conflict) return { conflict: error };
    throw error;
  }
}

/** `type` widened to hold `value` as well (objects' key maps are updated in place). */
function widen(type: ArrowType, value: unknown, path: JsonPath): ArrowType {
  if (value === null || value === undefined) return type;
  if (Array.isArray(value)) {
    if (type.kind !== 'list' && type.kind !== 'null') throw conflict(path, type.kind, 'list');
    let item: ArrowType = type.kind === 'list' ? type.item : { kind: 'null' };
    path.push(0);
    for (const element of value) item = widen(item, element, path);
    path.pop();
    return type.kind === 'list' ? Object.assign(type, { item }) : { kind: 'list', item };
  }
  if (typeof value === 'object') {
    if (type.kind !== 'struct' && type.kind !== 'null') throw conflict(path, type.kind, 'struct');
    const struct = type.kind === 'struct' ? type : { kind: 'struct' as const, fields: new Map<string, ArrowType>() };
    for (const [key, field] of Object.entries(value)) {
      path.push(key);
      struct.fields.set(key, widen(struct.fields.get(key) ?? { kind: 'null' }, field, path));
      path.pop();
    }
    return struct;
  }
  const kind = scalarKind(value);
  if (type.kind === 'null' || type.kind === kind) return type.kind === kind ? type : ({ kind } as ArrowType);
  if ((type.kind === 'int64' && kind === 'double') || (type.kind === 'double' && kind === 'int64')) return { kind: 'double' };
  if ((type.kind === 'timestamp[s]' && kind === 'string') || (type.kind === 'string' && kind === 'timestamp[s]')) return { kind: 'string' };
  throw conflict(path, type.kind, kind);
}

function conflict(path: JsonPath, from: string, to: string): Conflict {
  return new Conflict([...path], `JSON parse error: Column(${showPath(path)}) changed from ${PYARROW_KIND[from]} to ${PYARROW_KIND[to]}`);
}

// ---------------------------------------------------------------- datasets' cast to the first chunk's features

export function typeName(type: ArrowType): string {
  if (type.kind === 'list') return `list<${typeName(type.item)}>`;
  if (type.kind === 'struct') return `struct<${[...type.fields].map(([key, field]) => `${key}: ${typeName(field)}`).join(', ')}>`;
  return type.kind;
}

/** The non-null values under `key` (a column of objects) or in the lists (a column of lists). */
const fieldValues = (values: unknown[], key: string) => values.flatMap((value) => (isObject(value) && value[key] !== null && value[key] !== undefined ? [value[key]] : []));
const listItems = (values: unknown[]) => values.flatMap((value) => (Array.isArray(value) ? value.filter((item) => item !== null) : []));

/** Why a later chunk (`from`, its `rows`) does not cast to the first chunk's features (`to`), or null when it does. */
function chunkCastProblem(from: ArrowType, to: ArrowType, rows: unknown[]): string | null {
  const columns = from.kind === 'struct' ? from.fields : new Map<string, ArrowType>();
  const featureColumns = to.kind === 'struct' ? to.fields : new Map<string, ArrowType>();
  const added = [...columns.keys()].filter((key) => !featureColumns.has(key));
  if (added.length) return `Couldn't cast ${typeName(from)} to ${typeName(to)} because column names don't match: new column(s) ${added.join(', ')}`;
  for (const [key, column] of columns) {
    const problem = castProblem(column, featureColumns.get(key)!, fieldValues(rows, key), [key], true);
    if (problem) return problem;
  }
  return null;
}

/** Why a later chunk's array (`from`, holding `values`) does not cast to the features' type (`to`), or null when it does. */
function castProblem(from: ArrowType, to: ArrowType, values: unknown[], path: JsonPath, column = false): string | null {
  if (from.kind === 'null' || typeName(from) === typeName(to)) return null;
  const cannot = `${showPath(path)}: Couldn't cast array of type ${typeName(from)} to ${typeName(to)}`;
  if (to.kind === 'json') return from.kind === 'string' ? null : cannot;
  if (to.kind === 'null') return cannot;
  if (from.kind === 'struct') {
    // datasets writes a top-level object column to a string feature as its JSON text.
    if (column && to.kind === 'string') return null;
    if (to.kind !== 'struct') return cannot;
    const added = [...from.fields.keys()].filter((key) => !to.fields.has(key));
    if (added.length) return `${cannot} (${added.map((key) => `"${key}"`).join(', ')} not in the first chunk)`;
    for (const [key, field] of from.fields) {
      const problem = castProblem(field, to.fields.get(key)!, fieldValues(values, key), [...path, key]);
      if (problem) return problem;
    }
    return null;
  }
  if (from.kind === 'list') return to.kind === 'list' ? castProblem(from.item, to.item, listItems(values), [...path, 0]) : cannot;
  if (to.kind === 'list' || to.kind === 'struct') return cannot;
  const unparsed = values.find((value) => !scalarCasts(value, from.kind, to.kind));
  return unparsed === undefined ? null : `${cannot}: ${JSON.stringify(unparsed)}`;
}

/** Whether pyarrow's cast takes one scalar from one kind to another. */
function scalarCasts(value: unknown, from: ArrowType['kind'], to: ArrowType['kind']): boolean {
  if (value === null || value === undefined || to === 'string') return true;
  if (from === 'bool') return to === 'int64' || to === 'double';
  if (from === 'int64') return to === 'bool' || to === 'timestamp[s]' || (to === 'double' && Math.abs(value as number) <= 2 ** 53);
  if (from === 'double') return to === 'bool' || (to === 'int64' && Number.isInteger(value) && Math.abs(value as number) < INT64_LIMIT);
  if (from === 'timestamp[s]') return to === 'int64';
  if (from === 'string') {
    const text = value as string;
    if (to === 'int64') return /^-?\d+$/.test(text) && Math.abs(Number(text)) < INT64_LIMIT;
    if (to === 'double') return /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$|^[+-]?(?:inf|infinity|nan)$/i.test(text);
    if (to === 'bool') return /^(?:true|false|1|0)$/i.test(text);
    if (to === 'timestamp[s]') return isTimestamp(text, true);
  }
  return false;
}
