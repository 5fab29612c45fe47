import { z } from 'zod';
import type { ChatMessage, PromptFile } from '../prompt.ts';
import { formatZodError } from '../records.ts';

/** What a prompt asks the endpoint to return: a JSON schema, or free text it parses itself. */
export interface ResponseFormat {
  kind: 'json' | 'text';
  /** `json_schema.name`: the prompt id in the characters the API allows. */
  name: string;
  /** JSON schema of the answer (also sent for text prompts' cache keys, never to the endpoint). */
  schema: Record<string, unknown>;
  /** Whether the schema fits OpenAI's strict structured-output subset. */
  strict: boolean;
}

const formats = new WeakMap<object, ResponseFormat>();

/** The prompt's response format, computed once per prompt file. */
export function responseFormatOf(prompt: PromptFile<any, any>): ResponseFormat {
  let format = formats.get(prompt);
  if (!format) {
    const { $schema: _drop, ...schema } = z.toJSONSchema(prompt.schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
    const strictSchema = toStrict(schema);
    format = {
      kind: prompt.parseText ? 'text' : 'json',
      name: prompt.id.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64) || 'answer',
      schema: strictSchema ?? schema,
      strict: strictSchema !== null,
    };
    formats.set(prompt, format);
  }
  return format;
}

// Keywords OpenAI's strict mode accepts (conservatively); anything else sends the schema non-strict.
const STRICT_KEYWORDS = new Set(['type', 'properties', 'required', 'items', 'enum', 'const', 'anyOf', 'description', 'additionalProperties', '$defs', '$ref', 'title', 'default', 'pattern', 'format', 'minimum', 'maximum', 'minItems', 'maxItems']);

/**
 * The schema with `additionalProperties: false` on every object when every object lists all its
 * properties as required (what strict mode demands); null when it does not fit strict mode.
 */
export function toStrict(schema: unknown): Record<string, unknown> | null {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return null;
  const node = schema as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (!STRICT_KEYWORDS.has(key)) return null;
    out[key] = value;
  }
  if (node.properties !== undefined) {
    const properties = node.properties as Record<string, unknown>;
    const required = new Set((node.required as string[] | undefined) ?? []);
    if (Object.keys(properties).some((name) => !required.has(name))) return null;
    if (node.additionalProperties !== undefined && node.additionalProperties !== false) return null;
    const strictProperties: Record<string, unknown> = {};
    for (const [name, sub] of Object.entries(properties)) {
      const strict = toStrict(sub);
      if (!strict) return null;
      strictProperties[name] = strict;
    }
    out.properties = strictProperties;
    out.additionalProperties = false;
  } else if (node.type === 'object') {
    return null; // a free-form object (record) cannot be strict
  }
  if (node.items !== undefined) {
    const items = toStrict(node.items);
    if (!items) return null;
    out.items = items;
  }
  for (const key of ['anyOf'] as const) {
    if (node[key] === undefined) continue;
    const options = (node[key] as unknown[]).map(toStrict);
    if (options.some((o) => o === null)) return null;
    out[key] = options;
  }
  if (node.$defs !== undefined) {
    const defs: Record<string, unknown> = {};
    for (const [name, sub] of Object.entries(node.$defs as Record<string, unknown>)) {
      const strict = toStrict(sub);
      if (!strict) return null;
      defs[name] = strict;
    }
    out.$defs = defs;
  }
  return out;
}

/** Asks for JSON in words, for endpoints that do not accept `response_format`. */
export function jsonInstruction(format: ResponseFormat): string {
  return `Answer with only a JSON value (no prose, no code fence) that matches this JSON schema:\n${JSON.stringify(format.schema)}`;
}

/** Adds the JSON instruction to the system message (or as one). */
export function withJsonInstruction(messages: readonly ChatMessage[], format: ResponseFormat): ChatMessage[] {
  const instruction = jsonInstruction(format);
  if (messages[0]?.role === 'system') return [{ role: 'system', content: `${messages[0].content}\n\n${instruction}` }, ...messages.slice(1)];
  return [{ role: 'system', content: instruction }, ...messages];
}

export class AnswerError extends Error {
  constructor(readonly reason: 'invalid_json' | 'schema_invalid' | 'empty_answer' | UnusableReason, message: string) {
    super(message);
  }
}

/** `no_list`: no list where a list was asked for; `chatter`: talk (a refusal, a bare preamble) instead of the text asked for. */
export type UnusableReason = 'no_list' | 'chatter';

/**
 * What a prompt's `parseText` throws for an answer that holds none of what was asked, only talk
 * around it. The gateway sends such an answer back once (a model that answered with talk twice
 * rarely does better a third time), then rejects the record with the reason.
 */
export class UnusableAnswer extends Error {
  constructor(readonly reason: UnusableReason, message: string) {
    super(message);
  }
}

/** How many repair attempts an answer failing with `error` gets, given the gateway's `maxRepairs`. */
export function repairLimit(error: AnswerError, maxRepairs: number): number {
  return error.reason === 'no_list' || error.reason === 'chatter' ? Math.min(1, maxRepairs) : maxRepairs;
}

/**
 * The first JSON value in a text: the whole text, else a fenced block, else the span from the first
 * `{` or `[` to its matching bracket.
 */
export function extractJson(text: string): unknown {
  const trimmed = text.trim();
  if (!trimmed) throw new AnswerError('empty_answer', 'the answer was empty');
  try {
    return JSON.parse(trimmed);
  } catch {
    // fall through to the looser readings
  }
  const fenced = /```(?:json)?\s*\n?([\s\S]*?)```/i.exec(trimmed);
  if (fenced) {
    try {
      return JSON.parse(fenced[1].trim());
    } catch {
      // try the brackets
    }
  }
  const start = trimmed.search(/[{[]/);
  if (start >= 0) {
    const end = matchingBracket(trimmed, start);
    if (end > start) {
      try {
        return JSON.parse(trimmed.slice(start, end + 1));
      } catch (error) {
        throw new AnswerError('invalid_json', `the answer is not valid JSON (${(error as Error).message})`);
      }
    }
  }
  throw new AnswerError('invalid_json', 'the answer holds no complete JSON value');
}

function matchingBracket(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return i;
    }
  }
  return -1;
}

/** Reads and validates an answer text; throws an AnswerError saying what is wrong. */
export function parseAnswer<O>(prompt: PromptFile<any, O>, text: string): O {
  let raw: unknown;
  if (prompt.parseText) {
    if (!text.trim()) throw new AnswerError('empty_answer', 'the answer was empty');
    try {
      raw = prompt.parseText(text);
    } catch (error) {
      if (error instanceof UnusableAnswer) throw new AnswerError(error.reason, error.message);
      throw new AnswerError('schema_invalid', `the answer could not be read: ${(error as Error).message}`);
    }
  } else {
    raw = extractJson(text);
  }
  const parsed = prompt.schema.safeParse(raw);
  if (!parsed.success) {
    throw new AnswerError('schema_invalid', `the answer does not match the schema: ${formatZodError(parsed.error)}`);
  }
  return parsed.data;
}

/** The follow-up message of a repair attempt: what was wrong and what to send instead. */
export function repairMessage(format: ResponseFormat, error: AnswerError): string {
  return format.kind === 'json'
    ? `That answer cannot be used: ${error.message}. Reply again with only the corrected JSON value matching the schema, nothing else.`
    : `That answer cannot be used: ${error.message}. Reply again in exactly the requested format.`;
}
