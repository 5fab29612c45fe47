import { z } from 'zod';
import { hashOf } from '../../core/hash.ts';
import { ArgumentValidator, describeProblems } from '../../core/json-schema.ts';
import { JsonValue, LineageEntry, Sample, isRef, parseRef, type Call, type Json, type ToolSpec } from '../../core/records.ts';
import { Rng } from '../../core/rng.ts';
import { mapStage, reject, scanStage, sourceStage, type MapStage, type RejectReason, type ScanStage, type SourceStage, type StageContext } from '../../core/stage.ts';
import { resolveArguments } from '../../core/tool-server.ts';
import type { ToolsConfig } from '../../core/tool-source.ts';
import overToolsPrompt, { OverToolsDraft, type ConversationFacts } from '../../prompts/tooltalk-conversation-over-tools.ts';
import repliesPrompt from '../../prompts/tooltalk-replies.ts';
import scenariosPrompt from '../../prompts/tooltalk-scenarios.ts';
import toolResultPrompt from '../../prompts/tooltalk-tool-result.ts';
import { openLiveExecution, runOnLiveServers, type LiveExecution } from '../execute-calls.ts';
import { groundCall } from '../grounding.ts';
import { importedToolRecords } from '../sources/imported-tools.ts';
import { conversationToSample, type ConversationFile } from './conversation.ts';
import { libraryDocs, libraryOf, pluginOf, pluginsFor, toolsOfPlugins, type ToolTalkLibrary } from './library.ts';
import { Scenario, ScenarioRequest, scenarioKey, scenarioProblem } from './scenarios.ts';

/**
 * ToolTalk (§2.2) over an imported tool library: the servers are the plugins. Each tool gets a
 * scenario prompt over its plugin and two others; scenarios are filtered, judged plausible and
 * sampled evenly over the tools as for the built-in plugins, plus one easy scenario per tool. The
 * LLM writes each conversation: user turns and the assistant's calls, a value taken from an earlier
 * result written as a reference to it. The calls are then executed on the live servers (all of a
 * conversation's calls on one pass, in order, so a server with state sees them together) or, where
 * no live server serves a tool, their results are simulated by the LLM and checked against the
 * tool's result schema; `meta.execution` says which. Last, the assistant's replies are written
 * from the results, and the conversation is made a sample in ToolTalk's shape.
 */

export type LibraryLoad = (ctx: Pick<StageContext, 'resolvePath' | 'log'>) => Promise<ToolTalkLibrary>;

export const Execution = z.object({ mode: z.enum(['executed', 'simulated']) }).catchall(JsonValue);
export type Execution = z.infer<typeof Execution>;

export const ImportedConversation = z.object({
  scenario: Scenario,
  facts: z.object({ location: z.string(), timestamp: z.string(), username: z.string() }),
  turns: OverToolsDraft.shape.turns,
  /** Each call's result, in call order, once executed (null: to be simulated). */
  results: z.array(JsonValue).nullable(),
  execution: Execution.nullable(),
  lineage: z.array(LineageEntry),
});
export type ImportedConversation = z.infer<typeof ImportedConversation>;

/** A scenario request over an imported library: a plugin (server) with fewer than two others may stand with one or none. */
const ImportedScenarioRequest = ScenarioRequest.extend({ plugins: z.array(z.string()).min(1).max(3) });

/** One prompt per tool, over its plugin and two others (library.ts `pluginsFor`); refused tools are this stage's rejects. */
export function importedScenarioRequestsStage(tools: ToolsConfig): SourceStage<ScenarioRequest> {
  return sourceStage({
    name: 'imported-scenario-requests',
    version: 1,
    output: ImportedScenarioRequest,
    load: async function* (ctx) {
      const imported: ToolSpec[] = [];
      for await (const item of importedToolRecords(tools, ctx, (tool) => tool)) {
        if ('reject' in item) yield item;
        else imported.push(item);
      }
      const library = libraryOf(imported);
      ctx.report('tooltalk.library', { tools: library.tools.length, plugins: library.byPlugin.size });
      for (const tool of library.tools) yield { plugins: pluginsFor(tool, library, Rng.derive(ctx.seed, 'tooltalk-plugins', tool.name)), requiredApi: tool.name };
    },
  });
}

