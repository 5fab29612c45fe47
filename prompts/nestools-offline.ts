import { isRef, parseRef, type Call, type Json, type ToolSpec } from '../core/records.ts';
import type { Rng } from '../core/rng.ts';
import { nameTokens } from './nestools-names.ts';

/**
 * Template text for the offline backend of the NesTools prompts: a task sentence per call, the
 * values a normalisation adds, API names replaced, conjunctions dropped. Plainly template text, so
 * a run without a model still passes through every stage and check.
 */

function words(name: string): string {
  return nameTokens(name).join(' ');
}

function clause(description: string, fallback: string): string {
  const text = (description || fallback).trim().replace(/[.\s]+$/, '');
  return text.charAt(0).toLowerCase() + text.slice(1);
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function joinList(items: string[]): string {
  return items.length > 1 ? `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}` : (items[0] ?? '');
}

/** A value as words for a task sentence: lists as "a, b and c", dicts as "key: value" pairs. */
function valueText(value: Json): string {
  if (value === null) return 'none';
  if (Array.isArray(value)) {
    const items = value.map(valueText);
    return items.length > 1 ? `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}` : (items[0] ?? 'nothing');
  }
  if (typeof value === 'object') return Object.entries(value).map(([key, item]) => `${key.replace(/_/g, ' ')} ${valueText(item)}`).join(', ');
  if (typeof value === 'string') return `"${value}"`;
  return String(value);
}

const OPENERS = ['First, ', 'Please ', 'To start, '];
const MIDDLES = ['Then ', 'After that, ', 'Next, ', 'Using that, '];
const CLOSERS = ['Finally, ', 'Lastly, '];

/**
 * One sentence per call: its tool's description, the literal values it passes (each kept with
 * probability `mentionShare`; the normalisation stage adds what is left out) and what it takes
 * from earlier calls.
 */
export function taskFromChain(tools: ToolSpec[], calls: Call[], rng: Rng, mentionShare = 0.75): string {
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const position = new Map(calls.map((call, i) => [call.id, i]));
  return calls
    .map((call, i) => {
      const tool = byName.get(call.tool);
      const literals: string[] = [];
      const nested: string[] = [];
      for (const [param, value] of Object.entries(call.arguments)) {
        if (isRef(value)) {
          const { callId, field } = parseRef(value);
          const from = position.get(callId) ?? 0;
          nested.push(`the ${words(field)} from ${from === i - 1 ? 'the previous step' : `step ${from + 1}`}`);
        } else if (rng.chance(mentionShare)) literals.push(`${words(param)} ${valueText(value as Json)}`);
      }
      const opener = i === 0 ? (calls.length > 1 ? rng.pick(OPENERS) : 'Please ') : i === calls.length - 1 ? rng.pick(CLOSERS) : rng.pick(MIDDLES);
      let sentence = `${opener}${clause(tool?.description ?? '', words(call.tool))}`;
      if (literals.length) sentence += ` with ${joinList(literals)}`;
      if (nested.length) sentence += `${literals.length ? ',' : ''} using ${joinList(nested)}`;
      return `${capitalise(sentence)}.`;
    })
    .join(' ');
}

/** Appends a sentence naming values the task leaves out. */
export function appendValues(task: string, missing: { param: string; value: Json }[]): string {
  if (!missing.length) return task;
  const list = joinList(missing.map((m) => `${words(m.param)} ${valueText(m.value)}`));
  return `${task.trim()} Use ${list}.`;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Replaces tool names written in the task with their words (`get_article` → `get article`). */
export function replaceApiNames(task: string, toolNames: string[]): string {
  let out = task;
  for (const name of toolNames) out = out.replace(new RegExp(`\\b${escapeRegExp(name)}\\b`, 'gi'), words(name));
  return out;
}

const CONJUNCTIONS = ['After that', 'Following that', 'Following this', 'Subsequently', 'Afterwards', 'Additionally', 'Then', 'Next', 'Finally', 'Lastly', 'Also', 'First', 'To start', 'Using that', 'Please'];

/** Drops sequencing words and "Please" at sentence starts and fixes the capitals (Appendix B.3). */
export function dropConjunctions(task: string): string {
  const sentences = task.split(/(?<=[.!?])\s+/);
  return sentences
    .map((sentence) => {
      let text = sentence;
      for (let changed = true; changed; ) {
        changed = false;
        for (const word of CONJUNCTIONS) {
          const match = new RegExp(`^${word}\\b,?\\s+`, 'i').exec(text);
          if (match) {
            text = text.slice(match[0].length);
            changed = true;
          }
        }
      }
      return capitalise(text.replace(/,?\s+and then\s+/gi, ' and ').replace(/,\s+then\s+/gi, ', '));
    })
    .join(' ');
}
