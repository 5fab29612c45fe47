import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { UserError, fileSystemMessage, messageOf } from '../../core/errors.ts';
import type { Json } from '../../core/records.ts';
import { PyException, strptime } from './python.ts';
import { DATABASE_NAMES, type DatabaseName, type Databases, type JsonObject, type Table } from './tool.ts';

/** ToolTalk's mock databases as released: `<Name>.json` holds `{ owner: { id: record } }` (Account: `{ username: record }`). */
export const DEFAULT_DATABASES_DIR = '../shared/data/sources/tooltalk/databases';

/** Databases in their JSON form, e.g. an overlay: `{ Reminder: { justinkool: { "12-949b": {...} } } }`. */
export type DatabasesJson = Partial<Record<DatabaseName, Record<string, unknown>>>;

type FieldCheck = 'string' | 'datetime' | 'time' | 'nullable-string' | 'any';

/** The fields each database's tools read from a record, and what they must hold. */
const RECORD_FIELDS: Record<Exclude<DatabaseName, 'Account' | 'Weather' | 'HistoricWeather'>, Record<string, FieldCheck>> = {
  Alarm: { alarm_id: 'string', time: 'time' },
  Calendar: { event_id: 'string', name: 'any', event_type: 'any', start_time: 'datetime', end_time: 'datetime' },
  Email: { email_id: 'string', sender: 'any', subject: 'string', body: 'string', date: 'datetime' },
  Message: { message_id: 'string', sender: 'any', message: 'string', timestamp: 'datetime' },
  Reminder: { reminder_id: 'string', task: 'any', status: 'any' },
};
const ACCOUNT_FIELDS: Record<string, FieldCheck> = {
  username: 'string',
  password: 'any',
  email: 'any',
  phone: 'any',
  name: 'any',
  session_token: 'nullable-string',
};

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function checkRecord(record: unknown, fields: Record<string, FieldCheck>, where: string): JsonObject {
  if (!isObject(record)) throw new UserError(`${where}: a record must be a JSON object; fix the file`);
  for (const [field, check] of Object.entries(fields)) {
    if (!(field in record)) throw new UserError(`${where}: missing key "${field}"; every record needs ${Object.keys(fields).join(', ')}`);
    const value = record[field];
    const bad =
      (check === 'string' && typeof value !== 'string') ||
      (check === 'nullable-string' && value !== null && typeof value !== 'string') ||
      ((check === 'datetime' || check === 'time') && !parses(value, check === 'time' ? '%H:%M:%S' : '%Y-%m-%d %H:%M:%S'));
    if (bad) throw new UserError(`${where}: key "${field}" holds ${JSON.stringify(value)}; ${describe(check)}`);
  }
  return record as JsonObject;
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
  if (check === 'datetime') return 'write a date-time as YYYY-MM-DD HH:MM:SS';
  if (check === 'time') return 'write a time as HH:MM:SS';
  if (check === 'nullable-string') return 'it must be a string or null';
  return 'it must be a string';
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
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') throw new UserError(`${file}: not found; the ToolTalk databases folder needs ${DATABASE_NAMES.map((n) => `${n}.json`).join(', ')}`);
      throw new UserError(fileSystemMessage(error) ?? `${file}: cannot read (${messageOf(error)})`);
    }
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

/** A deep copy of the databases (the world's live state is such a copy). */
export function copyDatabases(databases: Databases): Databases {
  return structuredClone(databases);
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
