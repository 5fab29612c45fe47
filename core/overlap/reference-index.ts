import type { Embedder, SparseVector } from '../embed/types.ts';
import type { Sample } from '../records.ts';
import { Rng } from '../rng.ts';
import { callSignatures } from './calls.ts';
import type { OverlapLevel } from './config.ts';
import { Postings } from './postings.ts';
import { ngramHashes, sortedNgramHashes, userText, words } from './text.ts';

/**
 * One reference set (a released test set, a version, a file of samples) indexed for overlap, so a
 * checked sample is compared with the few reference samples it can match, never with all of them:
 *
 *   - n-grams: each n-gram's hash → the reference samples that have it (sorted arrays: 4 bytes a
 *     pair and 12 a distinct hash); a sample's shared n-grams are counted per reference sample it meets there;
 *   - calls: the exact signature → reference samples, each loose call signature → reference samples;
 *   - embedding: each reference vector quantised to one byte per non-zero number (the lexical
 *     embedder's vectors are sparse), found through two indexes whose candidates are then compared
 *     by cosine: the words of the text, rarest first (a paraphrase keeps most of its rare words), and
 *     random-hyperplane LSH of the vector (16 bands of 8 bits: a model's paraphrase that shares no
 *     word still shares buckets).
 *
 * Memory: the arrays above, the reference ids, and while it is built the reference texts (the
 * lexical embedder is fitted on them, so that vectors of texts embedded batch by batch compare).
 */

export interface ReferenceSet {
  /** How reports name it: a released set's name, `<dataset>@<version>`, a file's path. */
  name: string;
  kind: 'released' | 'version' | 'file';
  /** Where it was read from. */
  path: string;
  /** Its samples, read again on each call. */
  samples: () => Iterable<Sample>;
}

export interface IndexSettings {
  ngrams: readonly number[];
  levels: readonly OverlapLevel[];
  /** The embedder of the embedding level (unused when `levels` lacks it). */
  embedder?: Embedder;
}

/** A sample's score at one level against its closest reference sample (`ref` its position; -1 with no candidate). */
export interface LevelMatch {
  score: number;
  ref: number;
}

/**
 * A batch's scores against one reference set, sample by sample, level by level: sample i's at the
 * level at position l of `levels` is `scores[i * levels.length + l]`, against reference sample
 * `refs[…]` (-1: none; score 0).
 */
export interface BatchMatches {
  levels: readonly OverlapLevel[];
  scores: Float64Array;
  refs: Int32Array;
}

/** An n-gram or a loose call met in more reference samples than this is boilerplate: not evidence of a copy, and not counted. */
export const COMMON_POSTINGS = 2000;
/** Reference samples compared by cosine for one text: the best of each candidate index. */
const CANDIDATES = 24;
/** Postings read through the word index for one text (the rarest words first; the first word always): a reworded text keeps its rare words. */
const WORD_BUDGET = 2_000;
const BANDS = 16;
const BAND_BITS = 8;
const EMBED_BATCH = 512;

/** How a reference sample is named in a hit: a released record by its file and own id, any other by its sample id. */
export function referenceId(sample: Sample, kind: ReferenceSet['kind']): string {
  const source = sample.meta.source;
  if (kind !== 'released' || !source?.id) return sample.id;
  return source.file ? `${source.file}#${source.id}` : source.id;
}

/** Reference vectors, each as its non-zero numbers quantised to a byte and scaled back on use. */
class QuantisedVectors {
  private offsets: number[] = [0];
  private indexChunks: Uint32Array[] = [];
  private valueChunks: Int8Array[] = [];
  private scaleList: number[] = [];
  private normList: number[] = [];
  indices: Uint16Array | Uint32Array = new Uint32Array(0);
  values = new Int8Array(0);
  starts = new Uint32Array(0);
  scales = new Float32Array(0);
  norms = new Float32Array(0);

