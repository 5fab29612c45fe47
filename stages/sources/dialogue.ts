import { z } from 'zod';
import { JsonValue } from '../../core/records.ts';
import { SlotSpan, type AnnotatedUtterance } from './utterance.ts';

/**
 * The one record every MTU source loader emits: a dialogue of user / system turns with whatever
 * annotation its dataset has. Single-utterance datasets (SNIPS, ATIS) are one user turn with
 * intents and slot spans; schema-guided datasets (SGD, MultiWOZ) carry dialogue states, system
 * acts, real service calls and the schema of their services; plain dialogues carry text only.
 */

/** A slot of a schema-guided service. */
export const SchemaSlot = z.object({
  name: z.string().min(1),
  description: z.string().default(''),
  categorical: z.boolean().default(false),
  values: z.array(z.string()).default([]),
});
export type SchemaSlot = z.infer<typeof SchemaSlot>;

/** One intent of a service schema: the tool it becomes, with the slots it mentions. */
export const SchemaIntent = z.object({
  service: z.string().min(1),
  name: z.string().min(1),
  description: z.string().default(''),
  transactional: z.boolean().default(false),
  required: z.array(z.string()),
  /** Optional slot → its default value, in schema order. */
  optional: z.record(z.string(), z.string()),
  result: z.array(z.string()),
  slots: z.array(SchemaSlot),
});
export type SchemaIntent = z.infer<typeof SchemaIntent>;

/** A user turn's dialogue state for one service. */
export const StateFrame = z.object({
  service: z.string(),
  intent: z.string(),
  slotValues: z.record(z.string(), z.array(z.string())),
});
export type StateFrame = z.infer<typeof StateFrame>;

/** A real call a system turn made (SGD `service_call`) and what it returned (`service_results`). */
export const ServiceCall = z.object({
  service: z.string(),
  method: z.string(),
  parameters: z.record(z.string(), z.string()),
  results: z.array(z.record(z.string(), JsonValue)).optional(),
});
export type ServiceCall = z.infer<typeof ServiceCall>;

export const SourceTurn = z.object({
  speaker: z.enum(['user', 'system']),
  text: z.string(),
  /** Annotated intents of a user turn (SNIPS, ATIS; several for ATIS `a#b`). */
  intents: z.array(z.string().min(1)).optional(),
  /** Slot spans of a user turn: `text.slice(start, end) === value`. */
  slots: z.array(SlotSpan).optional(),
  /** Dialogue state per service after a user turn (SGD, MultiWOZ). */
  frames: z.array(StateFrame).optional(),
  /** Dialogue act names of a system turn (SGD: REQUEST, OFFER, CONFIRM, …). */
  acts: z.array(z.string()).optional(),
  serviceCalls: z.array(ServiceCall).optional(),
});
export type SourceTurn = z.infer<typeof SourceTurn>;

export const SourceDialogue = z.object({
  /** Which loader: `snips`, `atis`, `sgd`, `multiwoz`, or a generic source's name. */
  source: z.string().min(1),
  /** Id within the source (with the source split, unique). */
  id: z.string().min(1),
  file: z.string(),
  /** The split as the source names it (`train`, `dev`, `validate`, …). */
  split: z.string().min(1),
  /** Services (tool plugins) the dialogue uses: SGD services, `snips`, `atis`, MultiWOZ domains. */
  services: z.array(z.string()),
  /** Topics of the dialogue (e.g. `Restaurants`), used for out-of-domain hold-outs. */
  domains: z.array(z.string()),
  turns: z.array(SourceTurn).min(1),
  /** Intents of the dialogue's services, for schema-guided sources. */
  schema: z.array(SchemaIntent).default([]),
  /** Whether observations of this source's calls can be looked up in a database (MultiWOZ). */
  database: z.string().optional(),
});
export type SourceDialogue = z.infer<typeof SourceDialogue>;

/** A single annotated utterance (SNIPS, ATIS) as a one-turn dialogue. */
export function utteranceDialogue(utterance: AnnotatedUtterance, domains: string[]): SourceDialogue {
  return {
    source: utterance.source,
    id: utterance.id,
    file: utterance.file,
    split: utterance.split,
    services: [utterance.source],
    domains,
    turns: [{ speaker: 'user', text: utterance.text, intents: utterance.intents, slots: utterance.slots }],
    schema: [],
  };
}
