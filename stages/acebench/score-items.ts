import type { EvalItem, ModelReply } from '../../core/eval.ts';
import type { Json, Sample } from '../../core/records.ts';
import { aceExpectedOf, aceMetaOf, answerKindOf, sampleToAceRecord, type AceAnswerKind } from './format.ts';
import type { AceCategory } from './record.ts';
import { renderCallString } from './sandbox/python-call.ts';
import type { AgentGold } from './score-agent.ts';
import { isSpecialKind, specialOracle } from './score-special.ts';

/**
 * ACEBench's evaluation items: one per released record (a multi-turn normal dialogue is released
 * as one record per assistant turn, and so is one item per turn). The model sees a system prompt
 * with the functions (and the record's time or profile) and the dialogue. Its answer:
 *   - normal categories: a Python list of calls, `[ApiName(key='value', …)]`;
 *   - special categories: the sentence the prompt asks for ("Missing necessary parameters (…) for
 *     the api (…)", "There is incorrect value (…) for the parameters (…) …", or the refusal);
 *   - agent categories: the calls it makes, in order, as a JSON list of call strings (one per step).
 *     This one-answer form is what a predictions file gives (gold replay: a multi-turn item is
 *     answered from the user's instruction, like a multi-step one); `toolkiln eval` with a model
 *     runs agent items in the loop instead (session.ts: calls executed step by step, a simulated user).
 */

export type AceGold =
  | { kind: 'calls'; functions: Json[]; answers: Record<string, Json>[]; oracle: string; dialogue: string | null }
  | { kind: 'incomplete' | 'error_param' | 'irrelevant'; truth: Json }
  | ({ kind: 'agent' } & AgentGold);

const CALL_FORMAT =
  "Answer with the API requests to make now, as a Python list: [ApiName(key1='value1', key2='value2'), …], with the parameter values taken from the user's own words; nothing else.";
const SPECIAL_FORMAT =
  'If the request can be served, answer with the API requests as a Python list: [ApiName(key1=\'value1\', …)]. If a value the user gave does not fit the API, answer ["There is incorrect value (value) for the parameters (key) in the conversation history."]. If the user left out a required parameter, answer ["Missing necessary parameters (key1, key2, …) for the api (ApiName)"]. If no API can serve the request, answer ["Due to the limitations of the function, I cannot solve this problem."]';
const AGENT_FORMAT =
  "Carry out the user's request with the APIs. Answer with every API request you make, in order, as a JSON list of strings, one Python call list per step: [\"[ApiName(key1='value1')]\", …].";

/** The multi-turn dialogue a record belongs to (`…_user_adjust_3_1` → `…_user_adjust_3`), for end-of-dialogue accuracy. */
function dialogueOf(id: string, category: AceCategory): string | null {
  return category.startsWith('normal_multi_turn') ? id.replace(/_\d+$/, '') : null;
}

function goldOf(sample: Sample, kind: AceAnswerKind): AceGold {
  // The answer line as released (or as an export writes it): what ACEBench's checker reads.
  const { data, answer, language } = sampleToAceRecord(sample);
  const truth = answer?.ground_truth ?? null;
  if (kind === 'calls') {
    const calls = aceExpectedOf(sample).calls ?? [];
    return {
      kind,
      functions: data.function as Json[],
      answers: (Array.isArray(truth) ? truth : [truth]) as Record<string, Json>[],
      oracle: renderCallString(calls.map((call) => ({ name: call.tool, arguments: call.arguments as Record<string, Json> }))),
      dialogue: dialogueOf(`${language}/${data.id}`, sample.category as AceCategory),
    };
  }
  if (kind === 'agent') {
    const mileStone = (answer?.mile_stone ?? []) as Json[];
    const nestedMilestones = aceMetaOf(sample).mileStoneNested;
    return {
      kind,
      language,
      initialConfig: data.initial_config ?? {},
      involvedClasses: (Array.isArray(data.involved_classes) ? data.involved_classes : []) as string[],
      finalState: (Array.isArray(truth) ? truth : []) as Record<string, Json>[],
      milestones: (nestedMilestones ? mileStone : [mileStone]) as string[][],
      nestedMilestones,
    };
  }
  return { kind, truth };
}

/** One item per sample that has an answer (a record the release gives no answer for cannot be scored). */
export function aceItems(sample: Sample): EvalItem[] {
  const meta = aceMetaOf(sample);
  if (!meta.answerKeys) return [];
  const kind = answerKindOf(sample.category as AceCategory);
  const context = [meta.fields.time, meta.fields.profile && `Profile: ${meta.fields.profile}`].filter((line): line is string => typeof line === 'string' && line.length > 0);
  const format = kind === 'agent' ? AGENT_FORMAT : kind === 'calls' ? CALL_FORMAT : SPECIAL_FORMAT;
  const system = [format, ...context, `API specifications:\n${JSON.stringify(meta.function)}`].join('\n\n');
  return [
    {
      id: sample.id,
      sampleId: sample.id,
      category: sample.category,
      messages: [{ role: 'system', content: system }, ...sample.dialogue.map((turn) => ({ role: turn.role, content: turn.content }))],
      tools: sample.tools,
      gold: goldOf(sample, kind) as unknown as Json,
    },
  ];
}

/** The gold answer as a perfect model writes it. */
export function aceOracle(item: EvalItem): string {
  const gold = item.gold as unknown as AceGold;
  if (gold.kind === 'calls') return gold.oracle;
  if (gold.kind === 'agent') return JSON.stringify(gold.milestones[0] ?? []);
  if (isSpecialKind(gold.kind)) return specialOracle(gold.kind, gold.truth);
  throw new Error(`unknown ACEBench answer kind ${(gold as { kind: string }).kind}`);
}

/**
 * A chat model's reply as ACEBench's answer: its calls as the Python call list (an agent task: one
 * step per call, in order); a reply in words is the answer as written (a special category's sentence).
 */
export function aceAnswerOfReply(item: EvalItem, reply: ModelReply): string {
  const gold = item.gold as unknown as AceGold;
  const calls = reply.calls.map((call) => ({ name: call.name, arguments: call.arguments }));
  if (gold.kind === 'agent') return JSON.stringify(calls.map((call) => renderCallString([call])));
  if (calls.length) return renderCallString(calls);
  // The chat exports write a special category's sentences as a JSON list; ACEBench reads them as the prompt asks, unescaped.
  const sentences = jsonList(reply.text);
  return sentences ? `[${sentences.map((sentence) => `"${sentence}"`).join(', ')}]` : (reply.text ?? '');
}

function jsonList(text: string | null): string[] | undefined {
  try {
    const value: unknown = text === null ? undefined : JSON.parse(text);
    return Array.isArray(value) && value.every((v) => typeof v === 'string') ? value : undefined;
  } catch {
    return undefined;
  }
}

/** An agent item's system message without its one-answer format: the record's time or profile and the API specifications. */
export function agentContext(item: EvalItem): string {
  const system = item.messages[0]?.role === 'system' ? (item.messages[0].content ?? '') : '';
  return system.startsWith(AGENT_FORMAT) ? system.slice(AGENT_FORMAT.length).trimStart() : system;
}