  /** Adds a vector given by its non-zero numbers (positions ascending). */
  add(vector: SparseVector): void {
    const nonZero = vector.indices.length;
    let max = 0;
    for (let k = 0; k < nonZero; k++) {
      const a = Math.abs(vector.values[k]);
      if (a > max) max = a;
    }
    // A copy: an embedder's vectors may be views of a larger array (the lexical one's are), not to be kept whole.
    const indices = vector.indices.slice();
    const values = new Int8Array(nonZero);
    const scale = max > 0 ? max / 127 : 0;
    let norm = 0;
    for (let k = 0; k < nonZero; k++) {
      values[k] = Math.round(vector.values[k] / (scale || 1));
      norm += values[k] * values[k];
    }
    this.indexChunks.push(indices);
    this.valueChunks.push(values);
    this.offsets.push(this.offsets[this.offsets.length - 1] + nonZero);
    this.scaleList.push(scale);
    this.normList.push(Math.sqrt(norm) * scale);
  }

  freeze(): void {
    const total = this.offsets[this.offsets.length - 1];
    const dimLimit = this.indexChunks.reduce((max, chunk) => (chunk.length ? Math.max(max, chunk[chunk.length - 1]) : max), 0);
    // Indices of vectors up to 65,536 numbers long take two bytes each.
    const indices = dimLimit < 65_536 ? new Uint16Array(total) : new Uint32Array(total);
    this.values = new Int8Array(total);
    let at = 0;
    this.indexChunks.forEach((chunk, i) => {
      indices.set(chunk, at);
      this.values.set(this.valueChunks[i], at);
      at += chunk.length;
    });
    this.indices = indices;
    this.starts = Uint32Array.from(this.offsets);
    this.scales = Float32Array.from(this.scaleList);
    this.norms = Float32Array.from(this.normList);
    this.indexChunks = [];
    this.valueChunks = [];
    this.offsets = [];
    this.scaleList = [];
    this.normList = [];
  }

  /** The cosine of a dense vector (of norm `norm`) with reference vector `ref`. */
  cosine(query: Float64Array, norm: number, ref: number): number {
    const refNorm = this.norms[ref];
    if (!norm || !refNorm) return 0;
    const { indices, values } = this;
    const end = this.starts[ref + 1];
    let dot = 0;
    for (let k = this.starts[ref]; k < end; k++) dot += query[indices[k]] * values[k];
    return (dot * this.scales[ref]) / (norm * refNorm);
  }

  get bytes(): number {
    return this.indices.byteLength + this.values.byteLength + this.starts.byteLength + this.scales.byteLength + this.norms.byteLength;
  }
}

/** Random hyperplanes (seeded): a vector's side of each, in bands, as LSH bucket keys. */
class Hyperplanes {
  /** The planes' numbers by dimension (dimension d's number of every plane together): a vector's entries meet a band's eight planes in one place. */
  private byDim = new Float32Array(0);
  private readonly bandKeys = new Int32Array(BANDS);
  /** Scratch per vector: where each non-zero entry's numbers start in `byDim`, and its value. */
  private at = new Int32Array(256);
  private entries = new Float64Array(256);
  private dim = 0;

