import type { SampleAudit } from '../../core/audit.ts';
import type { Finding } from '../../core/invariants.ts';
import { isJsonObject, isRef, type ArgValue, type Call, type Json, type Sample } from '../../core/records.ts';
import { groundString } from '../grounding.ts';

/**
 * MTU-Bench's own audit, span agreement: MTU's samples are made from annotated dialogues, where
 * every slot value is a span of what was said, so every literal argument value of a call must be
 * stated in the conversation before the call (the user's words, the assistant's earlier replies,
 * earlier results). Dates and times may be stated as people say them (`March 3rd`, `tomorrow`,
 * `6:30 pm`: the shared grounding rules), numbers as words; booleans, SGD's `dontcare` and choices
 * from a documented enum are not spans and are not judged.
 */

const NUMBER_WORDS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve'];
const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
const CLOCK = /^\d{2}:\d{2}$/;

/** Whether a value is stated in `context` (lower-cased, whitespace folded, as groundString reads it). */
export function spanStated(value: string | number, context: string): boolean {
  const text = String(value).trim();
  if (!text) return true;
  if (/^\d+$/.test(text) && Number(text) < NUMBER_WORDS.length && new RegExp(`\\b${NUMBER_WORDS[Number(text)]}\\b`).test(context)) return true;
  // A date said by its day alone ("on the 7th", "the 10th of this month").
  const date = ISO_DATE.exec(text);
  if (date && new RegExp(`\\b${Number(text.slice(8))}(st|nd|rd|th)\\b`).test(context)) return true;
  // groundString reads dates and times with seconds; `2019-03-01` and `18:30` are read the same way.
  const form = ISO_DATE.test(text) ? `${text} 00:00:00` : CLOCK.test(text) ? `${text}:00` : text;
  return groundString(form, context) !== 'missing' || context.includes(text.toLowerCase());
}

export function mtuAudits(): SampleAudit[] {
  let values = 0;
  return [
    {
      name: 'mtu/span',
      description: 'each literal argument value is stated in the conversation before its call',
      checked: () => values,
      check(sample: Sample): Finding[] {
        const findings: Finding[] = [];
        // A call held twice (the same tool and arguments' JSON) is judged once; the JSON made only for calls of one tool.
        const judged: Call[] = [];
        const texts = new Map<Call, string>();
        const argumentsText = (call: Call): string => {
          let text = texts.get(call);
          if (text === undefined) texts.set(call, (text = JSON.stringify(call.arguments ?? null)));
          return text;
        };
        // The conversation before turn `upTo`, folded as far as a judged call needs it: a call held
        // twice is not judged again, so the turns after the last call judged are never folded.
        let context = '';
        let folded = 0;
        const contextBefore = (upTo: number): string => {
          for (; folded < upTo; folded++) {
            const turn = sample.dialogue[folded];
            // An answered turn's response is most often its content: folded once.
            const content = normalise(turn.content);
            context += `\n${content}\n${turn.response === turn.content ? content : normalise(turn.response ?? '')}`;
            for (const observation of Object.values(turn.observations ?? {})) context += `\n${normalise(JSON.stringify(observation))}`;
          }
          return context;
        };
        const judge = (call: Call, where: () => string, before: number) => {
          if (judged.some((other) => other === call || (other.tool === call.tool && argumentsText(other) === argumentsText(call)))) return;
          judged.push(call);
          const tool = sample.tools.find((t) => t.name === call.tool);
          for (const [name, value] of Object.entries(call.arguments)) {
            if (tool?.parameters.properties[name]?.enum) continue;
            for (const leaf of leaves(value)) {
              values++;
              if (!spanStated(leaf, contextBefore(before))) findings.push({ check: 'mtu/span', sampleId: sample.id, where: `${where()} ${call.tool}: ${name}`, problem: `${JSON.stringify(leaf)} is not stated in the conversation before the call` });
            }
          }
        };
        sample.dialogue.forEach((turn, t) => turn.calls?.forEach((call, c) => judge(call, () => `dialogue[${t}].calls[${c}]`, t)));
        // Calls the dialogue does not hold (the answer to its last user turn): the whole dialogue is before them.
        (sample.expected.calls ?? []).forEach((call, c) => judge(call, () => `expected.calls[${c}]`, sample.dialogue.length));
        return findings;
      },
    },
  ];
}

/** The values a span could be: strings and numbers, at any depth; not references, booleans, nulls or `dontcare`. */
function leaves(value: ArgValue): (string | number)[] {
  if (isRef(value) || value === null || typeof value === 'boolean') return [];
  if (Array.isArray(value)) return value.flatMap(leaves);
  if (isJsonObject(value)) return Object.values(value as Record<string, Json>).flatMap(leaves);
  if (typeof value === 'string' && (value.toLowerCase() === 'dontcare' || /^(true|false)$/i.test(value))) return [];
  return [value as string | number];
}

function normalise(text: string): string {
  // Each run of white space becomes one space: runs that are one space already are not matched (nor copied).
  return text.toLowerCase().replace(/[“”"‘’`]/g, "'").replace(/\s{2,}|[^\S ]/g, ' ');
}