/** Scenarios over the request's plugins (prompt `tooltalk/scenarios`, as for the built-in plugins). */
export function generateImportedScenariosStage(load: LibraryLoad, options: { temperature?: number } = {}): MapStage<ScenarioRequest, Scenario> {
  return mapStage({
    name: 'generate-imported-scenarios',
    version: 1,
    input: ImportedScenarioRequest,
    output: Scenario,
    fanOut: true,
    prompts: [scenariosPrompt],
    keyOf: (request) => `${request.plugins.join('-')}:${request.requiredApi}`,
    run: async (request, ctx) => {
      const tools = toolsOfPlugins(await load(ctx), request.plugins);
      const answer = await ctx.ask(scenariosPrompt, { apiDocs: libraryDocs(tools), requiredApi: request.requiredApi, toolNames: tools.map((tool) => tool.name) }, { temperature: options.temperature });
      // Server names are free text: the id (the exported file's name) is made of the tool's name and a hash of the plugins.
      return answer.value.scenarios.map((scenario, index) => ({
        id: `${request.requiredApi}-${hashOf(request.plugins, 8)}-${index}`,
        category: 'tooltalk' as const,
        plugins: request.plugins,
        requiredApi: request.requiredApi,
        description: scenario.description,
        calls: scenario.calls,
      }));
    },
  });
}

export function filterImportedScenariosStage(load: LibraryLoad): MapStage<Scenario, Scenario> {
  return mapStage({
    name: 'filter-imported-scenarios',
    version: 1,
    input: Scenario,
    output: Scenario,
    run: async (scenario, ctx) => {
      const offered = new Set(toolsOfPlugins(await load(ctx), scenario.plugins).map((tool) => tool.name));
      const problem = scenarioProblem(scenario, offered);
      return problem ? reject(problem.reason, problem.detail) : scenario;
    },
  });
}

/** One easy scenario per tool of the library (ToolTalk's easy set: one call). */
export async function easyImportedScenarios(load: LibraryLoad, ctx: StageContext): Promise<Scenario[]> {
  return (await load(ctx)).tools.map((tool) => ({ id: `${tool.name}-easy`, category: 'easy' as const, plugins: [pluginOf(tool)], requiredApi: tool.name, description: `${tool.name} easy scenario`, calls: [tool.name] }));
}

const CITIES = ['Lisbon', 'Toronto', 'Nairobi', 'Osaka', 'Denver', 'Tallinn', 'Porto Alegre', 'Auckland'];
const USERNAMES = ['nlindqvist', 'ookafor', 'preyes', 'lhaddad', 'mnovak', 'ttanaka'];

/** Who talks, where and when (seeded per scenario): the system prompt of ToolTalk's evaluation shows them. */
function factsFor(rng: Rng): ConversationFacts {
  const day = `2026-${String(rng.int(1, 12)).padStart(2, '0')}-${String(rng.int(1, 28)).padStart(2, '0')}`;
  return { location: rng.pick(CITIES), timestamp: `${day} ${String(rng.int(8, 18)).padStart(2, '0')}:00:00`, username: rng.pick(USERNAMES) };
}

/** The calls of a draft in order, with ids `call_1`, `call_2`, … (the ids references name). */
export function draftCalls(turns: ImportedConversation['turns']): Call[] {
  return turns.flatMap((turn) => turn.calls).map((call, i) => ({ id: `call_${i + 1}`, tool: call.api_name, arguments: call.parameters }));
}

const validator = new ArgumentValidator({ maxCompiled: 2_000 });

