import { z } from 'zod';
import { definePrompt } from '../core/prompt.ts';
import { JsonValue, type Json } from '../core/records.ts';
import { alsoLead, profileLead, requestSentence, unservedRequest, type OfflineCall, type OfflineLanguage } from './acebench-offline.ts';

/**
 * ACEBench §3.1 (2), the template-based generator: one model call writes one instance of a normal
 * or special category from its candidate APIs — the user's question and the gold call(s), with what
 * the special categories need besides (the parameters left out, the wrong values given) and, for
 * preference, the user profile the answer draws on.
 */

/** What the offline renderer builds the instance from (the stage synthesises it; the model never sees it). */
export interface DialoguePlan {
  language: OfflineLanguage;
  /** `request`: the question states every value; the others as their categories need. */
  mode: 'request' | 'incomplete' | 'error' | 'preference' | 'irrelevant';
  /** The gold calls (for `error`, with the wrong values in place). */
  calls: OfflineCall[];
  /** Parameters of the first call the question leaves out (`incomplete`, `preference`). */
  omit: string[];
  wrong: { parameter: string; value: Json }[];
  profile: Profile | null;
  /** `irrelevant`: the API the request was meant for, which no candidate is. */
  topic: string;
}

export interface DialogueVars extends Record<string, unknown> {
  category: string;
  /** What this category's instance must be (see `dialogueInstructions`). */
  instructions: string;
  /** Which language to write in, and what stays as the API defines it. */
  languageRule: string;
  /** The candidate functions, as JSON. */
  functions: string;
  /** The date line, or a sentence saying there is none. */
  today: string;
  plan: DialoguePlan;
}

export const Profile = z.object({
  basic_features: z.record(z.string(), JsonValue),
  user_history: z.record(z.string(), z.array(z.string())),
});
export type Profile = z.infer<typeof Profile>;

export const DialogueCall = z.object({ name: z.string().min(1), arguments: z.record(z.string(), JsonValue) });

export const DialogueAnswer = z.object({
  question: z.string().min(1),
  calls: z.array(DialogueCall).default([]),
  /** `special_incomplete`: the required parameters the question gives no value for. */
  missing: z.array(z.string()).default([]),
  /** `special_error_param`: the parameters the question gives a wrong value for, with that value. */
  wrong: z.array(z.object({ parameter: z.string().min(1), value: JsonValue })).default([]),
  /** `normal_preference`: the user's profile. */
  profile: Profile.nullable().default(null),
});
export type DialogueAnswer = z.infer<typeof DialogueAnswer>;

/** The language rule of a prompt: write in it; names and enum values stay as the API spells them. */
export function languageRule(language: OfflineLanguage): string {
  return language === 'zh'
    ? 'Write every text (the question, and the profile for preference) in Simplified Chinese. Keep function names, parameter names and enum values exactly as the API defines them; free-text values may be Chinese.'
    : 'Write every text in English. Keep function names, parameter names and enum values exactly as the API defines them.';
}

/** What one category's instance must be, for the prompt; `targets` are the APIs the gold calls use. */
export function dialogueInstructions(category: string, targets: readonly string[]): string {
  const target = targets.join(', ');
  const base = `The user asks one question; the assistant answers it with the gold call(s) listed in "calls", with every argument taken from the question (or, where the date matters, from the date).`;
  switch (category) {
    case 'normal_single_turn_single_function':
      return `${base} Exactly one call, to ${target}. Give every required parameter a concrete value in the question.`;
    case 'normal_single_turn_parallel_function':
      return `${base} The question asks for several things at once, answered by these calls in one turn: ${target} (a function listed twice is called twice with different values). Each call gets its own concrete values.`;
    case 'normal_similar_api':
      return `${base} Several candidates do similar things; the question must fit ${target} and not the others, through details only ${target} handles. Exactly one call, to ${target}.`;
    case 'normal_preference':
      return `Write a user profile ("profile": {"basic_features": {...}, "user_history": {"shopping": [...], "takeout": [...]}} with a dozen basic features and about ten history entries each) and a question that leaves some values to it: the assistant must read at least one argument value of the call to ${target} from the profile (a name, an email, a home location, a preference shown in the history); that value must not appear in the question. Exactly one call, to ${target}.`;
    case 'special_incomplete':
      return `The question asks for what ${target} does but gives no value for one or more of its required parameters, so the assistant cannot call it yet. Put the call the user means, with plausible values, in "calls", and list the required parameters the question gives no value for in "missing" (top-level names). The question must not state those values.`;
    case 'special_error_param':
      return `The question asks for what ${target} does and gives every required value, but one or more values break the parameter's schema: the wrong type, or a wrong format (a date as 15/10/2023 where YYYY-MM-DD is asked, a name with symbols where letters are asked, a value outside the enum or range). Put the call as the question fills it, wrong values included, in "calls", and list each wrong value in "wrong" as {"parameter": top-level name, "value": the wrong value}.`;
    case 'special_irrelevant':
      return `The question asks for something none of the candidate functions can do (what an API named ${target} would do). "calls" is empty.`;
    default:
      if (category.startsWith('normal_atom_')) {
        return `${base} Exactly one call, to ${target}, and it must fill at least one parameter of the kind "${category.slice('normal_atom_'.length)}" (bool: a boolean; enum: a parameter with an enum; list: an array; number: a number or integer; object_short: an object of plain values; object_deep: an object holding objects or lists of objects), with a value the question states.`;
      }
      return base;
  }
}

export default definePrompt<DialogueVars, DialogueAnswer>({
  id: 'acebench/dialogue',
  template: `You write one test instance of a function-calling benchmark (ACEBench), category "{{category}}".

Candidate functions (JSON Schema):
{{functions}}

{{instructions}}

Every gold argument must satisfy the function's schema (types, enums, formats, patterns, ranges), use only declared parameter names, and give every required parameter. Write the question as a real user would, without naming the function.

{{today}}

{{languageRule}}

Answer as JSON: {"question": "...", "calls": [{"name": "...", "arguments": {...}}], "missing": [], "wrong": [], "profile": null}.`,
  schema: DialogueAnswer,
  temperature: 0.8,
  maxTokens: 2500,
  offline: (vars, rng) => {
    const { plan } = vars;
    const calls = plan.calls.map((call) => ({ name: call.name, arguments: call.arguments }));
    if (plan.mode === 'irrelevant') return { question: unservedRequest(plan.topic, plan.language, rng), calls: [], missing: [], wrong: [], profile: null };
    const sentences = plan.calls.map((call, i) => requestSentence(call, plan.language, rng, i === 0 ? plan.omit : [], i === 0 ? '' : alsoLead(plan.language)));
    if (plan.mode === 'preference') sentences.push(profileLead(plan.language));
    return {
      question: sentences.join(' '),
      calls,
      missing: plan.mode === 'incomplete' ? plan.omit : [],
      wrong: plan.mode === 'error' ? plan.wrong : [],
      profile: plan.mode === 'preference' ? plan.profile : null,
    };
  },
});
