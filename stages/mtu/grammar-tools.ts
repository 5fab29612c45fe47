import type { Call, Json, ToolSpec, Turn } from '../../core/records.ts';
import type { Situation } from '../../prompts/mtu-situation.ts';
import type { SchemaIntent, SourceDialogue, SourceTurn } from '../sources/dialogue.ts';
import { parameterNameOfSlot, toolNameOfIntent } from './names.ts';

/**
 * Grammar-based tool creation (MTU-Bench §2.1): for datasets annotated with intents and slots,
 * an intent becomes a tool and its slots the tool's parameters, the slot values the arguments.
 * Schema-guided dialogues (SGD, MultiWOZ) give their tools whole: each intent of a service with
 * its required, optional and result slots.
 */

/** Dataset prefix of intent names, dropped from tool names (`atis_flight` → `GetFlight`). */
const INTENT_PREFIX: Record<string, string> = { atis: 'atis_' };

export function toolNameOf(source: string, intent: string): string {
  return toolNameOfIntent(intent, INTENT_PREFIX[source]);
}

/** A dialogue's turns as canonical turns, calls still to be attached to the assistant turns. */
export interface CreatedTurns {
  dialogue: Turn[];
  tools: ToolSpec[];
  situations: Record<string, Situation>;
}

/**
 * Arguments from slot spans: one parameter per slot name; a slot that occurs several times with
 * different values keeps them all as a list, in the order they occur (the documentation decides
 * whether the parameter is a list or its values are joined into one).
 */
export function argumentsOfSlots(turn: SourceTurn): Record<string, string | string[]> {
  const args: Record<string, string | string[]> = {};
  for (const slot of turn.slots ?? []) {
    const name = parameterNameOfSlot(slot.name);
    const known = args[name];
    if (known === undefined) args[name] = slot.value;
    else if (![known].flat().includes(slot.value)) args[name] = [...[known].flat(), slot.value];
  }
  return args;
}

/**
 * One annotated utterance → a user turn and an assistant turn calling one tool per intent.
 * With several intents (ATIS `a#b`) the grammar cannot tell which slot belongs to which intent,
 * so every call gets them all.
 */
export function utteranceTurns(dialogue: SourceDialogue): CreatedTurns {
  const turn = dialogue.turns[0];
  const args = argumentsOfSlots(turn);
  const intents = turn.intents ?? [];
  const calls: Call[] = intents.map((intent, i) => ({ id: `call_${i}`, tool: toolNameOf(dialogue.source, intent), arguments: { ...args } }));
  const tools: ToolSpec[] = intents.map((intent, i) => ({
    name: calls[i].tool,
    description: '',
    parameters: { type: 'object', properties: Object.fromEntries(Object.keys(args).map((a) => [a, { type: 'string' }])), required: [] },
    returns: { type: 'object', properties: {}, required: [] },
    domain: dialogue.domains[Math.min(i, dialogue.domains.length - 1)],
    plugin: dialogue.source,
    provenance: { source: dialogue.source, id: intent },
  }));
  return {
    dialogue: [
      { role: 'user', content: turn.text },
      { role: 'assistant', content: '', calls },
    ],
    tools: uniqueTools(tools),
    situations: { '1': 'api_call' },
  };
}

function uniqueTools(tools: ToolSpec[]): ToolSpec[] {
  const seen = new Set<string>();
  return tools.filter((t) => !seen.has(t.name) && (seen.add(t.name), true));
}

/** A schema intent as a tool: parameters from its slots, enums from categorical slots. */
export function schemaTool(intent: SchemaIntent, source: string, topic: string): ToolSpec {
  const slots = new Map(intent.slots.map((s) => [s.name, s]));
  const param = (name: string) => parameterNameOfSlot(name, intent.service);
  const property = (name: string, fallback?: string) => {
    const slot = slots.get(name);
    const values = slot?.categorical ? [...slot.values] : [];
    if (values.length && fallback !== undefined && !values.includes(fallback)) values.push(fallback);
    return {
      type: 'string',
      description: slot?.description ?? '',
      ...(values.length ? { enum: values } : {}),
      ...(fallback !== undefined ? { default: fallback } : {}),
    };
  };
  return {
    name: toolNameOf(source, intent.name),
    description: intent.description,
    parameters: {
      type: 'object',
      properties: Object.fromEntries([
        ...intent.required.map((name) => [param(name), property(name)]),
        ...Object.entries(intent.optional).map(([name, fallback]) => [param(name), property(name, fallback)]),
      ]),
      required: intent.required.map(param),
    },
    returns: { type: 'object', properties: Object.fromEntries(intent.result.map((name) => [param(name), { type: 'string', description: slots.get(name)?.description ?? '' }])), required: [] },
    domain: topic,
    plugin: intent.service,
    isAction: intent.transactional,
    provenance: { source, id: `${intent.service}/${intent.name}`, schema: true },
  };
}

