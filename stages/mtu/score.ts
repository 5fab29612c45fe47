import { join } from 'node:path';
import { rate, tablesByCategory, type BenchmarkScorer, type Corruption, type EvalItem, type EvalOutput, type EvalReport, type JudgedItem, type MetricTable, type ModelReply, type ReportTables, type TallyRule } from '../../core/eval.ts';
import { ALL_ITEMS, tallyTables } from '../../core/eval-tally.ts';
import { eachJsonlLine } from '../../core/jsonl.ts';
import { pythonRepr } from '../../core/python-json.ts';
import type { Json, Sample } from '../../core/records.ts';
import type { Rng } from '../../core/rng.ts';
import { toMtuRecords, type MtuRecord } from './mtu-format.ts';
import { RELEASED_MTU_FILES } from './released.ts';
import { readPythonLiteral } from '../../core/python-literal.ts';
import { assistantIndexes, categoryOf, DEFAULT_TODAY, mtuMeta } from './sample.ts';
import type { InstructionTemplates } from '../../prompts/mtu-instructions.ts';
import { versionInstructionTemplates } from './instructions.ts';

/**
 * MTU-Eval's scoring (MTU-Bench §2.2.2 and the released MTU-Eval/cal_score.py, util.py). An item is
 * one MTU record: the whole question as the user message, the record's `answer` (`{Tool: {param:
 * value}}`, `{}` or `{"": {}}` for no call) as gold. A prediction is ReAct text (`Thought / Action /
 * Action Input`).
 *  - single-tool settings (S-S, M-S): the first Action and its input; tool selection (TS) is the
 *    name, parameter selection (PS) the name and every gold parameter (values compared as strings,
 *    lower-cased and normalised as util.normalize_value does, the gold value inside the predicted one);
 *  - multi-tool settings (S-M, M-M): every Action; tool number (TN) = |Pred ∩ GT| / |Pred ∪ GT|, a
 *    call with wrong parameters counting as a different tool; tool order (TO) = t · |LCR| / |GT|
 *    with t = cos(π/2 · i/|Pred|), LCR the longest common run of GT and Pred starting at i in Pred;
 *  - a turn succeeds on PS (single tool) or TN = TO = 1 (multi tool); per dialogue: success rate
 *    (SR, every turn), averaged turn success (ATS), soft ATS (SATS: 1 − e^−(j−i) for a correct turn j
 *    after the last wrong turn i), task process rate (TPR: leading correct turns / turns).
 * Where cal_score.py departs from the paper it is not followed: predicted tools absent from the gold
 * count in TN's union and TO's Pred (the script drops them), an Action Input holding nested objects is
 * read whole (the script cuts it at the first "}"), and `{"": {}}` in a multi-tool answer is no call.
 */

type Setting = 'S-S' | 'S-M' | 'M-S' | 'M-M';

interface MtuGold {
  answer: Record<string, Record<string, Json>>;
  setting: Setting;
  /** Turns of one dialogue share this key; `turn` orders them. */
  dialogue: string;
  turn: number;
  hard: boolean;
  [key: string]: Json;
}

interface ParsedCall {
  tool: string;
  input: Record<string, Json> | null;
}

const CATEGORY_ORDER = ['S-S', 'S-M', 'M-S', 'M-M', 'OOD', 'hard'];
const NO_CALL_THOUGHT = 'Thought: The request needs no API call here.';
const WRONG_VALUE = '__wrong_value__';

// ---------------------------------------------------------------- items

/** The gold calls of an answer, names trimmed as util.py trims them; `{}` and `{"": {}}` (no call) give none. */
function goldCalls(answer: unknown): Record<string, Record<string, Json>> {
  if (!answer || typeof answer !== 'object' || Array.isArray(answer)) return {};
  const calls: Record<string, Record<string, Json>> = {};
  for (const [tool, args] of Object.entries(answer as Record<string, Json>)) {
    if (tool.trim() === '') continue;
    calls[tool.trim()] = args && typeof args === 'object' && !Array.isArray(args) ? args : {};
  }
  return calls;
}

export interface MtuRecordContext {
  setting: Setting;
  category: string;
  dialogue: string;
  turn: number;
  hard: boolean;
  sampleId: string;
  tools: EvalItem['tools'];
}

