import { UserError } from '../../core/errors.ts';
import { PythonRandom } from '../../core/python-random.ts';
import type { Json } from '../../core/records.ts';
import { applyOverlay, copyDatabases, databasesToJson, type DatabasesJson } from './databases.ts';
import { PyException, formatDateTime, strptime, type PyDateTime } from './python.ts';
import { userOf, copyJson, type Args, type DatabaseName, type Databases, type JsonObject, type SimTool, type ToolContext } from './tool.ts';
import { TOOLS_BY_NAME } from './tools/index.ts';

/** A call as the released conversations record it. */
export interface ToolRequest {
  api_name: string;
  /** null when the call could not be parsed. */
  parameters: Record<string, Json> | null;
}

/** A call's outcome in the released shape: a response, or an exception string and a null response. */
export interface ToolResult {
  response: JsonObject | null;
  exception: string | null;
}

/** How a conversation starts: the clock (metadata.timestamp) and the user record, as released. */
export interface ConversationStart {
  /** `%Y-%m-%d %H:%M:%S`. */
  timestamp: string;
  /** The conversation's `user`: a `session_token` key logs that user in; a `verification_code` key stores one. */
  user?: { username: string; session_token?: string | null; verification_code?: string } & Record<string, Json | undefined>;
}

export interface WorldOptions {
  /** The initial databases (loadDatabases). */
  databases: Databases;
  /** Records laid over them (a scenario's own reminders, events, …); applied again at every reset. */
  overlay?: DatabasesJson;
  /** Names the overlay in errors. */
  overlaySource?: string;
}

/** Every tool draws identifiers from its own `random.Random(489)`, new for every conversation. */
const TOOL_SEED = 489;
const DATETIME = '%Y-%m-%d %H:%M:%S';
const LOGIN_TOOLS = new Set(['UserLogin', 'RegisterUser']);
const LOGOUT_TOOLS = new Set(['LogoutUser', 'DeleteAccount']);

/**
 * The ToolTalk world: databases, simulated clock, session and the tools' generators, behaving as
 * ToolTalk's ToolExecutor. `reset` starts a conversation from the initial databases (plus overlay);
 * `execute` runs one call and returns `{ response, exception }` as the released conversations do.
 * The session token is the world's: a tool that needs a login gets it as `session_token`, whatever
 * the call carried; UserLogin / RegisterUser set it, LogoutUser / DeleteAccount clear it, and one
 * user is logged in at a time.
 */
export class ToolTalkWorld {
  private readonly initial: Databases;
  private databases: Databases;
  private clock: PyDateTime | null = null;
  private session: string | null = null;
  private generators = new Map<string, PythonRandom>();

  constructor(options: WorldOptions) {
    this.initial = options.overlay ? applyOverlay(options.databases, options.overlay, options.overlaySource) : copyDatabases(options.databases);
    this.databases = copyDatabases(this.initial);
  }

  /** Starts a conversation: initial databases, new generators, the clock at `timestamp`, the user's session. */
  reset(start: ConversationStart): void {
    let clock: PyDateTime;
    try {
      clock = strptime(start.timestamp, DATETIME);
    } catch {
      throw new UserError(`conversation timestamp ${JSON.stringify(start.timestamp)}: write it as YYYY-MM-DD HH:MM:SS`);
    }
    const databases = copyDatabases(this.initial);
    let session: string | null = null;
    const user = start.user;
    if (user && ('session_token' in user || 'verification_code' in user)) {
      const account = databases.Account.get(user.username);
      if (!account) throw new UserError(`conversation user "${user.username}" is not in the Account database; add the account (overlay) or fix the conversation`);
      if ('session_token' in user) {
        session = user.session_token ?? null;
        account.session_token = session;
      }
      if ('verification_code' in user) account.verification_code = user.verification_code ?? null;
    }
    this.databases = databases;
    this.clock = clock;
    this.session = session;
    this.generators = new Map();
  }

  /** The logged-in user's session token, or null. */
  get sessionToken(): string | null {
    return this.session;
  }

  /** The simulated time, `%Y-%m-%d %H:%M:%S`. */
  get now(): string | null {
    return this.clock && formatDateTime(this.clock);
  }

  /** The live databases in JSON form (a copy). */
  snapshot(): Record<DatabaseName, Record<string, Json>> {
    return databasesToJson(this.databases);
  }

  /** An independent copy of this world in its current state (to try a call without consequences). */
  fork(): ToolTalkWorld {
    const copy = new ToolTalkWorld({ databases: this.initial });
    copy.databases = copyDatabases(this.databases);
    copy.clock = this.clock;
    copy.session = this.session;
    for (const [name, random] of this.generators) {
      const twin = new PythonRandom();
      twin.setState(random.getState());
      copy.generators.set(name, twin);
    }
    return copy;
  }

