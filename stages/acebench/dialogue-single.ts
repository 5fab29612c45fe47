import { ArgumentValidator, describeProblems } from '../../core/json-schema.ts';
import type { Json } from '../../core/records.ts';
import type { Rng } from '../../core/rng.ts';
import { mapStage, reject, type MapStage, type RejectReason } from '../../core/stage.ts';
import dialoguePrompt, { dialogueInstructions, languageRule, type DialogueAnswer, type DialoguePlan, type Profile } from '../../prompts/acebench-dialogue.ts';
import type { OfflineCall } from '../../prompts/acebench-offline.ts';
import {
  AceDialogueRecord,
  CandidateSet,
  callsGroundTruth,
  goldCallProblem,
  leafTexts,
  parametersOf,
  pickDay,
  profileText,
  questionText,
  recordIndex,
  timeLine,
  type GoldCall,
} from './dialogue-records.ts';
import { ATOM_KINDS, IRRELEVANT_ANSWER, atomKindOfCategory, atomKindsOf, type AceCategory, type AceFunction, type AtomKind } from './record.ts';
import { synthesiseArguments, withNewValue, wrongValue, type ValueOptions } from './values.ts';

/**
 * ACEBench §3.1 (2), template-based generation: one model call per candidate set writes the
 * question and gold call(s) of a single-turn normal or special instance; the stage checks the gold
 * against the API schemas and against what the category demands, and writes the released record.
 */

/** The categories this stage writes (multi-turn ones come from `multiTurnDialogueStage`, agent ones from the sandboxes). */
export const SINGLE_CATEGORIES: readonly AceCategory[] = [
  'normal_single_turn_single_function',
  'normal_single_turn_parallel_function',
  'normal_similar_api',
  'normal_preference',
  ...ATOM_KINDS.map((kind) => `normal_atom_${kind}` as AceCategory),
  'special_incomplete',
  'special_error_param',
  'special_irrelevant',
];

export interface SingleDialogueOptions {
  /** Share of records that carry a date line (`time`); the others have `""`, as about half the release does. Default 0.5. */
  datedShare?: number;
  temperature?: number;
}

type Rejection = RejectReason & { reject: true };

/** Top-level parameters of `fn` of an atom kind. */
function parametersOfKind(fn: AceFunction, kind: AtomKind): string[] {
  return Object.entries(parametersOf(fn).properties)
    .filter(([, schema]) => atomKindsOf(schema).has(kind))
    .map(([name]) => name);
}

const FIRST_NAMES = { en: ['John Doe', 'Emily Johnson', 'Michael Brown', 'Sofia Martins'], zh: ['张小凡', '李悦', '王思聪', '赵敏'] };
const HISTORY = {
  en: {
    shopping: ['Browsed latest smartphone listings', 'Added noise-cancelling headphones to cart', 'Opted for Express Delivery at checkout', 'Applied a discount coupon on checkout'],
    takeout: ['Ordered vegetarian lasagna for dinner', 'Avoided dishes with peanuts', 'Set push notifications for promos at 6 pm', 'Reordered a favourite Thai curry'],
  },
  zh: {
    购物: ['浏览最新款智能手机', '将降噪耳机加入购物车', '结账时选择加急配送', '使用优惠券下单'],
    外卖: ['晚餐点了素食千层面', '避开含花生的菜品', '设置晚上6点的优惠提醒', '再次订购喜欢的泰式咖喱'],
  },
};

/** A profile holding the values the question leaves out, under their parameter names, beside ordinary features. */
function offlineProfile(language: 'en' | 'zh', fromProfile: Record<string, Json>, rng: Rng): Profile {
  const name = rng.pick(FIRST_NAMES[language]);
  const basic: Record<string, Json> =
    language === 'zh'
      ? { username: name, email: `user${rng.int(10, 99)}@example.com`, homeLocation: '北京市朝阳区', preferredLanguage: '中文' }
      : { UserName: name, UserEmail: `${name.split(' ')[0].toLowerCase()}@example.com`, UserHomeLocation: 'Chicago, IL', UserLanguage: 'English' };
  return { basic_features: { ...basic, ...fromProfile }, user_history: HISTORY[language] };
}

