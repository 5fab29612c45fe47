import { UserError } from '../errors.ts';
import type { Embedder, SparseVector } from './types.ts';

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

/** A word as the analyzer reads it: the form it folds to (none: not in a synonym group), and its token. */
interface WordForm {
  folded: string | undefined;
  token: string;
}

export class LexicalAnalyzer {
  private readonly fold = new Map<string, string>();
  /** Words read so far, each folded and stemmed once (started over past `FORMS_KEPT`, so it stays bounded). */
  private readonly forms = new Map<string, WordForm>();
  private static readonly FORMS_KEPT = 100_000;

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
    const forms = words.map((word) => this.form(word));
    let actionAt = -1;
    if (identifier && forms.length) actionAt = forms[0].folded !== undefined && !ACTIONS.has(forms[0].folded) ? forms.findIndex((f) => f.folded !== undefined && ACTIONS.has(f.folded)) : 0;
    return forms.map((form, i) => ({
      token: form.token,
      action: identifier ? i === actionAt : form.folded !== undefined && ACTIONS.has(form.folded),
    }));
  }

  private form(word: string): WordForm {
    let form = this.forms.get(word);
    if (form) return form;
    if (this.forms.size >= LexicalAnalyzer.FORMS_KEPT) this.forms.clear();
    const folded = this.fold.get(word) ?? this.fold.get(stem(word));
    this.forms.set(word, (form = { folded, token: stem(folded ?? word) }));
    return form;
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
/** `1 + Math.log(t)`, the sublinear weight of a feature met t times, for the counts most features have. */
const SUBLINEAR_TF = Float64Array.from({ length: 64 }, (_, t) => 1 + Math.log(t));
const DEFAULT_SHARES = { actions: 0.35, words: 0.35, chars: 0.3 };
const EMPTY = '\u2205';

/**
 * The features of the texts one embedder has seen, each (view, feature) given a number once: its
 * hash is computed once, and a token's character n-grams are cut once, however many texts repeat
 * them. A text's features are then counted by number in scratch arrays, in the order they first
 * occur (the order the weights are summed in), with no string made per feature.
 */
class FeatureTable {
  /** Numbers given before the table starts over (between two texts), so it never grows without bound. */
  private static readonly LIMIT = 1 << 20;
  private readonly numbers = [new Map<string, number>(), new Map<string, number>(), new Map<string, number>()];
  /** A word's numbers: its own (the words view) first, then its character n-grams' (the chars view). */
  private readonly featuresOf = new Map<string, Int32Array>();
  /** The current text's words' numbers, in order (scratch). */
  private readonly wordFeatures: Int32Array[] = [];
  /** `fnv1a("<view>:<feature>")` by feature number. */
  hashes: number[] = [];
  /** Where a feature's weight goes in a vector of `dim` numbers (its hash modulo `dim`), and with which sign (the hash's top bit), by feature number. */
  positions: number[] = [];
  signs: number[] = [];
  /** How many times the numbers were given anew (what is kept by feature number holds for one generation). */
  generation = 0;
  /** Per view, the numbers of the current text's features in order of first occurrence, and how many there are. */
  readonly order = [new Int32Array(16), new Int32Array(16), new Int32Array(16)];
  readonly sizes = [0, 0, 0];
  /** Occurrences in the current text, by feature number (0 for the features it lacks). */
  private tf = new Int32Array(1024);

  constructor(
    private readonly ngrams: readonly number[],
    private readonly dim: number,
  ) {}

  private number(v: number, feature: string): number {
    let n = this.numbers[v].get(feature);
    if (n === undefined) {
      n = this.hashes.length;
      this.numbers[v].set(feature, n);
      const hash = fnv1a(`${v}:${feature}`);
      this.hashes.push(hash);
      this.positions.push(hash % this.dim);
      // Signed hashing: colliding features cancel in expectation instead of adding up.
      this.signs.push(hash & 0x80000000 ? -1 : 1);
    }
    return n;
  }

  /** A word's numbers (see `featuresOf`), given once per word. */
  private features(token: string): Int32Array {
    let features = this.featuresOf.get(token);
    if (features) return features;
    const padded = `<${token}>`;
    const out: number[] = [this.number(1, token)];
    for (const n of this.ngrams) {
      if (padded.length <= n) out.push(this.number(2, padded));
      else for (let i = 0; i + n <= padded.length; i++) out.push(this.number(2, padded.slice(i, i + n)));
    }
    this.featuresOf.set(token, (features = Int32Array.from(out)));
    return features;
  }

  private count(v: number, n: number): void {
    if (n >= this.tf.length) {
      const grown = new Int32Array(Math.max(n + 1, this.tf.length * 2));
      grown.set(this.tf);
      this.tf = grown;
    }
    if (this.tf[n]++ === 0) {
      if (this.sizes[v] === this.order[v].length) {
        const grown = new Int32Array(this.order[v].length * 2);
        grown.set(this.order[v]);
        this.order[v] = grown;
      }
      this.order[v][this.sizes[v]++] = n;
    }
  }

  /** Counts a text's features per view (actions, words, chars); a view without any counts one placeholder. */
  load(tokens: readonly { token: string; action: boolean }[]): void {
    this.clear();
    if (this.hashes.length > FeatureTable.LIMIT) {
      for (const numbers of this.numbers) numbers.clear();
      this.featuresOf.clear();
      this.hashes = [];
      this.positions = [];
      this.signs = [];
      this.tf = new Int32Array(1024);
      this.generation++;
    }
    for (const t of tokens) if (t.action) this.count(0, this.number(0, t.token));
    const words = this.wordFeatures;
    words.length = 0;
    for (const t of tokens) {
      if (t.action) continue;
      const features = this.features(t.token);
      words.push(features);
      this.count(1, features[0]);
    }
    for (const features of words) for (let k = 1; k < features.length; k++) this.count(2, features[k]);
    for (let v = 0; v < 3; v++) if (this.sizes[v] === 0) this.count(v, this.number(v, EMPTY));
  }

  /** How often feature `n` occurs in the loaded text. */
  occurrences(n: number): number {
    return this.tf[n];
  }

  /** The loaded text's counts (per view, how many features, then each feature's number and occurrences), for `reload`. */
  saved(): Int32Array {
    const out = new Int32Array(3 + 2 * (this.sizes[0] + this.sizes[1] + this.sizes[2]));
    let at = 3;
    for (let v = 0; v < 3; v++) {
      out[v] = this.sizes[v];
      for (let k = 0; k < this.sizes[v]; k++) {
        out[at++] = this.order[v][k];
        out[at++] = this.tf[this.order[v][k]];
      }
    }
    return out;
  }

  /** Loads again a text's counts as `saved` gave them (in the same generation: the numbers must hold). */
  reload(saved: Int32Array): void {
    this.clear();
    let at = 3;
    for (let v = 0; v < 3; v++) {
      for (let k = 0; k < saved[v]; k++) {
        const n = saved[at++];
        this.count(v, n);
        this.tf[n] = saved[at++];
      }
    }
  }

  private clear(): void {
    for (let v = 0; v < 3; v++) {
      for (let k = 0; k < this.sizes[v]; k++) this.tf[this.order[v][k]] = 0;
      this.sizes[v] = 0;
    }
  }
}

/**
 * Texts' counts kept from one pass over them (a fit) for the next (their vectors), so each text is
 * split and counted once: each kept while the table's numbers hold, and up to a bound in all.
 */
class KeptCounts {
  /** Numbers kept in all (4 bytes each) before the rest are counted again. */
  private static readonly LIMIT = 1 << 23;
  private readonly counts: (Int32Array | undefined)[] = [];
  private readonly generations: number[] = [];
  private kept = 0;

  /** Keeps the counts of the text `table` has loaded (the next text's position). */
  add(table: FeatureTable): void {
    const saved = this.kept < KeptCounts.LIMIT ? table.saved() : undefined;
    if (saved) this.kept += saved.length;
    this.counts.push(saved);
    this.generations.push(table.generation);
  }

  /** Loads text `t`'s counts into `table` again when they were kept under its present numbers; false otherwise. */
  reload(table: FeatureTable, t: number): boolean {
    const saved = this.counts[t];
    if (!saved || this.generations[t] !== table.generation) return false;
    table.reload(saved);
    return true;
  }
}

/** The lexical embedder: also embeds synchronously. */
export interface LexicalEmbedder extends Embedder {
  embedSync(texts: string[]): Float32Array[];
  embedSparse(texts: string[]): SparseVector[];
  /** Present on an embedder not fitted yet. */
  fit?(corpus: string[]): LexicalEmbedder;
  fitSparse?(corpus: string[]): { embedder: LexicalEmbedder; vectors: SparseVector[] };
}

export function lexicalEmbedder(options: LexicalOptions = {}): LexicalEmbedder & Required<Pick<LexicalEmbedder, 'fit' | 'fitSparse'>> {
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

  const table = new FeatureTable(ngrams, dim);
  const load = (text: string) => table.load(analyzer.weightedTokens(text, identifierActions));
  // Scratch for one text: its weights, and (sparse vectors) its numbers by position and a mark per position written.
  let weights = new Float64Array(64);
  const dense = new Float32Array(dim);
  const marks = new Uint32Array(Math.ceil(dim / 32));

  /**
   * Document frequencies of the features of `texts` (a feature counted once per text and view), by
   * hash: counted by feature number, then added up by hash once per number (features whose hashes
   * collide share a count); numbers given anew between two texts are added up before.
   */
  const frequencies = (texts: readonly string[], keep?: KeptCounts): Map<number, number> => {
    const df = new Map<number, number>();
    let counts = new Int32Array(1024);
    let hashes = table.hashes;
    const addUp = () => {
      for (let n = 0; n < hashes.length && n < counts.length; n++) if (counts[n]) df.set(hashes[n], (df.get(hashes[n]) ?? 0) + counts[n]);
      counts.fill(0);
    };
    for (const text of texts) {
      const before = table.hashes;
      load(text);
      if (table.hashes !== before) {
        // The table started over: the counts so far are by the numbers of the table before.
        hashes = before;
        addUp();
        hashes = table.hashes;
      }
      if (counts.length < table.hashes.length) {
        const grown = new Int32Array(Math.max(table.hashes.length, counts.length * 2));
        grown.set(counts);
        counts = grown;
      }
      for (let v = 0; v < 3; v++) {
        const order = table.order[v];
        for (let k = 0; k < table.sizes[v]; k++) counts[order[k]]++;
      }
      keep?.add(table);
    }
    addUp();
    return df;
  };
  /** The idf factor of a feature of `documentFrequency` (by hash) among `documents` texts. */
  const idfOf = (df: number, documents: number) => Math.log((1 + documents) / (1 + df)) + 1;
  /**
   * The idf factor by feature number under document frequencies that do not change (a fitted
   * embedder's): each computed once per number, until the table numbers the features anew.
   */
  const fixedIdf = (documentFrequency: (hash: number) => number, documents: number): ((n: number) => number) => {
    let known = new Float64Array(0);
    let generation = -1;
    return (n) => {
      if (generation !== table.generation || n >= known.length) {
        const kept = generation === table.generation ? known : new Float64Array(0);
        known = new Float64Array(Math.max(1024, table.hashes.length * 2)).fill(NaN);
        known.set(kept);
        generation = table.generation;
      }
      let idf = known[n];
      // NaN: not computed yet (an idf never is NaN).
      if (idf !== idf) known[n] = idf = idfOf(documentFrequency(table.hashes[n]), documents);
      return idf;
    };
  };
  /**
   * Adds the loaded text's weighted features into `out` (view by view, each feature in order of first
   * occurrence: every number is summed in one fixed order); each position written is marked in `marks` (a bit per position), when given.
   */
  const addLoaded = (out: Float32Array, idf: (n: number) => number, marks?: Uint32Array): void => {
    const { positions, signs } = table;
    for (let v = 0; v < 3; v++) {
      if (shares[v] === 0) continue;
      const size = table.sizes[v];
      const order = table.order[v];
      if (weights.length < size) weights = new Float64Array(Math.max(size, weights.length * 2));
      let norm = 0;
      for (let k = 0; k < size; k++) {
        const n = order[k];
        const occurrences = table.occurrences(n);
        const w = (occurrences < SUBLINEAR_TF.length ? SUBLINEAR_TF[occurrences] : 1 + Math.log(occurrences)) * idf(n);
        weights[k] = w;
        norm += w * w;
      }
      const scale = Math.sqrt(shares[v]) / Math.sqrt(norm);
      for (let k = 0; k < size; k++) {
        const position = positions[order[k]];
        out[position] += signs[order[k]] * weights[k] * scale;
        if (marks) marks[position >>> 5] |= 1 << (position & 31);
      }
    }
  };
  /** The vectors of texts, weighted by `idf` (by feature number). */
  const denseOf = (texts: readonly string[], idf: (n: number) => number): Float32Array[] =>
    texts.map((text) => {
      const vector = new Float32Array(dim);
      load(text);
      addLoaded(vector, idf);
      return vector;
    });
  /**
   * The same vectors by their non-zero numbers: summed in the same order into scratch, so equal to
   * the dense ones bit for bit; the positions written are read off their marks in ascending order.
   */
  const sparseOf = (texts: readonly string[], idf: (n: number) => number, kept?: KeptCounts): SparseVector[] => {
    // The texts' numbers one after another in one pair of arrays (one allocation per call, not two
    // per text), each vector a view of its part.
    let allIndices = new Uint32Array(Math.max(64, texts.length * 128));
    let allValues = new Float32Array(allIndices.length);
    const ends = new Uint32Array(texts.length);
    let at = 0;
    for (let t = 0; t < texts.length; t++) {
      if (!kept?.reload(table, t)) load(texts[t]);
      addLoaded(dense, idf, marks);
      if (allIndices.length < at + dim) {
        const size = Math.max(at + dim, allIndices.length * 2);
        const indices = new Uint32Array(size);
        const values = new Float32Array(size);
        indices.set(allIndices.subarray(0, at));
        values.set(allValues.subarray(0, at));
        allIndices = indices;
        allValues = values;
      }
      for (let word = 0; word < marks.length; word++) {
        let bits = marks[word];
        while (bits !== 0) {
          const low = bits & -bits;
          const position = word * 32 + 31 - Math.clz32(low);
          bits ^= low;
          if (dense[position] !== 0) {
            allIndices[at] = position;
            allValues[at++] = dense[position];
            dense[position] = 0;
          }
        }
      }
      // A position written whose weights cancelled out (not among the indices) is 0 already.
      marks.fill(0);
      ends[t] = at;
    }
    const vectors: SparseVector[] = new Array(texts.length);
    for (let t = 0; t < texts.length; t++) {
      const start = t ? ends[t - 1] : 0;
      vectors[t] = { dim, indices: new Uint32Array(allIndices.buffer, start * 4, ends[t] - start), values: new Float32Array(allValues.buffer, start * 4, ends[t] - start) };
    }
    return vectors;
  };

  // The vectors come from the texts alone, with no I/O: callers that cannot wait (a scorer) embed synchronously.
  const ownIdf = (texts: readonly string[]) => {
    const df = frequencies(texts);
    return (n: number) => idfOf(df.get(table.hashes[n])!, texts.length);
  };
  const embedSync = (texts: string[]): Float32Array[] => denseOf(texts, ownIdf(texts));
  /** The embedder fitted on `corpus`, of document frequencies `df`, and its idf by feature number. */
  const fitted = (corpus: readonly string[], df: Map<number, number>): { embedder: LexicalEmbedder; idf: (n: number) => number } => {
    const idf = fixedIdf((hash) => df.get(hash) ?? 0, corpus.length);
    const dense = (texts: string[]) => denseOf(texts, idf);
    return {
      idf,
      embedder: {
        id: `${id}:fitted-${fnv1a(corpus.join('\u0000')).toString(16)}`,
        dim,
        embedSync: dense,
        embed: async (texts) => dense(texts),
        embedSparse: (texts) => sparseOf(texts, idf),
      },
    };
  };
  const id = `lexical:v1:${dim}:${ngrams.join('-')}:${shares.map((s) => s.toFixed(3)).join('-')}${identifierActions ? '' : ':nouns'}${synonymsTag}`;
  return {
    id,
    dim,
    embedSync,
    async embed(texts: string[]): Promise<Float32Array[]> {
      return embedSync(texts);
    },
    embedSparse(texts: string[]): SparseVector[] {
      return sparseOf(texts, ownIdf(texts));
    },
    fit: (corpus) => fitted(corpus, frequencies(corpus)).embedder,
    fitSparse(corpus: string[]): { embedder: LexicalEmbedder; vectors: SparseVector[] } {
      const kept = new KeptCounts();
      const { embedder, idf } = fitted(corpus, frequencies(corpus, kept));
      return { embedder, vectors: sparseOf(corpus, idf, kept) };
    },
  };
}