  /**
   * The band keys of a vector given by its non-zero entries (in an array the next call writes over).
   * A band's eight sums are kept apart while the entries are read in order, so each plane's sum is
   * added up in the order of the entries (the same number as plane by plane), in registers, not memory
   * (a band is eight planes: BAND_BITS).
   */
  keys(indices: ArrayLike<number>, values: ArrayLike<number>, dim: number): Int32Array {
    if (dim !== this.dim) this.draw(dim);
    const planes = BANDS * BAND_BITS;
    const count = indices.length;
    if (this.at.length < count) {
      this.at = new Int32Array(count * 2);
      this.entries = new Float64Array(count * 2);
    }
    const { byDim, at, entries } = this;
    for (let k = 0; k < count; k++) {
      at[k] = indices[k] * planes;
      entries[k] = values[k];
    }
    const keys = this.bandKeys;
    for (let band = 0; band < BANDS; band++) {
      const first = band * BAND_BITS;
      let s0 = 0;
      let s1 = 0;
      let s2 = 0;
      let s3 = 0;
      let s4 = 0;
      let s5 = 0;
      let s6 = 0;
      let s7 = 0;
      for (let k = 0; k < count; k++) {
        const p = at[k] + first;
        const value = entries[k];
        s0 += byDim[p] * value;
        s1 += byDim[p + 1] * value;
        s2 += byDim[p + 2] * value;
        s3 += byDim[p + 3] * value;
        s4 += byDim[p + 4] * value;
        s5 += byDim[p + 5] * value;
        s6 += byDim[p + 6] * value;
        s7 += byDim[p + 7] * value;
      }
      const bits = (s0 > 0 ? 1 : 0) | (s1 > 0 ? 2 : 0) | (s2 > 0 ? 4 : 0) | (s3 > 0 ? 8 : 0) | (s4 > 0 ? 16 : 0) | (s5 > 0 ? 32 : 0) | (s6 > 0 ? 64 : 0) | (s7 > 0 ? 128 : 0);
      keys[band] = band * (1 << BAND_BITS) + bits;
    }
    return keys;
  }

  private draw(dim: number): void {
    const rng = new Rng(0x0ddba11);
    const planes = BANDS * BAND_BITS;
    this.dim = dim;
    // Held as floats (half the memory the sums read; a float read is the same double in the sums).
    this.byDim = new Float32Array(planes * dim);
    // Gaussian directions (Box–Muller) make the bits depend on the angle between vectors alone; drawn plane by plane.
    for (let p = 0; p < planes; p++) for (let d = 0; d < dim; d++) this.byDim[d * planes + p] = Math.fround(Math.sqrt(-2 * Math.log(1 - rng.next())) * Math.cos(2 * Math.PI * rng.next()));
  }
}

/** Whether `value` is among the first `count` numbers of `array`. */
function among(array: Int32Array, count: number, value: number): boolean {
  for (let k = 0; k < count; k++) if (array[k] === value) return true;
  return false;
}

/** A copy of `array` twice as long. */
function grown(array: Uint32Array): Uint32Array<ArrayBuffer> {
  const copy = new Uint32Array(array.length * 2);
  copy.set(array);
  return copy;
}

/** A dense vector by its non-zero numbers (for an embedder without a sparse form). */
function sparseOf(vector: ArrayLike<number>): SparseVector {
  let nonZero = 0;
  for (let k = 0; k < vector.length; k++) if (vector[k] !== 0) nonZero++;
  const indices = new Uint32Array(nonZero);
  const values = new Float32Array(nonZero);
  let at = 0;
  for (let k = 0; k < vector.length; k++) {
    if (vector[k] === 0) continue;
    indices[at] = k;
    values[at++] = vector[k];
  }
  return { dim: vector.length, indices, values };
}

/** The vectors of texts by their non-zero numbers: the embedder's sparse form when it has one. */
async function sparseVectors(embedder: Embedder, texts: string[]): Promise<SparseVector[]> {
  if (embedder.embedSparse) return embedder.embedSparse(texts);
  return (await embedder.embed(texts)).map((vector) => sparseOf(Float32Array.from(vector)));
}

/**
 * The `kept.length` positions with the highest scores among the first `count` of `touched` (score 0
 * left out; ties: the lower position), kept by insertion into `kept`, never sorting them all; returns how many were kept.
 */
function best(touched: ArrayLike<number>, count: number, score: ArrayLike<number>, kept: Int32Array): number {
  const limit = kept.length;
  let size = 0;
  for (let k = 0; k < count; k++) {
    const i = touched[k];
    const s = score[i];
    if (s <= 0) continue;
    if (size === limit) {
      const last = kept[limit - 1];
      if (!(s > score[last] || (s === score[last] && i < last))) continue;
    }
    let at = size === limit ? limit - 1 : size++;
    while (at > 0) {
      const prior = kept[at - 1];
      if (!(s > score[prior] || (s === score[prior] && i < prior))) break;
      kept[at] = prior;
      at--;
    }
    kept[at] = i;
  }
  return size;
}