/** One MTU record as an item; `id` must be unique among the items scored together. */
export function mtuRecordItem(id: string, record: Pick<MtuRecord, 'question' | 'answer'>, context: MtuRecordContext): EvalItem {
  const gold: MtuGold = { answer: goldCalls(record.answer), setting: context.setting, dialogue: context.dialogue, turn: context.turn, hard: context.hard };
  return { id, sampleId: context.sampleId, category: context.category, messages: [{ role: 'user', content: record.question }], tools: context.tools, gold };
}

/** MTU-Eval scores the test split (normal and hard) and the OOD split; training dialogues are MTU-Instruct. */
function mtuItems(sample: Sample, version?: { dir: string }): EvalItem[] {
  if (sample.split === 'train') return [];
  const meta = mtuMeta(sample);
  const setting = categoryOf(sample);
  const records = toMtuRecords(sample, 0, meta.today ?? DEFAULT_TODAY, templatesOf(version));
  const context = { setting, category: sample.split === 'ood' ? 'OOD' : setting, dialogue: sample.id, hard: !!meta.hard?.length, sampleId: sample.id, tools: sample.tools };
  // A record per assistant turn that answers a user message (toMtuRecords): the dialogue index each answers.
  const answered = assistantIndexes(sample).filter((a) => sample.dialogue[a - 1]?.role === 'user');
  return records.map((record, turn) => ({ ...mtuRecordItem(`${sample.id}#${turn}`, record, { ...context, turn }), turn: answered[turn] }));
}

/** The instruction templates a version was exported with, read once per version (the export shows a model the same text). */
const templatesByVersion = new WeakMap<object, InstructionTemplates>();
function templatesOf(version: { dir: string } | undefined): InstructionTemplates {
  if (!version) return versionInstructionTemplates(undefined);
  let templates = templatesByVersion.get(version);
  if (!templates) templatesByVersion.set(version, (templates = versionInstructionTemplates(version.dir)));
  return templates;
}

const goldOf = (item: EvalItem) => item.gold as MtuGold;
const multiTool = (setting: Setting) => setting.endsWith('M');

// ---------------------------------------------------------------- writing answers

function react(calls: [string, Record<string, Json>][]): string {
  if (!calls.length) return NO_CALL_THOUGHT;
  const lines = ['Thought: The request can be met with the listed APIs.'];
  for (const [tool, args] of calls) lines.push(`Action: ${tool}`, `Action Input: ${JSON.stringify(args)}`);
  return lines.join('\n');
}

function oracle(item: EvalItem): string {
  return react(Object.entries(goldOf(item).answer));
}

/**
 * A chat model's reply as MTU-Eval's ReAct answer: its calls as Action / Action Input, in order (a
 * reply in words: no call). A value taken from an earlier call of the reply is written in MTU-Bench's
 * notation `Tool.field`:
 *  - an argument naming that call's field, `"<call id>.<field>"` or `{"$ref": …}` (how the chat
 *    exports write a reference whose result the sample lacks; a call without an id is `call00001`, …
 *    in the reply's order);
 *  - an argument whose gold is `Tool.field` and whose value is that field of the result the reply
 *    holds for its earlier `Tool` call. The chat exports show a call that uses a same-turn result after
 *    that result, with the value (stages/export/trl.ts), where MTU writes every call of the turn at
 *    once with the reference; the value of the very result shown is the same answer. A value the
 *    gold has as a literal is never rewritten.
 */
function answerOfReply(item: EvalItem, reply: ModelReply): string {
  const gold = goldOf(item).answer;
  const calls = reply.calls.map((call, k): [string, Record<string, Json>] => {
    const earlier = reply.calls.slice(0, k);
    const written = (name: string, value: Json): Json => {
      const ref = value && typeof value === 'object' && !Array.isArray(value) && typeof value.$ref === 'string' ? value.$ref : value;
      const dot = typeof ref === 'string' ? ref.lastIndexOf('.') : -1;
      const named = dot > 0 ? earlier.find((c, i) => (ref as string).slice(0, dot) === (c.id ?? `call${String(i + 1).padStart(5, '0')}`)) : undefined;
      if (named) return `${named.name}.${(ref as string).slice(dot + 1)}`;
      const reference = /^([^.\s]+)\.([^.\s]+)$/.exec(String(gold[call.name]?.[name] ?? ''));
      const source = reference && earlier.find((c) => c.name === reference[1] && isRecord(c.result) && reference[2] in c.result);
      return source && JSON.stringify((source.result as Record<string, Json>)[reference[2]]) === JSON.stringify(value) ? reference[0] : value;
    };
    return [call.name, Object.fromEntries(Object.entries(call.arguments).map(([name, value]) => [name, written(name, value)]))];
  });
  return react(calls);
}

