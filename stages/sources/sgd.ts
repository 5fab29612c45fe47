import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { z } from 'zod';
import { UserError } from '../../core/errors.ts';
import { JsonValue } from '../../core/records.ts';
import { readJsonFile } from '../../core/source-files.ts';
import type { SchemaIntent, SourceDialogue, SourceTurn, StateFrame } from './dialogue.ts';
import { parseRecord } from '../../core/validate.ts';

/**
 * Schema-Guided Dialogue (Rastogi et al.) and everything written in its format (MultiWOZ 2.2):
 * a `schema.json` of services (slots, intents with required / optional / result slots) and
 * `dialogues_NNN.json` files of turns with frames. System frames may carry the real
 * `service_call` the wizard made and its `service_results`.
 */

const SchemaFile = z.array(
  z.object({
    service_name: z.string().min(1),
    description: z.string().default(''),
    slots: z.array(
      z.object({
        name: z.string().min(1),
        description: z.string().default(''),
        is_categorical: z.boolean().default(false),
        possible_values: z.array(z.string()).default([]),
      }),
    ),
    intents: z.array(
      z.object({
        name: z.string().min(1),
        description: z.string().default(''),
        is_transactional: z.boolean().default(false),
        required_slots: z.array(z.string()).default([]),
        optional_slots: z.record(z.string(), z.string()).default({}),
        result_slots: z.array(z.string()).default([]),
      }),
    ),
  }),
);

const Frame = z.object({
  service: z.string().min(1),
  actions: z.array(z.object({ act: z.string(), slot: z.string().optional() }).passthrough()).default([]),
  slots: z.array(z.object({ slot: z.string(), start: z.number().int(), exclusive_end: z.number().int() }).passthrough()).default([]),
  state: z
    .object({
      active_intent: z.string(),
      slot_values: z.record(z.string(), z.array(z.string())).default({}),
    })
    .passthrough()
    .optional(),
  service_call: z.object({ method: z.string().min(1), parameters: z.record(z.string(), z.string()).default({}) }).optional(),
  service_results: z.array(z.record(z.string(), JsonValue)).optional(),
});

const DialogueJson = z.object({
  dialogue_id: z.string().min(1),
  services: z.array(z.string()).default([]),
  turns: z
    .array(
      z.object({
        speaker: z.enum(['USER', 'SYSTEM']),
        utterance: z.string(),
        frames: z.array(Frame).default([]),
      }),
    )
    .min(1),
});

/** Intents by service, read from a schema file (errors name the file and the service). */
export type ServiceSchemas = Map<string, SchemaIntent[]>;

function readJson(path: string, what: string, expected: string): unknown {
  if (!existsSync(path)) throw new UserError(`${what} not found: ${path}`);
  return readJsonFile(path, { expected });
}

function issueText(error: z.ZodError): string {
  const issue = error.issues[0];
  return `${issue.path.join('.') || '(root)'}: ${issue.message}`;
}

export function parseSchemaFile(path: string): ServiceSchemas {
  const parsed = SchemaFile.safeParse(readJson(path, 'schema file', 'an SGD schema: a JSON list of services'));
  if (!parsed.success) {
    const service = parsed.error.issues[0].path[0];
    throw new UserError(`${path}: service ${String(service)} is not SGD schema JSON at ${issueText(parsed.error)}`);
  }
  const schemas: ServiceSchemas = new Map();
  for (const service of parsed.data) {
    const slots = new Map(service.slots.map((s) => [s.name, s]));
    schemas.set(
      service.service_name,
      service.intents.map((intent) => {
        const mentioned = [...new Set([...intent.required_slots, ...Object.keys(intent.optional_slots), ...intent.result_slots])];
        const unknown = mentioned.find((name) => !slots.has(name));
        if (unknown) throw new UserError(`${path}: service ${service.service_name} intent ${intent.name} mentions slot "${unknown}" that the service does not define`);
        return {
          service: service.service_name,
          name: intent.name,
          description: intent.description,
          transactional: intent.is_transactional,
          required: intent.required_slots,
          optional: intent.optional_slots,
          result: intent.result_slots,
          slots: mentioned.map((name) => {
            const slot = slots.get(name)!;
            return { name, description: slot.description, categorical: slot.is_categorical, values: slot.possible_values };
          }),
        };
      }),
    );
  }
  return schemas;
}

export interface SgdDialogueContext {
  source: string;
  split: string;
  schemas: ServiceSchemas;
  /** Topic of a service, e.g. `Restaurants_1` → `Restaurants`. */
  topicOf: (service: string) => string;
  database?: string;
}