/** Why a drafted conversation cannot be used (ToolTalk's rules for drafts), or null. */
export function draftProblem(turns: ImportedConversation['turns'], scenario: Scenario, library: ToolTalkLibrary, facts: ConversationFacts): RejectReason | null {
  if (turns[0].role !== 'user') return { reason: 'bad_turns', detail: 'the conversation must start with the user' };
  const offered = new Set(toolsOfPlugins(library, scenario.plugins).map((tool) => tool.name));
  let context = [facts.username, facts.location, facts.timestamp].join('\n');
  const made: { id: string; tool: ToolSpec }[] = [];
  for (const [index, turn] of turns.entries()) {
    context += `\n${turn.text}`;
    if (turn.role === 'user' && turn.calls.length) return { reason: 'bad_turns', detail: `turn ${index}: a user turn makes no calls` };
    for (const [position, call] of turn.calls.entries()) {
      const where = `turn ${index} call ${position + 1} ${call.api_name}`;
      const tool = library.byName.get(call.api_name);
      if (!tool || !offered.has(call.api_name)) return { reason: 'unknown_tool', detail: `${where}: not among the tools of ${scenario.plugins.join(', ')}` };
      const literal: Record<string, Json> = {};
      const referred = new Set<string>();
      for (const [name, value] of Object.entries(call.parameters)) {
        const refs = refsIn(value);
        if (!refs.length) {
          literal[name] = value;
          continue;
        }
        referred.add(name);
        for (const ref of refs) {
          const { callId, field } = parseRef(ref);
          const source = made.find((m) => m.id === callId);
          if (!source) return { reason: 'bad_reference', detail: `${where}: ${name} refers to ${callId}, which is not an earlier call` };
          if (!(field in source.tool.returns.properties)) return { reason: 'bad_reference', detail: `${where}: ${name} refers to ${ref.$ref}, but ${source.tool.name} returns no field "${field}"` };
        }
      }
      const problems = validator.validate(tool.parameters, literal).filter((problem) => !referred.has(problem.message.match(/^required argument "(.+)" is missing$/)?.[1] ?? ''));
      if (problems.length) return { reason: 'bad_arguments', detail: `${where}: ${describeProblems(problems)}` };
      const enums = new Set(Object.entries(tool.parameters.properties).filter(([, schema]) => (schema as { enum?: unknown }).enum).map(([name]) => name));
      const missing = groundCall(literal, context, enums).filter((g) => g.how === 'missing');
      if (missing.length) return { reason: 'ungrounded_argument', detail: `${where}: ${missing.map((g) => `${g.param}=${JSON.stringify(g.value)}`).join(', ')} not stated in the conversation` };
      made.push({ id: `call_${made.length + 1}`, tool });
    }
  }
  if (!made.some((m) => m.tool.name === scenario.requiredApi)) return { reason: 'missing_required_tool', detail: `the conversation never calls ${scenario.requiredApi}` };
  if (scenario.category === 'easy' && made.length !== 1) return { reason: 'easy_needs_one_call', detail: `an easy conversation makes exactly one call; this one makes ${made.length}` };
  if (scenario.category === 'tooltalk' && made.length < 3) return { reason: 'too_few_calls', detail: `a conversation makes at least 3 calls; this one makes ${made.length}` };
  return null;
}

function refsIn(value: Json): { $ref: string }[] {
  if (isRef(value)) return [value];
  if (Array.isArray(value)) return value.flatMap(refsIn);
  if (value && typeof value === 'object') return Object.values(value).flatMap(refsIn);
  return [];
}

/** The conversation drafted (prompt `tooltalk/conversation-over-tools`) and checked: known tools, valid and stated arguments, references to earlier results. */
export function draftOverToolsStage(load: LibraryLoad, options: { temperature?: number } = {}): MapStage<Scenario, ImportedConversation> {
  return mapStage({
    name: 'draft-imported-conversation',
    // v2: offline values follow patterns and order ranges (core/schema-values.ts).
    version: 2,
    input: Scenario,
    output: ImportedConversation,
    prompts: [overToolsPrompt],
    keyOf: scenarioKey,
    run: async (scenario, ctx) => {
      const library = await load(ctx);
      const facts = factsFor(ctx.rng('facts'));
      const tools = toolsOfPlugins(library, scenario.plugins);
      const kind =
        scenario.category === 'easy'
          ? 'This is an easy conversation: a few short turns and exactly one API call, to the required API; the user states every value it needs.'
          : 'The assistant makes at least 3 API calls in all, spread over the conversation as the user asks for things.';
      const answer = await ctx.ask(
        overToolsPrompt,
        { kind, scenario: scenario.description, requiredApi: scenario.requiredApi, apiDocs: libraryDocs(tools), facts: JSON.stringify(facts, null, 2), category: scenario.category, calls: scenario.calls, tools, world: facts },
        { temperature: options.temperature },
      );
      const problem = draftProblem(answer.value.turns, scenario, library, facts);
      if (problem) return reject(problem.reason, problem.detail);
      return { scenario, facts, turns: answer.value.turns, results: null, execution: null, lineage: [answer.lineage] };
    },
  });
}