/** The plan the offline renderer writes from, or why the candidate set cannot make this category. */
export function planDialogue(set: CandidateSet, category: AceCategory, rng: Rng, values: ValueOptions, validator: ArgumentValidator): DialoguePlan | Rejection {
  const language = set.language;
  const base: DialoguePlan = { language, mode: 'request', calls: [], omit: [], wrong: [], profile: null, topic: set.targets[0] ?? set.path.functionality };
  if (category === 'special_irrelevant') return { ...base, mode: 'irrelevant' };
  const byName = new Map(set.functions.map((fn) => [fn.name, fn]));
  const calls: OfflineCall[] = set.targets.map((name) => {
    const fn = byName.get(name)!;
    return { name, description: String(fn.description ?? ''), arguments: synthesiseArguments(fn, rng, values) };
  });
  const first = calls[0];
  const firstFn = byName.get(first.name)!;
  const atom = atomKindOfCategory(category);
  if (atom) {
    const names = parametersOfKind(firstFn, atom);
    if (!names.some((name) => name in first.arguments)) {
      const name = rng.pick(names);
      first.arguments = withNewValue(first.arguments, name, parametersOf(firstFn).properties[name], rng, values);
    }
  }
  if (category === 'special_incomplete') {
    const required = parametersOf(firstFn).required;
    if (!required.length) return reject('no_required_parameter', `${first.name} has no required parameter a question could leave out`);
    return { ...base, mode: 'incomplete', calls, omit: rng.sample(required, rng.int(1, Math.min(2, required.length))) };
  }
  if (category === 'special_error_param') {
    const properties = parametersOf(firstFn).properties;
    for (const name of rng.shuffle(Object.keys(first.arguments))) {
      const wrong = wrongValue(properties[name], name, rng, validator, values);
      if (!wrong) continue;
      first.arguments[name] = wrong.value;
      return { ...base, mode: 'error', calls, wrong: [{ parameter: name, value: wrong.value }] };
    }
    return reject('no_wrong_value', `no argument of ${first.name} has a value its schema rejects that a user could state`);
  }
  if (category === 'normal_preference') {
    const scalars = Object.entries(first.arguments).filter(([, value]) => typeof value === 'string' || typeof value === 'number');
    if (!scalars.length) return reject('no_profile_value', `${first.name} takes no plain value a profile could supply`);
    const fromProfile = Object.fromEntries(rng.sample(scalars, Math.min(2, scalars.length)));
    return { ...base, mode: 'preference', calls, omit: Object.keys(fromProfile), profile: offlineProfile(language, fromProfile, rng) };
  }
  return { ...base, calls };
}

/** Why the candidate set cannot make its category at all (checked before any model call). */
function setProblem(set: CandidateSet, category: AceCategory): Rejection | undefined {
  const offered = new Set(set.functions.map((fn) => fn.name));
  if (!SINGLE_CATEGORIES.includes(category)) return reject('wrong_category', `${category} is not written by the single-turn generator (use multiTurnDialogueStage for multi-turn categories)`);
  if (!set.targets.length) return reject('no_targets', 'the candidate set names no target API');
  if (category === 'special_irrelevant') {
    const served = set.targets.filter((name) => offered.has(name));
    return served.length ? reject('target_offered', `special_irrelevant needs candidates that lack the target, but ${served.join(', ')} is offered`) : undefined;
  }
  const missing = set.targets.filter((name) => !offered.has(name));
  if (missing.length) return reject('target_missing', `the target ${missing.join(', ')} is not among the candidate functions`);
  if (category === 'normal_single_turn_parallel_function' && set.targets.length < 2) return reject('too_few_targets', 'a parallel instance needs at least 2 target calls');
  if (category !== 'normal_single_turn_parallel_function' && set.targets.length !== 1) return reject('too_many_targets', `${category} makes one call, but the set names ${set.targets.length} targets`);
  const atom = atomKindOfCategory(category);
  if (atom) {
    const fn = set.functions.find((f) => f.name === set.targets[0])!;
    if (!parametersOfKind(fn, atom).length) return reject('no_atom_parameter', `${fn.name} has no top-level parameter of kind ${atom}`);
  }
  return undefined;
}

