import { z } from 'zod';
import { describeProblems, type ArgumentValidator } from '../../core/json-schema.ts';
import { pythonJson } from '../../core/python-json.ts';
import { JsonValue, type Json, isJsonObject } from '../../core/records.ts';
import type { Rng } from '../../core/rng.ts';
import { ACE_CATEGORIES, ACE_LANGUAGES, AceFunctionSchema, functionParameters, propertiesOf, type AceCategory, type AceFunction, type AceLanguage, type AceRecord } from './record.ts';
import { CandidateSet } from './candidates.ts';
import { renderValue } from './sandbox/python-call.ts';

/**
 * What the ACEBench dialogue stages read and write: a candidate set (the APIs one instance offers
 * and the ones its gold calls use) in, `AceRecord`s in the released layout out, and the released
 * text forms both stages share (the date line, the question, a call as the dialogue prints it).
 */

/** The candidate sets the dialogue stages read come from the candidate sampler. */
export { CandidateSet };

const AceData = z.union([
  z.object({ id: z.string().min(1), question: z.string().min(1), function: z.array(AceFunctionSchema), time: z.string() }).strict(),
  z.object({ id: z.string().min(1), question: z.string().min(1), function: z.array(AceFunctionSchema), profile: z.string().min(1) }).strict(),
]);

/** An `AceRecord` of a normal or special category: a released data line and its answer line. */
export const AceDialogueRecord = z.object({
  category: z.enum(ACE_CATEGORIES),
  language: z.enum(ACE_LANGUAGES),
  data: AceData,
  answer: z.object({ id: z.string().min(1), ground_truth: JsonValue }).strict(),
}) as unknown as z.ZodType<AceRecord & { answer: NonNullable<AceRecord['answer']> }>;
export type AceDialogueRecord = z.infer<typeof AceDialogueRecord>;

export interface GoldCall {
  name: string;
  arguments: Record<string, Json>;
}

/** The index a record id carries (`normal_atom_bool_<n>`): the candidate set id's trailing number. */
export function recordIndex(set: CandidateSet): number | undefined {
  const match = /(\d+)$/.exec(set.id);
  return match ? Number(match[1]) : undefined;
}

// ------------------------------------------------------------------ the date line

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const WEEKDAYS_EN = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const WEEKDAYS_ZH = ['日', '一', '二', '三', '四', '五', '六'];

/** A day near the release's dates (2020–2026), as YYYY-MM-DD. */
export function pickDay(rng: Rng): string {
  const date = new Date(Date.UTC(rng.int(2020, 2026), rng.int(0, 11), rng.int(1, 28)));
  return date.toISOString().slice(0, 10);
}

/**
 * The `time` line as the release writes it for the category and language: "The current time is
 * March 05, 2022, Saturday。" (single-turn, atom and special), "Today is 2022-03-05, Saturday."
 * (multi-turn), "Today is Saturday, March 05, 2022." (similar API); in Chinese "今天是2022年03月05日，
 * 星期六。", and "今天是2022-03-05 星期六。" for similar API.
 */
export function timeLine(category: AceCategory, language: AceLanguage, day: string): string {
  const [year, month, dayOfMonth] = day.split('-');
  const weekday = new Date(`${day}T00:00:00Z`).getUTCDay();
  const similar = category === 'normal_similar_api';
  if (language === 'zh') return similar ? `今天是${day} 星期${WEEKDAYS_ZH[weekday]}。` : `今天是${year}年${month}月${dayOfMonth}日，星期${WEEKDAYS_ZH[weekday]}。`;
  const monthName = MONTHS[Number(month) - 1];
  if (similar) return `Today is ${WEEKDAYS_EN[weekday]}, ${monthName} ${dayOfMonth}, ${year}.`;
  if (category === 'normal_multi_turn_user_adjust' || category === 'normal_multi_turn_user_switch') return `Today is ${day}, ${WEEKDAYS_EN[weekday]}.`;
  return `The current time is ${monthName} ${dayOfMonth}, ${year}, ${WEEKDAYS_EN[weekday]}。`;
}

// ------------------------------------------------------------------ text forms

export interface DialogueLine {
  role: 'user' | 'system';
  text: string;
}