export class ReferenceIndex {
  readonly ids: string[] = [];
  private readonly grams = new Map<number, Postings>();
  private readonly exactCalls = new Postings();
  private readonly nearCalls = new Postings();
  private nearSizes: number[] | Uint16Array = [];
  /** The reference texts' words, each by its number: the reference samples that have it (keyed by the number, so a number is its slot). */
  private readonly words = new Postings();
  private readonly wordNumbers = new Map<string, number>();
  /** A word's weight in the word index's sums by its number: its idf among the reference samples. */
  private wordWeights = new Float64Array(0);
  private readonly buckets = new Postings();
  private readonly vectors = new QuantisedVectors();
  private readonly planes = new Hyperplanes();
  private embedder?: Embedder;
  private dim = 0;
  /** Scratch per query, one number per reference sample. */
  private scratch = new Float64Array(0);
  private bandHits = new Uint8Array(0);
  private counts = new Uint32Array(0);
  /** The reference samples a query met, in the order met (each once). */
  private touched = new Int32Array(0);
  private dense = new Float64Array(0);
  /** Scratch per query: the candidates of the word index and of the buckets. */
  private readonly byWords = new Int32Array(CANDIDATES);
  private readonly byBuckets = new Int32Array(CANDIDATES);
  /** Scratch per query: its distinct words in the word index (by number), rarest first. */
  private rare = new Uint32Array(64);
  /** Scratch per query: the query that last met each word (by number), to take a word once per query. */
  private wordMet = new Uint32Array(0);
  private queries = 0;
  /** Scratch per query: its n-grams' hashes. */
  private gramHashes = new Float64Array(256);

  private constructor(
    readonly set: Omit<ReferenceSet, 'samples'>,
    private readonly settings: IndexSettings,
  ) {}

  /** Reads a reference set once, indexes it, and (for the embedding level) embeds its texts batch by batch. */
  static async build(set: ReferenceSet, settings: IndexSettings): Promise<ReferenceIndex> {
    const index = new ReferenceIndex({ name: set.name, kind: set.kind, path: set.path }, settings);
    const texts: string[] = [];
    const embedding = settings.levels.includes('embedding');
    for (const sample of set.samples()) {
      const ref = index.ids.length;
      index.ids.push(referenceId(sample, set.kind));
      const text = userText(sample);
      const tokens = words(text);
      for (const n of settings.ngrams) {
        let postings = index.grams.get(n);
        if (!postings) index.grams.set(n, (postings = new Postings()));
        for (const gram of ngramHashes(tokens, n)) postings.add(gram, ref);
      }
      const calls = callSignatures(sample);
      if (calls.exact !== null) index.exactCalls.add(calls.exact, ref);
      const near = [...new Set(calls.near)];
      for (const call of near) index.nearCalls.add(call, ref);
      (index.nearSizes as number[]).push(near.length);
      if (embedding) {
        for (const word of new Set(tokens)) {
          let number = index.wordNumbers.get(word);
          if (number === undefined) index.wordNumbers.set(word, (number = index.wordNumbers.size));
          index.words.add(number, ref);
        }
        texts.push(tokens.length ? text : '');
      }
    }
    for (const postings of [...index.grams.values(), index.exactCalls, index.nearCalls, index.words]) postings.freeze();
    index.nearSizes = Uint16Array.from(index.nearSizes as number[], (n) => Math.min(n, 65_535));
    // Every number has postings, so a word's number is its slot among the keys.
    const wordStarts = index.words.starts;
    index.wordWeights = Float64Array.from({ length: index.wordNumbers.size }, (_, w) => Math.log(1 + index.ids.length / (wordStarts[w + 1] - wordStarts[w])));
    index.wordMet = new Uint32Array(index.wordNumbers.size);
    if (embedding && settings.embedder) await index.embedReferences(texts, settings.embedder);
    index.scratch = new Float64Array(index.ids.length);
    index.bandHits = new Uint8Array(index.ids.length);
    index.counts = new Uint32Array(index.ids.length);
    index.touched = new Int32Array(index.ids.length);
    return index;
  }

