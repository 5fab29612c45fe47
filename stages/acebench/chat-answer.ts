import type { Call, Json, Sample } from '../../core/records.ts';
import type { GoldReply } from '../export/openai-chat.ts';
import { aceExpectedOf } from './format.ts';
import { parseCallString } from './sandbox/python-call.ts';

/**
 * What the assistant answers in an ACEBench sample whose gold is not a list of calls, written the
 * way ACEBench's system prompt asks for it and its special-category checker looks for it:
 *  - special_incomplete: `["Missing necessary parameters (a, b) for the api (Api)"]`, one per api;
 *  - special_error_param: `["There is incorrect value (v) for the parameters (key) in the conversation history."]`;
 *  - special_irrelevant: the refusal sentence;
 *  - agent categories: the calls of the first accepted milestone sequence.
 * Other samples: undefined (their gold calls are the answer).
 */
export const aceGoldReply: GoldReply = (sample: Sample) => {
  const expected = aceExpectedOf(sample);
  if (expected.missing && Object.keys(expected.missing).length) {
    return { content: JSON.stringify(Object.entries(expected.missing).map(([api, keys]) => `Missing necessary parameters (${keys.join(', ')}) for the api (${api})`)) };
  }
  if (expected.wrongValues && Object.keys(expected.wrongValues).length) {
    const text = (value: Json) => (typeof value === 'string' ? value : JSON.stringify(value));
    return { content: JSON.stringify(Object.entries(expected.wrongValues).map(([key, values]) => `There is incorrect value (${values.map(text).join(', ')}) for the parameters (${key}) in the conversation history.`)) };
  }
  if (expected.refusal) return { content: expected.refusal };
  const milestones = expected.milestones?.[0];
  if (milestones?.length) {
    const calls: Call[] = milestones.flatMap((step) => parseCallString(step).calls).map((call, i) => ({ id: `call_${i + 1}`, tool: call.name, arguments: call.arguments }));
    return { calls };
  }
  return undefined;
};
