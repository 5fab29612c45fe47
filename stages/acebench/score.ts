import type { AddTerm, BenchmarkScorer, EvalItem, EvalOutput, EvalReport, JudgedItem, MetricTable, ReportTables, TallyRule } from '../../core/eval.ts';
import { ACE_AGENT_CATEGORIES, ACE_NORMAL_CATEGORIES, ACE_SPECIAL_CATEGORIES } from './record.ts';
import { scoreAgent } from './score-agent.ts';
import { decodeCalls, normalChecker, type CheckResult } from './score-calls.ts';
import { aceAnswerOfReply, aceItems, aceOracle, type AceGold } from './score-items.ts';
import { specialChecker } from './score-special.ts';
import { aceAgentSession, corruptAceAnswer } from './session.ts';

/**
 * ACEBench's scores (eval_main.py and model_eval/evaluation_helper.py): accuracy per category —
 * for the multi-turn normal categories the share of dialogues whose every turn is right, with
 * `process_accuracy` the mean share of right turns; for the agent categories the share of right end
 * states, with `process_accuracy` from the mile_stones. Normal, special and agent accuracy are the
 * unweighted means of their categories (those present: the repository counts an absent category
 * as 0), and the overall score weighs them by the square roots of their item counts (paper §3.2.4,
 * Appendix E; the repository's fixed 0.578 / 0.2676 / 0.1545 are these weights for the release).
 */

interface ItemOutcome {
  output: EvalOutput;
  gold: AceGold;
  valid: boolean;
  /** Agent items: process accuracy. */
  process?: number;
  note?: string;
}

const GROUPS = {
  normal: ACE_NORMAL_CATEGORIES as readonly string[],
  special: ACE_SPECIAL_CATEGORIES as readonly string[],
  agent: ACE_AGENT_CATEGORIES as readonly string[],
};

export function scoreAceBench(outputs: readonly EvalOutput[]): EvalReport {
  const outcomes = outputs.map(scoreItem);
  return {
    benchmark: 'acebench',
    items: outputs.length,
    ...tablesOfOutcomes(outcomes),
    details: outcomes.map(({ output, valid, process, note }) => ({
      id: output.item.id,
      category: output.item.category,
      figures: { valid, ...(process === undefined ? {} : { process }) },
      ...(note ? { note } : {}),
    })),
  };
}

/** The unit of resampling: a multi-turn dialogue's turns together, else the item. */
function unitOf(item: EvalItem): string {
  const gold = item.gold as unknown as AceGold;
  return (gold.kind === 'calls' && gold.dialogue) || item.id;
}

/** Items already judged (their `valid` and `process` figures), each unit counted as its own dialogue. */
function tablesOf(units: readonly (readonly JudgedItem[])[]): ReportTables {
  return tablesOfOutcomes(units.flatMap((unit, index) => unit.map((judged) => outcomeOfJudged(judged, `#${index}`))));
}

/** A judged item as an outcome; a dialogue's key gets `unitMark`, so that a unit drawn twice is two dialogues. */
function outcomeOfJudged({ item, figures }: JudgedItem, unitMark: string): ItemOutcome {
  const gold = item.gold as unknown as AceGold;
  return {
    output: { item, output: null },
    gold: gold.kind === 'calls' && gold.dialogue !== null ? { ...gold, dialogue: `${gold.dialogue}${unitMark}` } : gold,
    valid: figures.valid === true,
    ...(figures.process === undefined ? {} : { process: Number(figures.process) }),
  };
}

/** A category table's sums (core/eval-tally.ts): its items, their validity and process, its dialogues'. */
const SUMS = ['items', 'valid', 'process', 'agent_items', 'dialogue_items', 'dialogues', 'dialogues_valid', 'dialogue_share'] as const;
const SUM = Object.fromEntries(SUMS.map((name, i) => [name, i])) as Record<(typeof SUMS)[number], number>;

/**
 * The terms of outcomes in their categories' tables: each item's, then each dialogue's (the turns of
 * one dialogue, by its key, in a category). The tables are the categories; the whole side's figures
 * come from theirs.
 */
function addOutcomes(outcomes: readonly ItemOutcome[], add: AddTerm): void {
  const dialogues = new Map<string, Map<string, boolean[]>>();
  for (const outcome of outcomes) {
    const { category } = outcome.output.item;
    const { gold } = outcome;
    add(category, SUM.items, 1);
    add(category, SUM.valid, outcome.valid ? 1 : 0);
    add(category, SUM.process, outcome.process ?? 0);
    add(category, SUM.agent_items, gold.kind === 'agent' ? 1 : 0);
    add(category, SUM.dialogue_items, gold.kind === 'calls' && gold.dialogue !== null ? 1 : 0);
    const byKey = dialogues.get(category) ?? dialogues.set(category, new Map()).get(category)!;
    const key = (gold as { dialogue?: string | null }).dialogue ?? outcome.output.item.id;
    (byKey.get(key) ?? byKey.set(key, []).get(key)!).push(outcome.valid);
  }
  for (const [category, byKey] of dialogues) {
    for (const valid of byKey.values()) {
      add(category, SUM.dialogues, 1);
      add(category, SUM.dialogues_valid, valid.every(Boolean) ? 1 : 0);
      add(category, SUM.dialogue_share, share(valid));
    }
  }
}

