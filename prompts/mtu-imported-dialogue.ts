import { z } from 'zod';
import { definePrompt } from '../core/prompt.ts';
import { JsonValue, type Json } from '../core/records.ts';
import type { Rng } from '../core/rng.ts';
import { objectForSchema } from '../core/schema-values.ts';
import { wordsOf } from './mtu-offline.ts';

/**
 * MTU-Bench tool-use synthesis over an imported tool library: the tools come documented (MCP,
 * OpenAPI, function lists), no dialogue comes with them, so the model writes one for a planned
 * shape — which rounds call which tools, which round leaves a value out for the assistant to ask
 * for, which argument takes an earlier result — with the user's messages and the calls' arguments
 * filled from the tools' schemas. The stage checks every call against its tool's schema.
 */

/** One planned call: its tool, the tool's parameters schema, and the parameters an earlier result gives (not written). */
export type PlannedCall = { tool: string; parameters: Record<string, unknown>; linked: string[] };

/** One planned round: the calls the assistant makes, or none (it asks for `ask`, or the user only chats). */
export type PlannedRound = { calls: PlannedCall[]; ask?: string; chat?: boolean };

export type ImportedDialogueVars = {
  today: string;
  /** The tools' documentation (name, description, parameters, result fields), as JSON. */
  apis: string;
  /** The rounds in words. */
  plan: string;
  /** The same rounds, structured (the offline renderer's input). */
  rounds: PlannedRound[];
  /** Empty, or what was wrong with the previous answer (the stage asks once more with it). */
  feedback: string;
};

export const ImportedDialogueAnswer = z.object({
  rounds: z.array(
    z.object({
      user: z.string().min(1),
      /** The assistant's reply in a round without calls (a question, a closing line); empty when it calls tools. */
      assistant: z.string().default(''),
      calls: z.array(z.object({ tool: z.string().min(1), arguments: z.record(z.string(), JsonValue) })).default([]),
    }),
  ),
});
export type ImportedDialogueAnswer = z.infer<typeof ImportedDialogueAnswer>;

/** The plan as the prompt states it, round by round. */
export function planText(rounds: PlannedRound[]): string {
  return rounds
    .map((round, i) => {
      if (round.chat) return `Round ${i}: the user thanks the assistant or chats; the assistant replies without calling any API.`;
      if (round.ask) return `Round ${i}: the user asks for what ${round.calls.map((c) => c.tool).join(' and ')} can do but does not give the value of "${round.ask}"; the assistant asks for it and calls nothing. The next round's message gives it.`;
      const calls = round.calls.map((c) => `${c.tool}${c.linked.length ? ` (its ${c.linked.map((p) => `"${p}"`).join(', ')} come from an earlier call's result: leave them out of its arguments)` : ''}`);
      return `Round ${i}: the user's message asks for everything the assistant then does; the assistant calls ${calls.join(', then ')}, in this order.`;
    })
    .join('\n');
}

/** A value in words, for a template message. */
function said(value: Json): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function request(call: PlannedCall, args: Record<string, Json>): string {
  const given = Object.entries(args).map(([name, value]) => `${wordsOf(name)} ${said(value)}`);
  const linked = call.linked.length ? ` using what the previous step returned` : '';
  return `${wordsOf(call.tool)}${given.length ? ` with ${given.join(', ')}` : ''}${linked}`;
}

/** Offline: template messages, arguments drawn from each tool's schema (every required one, some optional ones). */
function offlineDialogue(vars: ImportedDialogueVars, rng: Rng): ImportedDialogueAnswer {
  // A message that calls ends on a word, not a value: a joined request (compose) drops a message's closing punctuation, which a value may end with.
  const rounds: ImportedDialogueAnswer['rounds'] = [];
  // Calls whose request a round began without one value (asked for then): the next round gives it and makes them.
  let asked: { name: string; calls: ImportedDialogueAnswer['rounds'][number]['calls'] } | undefined;
  for (const round of vars.rounds) {
    if (round.chat) {
      rounds.push({ user: '[offline template] Thanks, that is all.', assistant: '[offline template] You are welcome.', calls: [] });
      continue;
    }
    const calls = round.calls.map((call) => ({ tool: call.tool, arguments: objectForSchema(call.parameters, rng, { today: vars.today }, call.linked) }));
    if (round.ask) {
      const name = round.ask;
      asked = { name, calls };
      // The value is left out of the first call that takes it; a later call taking a parameter of that name states its own.
      const holder = calls.findIndex((c) => name in c.arguments);
      const stated = calls.map((c, i) => request(round.calls[i], Object.fromEntries(Object.entries(c.arguments).filter(([p]) => p !== name || i !== holder))));
      rounds.push({ user: `[offline template] I would like to ${stated.join(', and then ')}.`, assistant: `[offline template] What ${wordsOf(name)} should I use?`, calls: [] });
      continue;
    }
    if (asked && asked.calls.map((c) => c.tool).join() === calls.map((c) => c.tool).join()) {
      const value = asked.calls.find((c) => asked!.name in c.arguments)?.arguments[asked.name];
      rounds.push({ user: `[offline template] The ${wordsOf(asked.name)} is ${said(value ?? '')}; please go ahead.`, assistant: '', calls: asked.calls });
      asked = undefined;
      continue;
    }
    rounds.push({ user: `[offline template] Could you ${calls.map((c, i) => request(round.calls[i], c.arguments)).join(', and then ')}, please?`, assistant: '', calls });
  }
  return { rounds };
}

export const mtuImportedDialoguePrompt = definePrompt<ImportedDialogueVars, ImportedDialogueAnswer>({
  id: 'mtu/imported-dialogue',
  system: 'You write realistic tool-use dialogues between a user and an assistant that calls APIs. You answer with JSON only.',
  template: `Write a dialogue between a user and an assistant that can call the APIs below. Today is {{today}}.

APIs (parameters as JSON Schema; the calls' arguments must satisfy them exactly: types, enums, formats, patterns, ranges, required parameters, no other names):
{{apis}}

Follow this plan, one entry of "rounds" per round:
{{plan}}

For each round write:
- "user": the user's message, in natural words, stating every value the round's calls use (no API names, no JSON);
- "calls": the API calls the assistant makes for that message, in the planned order, each {"tool": "<API name>", "arguments": {...}} with values taken from what the user said so far ([] when the plan says no call);
- "assistant": in a round without calls, the assistant's reply (a question for the missing value, or a short closing line); "" in a round with calls.

Answer as {"rounds": [{"user": "...", "calls": [{"tool": "...", "arguments": {...}}], "assistant": "..."}]}.
{{feedback}}`,
  schema: ImportedDialogueAnswer,
  offline: offlineDialogue,
  temperature: 0.8,
});
