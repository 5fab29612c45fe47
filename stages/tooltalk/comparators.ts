import { lexicalEmbedder, type LexicalEmbedder } from '../../core/embed/lexical.ts';
import { cosine, type Embedder } from '../../core/embed/types.ts';
import type { Json } from '../../core/records.ts';
import { strptime } from './python.ts';
import type { JsonObject } from './tool.ts';
import type { ToolRequest, ToolResult } from './world.ts';

/**
 * Per-tool correctness of a predicted call against a ground-truth one (ToolTalk paper §3.1 and
 * each tool's `check_api_call_correctness` in the ToolTalk repository):
 *   - both calls must end alike (same exception, or both none);
 *   - action tools: every argument of the ground truth must be in the prediction with an equal
 *     value (an optional argument the ground truth leaves out is not looked at); lists of
 *     recipients / attendees compare as sets; free text (message and email bodies, subjects,
 *     event names / descriptions / locations, reminder tasks) compares by embedding cosine, at
 *     least the field's threshold; a reminder's due_date compares by day;
 *   - non-action tools compare by what they returned: the searches (FindAlarms, QueryCalendar,
 *     SearchInbox, SearchMessages, GetReminders) match when every record id of the ground truth is
 *     among the prediction's; the others need an equal response and equal arguments.
 *   - the session token is the executor's, not the model's: compared only when both calls carry one.
 * Deliberate differences from the repository: attendee lists compare as sets (the repository
 * compares them in order), and SendMessage checks its receiver (the repository's check compares the
 * prediction's receiver with itself).
 *
 * Free-text thresholds default to the repository's (0.9; 0.8 for email bodies and messages), which
 * were set for DistilBERT sentence vectors (sent2vec). The default embedder is toolkiln's lexical one
 * (no model), under which these thresholds ask for nearly the same words; pass the transformers
 * embedder (core/embed/transformers.ts) with a sentence model for paraphrase-tolerant matching.
 */

/** A call with its outcome, as the released conversations and the world record it. */
export interface CallRecord extends ToolResult {
  request: ToolRequest;
}

export interface ComparatorOptions {
  /** Embeds free-text arguments (default: toolkiln's lexical embedder). */
  embedder?: Embedder;
  /** One threshold for every free-text field, replacing the per-field defaults. */
  threshold?: number;
  /** Per-field thresholds, `"SendEmail.body": 0.8`, over the defaults. */
  thresholds?: Record<string, number>;
}

export interface Comparison {
  match: boolean;
  /** Why not, when not. */
  reason?: string;
}

/** The repository's free-text fields and thresholds. */
export const DEFAULT_TEXT_THRESHOLDS: Readonly<Record<string, number>> = {
  'CreateEvent.name': 0.9,
  'CreateEvent.description': 0.9,
  'CreateEvent.location': 0.9,
  'ModifyEvent.new_name': 0.9,
  'ModifyEvent.new_description': 0.9,
  'ModifyEvent.new_location': 0.9,
  'AddReminder.task': 0.9,
  'SendEmail.subject': 0.9,
  'SendEmail.body': 0.8,
  'SendMessage.message': 0.8,
};

/** Arguments compared as sets. */
const SET_FIELDS = new Set(['SendEmail.to', 'CreateEvent.attendees', 'ModifyEvent.new_attendees']);
/** Arguments compared by calendar day. */
const DAY_FIELDS = new Set(['AddReminder.due_date']);
/** Tools whose prediction may not set a ground-truth argument to null. */
const NO_NULL_TOOLS = new Set(['CreateEvent', 'ModifyEvent']);

/** Searches: matched by the record ids they return (list field, id field). */
const RETRIEVAL: Record<string, { list: string; id: string }> = {
  FindAlarms: { list: 'alarms', id: 'alarm_id' },
  QueryCalendar: { list: 'events', id: 'event_id' },
  SearchInbox: { list: 'emails', id: 'email_id' },
  SearchMessages: { list: 'messages', id: 'message_id' },
  GetReminders: { list: 'reminders', id: 'reminder_id' },
};
/** Action tools whose response (generated identifiers) is not compared. */
const IGNORE_RESPONSE = new Set(['AddAlarm', 'CreateEvent', 'AddReminder', 'SendEmail', 'SendMessage']);

const json = (value: unknown) => JSON.stringify(value ?? null);

export class ToolTalkComparator {
  private readonly embedder: Embedder;

  constructor(private readonly options: ComparatorOptions = {}) {
    this.embedder = options.embedder ?? lexicalEmbedder();
  }

  /** The threshold a free-text field must reach, or undefined when the field is not free text. */
  thresholdOf(api: string, field: string): number | undefined {
    const key = `${api}.${field}`;
    if (!(key in DEFAULT_TEXT_THRESHOLDS)) return undefined;
    return this.options.threshold ?? this.options.thresholds?.[key] ?? DEFAULT_TEXT_THRESHOLDS[key];
  }

  /** Cosine of two texts under the embedder (1 for identical texts, 0 when the prediction is not text). */
  async similarity(prediction: Json, truth: Json): Promise<number> {
    const known = plainSimilarity(prediction, truth);
    if (known !== undefined) return known;
    const [a, b] = await this.embedder.embed([prediction as string, truth as string]);
    return cosine(a, b);
  }

  /** `similarity` without waiting: needs an embedder that embeds synchronously (the default lexical one does). */
  similaritySync(prediction: Json, truth: Json): number {
    const known = plainSimilarity(prediction, truth);
    if (known !== undefined) return known;
    const embedder = this.embedder as Partial<LexicalEmbedder>;
    if (typeof embedder.embedSync !== 'function') throw new Error(`ToolTalkComparator: embedder ${this.embedder.id} cannot embed synchronously; use compare()`);
    const [a, b] = embedder.embedSync([prediction as string, truth as string]);
    return cosine(a, b);
  }

