import type { PythonRandom } from '../../core/python-random.ts';
import type { Json } from '../../core/records.ts';
import { PyException, pyTypeName, type PyDateTime } from './python.ts';

/** A JSON object: a database record, a tool's arguments or response. */
export type JsonObject = { [key: string]: Json };

/** Records by owner (username or city) and id, in file order (Maps keep it even for numeric-looking keys). */
export type Table = Map<string, Map<string, JsonObject>>;

/** The eight mock databases of ToolTalk, by file name. */
export interface Databases {
  Account: Map<string, JsonObject>;
  Alarm: Table;
  Calendar: Table;
  Email: Table;
  Message: Table;
  Reminder: Table;
  Weather: Table;
  HistoricWeather: Table;
}
export type DatabaseName = keyof Databases;
export const DATABASE_NAMES: readonly DatabaseName[] = ['Account', 'Alarm', 'Calendar', 'Email', 'Message', 'Reminder', 'Weather', 'HistoricWeather'];

/** One parameter as ToolTalk documents it. */
export interface ParamDoc {
  type: string;
  description: string;
  required: boolean;
  enum?: string[];
  items?: { type: string };
}

/** What a tool sees while it runs: the world's live databases, the simulated clock, its own generator. */
export interface ToolContext {
  databases: Databases;
  now: PyDateTime;
  random: PythonRandom;
}

/** Arguments as the tool receives them: every documented parameter present, null where absent (Python's None). */
export type Args = Record<string, Json>;

export interface SimTool {
  name: string;
  /** ToolTalk's suite name (AccountTools, Alarm, Calendar, Email, Messages, Reminder, Weather). */
  plugin: string;
  description: string;
  parameters: Record<string, ParamDoc>;
  /** The documented return fields. */
  output: Record<string, Json>;
  /** Changes the world (the paper's action tools). */
  isAction: boolean;
  /** Needs a logged-in user; the world passes the session token as `session_token`. */
  requiresAuth: boolean;
  /** Python keyword defaults other than None (SearchInbox's match_type = "any"). */
  defaults?: Record<string, Json>;
  call(ctx: ToolContext, args: Args): JsonObject;
}

/** `check_session_token`: the account holding this token. */
export function userOf(ctx: ToolContext, sessionToken: Json): JsonObject {
  for (const user of ctx.databases.Account.values()) {
    if (user.session_token === sessionToken) return user;
  }
  throw new PyException('Invalid session_token.');
}

/** `database[owner]`, creating the owner's table as the tools do before adding a record. */
export function ownTable(table: Table, owner: string): Map<string, JsonObject> {
  let records = table.get(owner);
  if (!records) table.set(owner, (records = new Map()));
  return records;
}

/**
 * `key in mapping` / `mapping.get(key)` with Python's rules: a list or dict key raises
 * `unhashable type`, a non-str key matches no (string) key.
 */
export function lookup<V>(map: Map<string, V>, key: Json): V | undefined {
  if (key !== null && typeof key === 'object') throw new PyException(`unhashable type: '${pyTypeName(key)}'`);
  return typeof key === 'string' ? map.get(key) : undefined;
}

/** A deep copy of a JSON value (the tools return `copy.deepcopy` of records). */
export function copyJson<T extends Json>(value: T): T {
  return structuredClone(value);
}

/** `re.match(pattern, value)` on a value that must be a str. */
function matches(pattern: RegExp, value: Json): boolean {
  if (typeof value !== 'string') throw new PyException(`expected string or bytes-like object, got '${pyTypeName(value)}'`);
  return pattern.test(value);
}

// Python's `$` also matches before a final newline; `\w` and `\d` are Unicode-aware.
const PHONE = /^\p{Nd}{3}-\p{Nd}{3}-\p{Nd}{4}\n?$/u;
const EMAIL = /^[\p{L}\p{N}_\-.]+@[\p{L}\p{N}_\-.]+\n?$/u;

/** ToolTalk's `verify_phone_format`: xxx-xxx-xxxx. */
export function isPhone(value: Json): boolean {
  return matches(PHONE, value);
}

/** ToolTalk's `verify_email_format`. */
export function isEmail(value: Json): boolean {
  return matches(EMAIL, value);
}
