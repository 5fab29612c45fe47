import { f1, rate, tablesByCategory, type BenchmarkScorer, type Corruption, type EvalItem, type EvalOutput, type EvalReport, type MetricTable, type ModelReply, type ReportTables, type TallyRule } from '../../core/eval.ts';
import { ALL_ITEMS, tallyTables } from '../../core/eval-tally.ts';
import type { Sample, ToolSpec } from '../../core/records.ts';
import type { Rng } from '../../core/rng.ts';
import { TASKS, type Task } from './task-sets.ts';
import { queryText } from './records.ts';

/**
 * MetaTool's evaluation (the paper's §2.3 "Metrics", Table 4) of the ToolE task samples:
 *  - awareness of tool usage: the answer starts "yes" (a tool is needed) or "no"; accuracy,
 *    precision, recall and F1 with "yes" as the positive class (an answer with neither is wrong);
 *  - tool selection, CSR (correct selection rate): the chosen tools A(y) equal the gold {t} for the
 *    similar-choices and scenario tasks, ∅ for the reliability task (no listed tool fits: the answer is
 *    "None"; naming any tool is the hallucination / sycophancy the task measures), and the gold pair for
 *    the multi-tool task, which also gets the paper's partial rates: 2/2 (two chosen, both right), 1/1
 *    (one chosen, right), 1/2 (two chosen, one right).
 * The chosen tools are the listed names on the answer's first non-empty line (the prompt asks for the
 * names, or None, there, and the reason after); a first line naming no listed tool and not saying
 * "None" is an unreadable choice: wrong for every task.
 */

export interface TooleGold {
  task: Task;
  labels: string[];
  scenario?: string;
}

const isTask = (value: unknown): value is Task => TASKS.includes(value as Task);

function toolList(tools: ToolSpec[]): string {
  return tools.map((tool) => `${tool.name}: ${tool.description}`).join('\n');
}

function prompt(task: Task, query: string, tools: ToolSpec[]): string {
  if (task === 'awareness') {
    return [
      'Consider whether you can answer the user query below well on your own, or whether an external tool would serve it better (recent or real-time information, specialised abilities, actions in the world, or a better answer through a tool).',
      'Answer "yes" if a tool is needed and "no" otherwise, on the first line, then explain briefly.',
      `User query: ${query}`,
    ].join('\n');
  }
  const most = task === 'multi-tool' ? 'at most two tools' : 'at most one tool';
  return [
    `Choose the tool from the list below that fits the user query (${most}). Write the tool name${task === 'multi-tool' ? 's, separated by a comma,' : ''} on the first line, or "None" when no listed tool fits, then explain briefly.`,
    `User query: ${query}`,
    'Tools:',
    toolList(tools),
  ].join('\n');
}

/** A task item of ToolE's task sets; `id` must be unique among the items scored together. */
export function tooleItem(id: string, sampleId: string, gold: TooleGold, query: string, tools: ToolSpec[]): EvalItem {
  return {
    id,
    sampleId,
    category: gold.task,
    messages: [{ role: 'user', content: prompt(gold.task, query, tools) }],
    tools,
    gold: { task: gold.task, labels: gold.labels, ...(gold.scenario ? { scenario: gold.scenario } : {}) },
  };
}

function items(sample: Sample): EvalItem[] {
  const meta = sample.meta as { task?: unknown; scenario?: unknown };
  if (!isTask(meta.task)) return [];
  const scenario = typeof meta.scenario === 'string' ? meta.scenario : undefined;
  return [tooleItem(sample.id, sample.id, { task: meta.task, labels: sample.expected.labels ?? [], scenario }, queryText(sample), sample.tools)];
}

const goldOf = (item: EvalItem) => item.gold as unknown as TooleGold;

// ---------------------------------------------------------------- writing answers

function answer(task: Task, choice: string[]): string {
  if (task === 'awareness') return choice[0] === 'yes' ? 'yes\nThe query is better served by an external tool.' : 'no\nThe query can be answered without a tool.';
  return choice.length ? `${choice.join(', ')}\nThe listed tool${choice.length > 1 ? 's fit' : ' fits'} the query.` : 'None\nNo listed tool fits the query.';
}

function oracle(item: EvalItem): string {
  const gold = goldOf(item);
  return answer(gold.task, gold.labels);
}

/**
 * A chat model's reply as MetaTool's answer: calls are the tools it chose (awareness: a call says
 * "yes"), their names on the first line; a reply in words is the answer as written ("yes", "no", "None").
 */
