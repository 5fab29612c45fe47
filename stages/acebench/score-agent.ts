import { isJsonObject } from '../../core/records.ts';
import { messageOf } from '../../core/errors.ts';
import type { Json } from '../../core/records.ts';
import type { AceLanguage } from './record.ts';

import { SandboxSession } from './sandbox/execute.ts';
import { pyEqual, type CheckResult } from './score-calls.ts';

/**
 * ACEBench's agent scoring (eval_main.py `agent_eval` and `agent_eval_process`) over toolkiln's
 * sandboxes. The model's calls run in order in a session loaded from the record's initial_config
 * (a call the sandbox rejects changes nothing, as the harness answers it with an error). The end
 * state is right when, for every class of the answer, each attribute of the model's class equals
 * the answer's (for an object attribute, each key the answer holds); an answer class whose name
 * matches no class is not compared, as in the repository. Process accuracy is 1 for a right end
 * state, else the share of the mile_stone steps found in order among the model's steps (exact text,
 * trimmed); with alternative mile_stones, the best one, rounded to 3 places as the repository does.
 */

export interface AgentGold {
  language: AceLanguage;
  initialConfig: Json;
  involvedClasses: string[];
  finalState: Record<string, Json>[];
  milestones: string[][];
  /** The release lists alternative mile_stones (the rounding of process accuracy differs). */
  nestedMilestones: boolean;
}

/** The model's steps: a JSON list of call strings, else the whole output as one step. */
export function agentSteps(output: string | null): string[] {
  if (output === null) return [];
  try {
    const value = JSON.parse(output);
    if (Array.isArray(value) && value.every((step) => typeof step === 'string')) return value;
  } catch {
    // Not JSON: one call string.
  }
  return [output];
}

export interface AgentOutcome {
  end: CheckResult;
  process: number;
  /** Calls the sandbox refused, with why. */
  refused: string[];
}

export function scoreAgent(gold: AgentGold, output: string | null): AgentOutcome {
  const steps = agentSteps(output);
  let session: SandboxSession;
  try {
    session = new SandboxSession({ initialConfig: gold.initialConfig, involvedClasses: gold.involvedClasses, language: gold.language });
  } catch (error) {
    return { end: { valid: false, error: `the record's sandbox cannot start: ${messageOf(error)}` }, process: 0, refused: [] };
  }
  const refused = steps.flatMap((step) => session.execute(step)).filter((outcome) => !outcome.ok).map((outcome) => outcome.error ?? outcome.call);
  const end = endStateChecker(session.groundTruth() as Record<string, Json>[], gold.finalState);
  return { end, process: end.valid ? 1 : processAccuracy(steps, gold.milestones, gold.nestedMilestones), refused };
}

/** agent_eval's end-to-end check of the classes' states. */
export function endStateChecker(model: readonly Record<string, Json>[], answer: readonly Record<string, Json>[]): CheckResult {
  if (model.length !== answer.length) return { valid: false, error: `wrong number of class: ${model.length}, the answer has ${answer.length}` };
  const errors: string[] = [];
  for (const expected of answer) {
    const keys = Object.keys(expected).sort().join('\u0000');
    const matched = model.find((state) => Object.keys(state).sort().join('\u0000') === keys);
    if (matched) errors.push(...classErrors(matched, expected));
  }
  return errors.length ? { valid: false, error: errors.join('; ') } : { valid: true };
}

/** agent_checker: the model's attributes of one class against the answer's. */
function classErrors(model: Record<string, Json>, answer: Record<string, Json>): string[] {
  const className = Object.keys(answer)[0];
  const expected = Object.values(answer)[0];
  const actual = Object.values(model)[0];
  if (!isJsonObject(expected) || !isJsonObject(actual)) return pyEqual(expected, actual) ? [] : [`class(${className}) wrong`];
  const errors: string[] = [];
  for (const [attribute, value] of Object.entries(actual)) {
    if (!Object.hasOwn(expected, attribute)) {
      errors.push(`class(${className}) attributes(${attribute}) missing in possible_answer.`);
      continue;
    }
    const want = expected[attribute];
    if (isJsonObject(want)) {
      for (const [key, inner] of Object.entries(want)) {
        if (!isJsonObject(value) || !Object.hasOwn(value, key)) errors.push(`class(${className}) attributes(${attribute}) wrong: ${key} missing`);
        else if (!pyEqual(inner, value[key])) errors.push(`class(${className}) attributes(${attribute}.${key}) wrong, [expected: ${JSON.stringify(inner)}, real: ${JSON.stringify(value[key])}]`);
      }
    } else if (!pyEqual(want, value)) {
      errors.push(`class(${className}) attributes(${attribute}) wrong, [expected: ${JSON.stringify(want)}, real: ${JSON.stringify(value)}]`);
    }
  }
  return errors;
}

/** agent_eval_process: the share of mile_stone steps found in order among the model's steps. */
export function processAccuracy(steps: readonly string[], milestones: readonly (readonly string[])[], nested: boolean): number {
  const accuracyOf = (path: readonly string[]) => {
    if (!path.length) return 1;
    let at = 0;
    let found = 0;
    for (const stone of path) {
      while (at < steps.length) {
        const hit = steps[at].trim() === stone.trim();
        at++;
        if (hit) {
          found++;
          break;
        }
      }
    }
    return found / path.length;
  };
  if (!nested) return accuracyOf(milestones[0] ?? []);
  return Math.max(...milestones.map((path) => Math.round(accuracyOf(path) * 1000) / 1000));
}
