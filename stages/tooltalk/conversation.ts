import { z } from 'zod';
import { UserError } from '../../core/errors.ts';
import { JsonValue, Sample, formatZodError, sampleId, type Call, type Json, type ToolSpec, type Turn } from '../../core/records.ts';
import type { DatabasesJson } from './databases.ts';
import { TOOLS_BY_NAME } from './tools/index.ts';
import { toolSpecOf } from './specs.ts';
import { TOOLTALK_TOOLS } from './tools/index.ts';

/**
 * A ToolTalk conversation file (the released shape) ↔ a canonical Sample. The sample keeps in
 * `meta.tooltalk` what the canonical records have no slot for — the header fields in their order,
 * each turn's `index`, the session token each call carried, the database overlay, the keys whose
 * numbers are floats — so that exporting an imported file gives it back byte for byte.
 */

const ApiRecord = z.object({
  request: z.object({ api_name: z.string().min(1), parameters: z.record(z.string(), JsonValue) }),
  response: JsonValue,
  exception: z.string().nullable(),
});

export const ConversationFile = z
  .object({
    name: z.string().min(1),
    conversation_id: z.string().min(1),
    suites_used: z.array(z.string()),
    apis_used: z.array(z.string()),
    scenario: z.string().optional(),
    user: z.record(z.string(), JsonValue),
    metadata: z.object({ location: z.string(), timestamp: z.string() }).catchall(JsonValue),
    conversation: z.array(
      z.object({ index: z.number().int().optional(), role: z.enum(['user', 'assistant']), text: z.string(), apis: z.array(ApiRecord).optional() }).strict(),
    ),
  })
  .strict();
export type ConversationFile = z.infer<typeof ConversationFile>;

/** What a ToolTalk sample keeps beside the canonical fields. */
export const ToolTalkMeta = z.object({
  /** Every top-level field but `conversation`, in the file's order. */
  header: z.record(z.string(), JsonValue),
  /** Each turn's `index` (null where the file has none). */
  turnIndex: z.array(z.number().int().nullable()),
  /** Call id → the session token its parameters carried (first, as ToolTalk writes them). */
  sessionTokens: z.record(z.string(), z.string()).default({}),
  /** Records this conversation adds to the initial databases. */
  overlay: z.record(z.string(), z.record(z.string(), z.unknown())).default({}),
  /** Keys whose numbers are Python floats (written `3.0`). */
  floatKeys: z.array(z.string()).default([]),
  /** Where the file goes in an export: `<easy|tooltalk>/<name>.json`. */
  file: z.string().min(1),
  /** Over an imported tool library: the results are the recorded (executed or simulated) ones; there are no databases to run the calls on again. */
  toolsImported: z.boolean().optional(),
});
export type ToolTalkMeta = z.infer<typeof ToolTalkMeta>;

/** The candidate tools of a conversation: every tool of the suites it uses (ToolTalk shows a model those). */
export function candidateTools(suites: readonly string[]): ToolSpec[] {
  return TOOLTALK_TOOLS.filter((tool) => suites.includes(tool.plugin)).map(toolSpecOf);
}

export interface ToSampleOptions {
  category: 'easy' | 'tooltalk';
  /** Export path relative to the export folder. */
  file: string;
  overlay?: DatabasesJson;
  floatKeys?: string[];
  /** What the sample id derives from (default: the file path and conversation id). */
  origin?: unknown;
  meta?: Partial<Sample['meta']>;
  /** The candidate tools (default: every built-in tool of the suites used). */
  tools?: ToolSpec[];
  /** The conversation is over an imported tool library (`meta.tooltalk.toolsImported`). */
  toolsImported?: boolean;
}

