import { f1, rate, tablesByCategory, type BenchmarkScorer, type Corruption, type EvalItem, type EvalOutput, type EvalReport, type MetricTable, type ModelReply, type ReportTables } from '../../core/eval.ts';
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

function table(judged: Judged[]): MetricTable {
  const metrics: MetricTable = {};
  const awareness = judged.filter((j) => goldOf(j.item).task === 'awareness');
  if (awareness.length) {
    const count = (goldYes: boolean, saidYes: boolean) => awareness.filter((j) => j.figures.gold_yes === goldYes && j.figures.said_yes === saidYes).length;
    const [tp, fp, fn] = [count(true, true), count(false, true), count(true, false)];
    const [precision, recall] = [rate(tp, tp + fp), rate(tp, tp + fn)];
    Object.assign(metrics, {
      awareness_accuracy: rate(awareness.filter((j) => j.figures.correct).length, awareness.length),
      awareness_precision: precision,
      awareness_recall: recall,
      awareness_f1: f1(precision, recall),
    });
  }
  const selection = judged.filter((j) => goldOf(j.item).task !== 'awareness');
  for (const task of TASKS.filter((t) => t !== 'awareness')) {
    const group = selection.filter((j) => goldOf(j.item).task === task);
    if (!group.length) continue;
    metrics[`${task}_csr`] = rate(group.filter((j) => j.figures.correct).length, group.length);
    if (task === 'multi-tool') {
      const share = (chosen: number, right: number) => rate(group.filter((j) => j.figures.chosen === chosen && j.figures.right === right).length, group.length);
      Object.assign(metrics, { 'multi-tool_2/2': share(2, 2), 'multi-tool_1/1': share(1, 1), 'multi-tool_1/2': share(2, 1) });
    }
  }
  if (selection.length) metrics.csr = rate(selection.filter((j) => j.figures.correct).length, selection.length);
  return metrics;
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
  // A scenario item counts in "scenario" and in its own scenario's group.
  return { metrics: table(judged), byCategory: tablesByCategory(judged, (j) => [j.item.category, ...(goldOf(j.item).scenario ? [`scenario:${goldOf(j.item).scenario}`] : [])], table) };
}

// Partial multi-tool answers (one of the two tools chosen and right; two chosen, one right): a perfect model gives none.
export const tooleScorer: BenchmarkScorer = { benchmark: 'metatool', items, oracle, answerOfReply, score, corrupt, tablesOf, lowerIsBetter: ['multi-tool_1/1', 'multi-tool_1/2'] };
