import { UserError } from '../../core/errors.ts';
import { hashOf } from '../../core/hash.ts';
import { Sample, type Check, type Json } from '../../core/records.ts';
import { mapStage, reject, type MapStage, type RejectReason } from '../../core/stage.ts';
import { conversationToSample, type ConversationFile } from './conversation.ts';
import { readDatabasesFolder, type DatabasesReport } from './database-report.ts';
import { loadDatabases, type DatabasesJson } from './databases.ts';
import { DraftedConversation } from './draft.ts';
import { groundCall } from '../grounding.ts';
import { pyTypeName } from './python.ts';
import { scenarioKey } from './scenarios.ts';
import type { Databases, JsonObject } from './tool.ts';
import { TOOLS_BY_NAME } from './tools/index.ts';
import { createWorld } from './world.ts';
import { hasType } from '../../core/json-schema.ts';

/**
 * Executes a drafted conversation: the world is reset from the initial databases plus the draft's
 * overlay, the clock at its timestamp, and every intended call runs in order through the
 * simulators; the real response or exception is written into the conversation. A call that cannot be
 * made (unknown tool, arguments that do not fit — the simulator's own message), a wrong argument
 * type, a call that fails where the draft expected success (or the reverse), an argument the
 * conversation never states, too few calls, or an overlay that rewrites the databases rejects the
 * conversation with its reason. Accepted conversations are tagged for review (grounding, plausibility).
 */

/** `<plugins>-<tool>-<n>` like the released files; easy ones `<tool>-easy`. */
function conversationName(drafted: DraftedConversation): string {
  return drafted.scenario.id;
}