/** A released-shape conversation → a canonical Sample (calls without their session token; results as observations). */
export function conversationToSample(conversation: ConversationFile, options: ToSampleOptions): Sample {
  const { conversation: turns, ...header } = conversation;
  const sessionTokens: Record<string, string> = {};
  const expectedTurns: Record<string, Call[]> = {};
  let callCount = 0;
  const dialogue: Turn[] = turns.map((turn, position) => {
    if (!turn.apis) return { role: turn.role, content: turn.text };
    const calls: Call[] = [];
    const observations: Record<string, Json> = {};
    for (const api of turn.apis) {
      const id = `call_${++callCount}`;
      const { session_token: token, ...args } = api.request.parameters;
      if (token !== undefined) {
        if (typeof token !== 'string' || Object.keys(api.request.parameters)[0] !== 'session_token') throw new UserError(`${options.file}: turn ${position}: a session_token must be the first parameter and a string`);
        sessionTokens[id] = token;
      }
      calls.push({ id, tool: api.request.api_name, arguments: args });
      observations[id] = { response: api.response, exception: api.exception };
    }
    expectedTurns[String(position)] = calls;
    return { role: turn.role, content: turn.text, calls, observations };
  });
  const tooltalk: ToolTalkMeta = {
    header: header as Record<string, Json>,
    turnIndex: turns.map((turn) => turn.index ?? null),
    sessionTokens,
    overlay: (options.overlay ?? {}) as ToolTalkMeta['overlay'],
    floatKeys: options.floatKeys ?? [],
    file: options.file,
    ...(options.toolsImported ? { toolsImported: true } : {}),
  };
  return Sample.parse({
    id: sampleId('tooltalk', options.origin ?? { file: options.file, conversation: conversation.conversation_id }),
    benchmark: 'tooltalk',
    category: options.category,
    split: 'test',
    tools: options.tools ?? candidateTools(conversation.suites_used),
    dialogue,
    expected: { calls: Object.values(expectedTurns).flat(), turns: expectedTurns },
    meta: { source: { dataset: 'tooltalk', id: conversation.conversation_id, file: options.file }, lineage: [], checks: [], tags: [], ...options.meta, tooltalk },
  });
}

export function toolTalkMetaOf(sample: Sample): ToolTalkMeta {
  const parsed = ToolTalkMeta.safeParse((sample.meta as { tooltalk?: unknown }).tooltalk);
  if (!parsed.success) throw new UserError(`sample ${sample.id}: not a ToolTalk sample (meta.tooltalk: ${formatZodError(parsed.error)})`);
  return parsed.data;
}

/** A canonical Sample → the released shape (header fields in their order, then the conversation). */
export function sampleToConversation(sample: Sample): ConversationFile {
  const meta = toolTalkMetaOf(sample);
  const conversation = sample.dialogue.map((turn, position) => {
    const index = meta.turnIndex[position];
    const out: Record<string, Json> = { ...(index === null || index === undefined ? {} : { index }), role: turn.role, text: turn.content };
    if (turn.calls) {
      out.apis = turn.calls.map((call) => {
        const token = meta.sessionTokens[call.id];
        const observed = (turn.observations?.[call.id] ?? { response: null, exception: null }) as { response: Json; exception: string | null };
        return {
          request: { api_name: call.tool, parameters: { ...(token === undefined ? {} : { session_token: token }), ...(call.arguments as Record<string, Json>) } },
          response: observed.response,
          exception: observed.exception,
        };
      });
    }
    return out;
  });
  return { ...(meta.header as Omit<ConversationFile, 'conversation'>), conversation } as ConversationFile;
}

/** Parses a conversation file's JSON; `where` names it in the one-line error. */
export function parseConversationFile(json: unknown, where: string): ConversationFile {
  const parsed = ConversationFile.safeParse(json);
  if (!parsed.success) throw new UserError(`${where}: not a ToolTalk conversation: ${formatZodError(parsed.error)}`);
  for (const turn of parsed.data.conversation) for (const api of turn.apis ?? []) if (!TOOLS_BY_NAME.has(api.request.api_name)) throw new UserError(`${where}: unknown tool "${api.request.api_name}"`);
  return parsed.data;
}