/** Why the model's instance does not meet its category, or undefined when it does. */
export function answerProblem(answer: DialogueAnswer, set: CandidateSet, category: AceCategory, validator: ArgumentValidator): Rejection | undefined {
  if (category === 'special_irrelevant') return undefined;
  const calls: GoldCall[] = answer.calls;
  const question = answer.question;
  if (category === 'special_error_param') {
    if (!answer.wrong.length) return reject('no_wrong_value', 'the answer lists no wrong value');
    const call = calls[0];
    const fn = set.functions.find((f) => f.name === call?.name);
    if (calls.length !== 1 || !fn || call.name !== set.targets[0]) return reject('wrong_functions', `the error instance must make one call to ${set.targets[0]}`);
    const problems = validator.validate(fn.parameters, call.arguments);
    const wrongNames = new Set(answer.wrong.map((w) => w.parameter));
    const stray = problems.filter((p) => !wrongNames.has(p.path.split(/[.[]/)[0]));
    if (stray.length) return reject('invalid_gold_call', `${call.name}: ${describeProblems(stray)}`);
    for (const wrong of answer.wrong) {
      if (JSON.stringify(call.arguments[wrong.parameter]) !== JSON.stringify(wrong.value)) return reject('wrong_value_not_in_call', `${call.name}: the call gives ${wrong.parameter} ${JSON.stringify(call.arguments[wrong.parameter])}, not the wrong value ${JSON.stringify(wrong.value)}`);
      if (!problems.some((p) => p.path.split(/[.[]/)[0] === wrong.parameter)) return reject('wrong_value_is_valid', `${call.name}: ${wrong.parameter} = ${JSON.stringify(wrong.value)} satisfies its schema`);
    }
    return undefined;
  }
  const problem = goldCallProblem(calls, set, validator);
  if (problem) return reject(problem.reason, problem.detail);
  const fn = set.functions.find((f) => f.name === calls[0].name)!;
  if (category === 'special_incomplete') {
    const required = parametersOf(fn).required;
    if (!answer.missing.length) return reject('nothing_missing', 'the answer names no missing parameter');
    const notRequired = answer.missing.filter((name) => !required.includes(name));
    if (notRequired.length) return reject('missing_not_required', `${fn.name}: ${notRequired.join(', ')} is not a required parameter (required: ${required.join(', ')})`);
    for (const name of answer.missing) {
      const stated = leafTexts(calls[0].arguments[name] ?? null).find((text) => text.length > 2 && question.includes(text));
      if (stated) return reject('missing_value_stated', `${fn.name}: the question states "${stated}", a value of the missing parameter ${name}`);
    }
  }
  const atom = atomKindOfCategory(category);
  if (atom && !parametersOfKind(fn, atom).some((name) => name in calls[0].arguments)) return reject('no_atom_argument', `${fn.name}: the gold call fills no parameter of kind ${atom}`);
  if (category === 'normal_preference') {
    if (!answer.profile) return reject('no_profile', 'the preference instance has no user profile');
    const profile = JSON.stringify(answer.profile);
    const drawn = leafTexts(calls[0].arguments).some((text) => text.length > 1 && profile.includes(text) && !question.includes(text));
    if (!drawn) return reject('profile_unused', `${fn.name}: no gold argument value comes from the profile (each is in the question or absent from the profile)`);
  }
  return undefined;
}

/** The answer line of a checked instance, per category. */
function groundTruth(answer: DialogueAnswer, category: AceCategory): Json {
  if (category === 'special_irrelevant') return IRRELEVANT_ANSWER;
  if (category === 'special_incomplete') return { [answer.calls[0].name]: answer.missing };
  if (category === 'special_error_param') {
    const out: Record<string, Json[]> = {};
    for (const wrong of answer.wrong) (out[wrong.parameter] ??= []).push(statedValue(wrong.value));
    return out;
  }
  return callsGroundTruth(answer.calls);
}

/**
 * A wrong value as the answer line writes it: the text the question states ("250", "-5", not 250),
 * as the release writes every wrong value. ACEBench's checker looks each one up in the model's
 * sentence (`value in answer`), which needs text: a number there stops its run with a TypeError.
 */
export function statedValue(value: Json): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  return JSON.stringify(value);
}

/**
 * Candidate sets of the single-turn normal and special categories → one `AceRecord` each, id
 * `<category>_<n>` with `n` the set id's trailing number. Rejects (with the reason) a set that cannot
 * make its category, a failed model call, and a gold call that breaks its API's schema or the category.
 */
export function singleDialogueStage(options: SingleDialogueOptions = {}): MapStage<CandidateSet, AceDialogueRecord> {
  const validator = new ArgumentValidator();
  const datedShare = options.datedShare ?? 0.5;
  return mapStage({
    name: 'acebench-single-dialogue',
    version: 2,
    input: CandidateSet,
    output: AceDialogueRecord,
    prompts: [dialoguePrompt],
    keyOf: (set) => set.id,
    run: async (set, ctx) => {
      const category = set.category;
      const index = recordIndex(set);
      if (index === undefined) return reject('no_index', `candidate set ${set.id}: the id must end in the record's number (…_12) to make the id ${category}_<n>`);
      const setIssue = setProblem(set, category);
      if (setIssue) return setIssue;
      const rng = ctx.rng('plan');
      const day = pickDay(rng);
      const dated = category !== 'normal_preference' && rng.chance(datedShare);
      const plan = planDialogue(set, category, rng, { language: set.language, today: day }, validator);
      if ('reject' in plan) return plan;
      const result = await ctx.ask(
        dialoguePrompt,
        {
          category,
          instructions: dialogueInstructions(category, set.targets),
          languageRule: languageRule(set.language),
          functions: JSON.stringify(set.functions, null, 2),
          today: dated ? `Today's date, shown to the assistant: ${timeLine(category, set.language, day)}` : 'No date is shown to the assistant: the question must not depend on today\'s date.',
          plan,
        },
        { temperature: options.temperature },
      );
      const answer = { ...result.value, question: result.value.question.replace(/\s*\n\s*/g, ' ').trim() };
      const problem = answerProblem(answer, set, category, validator);
      if (problem) return problem;
      const id = `${category}_${index}`;
      const question = questionText([{ role: 'user', text: answer.question }], category);
      const data: AceDialogueRecord['data'] =
        category === 'normal_preference'
          ? { id, question, function: set.functions, profile: profileText(answer.profile!, set.language) }
          : { id, question, function: set.functions, time: dated ? timeLine(category, set.language, day) : '' };
      return { category, language: set.language, data, answer: { id, ground_truth: groundTruth(answer, category) } };
    },
  });
}