  async compare(prediction: CallRecord, truth: CallRecord): Promise<Comparison> {
    const scores = new Map<string, number>();
    for (const [field, guess, value] of this.textPairs(prediction, truth)) scores.set(field, await this.similarity(guess, value));
    return this.decide(prediction, truth, scores);
  }

  /** `compare` without waiting (see `similaritySync`): the same decision. */
  compareSync(prediction: CallRecord, truth: CallRecord): Comparison {
    const scores = new Map<string, number>();
    for (const [field, guess, value] of this.textPairs(prediction, truth)) scores.set(field, this.similaritySync(guess, value));
    return this.decide(prediction, truth, scores);
  }

  /** The free-text arguments the decision may look at: [field, predicted value, ground-truth value]. */
  private textPairs(prediction: CallRecord, truth: CallRecord): [string, Json, Json][] {
    const api = truth.request.api_name;
    if (prediction.request.api_name !== api) return [];
    const predicted = prediction.request.parameters ?? {};
    return Object.entries(truth.request.parameters ?? {})
      .filter(([field]) => field in predicted && this.thresholdOf(api, field) !== undefined)
      .map(([field, value]) => [field, predicted[field], value]);
  }

  /** The comparison, given the similarity of each free-text argument (`textPairs`). */
  private decide(prediction: CallRecord, truth: CallRecord, textScores: ReadonlyMap<string, number>): Comparison {
    const api = truth.request.api_name;
    if (prediction.request.api_name !== api) return { match: false, reason: `tool ${prediction.request.api_name}, not ${api}` };
    if (prediction.exception !== truth.exception) return { match: false, reason: `exception ${json(prediction.exception)}, not ${json(truth.exception)}` };
    const predicted = prediction.request.parameters ?? {};
    const expected = truth.request.parameters ?? {};
    if ('session_token' in predicted && 'session_token' in expected && predicted.session_token !== expected.session_token) {
      return { match: false, reason: 'made under another session' };
    }

    const retrieval = RETRIEVAL[api];
    if (retrieval) {
      if (api === 'GetReminders' && json(withoutSession(predicted)) !== json(withoutSession(expected))) return { match: false, reason: 'different request' };
      return containsIds(prediction.response, truth.response, retrieval);
    }
    if (!IGNORE_RESPONSE.has(api) && json(prediction.response) !== json(truth.response)) return { match: false, reason: 'different response' };

    for (const [field, value] of Object.entries(expected)) {
      if (field === 'session_token') continue;
      if (!(field in predicted)) return { match: false, reason: `argument ${field} missing` };
      const guess = predicted[field];
      if (guess === null && NO_NULL_TOOLS.has(api)) return { match: false, reason: `argument ${field} is null` };
      const key = `${api}.${field}`;
      const threshold = this.thresholdOf(api, field);
      if (threshold !== undefined) {
        const score = textScores.get(field)!;
        if (score < threshold) return { match: false, reason: `${field}: similarity ${score.toFixed(3)} below ${threshold}` };
      } else if (SET_FIELDS.has(key)) {
        if (!sameSet(guess, value)) return { match: false, reason: `${field}: different set` };
      } else if (DAY_FIELDS.has(key)) {
        if (!sameDay(guess, value)) return { match: false, reason: `${field}: different day` };
      } else if (json(guess) !== json(value)) {
        return { match: false, reason: `${field}: ${json(guess)}, not ${json(value)}` };
      }
    }
    return { match: true };
  }
}

/** A comparator with the given embedder and thresholds. */
export function createComparator(options: ComparatorOptions = {}): ToolTalkComparator {
  return new ToolTalkComparator(options);
}

/** Similarity without embedding, when the values settle it (equal, or not both text); else undefined. */
function plainSimilarity(prediction: Json, truth: Json): number | undefined {
  if (typeof prediction !== 'string' || typeof truth !== 'string') return prediction === truth ? 1 : 0;
  return prediction === truth ? 1 : undefined;
}

function withoutSession(parameters: Record<string, Json>): Record<string, Json> {
  const { session_token: _session, ...rest } = parameters;
  return rest;
}

function idsOf(response: JsonObject | null, { list, id }: { list: string; id: string }): Json[] {
  const records = response?.[list];
  return Array.isArray(records) ? records.map((record) => (record && typeof record === 'object' && !Array.isArray(record) ? record[id] : null)) : [];
}

function containsIds(prediction: JsonObject | null, truth: JsonObject | null, retrieval: { list: string; id: string }): Comparison {
  const found = new Set(idsOf(prediction, retrieval).map(json));
  const missing = idsOf(truth, retrieval).filter((id) => !found.has(json(id)));
  return missing.length === 0 ? { match: true } : { match: false, reason: `${retrieval.list} missing ${missing.map((id) => json(id)).join(', ')}` };
}

function sameSet(a: Json, b: Json): boolean {
  if (!Array.isArray(a) || !Array.isArray(b)) return json(a) === json(b);
  const left = new Set(a.map(json));
  const right = new Set(b.map(json));
  return left.size === right.size && [...left].every((item) => right.has(item));
}

function sameDay(a: Json, b: Json): boolean {
  try {
    return strptime(a, '%Y-%m-%d %H:%M:%S').date.key() === strptime(b, '%Y-%m-%d %H:%M:%S').date.key();
  } catch {
    return json(a) === json(b);
  }
}
