import { join } from 'node:path';
import { UserError, messageOf } from '../../core/errors.ts';
import type { Json } from '../../core/records.ts';
import { DEFAULT_DATABASES_DIR, loadDatabases } from './databases.ts';
import { conversationFiles } from './conversation-files.ts';
import type { Databases } from './tool.ts';
import { createWorld, type ConversationStart, type ToolRequest, type ToolResult } from './world.ts';
import { readSourceText } from '../../core/source-files.ts';

/** A released conversation, as far as the replay reads it. */
export interface ReleasedConversation {
  conversation_id?: string;
  user?: ConversationStart['user'];
  metadata: { timestamp: string } & Record<string, Json>;
  conversation: { index?: number; role: string; apis?: ({ request: ToolRequest } & ToolResult)[] }[];
}

/** One ground-truth call whose replay differs from the release. */
export interface ReplayMismatch {
  /** File path relative to the replayed folder. */
  file: string;
  /** Turn index and position of the call in that turn. */
  turn: number;
  call: number;
  api: string;
  expected: ToolResult;
  actual: ToolResult;
}

export interface ReplayReport {
  /** Per tool: calls whose response and exception came back byte for byte, and calls replayed. */
  tools: Record<string, { reproduced: number; total: number }>;
  reproduced: number;
  total: number;
  conversations: number;
  mismatches: ReplayMismatch[];
}

export interface ReplayOptions {
  /** Folder of the initial databases (default: the shared ToolTalk databases). */
  databasesDir?: string;
  /** Or the databases themselves. */
  databases?: Databases;
}

/** A released conversation file, read and shape-checked (file named in the error). */
export function readConversation(path: string): ReleasedConversation {
  const text = readSourceText(path);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new UserError(`${path}: not a readable JSON conversation (${messageOf(error)})`);
  }
  const conversation = json as ReleasedConversation;
  if (typeof conversation?.metadata?.timestamp !== 'string' || !Array.isArray(conversation.conversation)) {
    throw new UserError(`${path}: a ToolTalk conversation needs metadata.timestamp and a conversation array`);
  }
  return conversation;
}

/**
 * Replays every ground-truth call of every conversation under `dir` (all `*.json`, sub-folders
 * included) against the simulated tools: the world is reset per conversation from the initial
 * databases, its clock set from metadata.timestamp and its session from the conversation's user;
 * each call's parameters go in without their recorded session_token (the world supplies its own).
 * A call is reproduced when its `{ response, exception }` serialises to the same JSON as the release.
 */
export function replayReleased(dir: string, options: ReplayOptions = {}): ReplayReport {
  const world = createWorld({ databases: options.databases ?? loadDatabases(options.databasesDir ?? DEFAULT_DATABASES_DIR) });
  const report: ReplayReport = { tools: {}, reproduced: 0, total: 0, conversations: 0, mismatches: [] };
  for (const file of conversationFiles(dir)) {
    const released = readConversation(join(dir, file));
    world.reset({ timestamp: released.metadata.timestamp, user: released.user });
    report.conversations++;
    released.conversation.forEach((turn, turnPosition) => {
      (turn.apis ?? []).forEach((api, call) => {
        const { session_token: _recorded, ...parameters } = api.request.parameters ?? {};
        const actual = world.execute({ api_name: api.request.api_name, parameters: api.request.parameters === null ? null : parameters });
        const expected: ToolResult = { response: api.response, exception: api.exception };
        const counts = (report.tools[api.request.api_name] ??= { reproduced: 0, total: 0 });
        counts.total++;
        report.total++;
        if (JSON.stringify(actual) === JSON.stringify(expected)) {
          counts.reproduced++;
          report.reproduced++;
        } else {
          report.mismatches.push({ file, turn: turn.index ?? turnPosition, call, api: api.request.api_name, expected, actual });
        }
      });
    });
  }
  return report;
}