interface LiveState {
  execution?: LiveExecution;
  counts: { executed: number; cached: number; simulated: number };
}

/**
 * The conversations whose every call a live server serves, executed there (stages/execute-calls.ts:
 * in order, references resolved from the real results, one conversation at a time, cached); the
 * others pass on to be simulated. A call that fails rejects the conversation with the reason.
 */
export function executeImportedCallsStage(tools: ToolsConfig): ScanStage<ImportedConversation, ImportedConversation, LiveState> {
  return scanStage<ImportedConversation, ImportedConversation, LiveState>({
    name: 'execute-imported-calls',
    version: 1,
    input: ImportedConversation,
    output: ImportedConversation,
    keyOf: (conversation) => scenarioKey(conversation.scenario),
    begin: () => ({ counts: { executed: 0, cached: 0, simulated: 0 } }),
    run: async (conversation, ctx) => {
      const state = ctx.state;
      state.execution ??= await openLiveExecution(tools, ctx);
      const calls = draftCalls(conversation.turns);
      const missing = calls.find((call) => !state.execution!.live.has(call.tool));
      if (missing) {
        state.counts.simulated++;
        const execution: Execution = { mode: 'simulated', reason: `${missing.tool} has no live server` };
        return { ...conversation, execution };
      }
      const outcome = await runOnLiveServers(calls, state.execution);
      if (!outcome.ok) return reject(outcome.reason, outcome.detail);
      state.counts.executed++;
      if (outcome.cached) state.counts.cached++;
      const execution: Execution = { mode: 'executed', servers: outcome.servers, cached: outcome.cached };
      return { ...conversation, results: outcome.results, execution, lineage: [...conversation.lineage, ctx.lineage()] };
    },
    finish: (state, ctx) => {
      ctx.report('execution', { ...state.counts, restarts: state.execution?.executor.restarts ?? 0 });
    },
    // Also when the run fails: the server processes must not outlive it.
    dispose: (state) => state.execution?.executor.close(),
  });
}

/** Results for a conversation no live server ran: the LLM plays each tool in turn, its answer checked against the tool's result schema. */
async function simulateResults(conversation: ImportedConversation, library: ToolTalkLibrary, ctx: StageContext & { key: string }): Promise<Json[] | RejectReason> {
  const results: Json[] = [];
  const byId = new Map<string, Json>();
  const history: { api_name: string; parameters: Json; result: Json }[] = [];
  for (const [i, call] of draftCalls(conversation.turns).entries()) {
    const tool = library.byName.get(call.tool)!;
    let args: Record<string, Json>;
    try {
      args = resolveArguments(call.arguments, byId);
    } catch (error) {
      return { reason: 'unresolved_reference', detail: `call ${i + 1} (${call.tool}): ${(error as Error).message}` };
    }
    const vars = { tool: tool.name, description: tool.description || '(no description)', returnsSchema: JSON.stringify(tool.returns), arguments: JSON.stringify(args), history: JSON.stringify(history), problem: '', returns: tool.returns, args, today: conversation.facts.timestamp.slice(0, 10) };
    let answer = (await ctx.ask(toolResultPrompt, vars, { part: `result-${i + 1}` })).value.result;
    let problems = validator.validate(tool.returns, answer);
    if (problems.length) {
      const problem = `\nYour previous answer ${JSON.stringify(answer).slice(0, 500)} was refused: ${describeProblems(problems)}. Answer again.\n`;
      answer = (await ctx.ask(toolResultPrompt, { ...vars, problem }, { part: `result-${i + 1}-again` })).value.result;
      problems = validator.validate(tool.returns, answer);
      if (problems.length) return { reason: 'simulated_result_invalid', detail: `call ${i + 1} (${call.tool}): the simulated result does not fit its result schema: ${describeProblems(problems)}` };
    }
    results.push(answer);
    byId.set(call.id, answer);
    history.push({ api_name: call.tool, parameters: args, result: answer });
  }
  return results;
}

