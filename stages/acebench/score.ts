import type { BenchmarkScorer, EvalItem, EvalOutput, EvalReport, JudgedItem, MetricTable, ReportTables } from '../../core/eval.ts';
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
  return tablesOfOutcomes(
    units.flatMap((unit, index) =>
      unit.map(({ item, figures }): ItemOutcome => {
        const gold = item.gold as unknown as AceGold;
        return {
          output: { item, output: null },
          gold: gold.kind === 'calls' && gold.dialogue !== null ? { ...gold, dialogue: `${gold.dialogue}#${index}` } : gold,
          valid: figures.valid === true,
          ...(figures.process === undefined ? {} : { process: Number(figures.process) }),
        };
      }),
    ),
  );
}

function tablesOfOutcomes(outcomes: readonly ItemOutcome[]): ReportTables {
  const byCategory = new Map<string, ItemOutcome[]>();
  for (const outcome of outcomes) {
    const list = byCategory.get(outcome.output.item.category) ?? [];
    list.push(outcome);
    byCategory.set(outcome.output.item.category, list);
  }
  const categoryMetrics = Object.fromEntries([...byCategory].map(([category, list]) => [category, metricsOfCategory(list)]));
  const metrics: MetricTable = {};
  let weighted = 0;
  let weights = 0;
  for (const [group, categories] of Object.entries(GROUPS)) {
    const present = categories.filter((category) => category in categoryMetrics);
    if (!present.length) continue;
    metrics[group] = mean(present.map((category) => categoryMetrics[category].accuracy));
    if (group === 'agent') metrics.agent_process = mean(present.map((category) => categoryMetrics[category].process_accuracy));
    const weight = Math.sqrt(present.reduce((sum, category) => sum + byCategory.get(category)!.length, 0));
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

function metricsOfCategory(outcomes: readonly ItemOutcome[]): MetricTable & { accuracy: number } {
  const first = outcomes[0].gold;
  if (first.kind === 'agent') return { accuracy: share(outcomes.map((o) => o.valid)), process_accuracy: mean(outcomes.map((o) => o.process ?? 0)) };
  if (first.kind === 'calls' && first.dialogue !== null) {
    const dialogues = new Map<string, boolean[]>();
    for (const outcome of outcomes) {
      const key = (outcome.gold as { dialogue: string | null }).dialogue ?? outcome.output.item.id;
      dialogues.set(key, [...(dialogues.get(key) ?? []), outcome.valid]);
    }
    const turns = [...dialogues.values()];
    return { accuracy: share(turns.map((valid) => valid.every(Boolean))), process_accuracy: mean(turns.map(share)) };
  }
  return { accuracy: share(outcomes.map((o) => o.valid)) };
}

const mean = (values: readonly number[]) => (values.length ? values.reduce((sum, value) => sum + value, 0) / values.length : 0);
const share = (flags: readonly boolean[]) => mean(flags.map((flag) => (flag ? 1 : 0)));
