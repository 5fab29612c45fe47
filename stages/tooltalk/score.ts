import type { BenchmarkScorer, EvalOutput, EvalReport, JudgedItem, MetricTable, ReportTables, TallyRule } from '../../core/eval.ts';
import { ALL_ITEMS, tallyTables } from '../../core/eval-tally.ts';
import { createComparator, type CallRecord, type ComparatorOptions, type ToolTalkComparator } from './comparators.ts';
import type { DatabasesJson } from './databases.ts';
import { DEFAULT_DATABASES_DIR, loadDatabases } from './databases.ts';
import { parsePredictedCalls, toolTalkAnswerOfReply, toolTalkItems, toolTalkOracle, withoutSessionToken, type ToolTalkGold } from './score-items.ts';
import type { Databases } from './tool.ts';
import { RecordedCalls } from './recorded.ts';
import { toolTalkSession } from './session.ts';
import { TOOLS_BY_NAME } from './tools/index.ts';
import { createWorld } from './world.ts';

/**
 * ToolTalk's scoring (paper Algorithm 2; ToolExecutor.evaluate_predictions in the repository).
 * Per item the world is rebuilt as it stood before the turn (initial databases and the
 * conversation's overlay, clock and session from the conversation, earlier ground-truth calls run
 * again) and the predicted calls run in order with execution feedback. Then per conversation, in
 * turn order, each prediction takes the first still-unmatched ground-truth call of the whole
 * conversation that the repository's comparator accepts. A prediction of an action tool that
 * matched nothing yet succeeded is an incorrect action. Totals over conversations:
 *   precision = matches / predictions (0 without predictions), recall = matches / ground truths,
 *   action_precision = matched actions / actions (1 without actions),
 *   incorrect_action_rate = incorrect actions / actions (0 without actions),
 *   success_rate = conversations with recall 1 and no incorrect action / conversations.
 * A model answers each turn in the loop (session.ts, Algorithm 1: its calls executed and their
 * results fed back); the session's output, the calls it made, is scored here like a predictions
 * file's answer (gold replay), so both paths share one matching.
 */

export interface ToolTalkScorerOptions {
  /** Folder of the initial databases (default: the shared ToolTalk databases). */
  databasesDir?: string;
  /** Free-text comparison (the default lexical embedder; the scorer needs one that embeds synchronously). */
  comparator?: ComparatorOptions;
  /** With the model in the loop: the most calls a turn may make (default TOOLTALK_MAX_CALLS_PER_TURN). */
  maxCallsPerTurn?: number;
}

interface ScoredPrediction {
  record: CallRecord;
  match: boolean;
  action: boolean;
  badAction: boolean;
  why?: string;
}

interface ConversationTotals {
  predictions: number;
  groundTruths: number;
  matches: number;
  actions: number;
  validActions: number;
  badActions: number;
  conversations: number;
  successes: number;
}

const EMPTY_TOTALS: ConversationTotals = { predictions: 0, groundTruths: 0, matches: 0, actions: 0, validActions: 0, badActions: 0, conversations: 0, successes: 0 };

const TOTAL_KEYS = Object.keys(EMPTY_TOTALS) as (keyof ConversationTotals)[];

/** `toolTalkTablesOf` as sums (core/eval-tally.ts): a conversation's totals, added to the whole and to its category. */
const toolTalkTally: TallyRule = {
  sums: TOTAL_KEYS,
  unit(turns, add) {
    const conversation = conversationTotals(turns);
    for (const table of [ALL_ITEMS, turns[0].item.category]) TOTAL_KEYS.forEach((key, i) => add(table, i, conversation[key]));
  },
  tables: (sums) => tallyTables(sums, TOTAL_KEYS.length, (figures) => metricsOf(Object.fromEntries(TOTAL_KEYS.map((key, i) => [key, figures[i]])) as unknown as ConversationTotals)),
};

