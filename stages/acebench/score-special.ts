import type { Json } from '../../core/records.ts';
import type { AceAnswerKind } from './format.ts';
import { IRRELEVANT_ANSWER } from './record.ts';
import type { CheckResult } from './score-calls.ts';
import { pyStr } from './score-calls.ts';

/**
 * ACEBench's check of the special categories (eval_main.py `special_eval`): the answer must hold
 * the category's phrase and, for an incomplete request, each function named and each missing
 * parameter; for wrong values, each wrong value. Phrases are matched as written (case and spacing),
 * on the output as the model wrote it.
 */
export const SPECIAL_PHRASES = {
  incomplete: 'Missing necessary parameters',
  error_param: 'There is incorrect value',
  irrelevant: 'the limitations of the function',
} as const;

export type SpecialKind = keyof typeof SPECIAL_PHRASES;

export function isSpecialKind(kind: AceAnswerKind): kind is SpecialKind {
  return kind in SPECIAL_PHRASES;
}

/** `truth`: {function: [missing parameters]} (incomplete), {parameter: [wrong values]} (error_param), the refusal (irrelevant). */
export function specialChecker(kind: SpecialKind, output: string | null, truth: Json): CheckResult {
  if (output === null) return { valid: false, error: 'no output' };
  const phrase = SPECIAL_PHRASES[kind];
  if (!output.includes(phrase)) return { valid: false, error: `error_detection: the answer does not say "${phrase}"` };
  if (kind === 'irrelevant') return { valid: true };
  for (const [name, values] of Object.entries((truth ?? {}) as Record<string, Json[]>)) {
    if (kind === 'incomplete' && !output.includes(name)) return { valid: false, error: `error_correction: the answer does not name ${name}` };
    const missing = (Array.isArray(values) ? values : []).filter((value) => !output.includes(pyStr(value)));
    if (missing.length) return { valid: false, error: `error_correction: the answer does not mention ${missing.map((value) => pyStr(value)).join(', ')}${kind === 'incomplete' ? ` for ${name}` : ''}` };
  }
  return { valid: true };
}

/** The answer a perfect model writes, in the phrasing ACEBench's prompt asks for. */
export function specialOracle(kind: SpecialKind, truth: Json): string {
  if (kind === 'irrelevant') return `["${typeof truth === 'string' ? truth : IRRELEVANT_ANSWER}"]`;
  const entries = Object.entries((truth ?? {}) as Record<string, Json[]>);
  const sentences =
    kind === 'incomplete'
      ? entries.map(([name, params]) => `${SPECIAL_PHRASES.incomplete} (${params.map(pyStr).join(', ')}) for the api (${name})`)
      : entries.map(([name, values]) => `${SPECIAL_PHRASES.error_param} (${values.map(pyStr).join(', ')}) for the parameters (${name}) in the conversation history.`);
  // Written as the prompt asks (a bracketed list of sentences), values as they are: no escaping to lose a match.
  return `[${sentences.map((sentence) => `"${sentence}"`).join(', ')}]`;
}
