import { UserError } from '../errors.ts';
import type { Embedder } from './types.ts';

/**
 * The default embedder: no model, no network. A text (a tool name such as `searchMovieByTitle`,
 * a description, a query) is split on case changes, underscores and punctuation, lower-cased, stop
 * words dropped, common API verbs and nouns folded to one form (search/find/lookup/get → find,
 * reserve → book, purchase → buy, …) and lightly stemmed (movies, movie → movi). Three views:
 *   - actions: the folded verbs, and the first word of an identifier (`optimizeRoute` → optimize);
 *   - words: the other tokens;
 *   - chars: character n-grams of the other tokens (so `geolocation` and `location` share features);
 * each TF-IDF weighted (sublinear tf, smoothed idf fitted on the texts of one call: embed together
 * what you compare), L2-normalised and scaled by √share, then hashed (signed feature hashing) into
 * `dim` numbers. So cosine = weighted mean of the three views' cosines: `create_product` and
 * `delete_product` differ in the action view, `delete_product` and `delete_user` in the others,
 * and both pairs stay apart while `search_movie` and `find_movie` coincide. A view a text has
 * nothing for holds one placeholder feature, so two texts both lacking it agree on that view.
 */

export interface LexicalOptions {
  /** Length of the hashed vectors (default 2048). */
  dim?: number;
  /** Character n-gram sizes (default [3, 4]). */
  ngrams?: number[];
  /** Shares of the three views in the cosine (defaults 0.35 / 0.35 / 0.3; normalised to sum to 1). */
  views?: { actions?: number; words?: number; chars?: number };
  /** Extra synonym groups: the first word of each group is the form the others fold to. */
  synonyms?: string[][];
  /**
   * Read an identifier's first word as its action (default true: tool names such as
   * `optimizeRoute`); false for names that are nouns, such as parameter names.
   */
  identifierActions?: boolean;
}

/** Verb and noun groups of API names; the first word is the folded form. */
export const DEFAULT_SYNONYMS: readonly (readonly string[])[] = [
  ['find', 'search', 'lookup', 'look', 'query', 'get', 'retrieve', 'fetch', 'locate', 'seek', 'obtain', 'check', 'view', 'display', 'read', 'browse', 'discover'],
  ['book', 'reserve', 'reservation', 'booking', 'schedule'],
  ['buy', 'purchase', 'order', 'acquire', 'shop'],
  ['create', 'add', 'make', 'new', 'generate', 'insert', 'register'],
  ['delete', 'remove', 'cancel', 'erase', 'drop', 'clear', 'unregister'],
  ['update', 'modify', 'edit', 'change', 'set', 'alter', 'adjust', 'configure'],
  ['send', 'share', 'post', 'transmit', 'forward', 'deliver', 'notify'],
  ['play', 'stream'],
  ['stop', 'pause', 'halt'],
  ['calculate', 'compute', 'estimate', 'measure'],
  ['analyze', 'analyse', 'analysis', 'assess', 'evaluate', 'inspect', 'examine'],
  ['recommend', 'suggest', 'recommendation', 'suggestion', 'advise'],
  ['list', 'enumerate'],
  ['info', 'information', 'detail', 'details', 'data'],
  ['convert', 'transform', 'translate'],
  ['movie', 'film', 'cinema'],
  ['flight', 'flights', 'airfare', 'plane'],
  ['hotel', 'accommodation', 'lodging'],
  ['restaurant', 'dining', 'eatery'],
  ['car', 'vehicle'],
  ['location', 'position'],
  ['price', 'cost', 'fare'],
];

