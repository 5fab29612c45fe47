import { UserError } from '../errors.ts';
import type { Embedder } from './types.ts';

/**
 * The default embedder: no model, no network. A text (a tool name such as `searchMovieByTitle`,
 * a description, a query) becomes
 *   - word tokens: split on case changes, underscores and punctuation, lower-cased, stop words
 *     dropped, common API verbs and nouns folded to one form (search/find/lookup/get → find,
 *     reserve → book, purchase → buy, …), then lightly stemmed (movies → movi, movie → movi);
 *   - character n-grams of those tokens (so `geolocation` and `location` share features);
 * each group TF-IDF weighted (sublinear tf, smoothed idf fitted on the texts of the call) and
 * L2-normalised, then joined with `wordWeight` : 1 − `wordWeight`, and hashed (signed feature
 * hashing) into `dim` numbers. Cosine of two vectors = weighted mean of word and n-gram cosines.
 */

export interface LexicalOptions {
  /** Length of the hashed vectors (default 2048). */
  dim?: number;
  /** Character n-gram sizes (default [3, 4]). */
  ngrams?: number[];
  /** Share of the word-token cosine in the total (default 0.5). */
  wordWeight?: number;
  /** Extra synonym groups: the first word of each group is the form the others fold to. */
  synonyms?: string[][];
}

/** Verb and noun groups of API names; the first word is the folded form. */
export const DEFAULT_SYNONYMS: readonly (readonly string[])[] = [
  ['find', 'search', 'lookup', 'look', 'query', 'get', 'retrieve', 'fetch', 'locate', 'seek', 'obtain', 'check', 'show', 'view', 'display', 'read', 'browse', 'discover'],
  ['book', 'reserve', 'reservation', 'booking', 'schedule'],
  ['buy', 'purchase', 'order', 'acquire', 'shop'],
  ['create', 'add', 'make', 'new', 'generate', 'insert', 'register'],
  ['delete', 'remove', 'cancel', 'erase', 'drop', 'clear', 'unregister'],
  ['update', 'modify', 'edit', 'change', 'set', 'alter', 'adjust', 'configure'],
  ['send', 'share', 'post', 'transmit', 'forward', 'deliver', 'notify'],
  ['play', 'stream', 'start', 'launch'],
  ['stop', 'pause', 'halt', 'end'],
  ['calculate', 'compute', 'estimate', 'measure', 'count'],
  ['analyze', 'analyse', 'analysis', 'assess', 'evaluate', 'inspect', 'examine'],
  ['recommend', 'suggest', 'recommendation', 'suggestion', 'advise'],
  ['list', 'enumerate', 'all'],
  ['info', 'information', 'detail', 'details', 'data'],
  ['convert', 'transform', 'translate'],
  ['movie', 'film', 'cinema'],
  ['flight', 'flights', 'airfare', 'plane'],
  ['hotel', 'accommodation', 'lodging'],
  ['restaurant', 'dining', 'eatery'],
  ['car', 'vehicle', 'auto'],
  ['location', 'place', 'position'],
  ['price', 'cost', 'fare', 'rate'],
];

const STOP_WORDS = new Set(['a', 'an', 'the', 'of', 'for', 'to', 'by', 'in', 'on', 'at', 'with', 'and', 'or', 'from', 'my', 'me', 'i', 'your', 'is', 'be', 'it', 'this', 'that', 'as', 'into', 'about']);

/** Inflections of the folded verbs that plain stemming would miss. */
function inflections(word: string): string[] {
  return [word, `${word}s`, `${word}es`, `${word}ing`, `${word}ed`, word.endsWith('e') ? `${word.slice(0, -1)}ing` : `${word}ing`];
}

/** Splits an identifier or sentence into lower-case words: `getHTTPStatus_v2` → get, http, status, v2. */
export function splitWords(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);
}

/** A light stemmer: plural and -y/-ie endings only (movies, movie → movi; cities, city → citi). */
export function stem(word: string): string {
  if (word.length <= 3) return word;
  let w = word;
  if (w.endsWith('ies')) w = `${w.slice(0, -3)}i`;
  else if (w.endsWith('s') && !/(ss|us|is)$/.test(w)) w = w.slice(0, -1);
  if (w.length > 3 && w.endsWith('y')) w = `${w.slice(0, -1)}i`;
  else if (w.length > 3 && w.endsWith('ie')) w = w.slice(0, -1);
  return w;
}