/** A UUID-shaped id derived from the conversation's content (stable across runs). */
function conversationId(seed: unknown): string {
  const h = hashOf(seed, 32);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/** Overlay records that would replace a record of the initial databases (the export merges overlays into them). */
function rewrittenKeys(initial: Databases, overlay: DatabasesJson): string[] {
  const out: string[] = [];
  for (const [name, byOwner] of Object.entries(overlay)) {
    const table = (initial as unknown as Record<string, Map<string, unknown>>)[name];
    if (!table) continue;
    for (const [owner, rows] of Object.entries(byOwner ?? {})) {
      if (name === 'Account') {
        if (table.has(owner)) out.push(`Account › ${owner}`);
        continue;
      }
      const existing = table.get(owner) as Map<string, unknown> | undefined;
      for (const id of Object.keys(rows as object)) if (existing?.has(id)) out.push(`${name} › ${owner} › ${id}`);
    }
  }
  return out;
}

export interface ExecuteOptions {
  databasesDir: string;
}

export interface ExecutedConversation {
  conversation: ConversationFile;
  checks: Check[];
}

/** Runs the draft's calls and builds the released-shape conversation, or says why it is rejected. */
export function executeDraft(drafted: DraftedConversation, initial: Databases): ExecutedConversation | RejectReason {
  const { scenario, world: facts, draft } = drafted;
  const rewritten = rewrittenKeys(initial, draft.overlay as DatabasesJson);
  if (rewritten.length) return { reason: 'overlay_rewrites_database', detail: `the overlay replaces ${rewritten.join(', ')}; give new records new ids` };
  let world;
  try {
    world = createWorld({ databases: initial, overlay: draft.overlay as DatabasesJson, overlaySource: 'the draft overlay' });
  } catch (error) {
    if (error instanceof UserError) return { reason: 'bad_overlay', detail: error.message };
    throw error;
  }
  if (draft.turns[0].role !== 'user') return { reason: 'bad_turns', detail: 'the conversation must start with the user' };
  const user: Record<string, Json> = { ...(facts.user as unknown as JsonObject) };
  if (drafted.sessionToken) user.session_token = drafted.sessionToken;
  if (facts.verificationCode) user.verification_code = facts.verificationCode;
  try {
    world.reset({ timestamp: facts.timestamp, user: user as never });
  } catch (error) {
    if (error instanceof UserError) return { reason: 'bad_start', detail: error.message };
    throw error;
  }

  const checks: Check[] = [];
  const loose: string[] = [];
  // What the assistant may take values from: the user block, metadata, every turn so far, earlier results.
  let context = [facts.user.username, facts.location, facts.timestamp].join('\n');
  const turns: ConversationFile['conversation'] = [];
  const apisUsed: string[] = [];
  const suitesUsed: string[] = [];
  let calls = 0;
  for (const [index, turn] of draft.turns.entries()) {
    context += `\n${turn.text}`;
    if (turn.role === 'user') {
      if (turn.calls.length) return { reason: 'bad_turns', detail: `turn ${index}: a user turn makes no calls` };
      turns.push({ index, role: 'user', text: turn.text });
      continue;
    }
    const apis: NonNullable<ConversationFile['conversation'][number]['apis']> = [];
    for (const [position, planned] of turn.calls.entries()) {
      const where = `turn ${index} call ${position + 1} ${planned.api_name}`;
      const { session_token: _supplied, ...parameters } = planned.parameters;
      const problem = world.validateCall({ api_name: planned.api_name, parameters });
      if (problem) return { reason: problem.startsWith('API ') ? 'unknown_tool' : 'bad_arguments', detail: `${where}: ${problem}` };
      const tool = TOOLS_BY_NAME.get(planned.api_name)!;
      for (const [name, value] of Object.entries(parameters)) {
        const type = tool.parameters[name]?.type;
        if (type && value !== null && !hasType(value, type)) {
          const tried = world.fork().execute({ api_name: planned.api_name, parameters });
          return { reason: 'wrong_type', detail: `${where}: ${name} must be ${type}, got ${pyTypeName(value)} ${JSON.stringify(value)}; the simulator says: ${tried.exception ?? 'nothing (it accepted the value)'}` };
        }
      }
      const grounding = groundCall(parameters, context, new Set(Object.keys(tool.parameters).filter((name) => tool.parameters[name].enum || name === 'event_type')));
      const missing = grounding.filter((g) => g.how === 'missing');
      if (missing.length) return { reason: 'ungrounded_argument', detail: `${where}: ${missing.map((g) => `${g.param}=${JSON.stringify(g.value)}`).join(', ')} not stated in the conversation` };
      loose.push(...grounding.filter((g) => g.how === 'loose').map((g) => `${where}: ${g.param}=${JSON.stringify(g.value)}`));
      const token = tool.requiresAuth ? world.sessionToken : null;
      const result = world.execute({ api_name: planned.api_name, parameters });
      if (result.exception !== null && planned.expect === 'success') return { reason: 'call_failed', detail: `${where}: ${result.exception}` };
      if (result.exception === null && planned.expect === 'failure') return { reason: 'unexpected_success', detail: `${where}: expected to fail, but succeeded` };
      apis.push({ request: { api_name: planned.api_name, parameters: token === null ? parameters : { session_token: token, ...parameters } }, response: result.response, exception: result.exception });
      context += `\n${JSON.stringify(result.response)}`;
      calls++;
      if (!apisUsed.includes(tool.name)) apisUsed.push(tool.name);
      if (!suitesUsed.includes(tool.plugin)) suitesUsed.push(tool.plugin);
    }
    turns.push({ index, role: 'assistant', text: turn.text, ...(apis.length ? { apis } : {}) });
  }
  if (!apisUsed.includes(scenario.requiredApi)) return { reason: 'missing_required_tool', detail: `the conversation never calls ${scenario.requiredApi}` };
  if (scenario.category === 'easy' && calls !== 1) return { reason: 'easy_needs_one_call', detail: `an easy conversation makes exactly one call; this one makes ${calls}` };
  if (scenario.category === 'tooltalk' && calls < 3) return { reason: 'too_few_calls', detail: `a conversation makes at least 3 calls; this one makes ${calls}` };
  checks.push({ name: 'tooltalk/grounding', pass: !loose.length, soft: true, ...(loose.length ? { reason: `stated only loosely: ${loose.join('; ')}` } : {}) });

  const metadata: ConversationFile['metadata'] = { location: facts.location, timestamp: facts.timestamp };
  if (drafted.sessionToken) Object.assign(metadata, { session_token: drafted.sessionToken, username: facts.user.username });
  const conversation: ConversationFile = {
    name: conversationName(drafted),
    conversation_id: conversationId({ key: scenarioKey(scenario), draft }),
    suites_used: suitesUsed,
    apis_used: apisUsed,
    scenario: scenario.description,
    user,
    metadata,
    conversation: turns,
  };
  return { conversation, checks };
}

export function executeConversationStage(options: ExecuteOptions): MapStage<DraftedConversation, Sample> {
  let initial: { databases: Databases; report: DatabasesReport } | undefined;
  return mapStage({
    name: 'execute-conversation',
    version: 1,
    input: DraftedConversation,
    output: Sample,
    keyOf: (drafted) => scenarioKey(drafted.scenario),
    run: async (drafted, ctx) => {
      const dir = ctx.resolvePath(options.databasesDir);
      initial ??= { databases: loadDatabases(dir), report: readDatabasesFolder(dir) };
      const executed = executeDraft(drafted, initial.databases);
      if ('reason' in executed) return reject(executed.reason, executed.detail);
      const category = drafted.scenario.category;
      return conversationToSample(executed.conversation, {
        category,
        file: `${category}/${executed.conversation.name}.json`,
        overlay: drafted.draft.overlay as DatabasesJson,
        floatKeys: initial.report.floatKeys,
        origin: { scenario: scenarioKey(drafted.scenario) },
        meta: {
          lineage: [drafted.lineage, ctx.lineage()],
          checks: executed.checks,
          // What a reviewer checks in every drafted conversation: is each argument stated, is the exchange plausible.
          tags: ['review:check-grounding', 'review:check-plausibility'],
        },
      });
    },
  });
}