  private async embedReferences(texts: string[], embedder: Embedder): Promise<void> {
    const corpus = texts.filter(Boolean);
    // An embedder that can gives the corpus' vectors as it is fitted (each text read once).
    const fitted = embedder.fitSparse?.(corpus);
    this.embedder = fitted?.embedder ?? embedder.fit?.(corpus) ?? embedder;
    const none: SparseVector = { dim: 0, indices: new Uint32Array(0), values: new Float32Array(0) };
    let embedded = 0;
    for (let start = 0; start < texts.length; start += EMBED_BATCH) {
      const batch = texts.slice(start, start + EMBED_BATCH);
      const given = batch.filter(Boolean);
      const vectors = fitted ? fitted.vectors.slice(embedded, embedded + given.length) : given.length ? await sparseVectors(this.embedder, given) : [];
      embedded += given.length;
      let next = 0;
      for (let i = 0; i < batch.length; i++) {
        const vector = batch[i] ? vectors[next++] : undefined;
        if (vector) this.dim = vector.dim;
        this.vectors.add(vector ?? none);
        if (!vector) continue;
        for (const key of this.planes.keys(vector.indices, vector.values, vector.dim)) this.buckets.add(key, start + i);
      }
    }
    this.vectors.freeze();
    this.buckets.freeze();
  }

  /** Bytes the index holds (its typed arrays; the ids besides). */
  get bytes(): number {
    return [...this.grams.values(), this.exactCalls, this.nearCalls, this.words, this.buckets].reduce((sum, p) => sum + p.bytes, 0) + this.vectors.bytes + this.nearSizes.length * 2;
  }

  /** Whether `matchNow` can be used: the embedding level is not measured, or its embedder embeds at once (no I/O). */
  get synchronous(): boolean {
    return !this.embeds || !!this.embedder!.embedSparse;
  }

  /** The embedding level is measured with vectors (an embedder, and a reference text with words). */
  private get embeds(): boolean {
    return this.settings.levels.includes('embedding') && !!this.embedder && this.dim > 0;
  }

  /** Each sample's best score per level against this reference set. */
  async match(samples: readonly Sample[]): Promise<BatchMatches> {
    const query = this.queryOf(samples);
    return this.scored(samples, query, query.embedded.length ? await sparseVectors(this.embedder!, query.embedded.map((i) => query.texts[i])) : []);
  }

  /** `match` at once, when the index is `synchronous`. */
  matchNow(samples: readonly Sample[]): BatchMatches {
    if (!this.synchronous) throw new Error(`the overlap index of ${this.set.name} embeds through ${this.embedder!.id}, which cannot embed at once: use match`);
    const query = this.queryOf(samples);
    return this.scored(samples, query, query.embedded.length ? this.embedder!.embedSparse!(query.embedded.map((i) => query.texts[i])) : []);
  }

  /** The samples' user texts, their words, and which of them are embedded: a text without words is not, its vector would stand for nothing but emptiness. */
  private queryOf(samples: readonly Sample[]): { texts: string[]; tokens: string[][]; embedded: number[] } {
    const texts = samples.map(userText);
    const tokens = texts.map(words);
    const embedded: number[] = [];
    if (this.embeds) for (let i = 0; i < tokens.length; i++) if (tokens[i].length) embedded.push(i);
    return { texts, tokens, embedded };
  }