export class LexicalAnalyzer {
  private readonly fold = new Map<string, string>();

  constructor(synonyms: readonly (readonly string[])[] = DEFAULT_SYNONYMS) {
    for (const group of synonyms) {
      for (const word of group) for (const form of inflections(word.toLowerCase())) if (!this.fold.has(form)) this.fold.set(form, group[0].toLowerCase());
    }
  }

  /** Folded, stemmed word tokens of a text, stop words dropped. */
  tokens(text: string): string[] {
    const out: string[] = [];
    for (const word of splitWords(text)) {
      if (STOP_WORDS.has(word)) continue;
      out.push(stem(this.fold.get(word) ?? this.fold.get(stem(word)) ?? word));
    }
    return out;
  }
}

/** FNV-1a, 32 bits: a stable hash for feature hashing. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

type Counts = Map<string, number>;

function count(features: string[]): Counts {
  const counts: Counts = new Map();
  for (const f of features) counts.set(f, (counts.get(f) ?? 0) + 1);
  return counts;
}

function charGrams(tokens: string[], sizes: number[]): string[] {
  const out: string[] = [];
  for (const token of tokens) {
    const padded = `<${token}>`;
    for (const n of sizes) {
      if (padded.length <= n) {
        out.push(padded);
        continue;
      }
      for (let i = 0; i + n <= padded.length; i++) out.push(padded.slice(i, i + n));
    }
  }
  return out;
}

export function lexicalEmbedder(options: LexicalOptions = {}): Embedder {
  const dim = options.dim ?? 2048;
  const ngrams = options.ngrams ?? [3, 4];
  const wordWeight = options.wordWeight ?? 0.5;
  if (!Number.isInteger(dim) || dim < 16) throw new UserError(`lexical embedder: dim must be an integer of at least 16 (got ${dim})`);
  if (!(wordWeight >= 0 && wordWeight <= 1)) throw new UserError(`lexical embedder: wordWeight must be between 0 and 1 (got ${wordWeight})`);
  if (!ngrams.every((n) => Number.isInteger(n) && n >= 2 && n <= 8)) throw new UserError(`lexical embedder: n-gram sizes must be integers from 2 to 8 (got ${ngrams.join(', ')})`);
  const analyzer = new LexicalAnalyzer([...(options.synonyms ?? []), ...DEFAULT_SYNONYMS]);
  const synonymsTag = options.synonyms?.length ? `:syn${fnv1a(JSON.stringify(options.synonyms)).toString(16)}` : '';

  return {
    id: `lexical:v1:${dim}:${ngrams.join('-')}:${wordWeight}${synonymsTag}`,
    dim,
    async embed(texts: string[]): Promise<Float32Array[]> {
      const groups = texts.map((text) => {
        const tokens = analyzer.tokens(text);
        return [count(tokens), count(charGrams(tokens, ngrams))];
      });
      const weights = [wordWeight, 1 - wordWeight];
      const vectors = texts.map(() => new Float32Array(dim));
      for (let g = 0; g < 2; g++) {
        if (weights[g] === 0) continue;
        const df = new Map<string, number>();
        for (const counts of groups) for (const f of counts[g].keys()) df.set(f, (df.get(f) ?? 0) + 1);
        groups.forEach((counts, i) => {
          const weighted: [number, number][] = [];
          let norm = 0;
          for (const [feature, tf] of counts[g]) {
            const w = (1 + Math.log(tf)) * (Math.log((1 + texts.length) / (1 + df.get(feature)!)) + 1);
            weighted.push([fnv1a(`${g}:${feature}`), w]);
            norm += w * w;
          }
          if (norm === 0) return;
          const scale = Math.sqrt(weights[g]) / Math.sqrt(norm);
          // Signed hashing: colliding features cancel in expectation instead of adding up.
          for (const [hash, w] of weighted) vectors[i][hash % dim] += (hash & 0x80000000 ? -1 : 1) * w * scale;
        });
      }
      return vectors;
    },
  };
}
