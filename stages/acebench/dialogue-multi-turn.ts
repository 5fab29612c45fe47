import { ArgumentValidator } from '../../core/json-schema.ts';
import type { Json } from '../../core/records.ts';
import { mapStage, reject, type MapStage } from '../../core/stage.ts';
import assistantPrompt from '../../prompts/acebench-assistant.ts';
import { languageRule } from '../../prompts/acebench-dialogue.ts';
import type { OfflineCall } from '../../prompts/acebench-offline.ts';
import toolPrompt from '../../prompts/acebench-tool.ts';
import userPrompt, { userMoveText, type UserMove } from '../../prompts/acebench-user.ts';
import {
  AceDialogueRecord,
  CandidateSet,
  callsGroundTruth,
  callsText,
  goldCallProblem,
  parametersOf,
  pickDay,
  questionText,
  recordIndex,
  timeLine,
  type DialogueLine,
  type GoldCall,
} from './dialogue-records.ts';
import type { AceCategory } from './record.ts';
import { synthesiseArguments, withNewValue } from './values.ts';

/**
 * ACEBench §3.1 (2), the multi-agent pipeline for `normal_multi_turn_user_adjust` and
 * `normal_multi_turn_user_switch`: a user agent, an assistant agent and a tool agent grow one
 * dialogue, one part per target API. Each part ends with the assistant's call; the dialogue up to
 * the user turn before it becomes the record `<category>_<n>_<j>` with that call as its gold, and
 * the call and the tool's result (two `system:` lines, as released) open the next part.
 */

export const MULTI_TURN_CATEGORIES: readonly AceCategory[] = ['normal_multi_turn_user_adjust', 'normal_multi_turn_user_switch'];

export interface MultiTurnDialogueOptions {
  /** Share of dialogues that carry a date line (`time`); default 0.5. */
  datedShare?: number;
  /** How many times the assistant may ask for values before it must call (default 2). */
  maxAsks?: number;
  temperature?: number;
}

/**
 * Candidate sets of the multi-turn categories → one `AceRecord` per dialogue prefix that ends
 * before an assistant call, ids `<category>_<n>_<j>`. A set whose dialogue fails at any part (a
 * failed model call, an assistant that never calls, a call that breaks its schema or is not the
 * part's target) is rejected whole, with the part and the reason.
 */