export function createToolTalkScorer(options: ToolTalkScorerOptions = {}): BenchmarkScorer {
  let databases: Databases | undefined;
  const initialDatabases = () => (databases ??= loadDatabases(options.databasesDir ?? DEFAULT_DATABASES_DIR));
  const comparator = createComparator(options.comparator);
  return {
    benchmark: 'tooltalk',
    items: toolTalkItems,
    lowerIsBetter: ['incorrect_action_rate'],
    oracle: toolTalkOracle,
    answerOfReply: toolTalkAnswerOfReply,
    // Read only for conversations over the built-in tools (imported ones answer from their recorded results).
    session: (item) => toolTalkSession(item, { databases: initialDatabases, maxCalls: options.maxCallsPerTurn }),
    tablesOf: toolTalkTablesOf,
    tally: toolTalkTally,
    score: (outputs) => scoreToolTalk(outputs, initialDatabases, comparator),
  };
}

/** The scorer over the shared databases, as the recipe declares it. */
export const tooltalkScorer: BenchmarkScorer = createToolTalkScorer();

/** A conversation already judged (its turns' figures): the totals its turns add up to. */
function conversationTotals(turns: readonly JudgedItem[]): ConversationTotals {
  const sum = (figure: string) => turns.reduce((total, turn) => total + Number(turn.figures[figure]), 0);
  return {
    predictions: sum('predictions'),
    groundTruths: sum('groundTruths'),
    matches: sum('matches'),
    actions: sum('actions'),
    validActions: sum('validActions'),
    badActions: sum('incorrectActions'),
    conversations: 1,
    successes: turns[0].figures.conversationSuccess ? 1 : 0,
  };
}

/** Conversations already judged (one unit each, its turns' figures): the totals their turns add up to. */
export function toolTalkTablesOf(units: readonly (readonly JudgedItem[])[]): ReportTables {
  const overall = { ...EMPTY_TOTALS };
  const byCategory = new Map<string, ConversationTotals>();
  for (const turns of units) {
    const category = turns[0].item.category;
    const totals = (byCategory.get(category) ?? byCategory.set(category, { ...EMPTY_TOTALS }).get(category))!;
    const conversation = conversationTotals(turns);
    for (const into of [overall, totals]) for (const key of TOTAL_KEYS) into[key] += conversation[key];
  }
  return { metrics: metricsOf(overall), byCategory: Object.fromEntries([...byCategory].map(([category, totals]) => [category, metricsOf(totals)])) };
}

export function scoreToolTalk(outputs: readonly EvalOutput[], databases: () => Databases, comparator: ToolTalkComparator): EvalReport {
  const byConversation = new Map<string, EvalOutput[]>();
  for (const output of outputs) {
    const list = byConversation.get(output.item.sampleId) ?? [];
    list.push(output);
    byConversation.set(output.item.sampleId, list);
  }
  const details: EvalReport['details'] = [];
  const overall = { ...EMPTY_TOTALS };
  const byCategory = new Map<string, ConversationTotals>();
  for (const turns of byConversation.values()) {
    turns.sort((a, b) => gold(a).turn - gold(b).turn);
    const category = turns[0].item.category;
    const predicted = turns.map((output) => runTurn(output, databases));
    const groundTruths = turns.flatMap((output) => gold(output).apis);
    // Built-in tools by their simulators; imported ones as the conversation's tools say.
    const offered = new Map(turns[0].item.tools.map((tool) => [tool.name, tool.isAction === true]));
    const isAction = (name: string) => TOOLS_BY_NAME.get(name)?.isAction ?? offered.get(name) ?? false;
    const scored = matchConversation(predicted.map((p) => p.records), groundTruths, comparator, isAction);
    const matches = scored.flat().filter((p) => p.match).length;
    const badActions = scored.flat().filter((p) => p.badAction).length;
    const recall = groundTruths.length ? matches / groundTruths.length : 1;
    const success = recall === 1 && badActions === 0;
    const totals = (byCategory.get(category) ?? byCategory.set(category, { ...EMPTY_TOTALS }).get(category))!;
    for (const into of [overall, totals]) addConversation(into, scored.flat(), groundTruths.length, success);
    turns.forEach((output, index) => {
      const turn = scored[index];
      const notes = [predicted[index].note, ...turn.filter((p) => p.why).map((p) => p.why)].filter(Boolean);
      details.push({
        id: output.item.id,
        category,
        figures: {
          predictions: turn.length,
          groundTruths: gold(output).apis.length,
          matches: turn.filter((p) => p.match).length,
          actions: turn.filter((p) => p.action).length,
          validActions: turn.filter((p) => p.action && p.match).length,
          incorrectActions: turn.filter((p) => p.badAction).length,
          conversationSuccess: success,
        },
        ...(notes.length ? { note: notes.join('; ') } : {}),
      });
    });
  }
  return {
    benchmark: 'tooltalk',
    items: outputs.length,
    metrics: metricsOf(overall),
    byCategory: Object.fromEntries([...byCategory].map(([category, totals]) => [category, metricsOf(totals)])),
    details,
  };
}