/** Folded forms that are actions (the rest of the groups are nouns). */
const ACTIONS = new Set(['find', 'book', 'buy', 'create', 'delete', 'update', 'send', 'play', 'stop', 'calculate', 'analyze', 'recommend', 'list', 'convert']);

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
    return this.weightedTokens(text).map((t) => t.token);
  }

  /**
   * Tokens, with `action` set on the action words. An identifier (no spaces: `reserveBook`) names
   * one action, its first word, or the first word that folds to a verb when it starts with a noun
   * (`flightBooking`). In a sentence (or with `identifierActions` off) every word that folds to a
   * verb is an action.
   */
  weightedTokens(text: string, identifierActions = true): { token: string; action: boolean }[] {
    const identifier = identifierActions && !/\s/.test(text.trim());
    const words = splitWords(text).filter((word) => !STOP_WORDS.has(word));
    const folded = words.map((word) => this.fold.get(word) ?? this.fold.get(stem(word)));
    let actionAt = -1;
    if (identifier && words.length) actionAt = folded[0] !== undefined && !ACTIONS.has(folded[0]) ? folded.findIndex((f) => f !== undefined && ACTIONS.has(f)) : 0;
    return words.map((word, i) => ({
      token: stem(folded[i] ?? word),
      action: identifier ? i === actionAt : folded[i] !== undefined && ACTIONS.has(folded[i]!),
    }));
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

const VIEWS = ['actions', 'words', 'chars'] as const;
const DEFAULT_SHARES = { actions: 0.35, words: 0.35, chars: 0.3 };
const EMPTY = '\u2205';

type Counts = Map<string, number>;

function count(features: string[]): Counts {
  const counts: Counts = new Map();
  for (const f of features.length ? features : [EMPTY]) counts.set(f, (counts.get(f) ?? 0) + 1);
  return counts;
}

function charGrams(tokens: string[], sizes: number[]): string[] {
  const out: string[] = [];
  for (const token of tokens) {
    const padded = `<${token}>`;
    for (const n of sizes) {
      if (padded.length <= n) out.push(padded);
      else for (let i = 0; i + n <= padded.length; i++) out.push(padded.slice(i, i + n));
    }
  }
  return out;
}

/** The lexical embedder: also embeds synchronously. */
export interface LexicalEmbedder extends Embedder {
  embedSync(texts: string[]): Float32Array[];
}

export function lexicalEmbedder(options: LexicalOptions = {}): LexicalEmbedder {
  const dim = options.dim ?? 2048;
  const ngrams = options.ngrams ?? [3, 4];
  const given = { ...DEFAULT_SHARES, ...options.views };
  if (!Number.isInteger(dim) || dim < 16) throw new UserError(`lexical embedder: dim must be an integer of at least 16 (got ${dim})`);
  if (!ngrams.every((n) => Number.isInteger(n) && n >= 2 && n <= 8)) throw new UserError(`lexical embedder: n-gram sizes must be integers from 2 to 8 (got ${ngrams.join(', ')})`);
  if (!VIEWS.every((v) => given[v] >= 0) || VIEWS.every((v) => given[v] === 0)) throw new UserError(`lexical embedder: view shares must be non-negative and not all zero (got ${JSON.stringify(given)})`);
  const total = VIEWS.reduce((sum, v) => sum + given[v], 0);
  const shares = VIEWS.map((v) => given[v] / total);
  const analyzer = new LexicalAnalyzer([...(options.synonyms ?? []), ...DEFAULT_SYNONYMS]);
  const identifierActions = options.identifierActions ?? true;
  const synonymsTag = options.synonyms?.length ? `:syn${fnv1a(JSON.stringify(options.synonyms)).toString(16)}` : '';

  const featuresOf = (text: string): Counts[] => {
    const tokens = analyzer.weightedTokens(text, identifierActions);
    const others = tokens.filter((t) => !t.action).map((t) => t.token);
    return [count(tokens.filter((t) => t.action).map((t) => t.token)), count(others), count(charGrams(others, ngrams))];
  };
  const featureHash = (v: number, feature: string) => fnv1a(`${v}:${feature}`);
  /** The vectors of texts' features, weighted by document frequencies among `documents` texts. */
  const vectorsOf = (viewsOf: Counts[][], documentFrequency: (hash: number) => number, documents: number): Float32Array[] => {
    const vectors = viewsOf.map(() => new Float32Array(dim));
    VIEWS.forEach((_, v) => {
      if (shares[v] === 0) return;
      viewsOf.forEach((views, i) => {
        const weighted: [number, number][] = [];
        let norm = 0;
        for (const [feature, tf] of views[v]) {
          const hash = featureHash(v, feature);
          const w = (1 + Math.log(tf)) * (Math.log((1 + documents) / (1 + documentFrequency(hash))) + 1);
          weighted.push([hash, w]);
          norm += w * w;
        }
        const scale = Math.sqrt(shares[v]) / Math.sqrt(norm);
        // Signed hashing: colliding features cancel in expectation instead of adding up.
        for (const [hash, w] of weighted) vectors[i][hash % dim] += (hash & 0x80000000 ? -1 : 1) * w * scale;
      });
    });
    return vectors;
  };
  const frequencies = (viewsOf: Counts[][]): Map<number, number> => {
    const df = new Map<number, number>();
    for (const views of viewsOf) views.forEach((counts, v) => {
      for (const feature of counts.keys()) {
        const hash = featureHash(v, feature);
        df.set(hash, (df.get(hash) ?? 0) + 1);
      }
    });
    return df;
  };

  // The vectors come from the texts alone, with no I/O: callers that cannot wait (a scorer) embed synchronously.
  const embedSync = (texts: string[]): Float32Array[] => {
    const viewsOf = texts.map(featuresOf);
    const df = frequencies(viewsOf);
    return vectorsOf(viewsOf, (hash) => df.get(hash)!, texts.length);
  };
  const id = `lexical:v1:${dim}:${ngrams.join('-')}:${shares.map((s) => s.toFixed(3)).join('-')}${identifierActions ? '' : ':nouns'}${synonymsTag}`;
  return {
    id,
    dim,
    embedSync,
    async embed(texts: string[]): Promise<Float32Array[]> {
      return embedSync(texts);
    },
    fit(corpus: string[]): LexicalEmbedder {
      const df = frequencies(corpus.map(featuresOf));
      const fitted = (texts: string[]) => vectorsOf(texts.map(featuresOf), (hash) => df.get(hash) ?? 0, corpus.length);
      return { id: `${id}:fitted-${fnv1a(corpus.join('\u0000')).toString(16)}`, dim, embedSync: fitted, embed: async (texts) => fitted(texts) };
    },
  };
}