const isRecord = (value: Json | undefined): value is Record<string, Json> => !!value && typeof value === 'object' && !Array.isArray(value);

function corrupt(item: EvalItem, corruption: Corruption, rng: Rng): string | null {
  const calls = Object.entries(goldOf(item).answer).map(([tool, args]): [string, Record<string, Json>] => [tool, { ...args }]);
  const unused = item.tools.map((t) => t.name).filter((name) => !calls.some(([tool]) => tool === name));
  switch (corruption) {
    case 'wrong-tool': {
      if (!calls.length || !unused.length) return null;
      calls[rng.int(0, calls.length - 1)][0] = rng.pick(unused);
      break;
    }
    case 'drop-parameter':
    case 'wrong-value': {
      const withArgs = calls.filter(([, args]) => Object.keys(args).length);
      if (!withArgs.length) return null;
      const args = rng.pick(withArgs)[1];
      const name = rng.pick(Object.keys(args));
      if (corruption === 'drop-parameter') delete args[name];
      else args[name] = WRONG_VALUE;
      break;
    }
    case 'extra-call': {
      if (!unused.length) return null;
      calls.unshift([rng.pick(unused), {}]);
      break;
    }
  }
  return react(calls);
}

// ---------------------------------------------------------------- reading predictions

/** The Action / Action Input pairs of a ReAct answer, in order; an input that is no JSON object is null. */
export function parseActions(text: string): ParsedCall[] {
  const calls: { tool: string; input?: Record<string, Json> | null }[] = [];
  const marker = /Action Input\s*:|Action\s*:/g;
  let match: RegExpExecArray | null;
  while ((match = marker.exec(text))) {
    const rest = text.slice(match.index + match[0].length);
    if (match[0].startsWith('Action Input')) {
      const call = calls.at(-1);
      if (call && call.input === undefined) call.input = objectAt(rest);
    } else {
      calls.push({ tool: rest.split(/\n|Action Input\s*:/)[0].trim().replace(/"/g, '') });
    }
  }
  return calls.map((call) => ({ tool: call.tool, input: call.input ?? null }));
}

/** The JSON (or Python) object the text starts with, after blanks; null when there is none. */
function objectAt(text: string): Record<string, Json> | null {
  const start = text.search(/\S/);
  if (start === -1 || text[start] !== '{') return null;
  try {
    const { value } = readPythonLiteral(text, start);
    return value && typeof value === 'object' && !Array.isArray(value) ? value : null;
  } catch {
    return null;
  }
}

/** util.get_predict_SIN: the first call; none without both markers, a readable input, or when named "None". */
function singleCall(calls: ParsedCall[]): { tool: string; input: Record<string, Json>; note?: string } {
  const first = calls[0];
  if (!first) return { tool: '', input: {}, note: 'no Action' };
  if (first.input === null) return { tool: '', input: {}, note: `no readable Action Input for ${first.tool || 'the Action'}` };
  if (first.tool.includes('None')) return { tool: '', input: {} };
  return { tool: first.tool.split(',')[0].trim(), input: first.input };
}

/** util.get_target_SIN_MUL: every call by tool name (a later call of the same tool replaces the earlier). */
function multiCalls(calls: ParsedCall[]): { calls: Map<string, Record<string, Json>>; note?: string } {
  const byTool = new Map<string, Record<string, Json>>();
  let unreadable = 0;
  for (const call of calls) {
    if (call.tool === 'The name of the API to be called.') continue;
    if (call.input === null) unreadable++;
    byTool.set(call.tool.trim(), call.input ?? {});
  }
  return { calls: byTool, ...(unreadable ? { note: `${unreadable} Action Input(s) not readable as a JSON object (scored as no parameters)` } : {}) };
}

// ---------------------------------------------------------------- comparing values

const pyStr = (value: Json): string => (typeof value === 'string' ? value : pythonRepr(value));
const lowered = (args: Record<string, Json>) => Object.fromEntries(Object.entries(args).map(([k, v]) => [k, pyStr(v).toLowerCase()]));

const NUMBER_WORDS: [string, string][] = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'].map((word, n) => [String(n), word]);
const DAYS: [string, string][] = [
  ['2024-01-04', 'monday'],
  ['2024-01-05', 'tuesday'],
  ['2024-01-06', 'wednesday'],
  ['2024-01-07', 'thursday'],
  ['2024-01-08', 'friday'],
  ['2024-01-09', 'saturday'],
  ['2024-01-10', 'sunday'],
];

/** util.normalize_value, step for step (digits become words before the dates are looked for, as there). */
function normalizeValue(value: string): string {
  let out = value.replaceAll('my ', '');
  for (const [digit, word] of NUMBER_WORDS) out = out.replaceAll(digit, word);
  out = out.replaceAll('findprovider.', 'bookappointment.');
  for (const [date, day] of DAYS) out = out.replaceAll(date, day).replaceAll('today', day);
  return out;
}

/** util.compare_dicts: same parameters (values "hotel" ignored), each of `a`'s values inside `b`'s after normalising. */
function sameParameters(a: Record<string, string>, b: Record<string, string>): boolean {
  const keep = (d: Record<string, string>) => Object.entries(d).filter(([, v]) => v !== 'hotel');
  const left = keep(a);
  const right = new Map(keep(b));
  if (left.length !== right.size) return false;
  return left.every(([key, value]) => right.has(key) && normalizeValue(right.get(key)!).includes(normalizeValue(value)));
}

/** The longest common run of `gt` and `pred` (difflib's find_longest_match: earliest in gt, then in pred). */
function longestRun(gt: string[], pred: string[]): { size: number; start: number } {
  let best = { size: 0, start: 0, at: 0 };
  for (let i = 0; i < gt.length; i++) {
    for (let j = 0; j < pred.length; j++) {
      let k = 0;
      while (i + k < gt.length && j + k < pred.length && gt[i + k] === pred[j + k]) k++;
      if (k > best.size) best = { size: k, start: j, at: i };
    }
  }
  return { size: best.size, start: best.start };
}

export function toolOrderAccuracy(pred: string[], gt: string[]): number {
  if (pred.length === gt.length && pred.every((tool, i) => tool === gt[i])) return 1;
  if (!pred.length || !gt.length) return 0;
  const run = longestRun(gt, pred);
  return (Math.cos((Math.PI / 2) * (run.start / pred.length)) * run.size) / gt.length;
}

/** util.calculate_turn_success_rate: a correct turn j scores 1 − e^−(j−i) after the last wrong turn i. */
export function softTurnScores(turns: boolean[]): number[] {
  let lastWrong = -1;
  return turns.map((ok, j) => {
    if (!ok) {
      lastWrong = j;
      return 0;
    }
    return lastWrong === -1 ? 1 : 1 - Math.exp(-(j - lastWrong));
  });
}

// ---------------------------------------------------------------- scoring

interface TurnFigures {
  figures: Record<string, number | boolean>;
  success: boolean;
  note?: string;
}

function scoreSingle(gold: MtuGold, output: string | null): TurnFigures {
  const [target, targetInput] = Object.entries(gold.answer)[0] ?? ['', {}];
  const predicted = output === null ? { tool: '', input: {}, note: 'no output' } : singleCall(parseActions(output));
  const toolOk = predicted.tool === target;
  const paramsOk = toolOk && sameParameters(lowered(targetInput), lowered(predicted.input));
  const note = predicted.note ?? (!toolOk ? `called ${predicted.tool || 'no API'} instead of ${target || 'no API'}` : !paramsOk ? `parameters of ${target} differ` : undefined);
  return { figures: { tool_selection: toolOk, parameter_selection: paramsOk }, success: paramsOk, ...(note && !paramsOk ? { note } : {}) };
}

function scoreMulti(gold: MtuGold, output: string | null): TurnFigures {
  const gt = gold.answer;
  const parsed = output === null ? { calls: new Map<string, Record<string, Json>>(), note: 'no output' } : multiCalls(parseActions(output));
  // A predicted tool whose parameters differ from the gold call's counts as another tool ("<tool>wrong" in util.py).
  const pred = [...parsed.calls].map(([tool, args]) => (tool in gt && !sameParameters(lowered(args), lowered(gt[tool])) ? `${tool}wrong` : tool));
  const gtTools = Object.keys(gt);
  let number: number;
  if (!pred.length && !gtTools.length) number = 1;
  else if (!pred.length || !gtTools.length) number = 0;
  else {
    const union = new Set([...pred, ...gtTools]);
    number = pred.filter((tool) => gtTools.includes(tool)).length / union.size;
  }
  const order = toolOrderAccuracy(pred, gtTools);
  const success = number === 1 && order === 1;
  const note = parsed.note ?? (success ? undefined : `predicted [${pred.join(', ')}], gold [${gtTools.join(', ')}]`);
  return { figures: { tool_number: number, tool_order: order }, success, ...(note && !success ? { note } : {}) };
}

/** A judged turn and the dialogue it counts in (a resampled dialogue drawn twice counts as two). */
interface JudgedTurn {
  item: EvalItem;
  turn: TurnFigures;
  dialogue: string;
}

/** The sums a table's metrics come from (core/eval-tally.ts): turn counts and figures, then per dialogue. */
const SUMS = ['single', 'tool_selection', 'parameter_selection', 'multi', 'tool_number', 'tool_order', 'turns', 'turn_success', 'sessions', 'session_success', 'session_ats', 'session_sats', 'session_tpr'] as const;
const SUM = Object.fromEntries(SUMS.map((name, i) => [name, i])) as Record<(typeof SUMS)[number], number>;

/** A judged turn's terms, in the order a table sums them. */
function addTurn(item: EvalItem, turn: Pick<TurnFigures, 'figures' | 'success'>, add: (sum: number, term: number) => void): void {
  if (multiTool(goldOf(item).setting)) {
    add(SUM.multi, 1);
    add(SUM.tool_number, Number(turn.figures.tool_number));
    add(SUM.tool_order, Number(turn.figures.tool_order));
  } else {
    add(SUM.single, 1);
    add(SUM.tool_selection, Number(turn.figures.tool_selection));
    add(SUM.parameter_selection, Number(turn.figures.parameter_selection));
  }
  add(SUM.turns, 1);
  add(SUM.turn_success, Number(turn.success));
}

/** A dialogue's terms from its turns' successes in turn order. */
function addSession(session: boolean[], add: (sum: number, term: number) => void): void {
  const mean = (values: number[]) => rate(values.reduce((a, b) => a + b, 0), values.length);
  add(SUM.sessions, 1);
  add(SUM.session_success, Number(session.every(Boolean)));
  add(SUM.session_ats, mean(session.map(Number)));
  add(SUM.session_sats, mean(softTurnScores(session)));
  add(SUM.session_tpr, (session.includes(false) ? session.indexOf(false) : session.length) / session.length);
}

/** A dialogue's successes in turn order. */
const sessionOf = (turns: { turn: number; ok: boolean }[]): boolean[] => turns.sort((a, b) => a.turn - b.turn).map((t) => t.ok);

function metricsOf(sums: ArrayLike<number>): MetricTable {
  const metrics: MetricTable = {};
  if (sums[SUM.single]) {
    metrics.tool_selection_accuracy = rate(sums[SUM.tool_selection], sums[SUM.single]);
    metrics.parameter_selection_accuracy = rate(sums[SUM.parameter_selection], sums[SUM.single]);
  }
  if (sums[SUM.multi]) {
    metrics.tool_number_accuracy = rate(sums[SUM.tool_number], sums[SUM.multi]);
    metrics.tool_order_accuracy = rate(sums[SUM.tool_order], sums[SUM.multi]);
  }
  metrics.turn_success_rate = rate(sums[SUM.turn_success], sums[SUM.turns]);
  metrics.success_rate = rate(sums[SUM.session_success], sums[SUM.sessions]);
  metrics.averaged_turn_success_rate = rate(sums[SUM.session_ats], sums[SUM.sessions]);
  metrics.soft_averaged_turn_success_rate = rate(sums[SUM.session_sats], sums[SUM.sessions]);
  metrics.task_process_rate = rate(sums[SUM.session_tpr], sums[SUM.sessions]);
  return metrics;
}

function table(turns: JudgedTurn[]): MetricTable {
  const sums = new Float64Array(SUMS.length);
  const add = (sum: number, term: number) => (sums[sum] += term);
  const dialogues = new Map<string, { turn: number; ok: boolean }[]>();
  for (const { item, turn, dialogue } of turns) {
    addTurn(item, turn, add);
    const list = dialogues.get(dialogue) ?? [];
    list.push({ turn: goldOf(item).turn, ok: turn.success });
    dialogues.set(dialogue, list);
  }
  for (const list of dialogues.values()) addSession(sessionOf(list), add);
  return metricsOf(sums);
}

/** The tables a judged turn counts in: its category and, for a hard one, "hard". */
const categoriesOf = (item: EvalItem): string[] => [item.category, ...(goldOf(item).hard ? ['hard'] : [])];

function tables(turns: JudgedTurn[]): ReportTables {
  // A hard item counts in its own category and in "hard".
  const byCategory = tablesByCategory(turns, (t) => categoriesOf(t.item), table);
  return { metrics: table(turns), byCategory: inCategoryOrder(byCategory) };
}

function score(outputs: readonly EvalOutput[]): EvalReport {
  const turns = outputs.map(({ item, output }) => {
    const gold = goldOf(item);
    return { item, turn: multiTool(gold.setting) ? scoreMulti(gold, output) : scoreSingle(gold, output), dialogue: gold.dialogue };
  });
  return {
    benchmark: 'mtu-bench',
    items: outputs.length,
    ...tables(turns),
    details: turns.map(({ item, turn }) => ({ id: item.id, category: item.category, figures: { ...turn.figures, success: turn.success }, ...(turn.note ? { note: turn.note } : {}) })),
  };
}

/** The tables of turns already judged: a detail's figures are the turn's figures and its success. */
function tablesOf(units: readonly (readonly JudgedItem[])[]): ReportTables {
  return tables(
    units.flatMap((unit, index) =>
      unit.map(({ item, figures: { success, ...figures } }) => ({ item, turn: { figures, success: success === true }, dialogue: String(index) })),
    ),
  );
}

const inCategoryOrder = (byCategory: Record<string, MetricTable>): Record<string, MetricTable> =>
  Object.fromEntries(CATEGORY_ORDER.filter((name) => name in byCategory).map((name) => [name, byCategory[name]]));

/** `tablesOf` as sums a unit adds (a unit is a dialogue: its turns' terms, then its own session's, in every table it counts in). */
const tally: TallyRule = {
  sums: SUMS,
  unit(items, add) {
    const byTable = new Map<string, JudgedItem[]>();
    for (const judged of items) for (const table of [ALL_ITEMS, ...categoriesOf(judged.item)]) (byTable.get(table) ?? byTable.set(table, []).get(table)!).push(judged);
    for (const [table, turns] of byTable) {
      const addTo = (sum: number, term: number) => add(table, sum, term);
      for (const { item, figures } of turns) addTurn(item, { figures, success: figures.success === true }, addTo);
      addSession(sessionOf(turns.map(({ item, figures }) => ({ turn: goldOf(item).turn, ok: figures.success === true }))), addTo);
    }
  },
  tables(sums) {
    const { metrics, byCategory } = tallyTables(sums, SUMS.length, metricsOf);
    return { metrics, byCategory: inCategoryOrder(byCategory) };
  },
};

export const mtuScorer: BenchmarkScorer = { benchmark: 'mtu-bench', items: mtuItems, oracle, answerOfReply, score, corrupt, unitOf: (item) => goldOf(item).dialogue, tablesOf, tally };

/**
 * The records of the released MTU-Eval files in `dir` as items: the setting from the file (OOD: from
 * the question and the answer). OOD_eval.jsonl repeats some ids: each occurrence is its own item.
 */
export function releasedMtuItems(dir: string): EvalItem[] {
  const items: EvalItem[] = [];
  const seen = new Map<string, number>();
  for (const file of RELEASED_MTU_FILES) {
    for (const { value: record } of eachJsonlLine<{ id: string; question: string; answer: Record<string, unknown> }>(join(dir, `${file}_eval.jsonl`))) {
      const n = (seen.get(record.id) ?? 0) + 1;
      seen.set(record.id, n);
      const multiTurn = record.question.includes('History Dialog');
      const calls = Object.keys(record.answer).filter((k) => k.trim()).length;
      const setting = file === 'OOD' ? (`${multiTurn ? 'M' : 'S'}-${calls > 1 ? 'M' : 'S'}` as const) : file;
      const parts = record.id.split('_');
      items.push(
        mtuRecordItem(n > 1 ? `${record.id}~${n}` : record.id, record as never, {
          setting,
          category: file,
          dialogue: multiTurn ? parts.slice(0, -1).join('_') : record.id,
          turn: multiTurn ? Number(parts.at(-1)) : 0,
          hard: false,
          sampleId: record.id,
          tools: [],
        }),
      );
    }
  }
  return items;
}