function answerOfReply(item: EvalItem, reply: ModelReply): string {
  const { task } = goldOf(item);
  if (!reply.calls.length) return reply.text ?? '';
  return answer(task, task === 'awareness' ? ['yes'] : [...new Set(reply.calls.map((call) => call.name))]);
}

function corrupt(item: EvalItem, corruption: Corruption, rng: Rng): string | null {
  const { task, labels } = goldOf(item);
  if (task === 'awareness') return corruption === 'wrong-tool' ? answer(task, [labels[0] === 'yes' ? 'no' : 'yes']) : null;
  const unused = item.tools.map((t) => t.name).filter((name) => !labels.includes(name));
  const choice = [...labels];
  switch (corruption) {
    case 'wrong-tool':
      if (!unused.length) return null;
      // With no gold tool (reliability), a wrong tool is any listed one: the hallucinated choice.
      if (choice.length) choice[rng.int(0, choice.length - 1)] = rng.pick(unused);
      else choice.push(rng.pick(unused));
      break;
    case 'drop-parameter':
      // A multi-tool answer leaving out one of its tools; single choices have no part to leave out.
      if (choice.length < 2) return null;
      choice.splice(rng.int(0, choice.length - 1), 1);
      break;
    case 'wrong-value':
      return null;
    case 'extra-call':
      if (!unused.length) return null;
      choice.unshift(rng.pick(unused));
      break;
  }
  return answer(task, choice);
}

// ---------------------------------------------------------------- reading answers

const firstLine = (text: string) => text.split('\n').find((line) => line.trim()) ?? '';
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const named = (name: string) => new RegExp(`(?<![A-Za-z0-9_])${escape(name)}(?![A-Za-z0-9_])`, 'i');

/** "yes" / "no" as the first line says it first; null when it says neither. */
export function readAwareness(output: string): 'yes' | 'no' | null {
  const match = /\b(yes|no)\b/i.exec(firstLine(output));
  return match ? (match[1].toLowerCase() as 'yes' | 'no') : null;
}

/** The listed tools the first line names (longer names first, so a name inside another is not counted twice); null when it names none and does not say None. */
export function readChoice(output: string, tools: readonly ToolSpec[]): string[] | null {
  let line = firstLine(output);
  const chosen: string[] = [];
  for (const name of tools.map((t) => t.name).sort((a, b) => b.length - a.length)) {
    const pattern = named(name);
    if (!pattern.test(line)) continue;
    chosen.push(name);
    line = line.replace(new RegExp(pattern.source, 'gi'), ' ');
  }
  if (chosen.length) return chosen;
  return /\bnone\b/i.test(line) ? [] : null;
}

// ---------------------------------------------------------------- scoring

interface Judged {
  item: EvalItem;
  figures: Record<string, number | boolean>;
  note?: string;
}

function judge(item: EvalItem, output: string | null): Judged {
  const { task, labels } = goldOf(item);
  if (task === 'awareness') {
    const said = output === null ? null : readAwareness(output);
    const correct = said === labels[0];
    const note = output === null ? 'no output' : said === null ? 'neither "yes" nor "no" on the first line' : correct ? undefined : `answered ${said}, gold ${labels[0]}`;
    return { item, figures: { gold_yes: labels[0] === 'yes', said_yes: said === 'yes', correct }, ...(note ? { note } : {}) };
  }
  const chosen = output === null ? null : readChoice(output, item.tools);
  const right = chosen ? chosen.filter((name) => labels.includes(name)).length : 0;
  const correct = chosen !== null && chosen.length === labels.length && right === labels.length;
  const figures: Record<string, number | boolean> = { correct, chosen: chosen?.length ?? -1, right };
  const note =
    output === null
      ? 'no output'
      : chosen === null
        ? 'the first line names no listed tool and does not say None'
        : correct
          ? undefined
          : `chose ${chosen.length ? chosen.join(', ') : 'None'}, gold ${labels.length ? labels.join(', ') : 'None'}`;
  return { item, figures, ...(note ? { note } : {}) };
}

/** The tasks a choice is scored in (every one but awareness). */
const SELECTION_TASKS = TASKS.filter((t) => t !== 'awareness');
/** A table's sums (core/eval-tally.ts): counts of items, all whole numbers. */
const SUMS = [
  'awareness',
  'awareness_correct',
  'awareness_tp',
  'awareness_fp',
  'awareness_fn',
  ...SELECTION_TASKS.flatMap((task) => [`${task}`, `${task}_correct`]),
  'multi-tool_2/2',
  'multi-tool_1/1',
  'multi-tool_1/2',
  'selection',
  'selection_correct',
];
const SUM = new Map(SUMS.map((name, i) => [name, i]));