const gold = (output: EvalOutput) => output.item.gold as unknown as ToolTalkGold;

/** Rebuilds the world before the turn and runs the predicted calls in order (ToolExecutor.execute_tool). */
function runTurn(output: EvalOutput, databases: () => Databases): { records: CallRecord[]; note?: string } {
  const { start, overlay, history, recorded } = gold(output);
  const { requests, note } = parsePredictedCalls(output.output);
  if (recorded) {
    const calls = new RecordedCalls(recorded, history.length);
    return { records: requests.map((request) => ({ request, ...calls.execute(request) })), ...(note ? { note } : {}) };
  }
  const world = createWorld({ databases: databases(), overlay: overlay as DatabasesJson });
  world.reset(start);
  for (const request of history) world.execute({ api_name: request.api_name, parameters: withoutSessionToken(request.parameters) });
  const records = requests.map((request): CallRecord => {
    const token = world.sessionToken;
    const result = world.execute(request);
    // The executor puts its own session token into the request of a tool that needs a login.
    const parameters = request.parameters && TOOLS_BY_NAME.get(request.api_name)?.requiresAuth && token !== null ? { ...request.parameters, session_token: token } : request.parameters;
    return { request: { api_name: request.api_name, parameters }, ...result };
  });
  return { records, ...(note ? { note } : {}) };
}

/** The repository's greedy matching over the conversation: predictions in order, each to the first unmatched ground truth it fits. */
function matchConversation(turns: CallRecord[][], groundTruths: readonly CallRecord[], comparator: ToolTalkComparator, isAction: (name: string) => boolean): ScoredPrediction[][] {
  const open = groundTruths.map((record, index) => ({ record, index }));
  return turns.map((records, turnIndex) =>
    records.map((record, callIndex) => {
      const at = open.findIndex((truth) => comparator.compareSync(record, truth.record).match);
      const match = at >= 0;
      if (match) open.splice(at, 1);
      const action = isAction(record.request.api_name);
      const badAction = !match && action && record.exception === null;
      return { record, match, action, badAction, ...(match ? {} : { why: `call ${callIndex + 1} (${record.request.api_name}): ${whyUnmatched(record, open.map((t) => t.record), comparator)}${badAction ? ' — an incorrect action' : ''}` }) };
    }),
  );
}

/** Why a prediction matched nothing: against the first open ground truth of its tool, or that there is none. */
function whyUnmatched(record: CallRecord, open: readonly CallRecord[], comparator: ToolTalkComparator): string {
  const failed = record.exception === null ? '' : ` (it failed: ${record.exception})`;
  const sameTool = open.find((truth) => truth.request.api_name === record.request.api_name);
  if (!sameTool) return `no unmatched ground-truth call of ${record.request.api_name}${failed}`;
  return comparator.compareSync(record, sameTool).reason ?? 'no match';
}

function addConversation(into: ConversationTotals, predictions: readonly ScoredPrediction[], groundTruths: number, success: boolean): void {
  into.predictions += predictions.length;
  into.groundTruths += groundTruths;
  into.matches += predictions.filter((p) => p.match).length;
  into.actions += predictions.filter((p) => p.action).length;
  into.validActions += predictions.filter((p) => p.action && p.match).length;
  into.badActions += predictions.filter((p) => p.badAction).length;
  into.conversations += 1;
  into.successes += success ? 1 : 0;
}

function metricsOf(totals: ConversationTotals): MetricTable {
  return {
    precision: totals.predictions ? totals.matches / totals.predictions : 0,
    recall: totals.groundTruths ? totals.matches / totals.groundTruths : 1,
    action_precision: totals.actions ? totals.validActions / totals.actions : 1,
    incorrect_action_rate: totals.actions ? totals.badActions / totals.actions : 0,
    success_rate: totals.conversations ? totals.successes / totals.conversations : 0,
  };
}