function tablesOfOutcomes(outcomes: readonly ItemOutcome[]): ReportTables {
  const sums = new Map<string, Float64Array>();
  addOutcomes(outcomes, (table, sum, term) => {
    const figures = sums.get(table) ?? sums.set(table, new Float64Array(SUMS.length)).get(table)!;
    figures[sum] += term;
  });
  return tablesOfSums(sums);
}

/** The tables from each category's sums, in first-seen order. */
function tablesOfSums(sums: ReadonlyMap<string, Float64Array>): ReportTables {
  const categoryMetrics = Object.fromEntries([...sums].map(([category, figures]) => [category, metricsOfCategory(figures)]));
  const metrics: MetricTable = {};
  let weighted = 0;
  let weights = 0;
  for (const [group, categories] of Object.entries(GROUPS)) {
    const present = categories.filter((category) => category in categoryMetrics);
    if (!present.length) continue;
    metrics[group] = mean(present.map((category) => categoryMetrics[category].accuracy));
    if (group === 'agent') metrics.agent_process = mean(present.map((category) => categoryMetrics[category].process_accuracy));
    const weight = Math.sqrt(present.reduce((sum, category) => sum + sums.get(category)![SUM.items], 0));
    weighted += weight * metrics[group];
    weights += weight;
  }
  metrics.overall = weights ? weighted / weights : 0;
  return { metrics, byCategory: categoryMetrics };
}

function scoreItem(output: EvalOutput): ItemOutcome {
  const gold = output.item.gold as unknown as AceGold;
  const outcome = (result: CheckResult, extra: Partial<ItemOutcome> = {}): ItemOutcome => ({ output, gold, valid: result.valid, ...(result.error ? { note: result.error } : {}), ...extra });
  if (gold.kind === 'agent') {
    const { end, process, refused } = scoreAgent(gold, output.output);
    const notes = [end.error, refused.length ? `refused by the sandbox: ${refused.join('; ')}` : undefined].filter(Boolean);
    return { output, gold, valid: end.valid, process, ...(notes.length ? { note: notes.join('; ') } : {}) };
  }
  if (gold.kind === 'calls') {
    const decoded = decodeCalls(output.output);
    if ('error' in decoded) return outcome({ valid: false, error: `wrong_output_format: ${decoded.error}` });
    // Any accepted answer will do; the first one's error is the one reported.
    const results = gold.answers.map((answer) => normalChecker(gold.functions, decoded.calls, answer, output.item.category));
    return outcome(results.find((result) => result.valid) ?? results[0] ?? { valid: false, error: 'the release gives no answer' });
  }
  return outcome(specialChecker(gold.kind, output.output, gold.truth));
}

/** A category's figures by the kind of its items (a category's items are all of one kind: agent, multi-turn dialogue turns, or single answers). */
function metricsOfCategory(sums: Float64Array): MetricTable & { accuracy: number } {
  const ratio = (part: number, whole: number) => (whole ? part / whole : 0);
  const [items, dialogues] = [sums[SUM.items], sums[SUM.dialogues]];
  if (sums[SUM.agent_items]) return { accuracy: ratio(sums[SUM.valid], items), process_accuracy: ratio(sums[SUM.process], items) };
  if (sums[SUM.dialogue_items]) return { accuracy: ratio(sums[SUM.dialogues_valid], dialogues), process_accuracy: ratio(sums[SUM.dialogue_share], dialogues) };
  return { accuracy: ratio(sums[SUM.valid], items) };
}

const mean = (values: readonly number[]) => (values.length ? values.reduce((sum, value) => sum + value, 0) / values.length : 0);
const share = (flags: readonly boolean[]) => mean(flags.map((flag) => (flag ? 1 : 0)));

/** `tablesOf` as sums: a unit (a dialogue, or one item) adds its outcomes' terms on its own. */
const tally: TallyRule = {
  sums: SUMS,
  unit: (judged, add) => addOutcomes(judged.map((j) => outcomeOfJudged(j, '')), add),
  tables: tablesOfSums,
};

export const acebenchScorer: BenchmarkScorer = {
  benchmark: 'acebench',
  items: aceItems,
  oracle: aceOracle,
  answerOfReply: aceAnswerOfReply,
  score: scoreAceBench,
  corrupt: corruptAceAnswer,
  session: (item) => aceAgentSession(item),
  unitOf,
  tablesOf,
  tally,
};