/** The situation a system turn is in, read from its dialogue acts (SGD) when it makes no call. */
export function situationOfActs(acts: string[] | undefined, text: string): Situation {
  const has = (act: string) => acts?.includes(act) ?? false;
  if (has('REQUEST')) return 'information_missing';
  if (has('CONFIRM')) return 'confirmation';
  if (has('OFFER') || has('INFORM') || has('INFORM_COUNT') || has('OFFER_INTENT') || has('NOTIFY_SUCCESS') || has('NOTIFY_FAILURE')) return 'information_exists';
  if (has('GOODBYE') || has('REQ_MORE')) return 'chit_chat';
  return situationOfText(text);
}

/** Fallback when a turn carries no acts: a question asks for something, anything else is talk. */
export function situationOfText(text: string): Situation {
  if (/\b(confirm|is that (right|correct)|shall i|should i)\b/i.test(text) && text.includes('?')) return 'confirmation';
  if (text.includes('?') && !/anything else/i.test(text)) return 'information_missing';
  return 'chit_chat';
}

function resultObservation(results: Record<string, Json>[] | undefined, param: (slot: string) => string): Json {
  // The system offers the first result; an empty result list is the paper's empty observation.
  const first = results?.[0];
  return first ? Object.fromEntries(Object.entries(first).map(([k, v]) => [param(k), v])) : {};
}

function schemaIntentOf(dialogue: SourceDialogue, service: string, name: string): SchemaIntent | undefined {
  return dialogue.schema.find((i) => i.service === service && i.name === name);
}

/**
 * Schema-guided dialogue → turns. With real `service_call`s (SGD) those are the calls and their
 * `service_results` the observations. Without them (MultiWOZ) a call is made at the system turn
 * after a user turn whose state for an active intent changed since that intent was last called,
 * with the state's values as arguments.
 */
export function schemaDialogueTurns(dialogue: SourceDialogue, topicOf: (service: string) => string): CreatedTurns {
  const useServiceCalls = dialogue.turns.some((t) => t.serviceCalls?.length);
  const tools = dialogue.schema.map((intent) => schemaTool(intent, dialogue.source, topicOf(intent.service)));
  const turns: Turn[] = [];
  const situations: Record<string, Situation> = {};
  const lastArgs = new Map<string, string>();
  let pendingState: SourceTurn | undefined;
  let callCount = 0;

  // A trailing user turn has no assistant reply to learn from: it is dropped.
  const last = dialogue.turns.at(-1)?.speaker === 'user' ? dialogue.turns.length - 1 : dialogue.turns.length;
  for (const turn of dialogue.turns.slice(0, last)) {
    if (turn.speaker === 'user') {
      turns.push({ role: 'user', content: turn.text });
      pendingState = turn;
      continue;
    }
    const calls: Call[] = [];
    const observations: Record<string, Json> = {};
    if (useServiceCalls) {
      for (const sc of turn.serviceCalls ?? []) {
        const intent = schemaIntentOf(dialogue, sc.service, sc.method);
        const param = (slot: string) => parameterNameOfSlot(slot, sc.service);
        const id = `call_${callCount++}`;
        calls.push({ id, tool: toolNameOf(dialogue.source, intent?.name ?? sc.method), arguments: Object.fromEntries(Object.entries(sc.parameters).map(([k, v]) => [param(k), v])) });
        if (sc.results) observations[id] = resultObservation(sc.results, param);
      }
    } else {
      for (const frame of pendingState?.frames ?? []) {
        const intent = schemaIntentOf(dialogue, frame.service, frame.intent);
        if (!intent) continue; // NONE, or an intent the schema lacks
        const args = Object.fromEntries(
          Object.entries(frame.slotValues)
            .filter(([, values]) => values.length)
            .map(([slot, values]) => [parameterNameOfSlot(slot, frame.service), values[0]]),
        );
        const key = `${frame.service}/${frame.intent}`;
        const signature = JSON.stringify(args);
        if (!Object.keys(args).length || lastArgs.get(key) === signature) continue;
        lastArgs.set(key, signature);
        calls.push({ id: `call_${callCount++}`, tool: toolNameOf(dialogue.source, intent.name), arguments: args });
      }
    }
    pendingState = undefined;
    const index = turns.length;
    situations[String(index)] = calls.length ? 'api_call' : situationOfActs(turn.acts, turn.text);
    turns.push({ role: 'assistant', content: turn.text, ...(calls.length ? { calls } : {}), ...(Object.keys(observations).length ? { observations } : {}) });
  }
  return { dialogue: turns, tools, situations };
}