  private scored(samples: readonly Sample[], { tokens, embedded }: { tokens: string[][]; embedded: number[] }, vectors: readonly SparseVector[]): BatchMatches {
    const { levels } = this.settings;
    const width = levels.length;
    const scores = new Float64Array(samples.length * width);
    const refs = new Int32Array(samples.length * width).fill(-1);
    const put = (i: number, at: number, match: LevelMatch) => {
      scores[i * width + at] = match.score;
      refs[i * width + at] = match.ref;
    };
    for (const n of this.settings.ngrams) {
      const at = levels.indexOf(`ngram-${n}`);
      if (at < 0) continue;
      const postings = this.grams.get(n)!;
      for (let i = 0; i < tokens.length; i++) {
        if (this.gramHashes.length < tokens[i].length) this.gramHashes = new Float64Array(tokens[i].length * 2);
        put(i, at, this.matchGrams(this.gramHashes, sortedNgramHashes(tokens[i], n, this.gramHashes), postings));
      }
    }
    const exactAt = levels.indexOf('call-exact');
    const nearAt = levels.indexOf('call-near');
    if (exactAt >= 0 || nearAt >= 0) {
      for (let i = 0; i < samples.length; i++) {
        const calls = callSignatures(samples[i]);
        if (exactAt >= 0 && calls.exact !== null) {
          const slot = this.exactCalls.slot(calls.exact);
          if (slot >= 0) put(i, exactAt, { score: 1, ref: this.exactCalls.sorted[this.exactCalls.starts[slot]] });
        }
        if (nearAt >= 0) put(i, nearAt, this.matchNear(calls.near));
      }
    }
    const embeddingAt = levels.indexOf('embedding');
    if (embeddingAt >= 0) for (let k = 0; k < embedded.length; k++) put(embedded[k], embeddingAt, this.matchVector(vectors[k], tokens[embedded[k]]));
    return { levels, scores, refs };
  }

  /** The share of the first `count` of `grams` (distinct n-gram hashes) one reference sample has (boilerplate grams left out of both sides). */
  private matchGrams(grams: Float64Array, count: number, postings: Postings): LevelMatch {
    const counts = this.counts;
    const touched = this.touched;
    const values = postings.sorted;
    let met = 0;
    let counted = 0;
    const starts = postings.starts;
    for (let g = 0; g < count; g++) {
      const slot = postings.slot(grams[g]);
      if (slot < 0) {
        counted++;
        continue;
      }
      const start = starts[slot];
      const end = starts[slot + 1];
      if (end - start > COMMON_POSTINGS) continue;
      counted++;
      for (let k = start; k < end; k++) {
        const ref = values[k];
        if (counts[ref]++ === 0) touched[met++] = ref;
      }
    }
    // The most shared; of equals, the first reference sample.
    let ref = -1;
    let most = 0;
    for (let k = 0; k < met; k++) {
      const r = touched[k];
      const n = counts[r];
      counts[r] = 0;
      if (n > most || (n === most && r < ref)) [ref, most] = [r, n];
    }
    return { score: counted ? most / counted : 0, ref };
  }

  /** The Jaccard overlap of a sample's loose calls (sorted; each counted once) with the reference sample sharing most of them. */
  private matchNear(calls: readonly number[]): LevelMatch {
    const shared = this.counts;
    const touched = this.touched;
    const postings = this.nearCalls;
    const values = postings.sorted;
    const starts = postings.starts;
    let met = 0;
    let distinct = 0;
    for (let c = 0; c < calls.length; c++) {
      const call = calls[c];
      if (c > 0 && call === calls[c - 1]) continue;
      distinct++;
      const slot = postings.slot(call);
      if (slot < 0) continue;
      const start = starts[slot];
      const end = starts[slot + 1];
      if (end - start > COMMON_POSTINGS) continue;
      for (let k = start; k < end; k++) {
        const ref = values[k];
        if (shared[ref]++ === 0) touched[met++] = ref;
      }
    }
    let result: LevelMatch = { score: 0, ref: -1 };
    for (let k = 0; k < met; k++) {
      const ref = touched[k];
      const n = shared[ref];
      shared[ref] = 0;
      const score = n / (distinct + this.nearSizes[ref] - n);
      if (score > result.score || (score === result.score && ref < result.ref)) result = { score, ref };
    }
    return result;
  }