/**
 * The `question` field: `user: …\nsystem: …\n`, one line per turn. The special categories
 * `incomplete` and `error_param` are released without the final newline.
 */
export function questionText(lines: DialogueLine[], category: AceCategory): string {
  const text = lines.map((line) => `${line.role}: ${line.text}`).join('\n');
  return category === 'special_incomplete' || category === 'special_error_param' ? text : `${text}\n`;
}

/** JSON as Python's `json.dumps` writes it by default (", " and ": " separators), non-ASCII kept as the release keeps it. */
export function spacedJson(value: Json): string {
  return pythonJson(value, { ensureAscii: false });
}

/** Calls as a multi-turn dialogue prints them: `[Func(a="x", b={"k": 1}, c=true)]`. */
export function callsText(calls: GoldCall[]): string {
  return `[${calls.map((call) => `${call.name}(${Object.entries(call.arguments).map(([key, value]) => `${key}=${spacedJson(value)}`).join(', ')})`).join(', ')}]`;
}

/** A value as Python's `repr` writes it (the release's `profile` is the repr of a dict), as call strings are written. */
export const pythonRepr = renderValue;

/** The `profile` field: the profile dict's repr, closed with ". " (English) or "。" (Chinese) as released. */
export function profileText(profile: Record<string, Json>, language: AceLanguage): string {
  return `${pythonRepr(profile)}${language === 'zh' ? '。' : '. '}`;
}

/**
 * The `ground_truth` of normal records: `{Func: {args}}`, one key per call; a function called more
 * than once is keyed `Func_1`, `Func_2`, … as released, the others by their bare name.
 */
export function callsGroundTruth(calls: GoldCall[]): Record<string, Json> {
  const counts = new Map<string, number>();
  for (const call of calls) counts.set(call.name, (counts.get(call.name) ?? 0) + 1);
  const seen = new Map<string, number>();
  const out: Record<string, Json> = {};
  for (const call of calls) {
    const n = (seen.get(call.name) ?? 0) + 1;
    seen.set(call.name, n);
    out[(counts.get(call.name) ?? 0) > 1 ? `${call.name}_${n}` : call.name] = call.arguments;
  }
  return out;
}

// ------------------------------------------------------------------ checks

/** Parameters of a function as a schema object (`{type, properties, required}`). */
export function parametersOf(fn: AceFunction): { properties: Record<string, Json>; required: string[] } {
  const parameters = functionParameters(fn);
  const required = isJsonObject(parameters) && Array.isArray(parameters.required) ? parameters.required : [];
  return { properties: propertiesOf(parameters), required: required.filter((r): r is string => typeof r === 'string') };
}

/**
 * Why gold calls do not fit the candidate set, or undefined when they do: each names an offered
 * function, the names are the targets (in any order), and the arguments satisfy the function's
 * parameters (the validator's problems, with the API and the argument path).
 */
export function goldCallProblem(calls: GoldCall[], set: CandidateSet, validator: ArgumentValidator): { reason: string; detail: string } | undefined {
  const byName = new Map(set.functions.map((fn) => [fn.name, fn]));
  for (const call of calls) {
    if (!byName.has(call.name)) return { reason: 'unknown_function', detail: `the gold call names ${call.name}, which is not among the candidates (${[...byName.keys()].join(', ')})` };
  }
  const names = calls.map((call) => call.name).sort();
  const targets = [...set.targets].sort();
  if (names.join('\u0000') !== targets.join('\u0000')) return { reason: 'wrong_functions', detail: `the gold calls use ${names.join(', ') || 'nothing'}; the candidate set's targets are ${targets.join(', ')}` };
  for (const call of calls) {
    const problems = validator.validate(byName.get(call.name)!.parameters, call.arguments);
    if (problems.length) return { reason: 'invalid_gold_call', detail: `${call.name}: ${describeProblems(problems)}` };
  }
  return undefined;
}

/** The text leaves of a value (strings, and numbers as text), for "does the question mention it" checks. */
export function leafTexts(value: Json): string[] {
  if (value === null || typeof value === 'boolean') return [];
  if (typeof value === 'string' || typeof value === 'number') return [String(value)];
  if (Array.isArray(value)) return value.flatMap(leafTexts);
  return Object.values(value).flatMap(leafTexts);
}
