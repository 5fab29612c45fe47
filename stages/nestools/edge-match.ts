import { nameTokens, singular } from '../../prompts/nestools-names.ts';

/**
 * How well a producer's return field matches the parameter it feeds, by name and description: the
 * offline generator links tools with it, and review tags flag nested arguments whose producer and
 * consumer share little (the paper's manual check of nested parameters).
 */

export interface FieldText {
  name: string;
  description: string;
}

/** Names too generic to link two tools by themselves. */
const GENERIC_NAMES = new Set(['result', 'results', 'data', 'output', 'response', 'message', 'success', 'info', 'information', 'details', 'detail', 'value', 'status']);

const STOPWORDS = new Set(
  'a an the of for to in on at by with and or from into per as is are be this that its it which who whom what when where how whether e g eg etc i ie'.split(' '),
);

export function descriptionTokens(text: string): Set<string> {
  return new Set(
    text
      .toLowerCase()
      .split(/[^a-z0-9]+/)
      .filter((word) => word.length > 1 && !STOPWORDS.has(word))
      .map(singular),
  );
}

function jaccard(a: Set<string>, b: Set<string>): number {
  if (!a.size || !b.size) return 0;
  let shared = 0;
  for (const token of a) if (b.has(token)) shared++;
  return shared / (a.size + b.size - shared);
}

/** A field's name words and description words, computed once for many comparisons. */
export interface PreparedField {
  tokens: string[];
  joined: string;
  words: Set<string>;
}

export function prepareField(field: FieldText): PreparedField {
  const tokens = nameTokens(field.name);
  return { tokens, joined: tokens.join(' '), words: descriptionTokens(field.description) };
}

/**
 * 1 for the same name (`book_id` ↔ `bookId`), 0.8 when one name's words contain the other's
 * (`location` ↔ `exact_location`) and the shorter is not generic, else the overlap of the two
 * descriptions' content words (0 … 1).
 */
export function preparedMatch(producer: PreparedField, consumer: PreparedField): number {
  if (producer.joined && producer.joined === consumer.joined && !GENERIC_NAMES.has(producer.joined)) return 1;
  const [shorter, longer] = producer.tokens.length <= consumer.tokens.length ? [producer.tokens, consumer.tokens] : [consumer.tokens, producer.tokens];
  const specific = shorter.filter((token) => !GENERIC_NAMES.has(token) && token !== 'id' && token !== 'name' && token !== 'type');
  if (shorter.length && specific.length && shorter.every((token) => longer.includes(token))) return 0.8;
  return jaccard(producer.words, consumer.words);
}

export function fieldMatch(producer: FieldText, consumer: FieldText): number {
  return preparedMatch(prepareField(producer), prepareField(consumer));
}