export function multiTurnDialogueStage(options: MultiTurnDialogueOptions = {}): MapStage<CandidateSet, AceDialogueRecord> {
  const validator = new ArgumentValidator();
  const datedShare = options.datedShare ?? 0.5;
  const maxAsks = options.maxAsks ?? 2;
  const { temperature } = options;
  return mapStage({
    name: 'acebench-multi-turn-dialogue',
    version: 2,
    fanOut: true,
    input: CandidateSet,
    output: AceDialogueRecord,
    prompts: [userPrompt, assistantPrompt, toolPrompt],
    keyOf: (set) => set.id,
    run: async (set, ctx) => {
      const category = set.category;
      if (!MULTI_TURN_CATEGORIES.includes(category)) return reject('wrong_category', `${category} is not a multi-turn category (use singleDialogueStage)`);
      const index = recordIndex(set);
      if (index === undefined) return reject('no_index', `candidate set ${set.id}: the id must end in the dialogue's number (…_12) to make the ids ${category}_<n>_<j>`);
      const byName = new Map(set.functions.map((fn) => [fn.name, fn]));
      const missing = set.targets.filter((name) => !byName.has(name));
      if (!set.targets.length) return reject('no_targets', 'the candidate set names no target API');
      if (missing.length) return reject('target_missing', `the target ${missing.join(', ')} is not among the candidate functions`);

      const rng = ctx.rng('plan');
      const day = pickDay(rng);
      const time = rng.chance(datedShare) ? timeLine(category, set.language, day) : '';
      const today = time ? `Today's date: ${time}` : "No date is shown to the assistant: do not rely on today's date.";
      const common = { languageRule: languageRule(set.language), today };
      const functions = JSON.stringify(set.functions, null, 2);
      const lines: DialogueLine[] = [];
      const dialogue = () => (lines.length ? questionText(lines, category).trimEnd() : '(none yet)');
      const records: AceDialogueRecord[] = [];
      let previous: GoldCall | undefined;

      // user_adjust: the user first changes a value of the call just made (the first API again), then
      // the dialogue goes on to the set's other targets. A set that already repeats it is taken as it is.
      const parts = category === 'normal_multi_turn_user_adjust' && set.targets[1] !== set.targets[0] ? [set.targets[0]!, ...set.targets] : set.targets;
      for (const [j, target] of parts.entries()) {
        const fn = byName.get(target)!;
        const part = `part ${j} (${target})`;
        const key = `${ctx.key}#${j}`;
        // The user adjusts the call just made when the next target is the same API, else turns to a new need.
        const adjusting = category === 'normal_multi_turn_user_adjust' && previous?.name === target;
        let move: UserMove = j === 0 ? 'open' : adjusting ? 'adjust' : 'switch';
        let call: OfflineCall;
        let stated: string[];
        let withheld: string[] = [];
        if (adjusting && previous) {
          const properties = parametersOf(fn).properties;
          if (!Object.keys(properties).length) return reject('nothing_to_adjust', `${part}: ${target} has no parameter to change`);
          const name = rng.pick(Object.keys(properties));
          const args = withNewValue(structuredClone(previous.arguments), name, properties[name], rng, { language: set.language, today: day });
          call = { name: target, description: String(fn.description ?? ''), arguments: args };
          stated = [name];
        } else {
          call = { name: target, description: String(fn.description ?? ''), arguments: synthesiseArguments(fn, rng, { language: set.language, today: day }) };
          const required = parametersOf(fn).required.filter((name) => name in call.arguments);
          withheld = required.length ? [rng.pick(required)] : [];
          stated = withheld;
        }

        const user = await ctx.tryAsk(
          userPrompt,
          { move: userMoveText(move), need: JSON.stringify(fn, null, 2), dialogue: dialogue(), ...common, plan: { language: set.language, move, call, parameters: stated } },
          { key: `${key}#user`, temperature },
        );
        if (!user.ok) return reject(user.reason, `${part}, user: ${user.detail}`);
        lines.push({ role: 'user', text: user.value.text.trim() });

        let calls: GoldCall[] | undefined;
        for (let asks = 0; asks <= maxAsks && !calls; asks++) {
          const assistant = await ctx.tryAsk(
            assistantPrompt,
            { functions, dialogue: dialogue(), ...common, plan: { language: set.language, call, ask: withheld } },
            { key: `${key}#assistant${asks}`, temperature },
          );
          if (!assistant.ok) return reject(assistant.reason, `${part}, assistant: ${assistant.detail}`);
          if (assistant.value.action === 'call') {
            calls = assistant.value.calls;
            break;
          }
          if (asks === maxAsks) break;
          lines.push({ role: 'system', text: assistant.value.text.trim() });
          move = 'answer';
          const answer = await ctx.tryAsk(
            userPrompt,
            { move: userMoveText(move), need: JSON.stringify(fn, null, 2), dialogue: dialogue(), ...common, plan: { language: set.language, move, call, parameters: withheld } },
            { key: `${key}#answer${asks}`, temperature },
          );
          if (!answer.ok) return reject(answer.reason, `${part}, user: ${answer.detail}`);
          lines.push({ role: 'user', text: answer.value.text.trim() });
          withheld = [];
        }
        if (!calls?.length) return reject('no_call', `${part}: the assistant asked ${maxAsks} times and never called`);
        const problem = goldCallProblem(calls, { ...set, targets: [target] }, validator);
        if (problem) return reject(problem.reason, `${part}: ${problem.detail}`);

        const id = `${category}_${index}_${j}`;
        records.push({ category, language: set.language, data: { id, question: questionText(lines, category), function: set.functions, time }, answer: { id, ground_truth: callsGroundTruth(calls) } });

        const printed = callsText(calls);
        const tool = await ctx.tryAsk(
          toolPrompt,
          { function: JSON.stringify(fn, null, 2), call: printed, languageRule: common.languageRule, plan: { language: set.language, call: { ...call, arguments: calls[0].arguments } } },
          { key: `${key}#tool`, temperature },
        );
        if (!tool.ok) return reject(tool.reason, `${part}, tool: ${tool.detail}`);
        lines.push({ role: 'system', text: printed }, { role: 'system', text: tool.value.result.trim() });
        previous = calls[0];
      }
      return records;
    },
  });
}