/** A stable UUID-shaped id from the conversation's content. */
function conversationId(seed: unknown): string {
  const h = hashOf(seed, 32);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/**
 * Results simulated where none were executed (prompt `tooltalk/tool-result`), references replaced
 * by the values they name, the replies written from the results (prompt `tooltalk/replies`), and
 * the conversation made a ToolTalk sample over the tools of the plugins it uses.
 */
export function completeConversationStage(load: LibraryLoad): MapStage<ImportedConversation, Sample> {
  return mapStage({
    name: 'complete-imported-conversation',
    // v2: offline results made as the other recipes make them (prompts/tool-results.ts).
    version: 2,
    input: ImportedConversation,
    output: Sample,
    prompts: [toolResultPrompt, repliesPrompt],
    keyOf: (conversation) => scenarioKey(conversation.scenario),
    run: async (conversation, ctx) => {
      const library = await load(ctx);
      let results = conversation.results;
      const execution: Execution = conversation.execution ?? { mode: 'simulated', reason: 'no live server is configured (or execution is off)' };
      if (!results) {
        const simulated = await simulateResults(conversation, library, ctx);
        if (!Array.isArray(simulated)) return reject(simulated.reason, simulated.detail);
        results = simulated;
      }
      const calls = draftCalls(conversation.turns);
      const byId = new Map<string, Json>();
      const resolved = calls.map((call, i) => {
        const args = resolveArguments(call.arguments, byId);
        byId.set(call.id, results![i]);
        return args;
      });
      // The turns with their calls as made (references replaced) and results.
      let n = 0;
      const turns = conversation.turns.map((turn, index) => ({ index, role: turn.role, text: turn.text, calls: turn.calls.map((call) => ({ api_name: call.api_name, parameters: resolved[n], result: results![n++] })) }));
      const replyTurns = turns.filter((turn) => turn.role === 'assistant').map((turn) => ({ turn: turn.index, calls: turn.calls }));
      const transcript = turns.map((turn) => [`${turn.index} ${turn.role}: ${turn.text}`, ...turn.calls.map((call) => `  call ${call.api_name} ${JSON.stringify(call.parameters)} → ${JSON.stringify(call.result)}`)].join('\n')).join('\n');
      const replies = await ctx.ask(repliesPrompt, { conversation: transcript, turns: replyTurns.map((turn) => turn.turn), replyTurns });
      const replyOf = new Map(replies.value.replies.map((reply) => [reply.turn, reply.text]));

      const { scenario, facts } = conversation;
      const used = calls.map((call) => library.byName.get(call.tool)!);
      const suites = [...new Set(used.map(pluginOf))];
      const file: ConversationFile = {
        name: scenario.id,
        conversation_id: conversationId({ key: scenarioKey(scenario), turns: conversation.turns, results }),
        suites_used: suites,
        apis_used: [...new Set(used.map((tool) => tool.name))],
        scenario: scenario.description,
        user: { username: facts.username },
        metadata: { location: facts.location, timestamp: facts.timestamp, username: facts.username },
        conversation: turns.map((turn) => ({
          index: turn.index,
          role: turn.role,
          text: turn.role === 'assistant' ? (replyOf.get(turn.index) ?? turn.text) : turn.text,
          ...(turn.calls.length ? { apis: turn.calls.map((call) => ({ request: { api_name: call.api_name, parameters: call.parameters }, response: call.result, exception: null })) } : {}),
        })),
      };
      return conversationToSample(file, {
        category: scenario.category,
        file: `${scenario.category}/${file.name}.json`,
        origin: { scenario: scenarioKey(scenario) },
        tools: toolsOfPlugins(library, suites),
        toolsImported: true,
        meta: {
          lineage: [...conversation.lineage, replies.lineage, ctx.lineage()],
          checks: [],
          tags: ['review:check-grounding', 'review:check-plausibility'],
          execution,
        },
      });
    },
  });
}