/** A judged item's terms: 1 in each count it falls in. */
function addJudged({ item, figures }: Pick<Judged, 'item' | 'figures'>, add: (sum: number, term: number) => void): void {
  const count = (name: string, yes: unknown = true) => yes && add(SUM.get(name)!, 1);
  const task = goldOf(item).task;
  if (task === 'awareness') {
    count('awareness');
    count('awareness_correct', figures.correct);
    count('awareness_tp', figures.gold_yes === true && figures.said_yes === true);
    count('awareness_fp', figures.gold_yes === false && figures.said_yes === true);
    count('awareness_fn', figures.gold_yes === true && figures.said_yes === false);
    return;
  }
  count('selection');
  count('selection_correct', figures.correct);
  if (!SELECTION_TASKS.includes(task)) return;
  count(task);
  count(`${task}_correct`, figures.correct);
  if (task !== 'multi-tool') return;
  count('multi-tool_2/2', figures.chosen === 2 && figures.right === 2);
  count('multi-tool_1/1', figures.chosen === 1 && figures.right === 1);
  count('multi-tool_1/2', figures.chosen === 2 && figures.right === 1);
}

function metricsOf(sums: Float64Array): MetricTable {
  const sum = (name: string) => sums[SUM.get(name)!];
  const metrics: MetricTable = {};
  const awareness = sum('awareness');
  if (awareness) {
    const [tp, fp, fn] = [sum('awareness_tp'), sum('awareness_fp'), sum('awareness_fn')];
    const [precision, recall] = [rate(tp, tp + fp), rate(tp, tp + fn)];
    Object.assign(metrics, {
      awareness_accuracy: rate(sum('awareness_correct'), awareness),
      awareness_precision: precision,
      awareness_recall: recall,
      awareness_f1: f1(precision, recall),
    });
  }
  for (const task of SELECTION_TASKS) {
    const group = sum(task);
    if (!group) continue;
    metrics[`${task}_csr`] = rate(sum(`${task}_correct`), group);
    if (task === 'multi-tool') {
      const share = (name: string) => rate(sum(name), group);
      Object.assign(metrics, { 'multi-tool_2/2': share('multi-tool_2/2'), 'multi-tool_1/1': share('multi-tool_1/1'), 'multi-tool_1/2': share('multi-tool_1/2') });
    }
  }
  if (sum('selection')) metrics.csr = rate(sum('selection_correct'), sum('selection'));
  return metrics;
}

function table(judged: Judged[]): MetricTable {
  const sums = new Float64Array(SUMS.length);
  for (const j of judged) addJudged(j, (i, term) => (sums[i] += term));
  return metricsOf(sums);
}

function score(outputs: readonly EvalOutput[]): EvalReport {
  const judged = outputs.map(({ item, output }) => judge(item, output));
  return {
    benchmark: 'metatool',
    items: outputs.length,
    ...tablesOf([judged]),
    details: judged.map(({ item, figures, note }) => ({ id: item.id, category: item.category, figures, ...(note ? { note } : {}) })),
  };
}

/** Each item is its own unit. */
function tablesOf(units: readonly (readonly Judged[])[]): ReportTables {
  const judged = units.flat();
  return { metrics: table(judged), byCategory: tablesByCategory(judged, (j) => categoriesOf(j.item), table) };
}

/** A scenario item counts in "scenario" and in its own scenario's group. */
const categoriesOf = (item: EvalItem): string[] => [item.category, ...(goldOf(item).scenario ? [`scenario:${goldOf(item).scenario}`] : [])];

/** `tablesOf` as sums: each item counts in the whole and in its categories. */
const tally: TallyRule = {
  sums: SUMS,
  unit(judged, add) {
    for (const j of judged) for (const table of [ALL_ITEMS, ...categoriesOf(j.item)]) addJudged(j, (i, term) => add(table, i, term));
  },
  tables: (sums) => tallyTables(sums, SUMS.length, metricsOf),
};

// Partial multi-tool answers (one of the two tools chosen and right; two chosen, one right): a perfect model gives none.
export const tooleScorer: BenchmarkScorer = { benchmark: 'metatool', items, oracle, answerOfReply, score, corrupt, tablesOf, tally, lowerIsBetter: ['multi-tool_1/1', 'multi-tool_1/2'] };