  /**
   * The distinct words of a text the reference samples have, by number, rarest first (of equals,
   * the first in the text), in `rare`; returns how many.
   */
  private byRarity(tokens: readonly string[]): number {
    if (++this.queries === 0xffffffff) {
      this.wordMet.fill(0);
      this.queries = 1;
    }
    const query = this.queries;
    const { wordNumbers, wordMet } = this;
    const starts = this.words.starts;
    let found = 0;
    for (let t = 0; t < tokens.length; t++) {
      const word = wordNumbers.get(tokens[t]);
      if (word === undefined || wordMet[word] === query) continue;
      wordMet[word] = query;
      const df = starts[word + 1] - starts[word];
      if (found === this.rare.length) this.rare = grown(this.rare);
      const rare = this.rare;
      // Insertion keeps the order stable: after every word as rare or rarer.
      let at = found++;
      while (at > 0 && starts[rare[at - 1] + 1] - starts[rare[at - 1]] > df) {
        rare[at] = rare[at - 1];
        at--;
      }
      rare[at] = word;
    }
    return found;
  }

  /** The closest reference vector among the candidates of the word index and the LSH buckets. */
  private matchVector(vector: SparseVector, tokens: string[]): LevelMatch {
    const { indices, values } = vector;
    let norm = 0;
    for (let k = 0; k < values.length; k++) norm += values[k] * values[k];
    norm = Math.sqrt(norm);
    const scratch = this.scratch;
    const touched = this.touched;
    let reached = 0;
    // Words, rarest first, until the budget of postings read is spent.
    let read = 0;
    const found = this.byRarity(tokens);
    const { rare, wordWeights } = this;
    const wordRefs = this.words.sorted;
    const wordStarts = this.words.starts;
    for (let w = 0; w < found; w++) {
      const word = rare[w];
      const start = wordStarts[word];
      const end = wordStarts[word + 1];
      const df = end - start;
      if (read > 0 && read + df > WORD_BUDGET) break;
      read += df;
      const weight = wordWeights[word];
      for (let k = start; k < end; k++) {
        const ref = wordRefs[k];
        if (scratch[ref] === 0) touched[reached++] = ref;
        scratch[ref] += weight;
      }
    }
    const byWords = this.byWords;
    const wordCount = best(touched, reached, scratch, byWords);
    for (let k = 0; k < reached; k++) scratch[touched[k]] = 0;
    const hits = this.bandHits;
    let met = 0;
    // A bucket far fuller than the average (of 2^BAND_BITS a band) says little: it is passed over.
    const fullBucket = Math.max(64, this.ids.length >> (BAND_BITS - 3));
    const buckets = this.buckets;
    const bucketRefs = buckets.sorted;
    const bucketStarts = buckets.starts;
    const keys = this.planes.keys(indices, values, vector.dim);
    for (let band = 0; band < keys.length; band++) {
      const slot = buckets.slot(keys[band]);
      if (slot < 0) continue;
      const start = bucketStarts[slot];
      const end = bucketStarts[slot + 1];
      if (end - start > fullBucket) continue;
      for (let k = start; k < end; k++) {
        const ref = bucketRefs[k];
        if (hits[ref] === 0) touched[met++] = ref;
        hits[ref]++;
      }
    }
    const byBuckets = this.byBuckets;
    const bucketCount = best(touched, met, hits, byBuckets);
    for (let k = 0; k < met; k++) hits[touched[k]] = 0;
    // The query as a dense vector for the cosines (scratch, cleared after).
    const query = this.dense.length === vector.dim ? this.dense : (this.dense = new Float64Array(vector.dim));
    for (let k = 0; k < indices.length; k++) query[indices[k]] = values[k];
    let score = 0;
    let ref = -1;
    for (let c = 0; c < wordCount + bucketCount; c++) {
      const candidate = c < wordCount ? byWords[c] : byBuckets[c - wordCount];
      // A candidate of both indexes is compared once.
      if (c >= wordCount && among(byWords, wordCount, candidate)) continue;
      const cosine = this.vectors.cosine(query, norm, candidate);
      if (cosine > score || (cosine === score && candidate < ref)) {
        score = cosine;
        ref = candidate;
      }
    }
    for (let k = 0; k < indices.length; k++) query[indices[k]] = 0;
    return { score: Math.min(1, Math.max(0, score)), ref };
  }
}
