import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { UserError, messageOf } from '../../core/errors.ts';
import type { Json } from '../../core/records.ts';
import { PyException, strptime } from './python.ts';
import { DATABASE_NAMES, type DatabaseName, type Databases, type JsonObject, type Table } from './tool.ts';
import { readSourceText } from '../../core/source-files.ts';

/** ToolTalk's mock databases as released: `<Name>.json` holds `{ owner: { id: record } }` (Account: `{ username: record }`). */
export const DEFAULT_DATABASES_DIR = '../shared/data/sources/tooltalk/databases';

/** Databases in their JSON form, e.g. an overlay: `{ Reminder: { justinkool: { "12-949b": {...} } } }`. */
export type DatabasesJson = Partial<Record<DatabaseName, Record<string, unknown>>>;

type FieldCheck = 'string' | 'datetime' | 'time' | 'nullable-string' | 'nullable-datetime' | 'string-list' | 'nullable-string-list';

/** What a record's fields must hold: the types the released databases use and ToolTalk's tools rely on. */
interface RecordFields {
  required: Record<string, FieldCheck>;
  /** Checked when present. */
  optional?: Record<string, FieldCheck>;
}

/** The fields each database's tools read from a record, and what they must hold. */
const RECORD_FIELDS: Record<Exclude<DatabaseName, 'Account' | 'Weather' | 'HistoricWeather'>, RecordFields> = {
  Alarm: { required: { alarm_id: 'string', time: 'time' } },
  Calendar: {
    required: { event_id: 'string', name: 'string', event_type: 'string', start_time: 'datetime', end_time: 'datetime' },
    optional: { location: 'nullable-string', description: 'nullable-string', attendees: 'nullable-string-list' },
  },
  Email: { required: { email_id: 'string', sender: 'string', subject: 'string', body: 'string', date: 'datetime' }, optional: { receivers: 'string-list' } },
  Message: { required: { message_id: 'string', sender: 'string', message: 'string', timestamp: 'datetime' } },
  Reminder: { required: { reminder_id: 'string', task: 'string', status: 'string' }, optional: { due_date: 'nullable-datetime' } },
};
const ACCOUNT_FIELDS: RecordFields = {
  required: { username: 'string', password: 'string', email: 'string', phone: 'string', name: 'string', session_token: 'nullable-string' },
  optional: { verification_code: 'nullable-string' },
};

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function checkRecord(record: unknown, fields: RecordFields, where: string): JsonObject {
  if (!isObject(record)) throw new UserError(`${where}: a record must be a JSON object; fix the file`);
  const checks = [...Object.entries(fields.required), ...Object.entries(fields.optional ?? {}).filter(([field]) => field in record)];
  for (const [field, check] of checks) {
    if (!(field in record)) throw new UserError(`${where}: missing key "${field}"; every record needs ${Object.keys(fields.required).join(', ')}`);
    const value = record[field];
    if (!fits(value, check)) throw new UserError(`${where}: key "${field}" holds ${JSON.stringify(value)}; ${describe(check)}`);
  }
  return record as JsonObject;
}

function fits(value: unknown, check: FieldCheck): boolean {
  if (value === null && check.startsWith('nullable-')) return true;
  switch (check) {
    case 'string':
    case 'nullable-string':
      return typeof value === 'string';
    case 'datetime':
    case 'nullable-datetime':
      return parses(value, '%Y-%m-%d %H:%M:%S');
    case 'time':
      return parses(value, '%H:%M:%S');
    case 'string-list':
    case 'nullable-string-list':
      return Array.isArray(value) && value.every((item) => typeof item === 'string');
  }
}

function parses(value: unknown, format: '%H:%M:%S' | '%Y-%m-%d %H:%M:%S'): boolean {
  try {
    strptime(value, format);
    return true;
  } catch (error) {
    if (error instanceof PyException) return false;
    throw error;
  }
}

function describe(check: FieldCheck): string {
  const nullable = check.startsWith('nullable-') ? ' (or null)' : '';
  if (check.endsWith('datetime')) return `write a date-time as YYYY-MM-DD HH:MM:SS${nullable}`;
  if (check === 'time') return 'write a time as HH:MM:SS';
  if (check.endsWith('string-list')) return `it must be a list of strings${nullable}`;
  return `it must be a string${nullable}`;
}

/** Checks one database's JSON and turns it into Maps (file order kept). `source` names it in errors. */
export function parseDatabase(name: DatabaseName, json: unknown, source: string): Databases[DatabaseName] {
  if (!isObject(json)) throw new UserError(`${source}: must hold a JSON object of ${name === 'Account' ? 'username → account' : 'owner → { id → record }'}; fix the file`);
  if (name === 'Account') {
    const accounts = new Map<string, JsonObject>();
    for (const [username, record] of Object.entries(json)) {
      const account = checkRecord(record, ACCOUNT_FIELDS, `${source}: account "${username}"`);
      if (account.username !== username) throw new UserError(`${source}: account "${username}" has username ${JSON.stringify(account.username)}; the key and the username must agree`);
      accounts.set(username, account);
    }
    return accounts;
  }
  const table: Table = new Map();
  for (const [owner, records] of Object.entries(json)) {
    if (!isObject(records)) throw new UserError(`${source}: "${owner}" must hold a JSON object of records keyed by id; fix the file`);
    const rows = new Map<string, JsonObject>();
    for (const [key, record] of Object.entries(records)) {
      const where = `${source}: "${owner}" › "${key}"`;
      if (name === 'Weather') {
        // ToolTalk parses these keys into dates: "2023-9-6" and "2023-09-06" name one day.
        if (!parses(`${key} 00:00:00`, '%Y-%m-%d %H:%M:%S')) throw new UserError(`${where}: a weather key must be a date YYYY-MM-DD`);
        if (!isObject(record)) throw new UserError(`${where}: a day's weather must be a JSON object`);
        rows.set(strptime(`${key} 00:00:00`, '%Y-%m-%d %H:%M:%S').date.key(), record as JsonObject);
      } else if (name === 'HistoricWeather') {
        if (!isObject(record)) throw new UserError(`${where}: a month's weather must be a JSON object`);
        rows.set(key, record as JsonObject);
      } else {
        rows.set(key, checkRecord(record, RECORD_FIELDS[name], where));
      }
    }
    table.set(owner, rows);
  }
  return table;
}