  /**
   * The message a call would fail with before the tool looks at the world: unparsed parameters,
   * an unknown tool, or arguments that do not fit its signature (Python's own TypeError text).
   * Null when the call can be made. The session is the world's, so `session_token` is never missing.
   */
  validateCall(request: ToolRequest): string | null {
    if (!isParameters(request.parameters)) return 'Failed to parse API call';
    const tool = TOOLS_BY_NAME.get(request.api_name);
    if (!tool) return `API ${request.api_name} not found`;
    const parameters = tool.requiresAuth ? { ...request.parameters, session_token: this.session } : request.parameters;
    const bound = bindArguments(tool, parameters);
    return typeof bound === 'string' ? bound : null;
  }

  /** Runs one call at the simulated time (ToolExecutor.execute_tool). */
  execute(request: ToolRequest): ToolResult {
    if (!this.clock) throw new Error('ToolTalkWorld.execute: call reset({ timestamp }) first');
    if (!isParameters(request.parameters)) return failure('Failed to parse API call');
    const tool = TOOLS_BY_NAME.get(request.api_name);
    if (!tool) return failure(`API ${request.api_name} not found`);
    const parameters = { ...request.parameters };
    if (tool.requiresAuth) {
      if (this.session === null) return failure('User is not logged in');
      parameters.session_token = this.session;
    }
    const context: ToolContext = { databases: this.databases, now: this.clock, random: this.generatorOf(tool.name) };
    if (LOGIN_TOOLS.has(tool.name) && this.session !== null) {
      const current = attempt(() => userOf(context, this.session));
      return failure(current instanceof PyException ? current.message : `Only one user can be logged in at a time. Current user is ${current.username}.`);
    }
    const bound = bindArguments(tool, parameters);
    if (typeof bound === 'string') return failure(bound);
    const outcome = attempt(() => tool.call(context, bound));
    if (outcome instanceof PyException) return failure(outcome.message);
    if (LOGIN_TOOLS.has(tool.name)) this.session = outcome.session_token as string;
    else if (LOGOUT_TOOLS.has(tool.name)) this.session = null;
    return { response: copyJson(outcome), exception: null };
  }

  private generatorOf(name: string): PythonRandom {
    let random = this.generators.get(name);
    if (!random) this.generators.set(name, (random = new PythonRandom(TOOL_SEED)));
    return random;
  }
}

/** A world over the initial databases and an optional overlay; call `reset` before each conversation. */
export function createWorld(options: WorldOptions): ToolTalkWorld {
  return new ToolTalkWorld(options);
}

function failure(exception: string): ToolResult {
  return { response: null, exception };
}

function isParameters(value: unknown): value is Record<string, Json> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Runs a tool body; what it raises comes back as a PyException (ToolTalk catches every exception). */
function attempt<T>(body: () => T): T | PyException {
  try {
    return body();
  } catch (error) {
    if (error instanceof PyException) return error;
    // A JavaScript error on inputs of unexpected types: Python would raise too; keep its text.
    if (error instanceof Error) return new PyException(error.message);
    throw error;
  }
}

/**
 * Python's binding of keyword arguments to `call(self, [session_token,] <parameters>)`: the first
 * unexpected keyword, else the missing required ones, in CPython 3.11's words. Returns the
 * arguments with absent optional ones as None (null) or their Python default.
 */
export function bindArguments(tool: SimTool, parameters: Record<string, Json>): Args | string {
  const names = [...(tool.requiresAuth ? ['session_token'] : []), ...Object.keys(tool.parameters)];
  const required = [...(tool.requiresAuth ? ['session_token'] : []), ...Object.entries(tool.parameters).filter(([, doc]) => doc.required).map(([name]) => name)];
  const unexpected = Object.keys(parameters).find((key) => !names.includes(key));
  if (unexpected !== undefined) return `${tool.name}.call() got an unexpected keyword argument '${unexpected}'`;
  const missing = required.filter((name) => !Object.hasOwn(parameters, name));
  if (missing.length > 0) {
    const quoted = missing.map((name) => `'${name}'`);
    const list = quoted.length === 1 ? quoted[0] : quoted.length === 2 ? `${quoted[0]} and ${quoted[1]}` : `${quoted.slice(0, -1).join(', ')}, and ${quoted.at(-1)}`;
    return `${tool.name}.call() missing ${missing.length} required positional argument${missing.length === 1 ? '' : 's'}: ${list}`;
  }
  const args: Args = {};
  for (const name of names) args[name] = Object.hasOwn(parameters, name) ? parameters[name] : (tool.defaults?.[name] ?? null);
  return args;
}