/** Parses one dialogues file; an error names the file, the dialogue (index and id) and the turn. */
export function parseDialogueFile(path: string, context: SgdDialogueContext): SourceDialogue[] {
  const json = readJson(path, 'dialogue file', 'a JSON list of SGD dialogues');
  if (!Array.isArray(json)) throw new UserError(`${path}: expected a JSON list of dialogues`);
  const file = `${context.split}/${basename(path)}`;
  return json.map((raw, index) => {
    // Checked without zod's copy where zod's answer is plain (most of an SGD dialogue is keys it strips).
    const parsed = parseRecord(DialogueJson, raw);
    const label = `${path}: dialogue ${index}${(raw as { dialogue_id?: unknown })?.dialogue_id ? ` (${(raw as { dialogue_id: string }).dialogue_id})` : ''}`;
    if (!parsed.success) throw new UserError(`${label} is not SGD dialogue JSON at ${issueText(parsed.error)}`);
    const dialogue = parsed.data;
    const services = dialogue.services.length ? dialogue.services : [...new Set(dialogue.turns.flatMap((t) => t.frames.map((f) => f.service)))];
    for (const service of services) {
      if (!context.schemas.has(service)) throw new UserError(`${label}: service "${service}" is not in the split's schema.json`);
    }
    const turns: SourceTurn[] = dialogue.turns.map((turn, t) => {
      const where = `${label} turn ${t}`;
      for (const frame of turn.frames) {
        const intents = context.schemas.get(frame.service);
        if (!intents) throw new UserError(`${where}: frame service "${frame.service}" is not in the schema`);
        for (const span of frame.slots) {
          if (span.start < 0 || span.exclusive_end > turn.utterance.length || span.start > span.exclusive_end) {
            throw new UserError(`${where}: slot ${span.slot} span ${span.start}-${span.exclusive_end} lies outside the ${turn.utterance.length}-character utterance`);
          }
        }
        if (frame.service_call && !intents.some((i) => i.name === frame.service_call!.method)) {
          throw new UserError(`${where}: service_call method "${frame.service_call.method}" is not an intent of ${frame.service}`);
        }
      }
      if (turn.speaker === 'USER') {
        const frames: StateFrame[] = turn.frames
          .filter((f) => f.state)
          .map((f) => ({ service: f.service, intent: f.state!.active_intent, slotValues: f.state!.slot_values }));
        return { speaker: 'user', text: turn.utterance, frames };
      }
      const calls = turn.frames
        .filter((f) => f.service_call)
        .map((f) => ({ service: f.service, method: f.service_call!.method, parameters: f.service_call!.parameters, results: f.service_results }));
      return {
        speaker: 'system',
        text: turn.utterance,
        acts: [...new Set(turn.frames.flatMap((f) => f.actions.map((a) => a.act)))],
        ...(calls.length ? { serviceCalls: calls } : {}),
      };
    });
    return {
      source: context.source,
      id: `${context.split}/${dialogue.dialogue_id}`,
      file,
      split: context.split,
      services,
      domains: [...new Set(services.map(context.topicOf))],
      turns,
      schema: services.flatMap((s) => context.schemas.get(s)!),
      ...(context.database ? { database: context.database } : {}),
    };
  });
}

/** `dialogues_*.json` in a folder, sorted; a missing folder is an error naming it. */
export function dialogueFiles(folder: string): string[] {
  if (!existsSync(folder) || !statSync(folder).isDirectory()) throw new UserError(`dialogue folder not found: ${folder}`);
  return readdirSync(folder)
    .filter((f) => /^dialogues_\d+\.json$/.test(f))
    .sort()
    .map((f) => join(folder, f));
}

export interface SgdOptions {
  /** Folder with one sub-folder per split (`train`, `dev`, `test`), each with `schema.json` and dialogues. */
  dir: string;
  splits: string[];
}

/** SGD service name → topic: `Restaurants_1` → `Restaurants`. */
export function sgdTopic(service: string): string {
  return service.replace(/_\d+$/, '');
}

/** The configured SGD splits' dialogues, one dialogues file at a time (a file is one JSON document, read whole; the splits never are). */
export function* eachSgdDialogue(options: SgdOptions, resolvePath: (p: string) => string): Generator<SourceDialogue> {
  const dir = resolvePath(options.dir);
  if (!existsSync(dir)) throw new UserError(`SGD folder not found: ${dir} (set sources.sgd.dir in the config)`);
  for (const split of options.splits) {
    const folder = join(dir, split);
    const schemas = parseSchemaFile(join(folder, 'schema.json'));
    const files = dialogueFiles(folder);
    if (!files.length) throw new UserError(`${folder}: no dialogues_NNN.json files`);
    for (const path of files) yield* parseDialogueFile(path, { source: 'sgd', split, schemas, topicOf: sgdTopic });
  }
}

/** Loads the configured SGD splits as a list (see `eachSgdDialogue`). */
export function loadSgd(options: SgdOptions, resolvePath: (p: string) => string): SourceDialogue[] {
  return [...eachSgdDialogue(options, resolvePath)];
}