/** Reads and checks `<dir>/<Name>.json` for the eight databases. */
export function loadDatabases(dir: string = DEFAULT_DATABASES_DIR): Databases {
  const out: Partial<Databases> = {};
  for (const name of DATABASE_NAMES) {
    const file = join(dir, `${name}.json`);
    if (!existsSync(file)) throw new UserError(`${file}: not found; the ToolTalk databases folder needs ${DATABASE_NAMES.map((n) => `${n}.json`).join(', ')}`);
    const text = readSourceText(file);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      throw new UserError(`${file}: not valid JSON (${messageOf(error)}); fix the file`);
    }
    (out as Record<string, unknown>)[name] = parseDatabase(name, json, file);
  }
  return out as Databases;
}

/** Stands for an entry of the base map not copied yet. */
const NOT_COPIED: unknown = Object.freeze({ notCopied: true });

/**
 * A map that behaves as a deep copy of `base` but copies an entry only when it is first reached
 * (get, or iteration). Every key is laid in at once, so the order is the base's, as a copy's would
 * be. A conversation touches a few owners' records, so a world made per conversation costs the
 * number of owners, not the size of the databases (a full copy made a 40 MB database quadratic).
 */
export class CopyOnReadMap<V> extends Map<string, V> {
  readonly #base: ReadonlyMap<string, V>;
  readonly #copy: (value: V) => V;

  constructor(base: ReadonlyMap<string, V>, copy: (value: V) => V) {
    super();
    this.#base = base;
    this.#copy = copy;
    for (const key of base.keys()) super.set(key, NOT_COPIED as V);
  }

  override get(key: string): V | undefined {
    const value = super.get(key);
    if (value !== NOT_COPIED) return value;
    const copied = this.#copy(this.#base.get(key) as V);
    super.set(key, copied);
    return copied;
  }

  override *entries(): MapIterator<[string, V]> {
    for (const key of super.keys()) yield [key, this.get(key) as V];
  }

  override *values(): MapIterator<V> {
    for (const [, value] of this.entries()) yield value;
  }

  override [Symbol.iterator](): MapIterator<[string, V]> {
    return this.entries();
  }

  override forEach(callback: (value: V, key: string, map: Map<string, V>) => void, thisArg?: unknown): void {
    for (const [key, value] of this.entries()) callback.call(thisArg, value, key, this);
  }
}

const copyRecord = (record: JsonObject): JsonObject => structuredClone(record);
const copyRows = (rows: Map<string, JsonObject>): Map<string, JsonObject> => new CopyOnReadMap(rows, copyRecord);

/**
 * A deep copy of the databases (the world's live state is such a copy), made lazily: records are
 * copied when a tool first reaches them, so nothing the copy's holder changes reaches the original.
 */
export function copyDatabases(databases: Databases): Databases {
  const out = { Account: new CopyOnReadMap(databases.Account, copyRecord) } as Partial<Databases> as Databases;
  for (const name of DATABASE_NAMES) if (name !== 'Account') out[name] = new CopyOnReadMap(databases[name], copyRows);
  return out;
}

/**
 * Lays an overlay over databases: each of its records replaces or adds the record under the same
 * owner and id (an account replaces the account of that username). Checked like a file; `source`
 * names it in errors.
 */
export function applyOverlay(databases: Databases, overlay: DatabasesJson, source = 'overlay'): Databases {
  const out = copyDatabases(databases);
  for (const [name, json] of Object.entries(overlay)) {
    if (!(DATABASE_NAMES as readonly string[]).includes(name)) throw new UserError(`${source}: unknown database "${name}"; use one of ${DATABASE_NAMES.join(', ')}`);
    const parsed = parseDatabase(name as DatabaseName, json, `${source} ${name}`);
    if (name === 'Account') {
      for (const [username, account] of parsed as Map<string, JsonObject>) out.Account.set(username, account);
      continue;
    }
    const table = out[name as Exclude<DatabaseName, 'Account'>];
    for (const [owner, rows] of parsed as Table) {
      const target = table.get(owner) ?? new Map<string, JsonObject>();
      for (const [id, record] of rows) target.set(id, record);
      table.set(owner, target);
    }
  }
  return out;
}

/** The databases back in their JSON form (for inspection and export). */
export function databasesToJson(databases: Databases): Record<DatabaseName, Record<string, Json>> {
  const out = {} as Record<DatabaseName, Record<string, Json>>;
  for (const name of DATABASE_NAMES) {
    const value = databases[name] as Map<string, JsonObject | Map<string, JsonObject>>;
    out[name] = Object.fromEntries([...value].map(([key, inner]) => [key, inner instanceof Map ? Object.fromEntries(inner) : inner]));
  }
  return structuredClone(out);
}
