import { editDistance } from '../edit-distance.ts';
import { UserError } from '../errors.ts';

export interface NearDuplicateOptions {
  /** Levenshtein ratio 1 − distance / longer length at or above which two texts are near-duplicates (default 0.9). */
  ratio?: number;
  /** Text → the form compared (default `normalizeText`). */
  normalize?: (text: string) => string;
}

export interface DuplicateMatch {
  /** The dropped text. */
  index: number;
  /** The kept text it duplicates (always earlier in the input). */
  duplicateOf: number;
  kind: 'exact' | 'near';
  /** Levenshtein ratio of the two normalised texts (1 for exact). */
  ratio: number;
}

export interface NearDuplicateResult {
  /** Indices kept, ascending. */
  kept: number[];
  /** One entry per dropped text, by index. */
  duplicates: DuplicateMatch[];
  stats: { texts: number; distinct: number; candidates: number; comparisons: number; nearPairs: number };
}

/** Lower-case, NFKC, punctuation and symbols to spaces, whitespace collapsed. */
export function normalizeText(text: string): string {
  return text.normalize('NFKC').toLowerCase().replace(/[\p{P}\p{S}]+/gu, ' ').replace(/\s+/g, ' ').trim();
}

/** 1 − Levenshtein distance / length of the longer text (1 for two empty texts). */
export function levenshteinRatio(a: string, b: string): number {
  const longer = Math.max(a.length, b.length);
  return longer === 0 ? 1 : 1 - editDistance(a, b) / longer;
}

export function checkRatio(ratio: number, where = 'near-duplicate ratio'): void {
  if (!Number.isFinite(ratio) || ratio <= 0 || ratio > 1) throw new UserError(`${where} ${ratio} is out of range: give a Levenshtein ratio above 0 and at most 1 (e.g. 0.9)`);
}

/** Piece starts and lengths when a string of length `length` is cut into `parts` pieces (longer pieces last). */
function cutInto(length: number, parts: number): { start: number; length: number }[] {
  const base = Math.floor(length / parts);
  const longer = length - base * parts;
  const out: { start: number; length: number }[] = [];
  let start = 0;
  for (let i = 0; i < parts; i++) {
    const size = base + (i >= parts - longer ? 1 : 0);
    out.push({ start, length: size });
    start += size;
  }
  return out;
}

/**
 * Every pair of distinct strings whose Levenshtein ratio is at least `ratio`, without comparing all
 * pairs and without missing any: a partition join (Li et al., "Pass-Join", VLDB 2011). A pair within
 * ratio r has at most K = ⌊(1 − r)·L⌋ edits, L the longer length. Cut the shorter string into K + 1
 * pieces: one piece escapes every edit, so it appears verbatim in the longer string near its own
 * position (the multi-match-aware window of the paper bounds where). Strings are visited shortest
 * first; each looks up its substrings in the pieces of the shorter strings already indexed (for
 * each shorter length within reach), and only those candidates pass a character-count bound and
 * then a Levenshtein computation (fast-levenshtein).
 */
export function similarPairs(strings: readonly string[], ratio: number): { pairs: [number, number, number][]; candidates: number; comparisons: number } {
  checkRatio(ratio);
  const n = strings.length;
  const editsFor = (length: number) => Math.floor((1 - ratio) * length + 1e-9);
  const order = Array.from(strings.keys()).sort((a, b) => strings[a].length - strings[b].length || a - b);
  // Pieces are looked up by a polynomial hash (mod 2³²) of their text; a collision only adds a candidate.
  const maxLength = strings.reduce((max, text) => Math.max(max, text.length), 0);
  const powers = new Uint32Array(maxLength + 1);
  powers[0] = 1;
  for (let k = 1; k <= maxLength; k++) powers[k] = Math.imul(powers[k - 1], HASH_BASE) >>> 0;
  const prefixHashes: Uint32Array[] = strings.map((text) => {
    const h = new Uint32Array(text.length + 1);
    for (let k = 0; k < text.length; k++) h[k + 1] = (Math.imul(h[k], HASH_BASE) + text.charCodeAt(k)) >>> 0;
    return h;
  });
  const hashOf = (i: number, start: number, length: number) => (prefixHashes[i][start + length] - Math.imul(prefixHashes[i][start], powers[length])) >>> 0;
  const histograms = new Int32Array(n * 64);
  strings.forEach((text, i) => {
    for (let k = 0; k < text.length; k++) histograms[i * 64 + (text.charCodeAt(k) & 63)]++;
  });

  // (length, edit budget) → piece number → piece hash → strings of that length, cut into budget + 1 pieces
  const index = new Map<number, Map<number, number[]>[]>();
  const indexKey = (length: number, edits: number) => length * 65536 + edits;
  const cuts = new Map<number, { start: number; length: number }[]>();
  const cutOf = (length: number, parts: number) => {
    let cut = cuts.get(indexKey(length, parts));
    if (!cut) cuts.set(indexKey(length, parts), (cut = cutInto(length, parts)));
    return cut;
  };
  const ofLength = new Map<number, number[]>();
  const lastProbe = new Int32Array(n).fill(-1);
  const pairs: [number, number, number][] = [];
  let candidates = 0;
  let comparisons = 0;

  /** r: an earlier (shorter or equal) string, s: the string probing with edit budget `edits`. */
  const verify = (r: number, s: number, edits: number) => {
    if (lastProbe[r] === s) return;
    lastProbe[r] = s;
    candidates++;
    if (bagDistance(histograms, r * 64, s * 64) > edits) return;
    comparisons++;
    const similarity = levenshteinRatio(strings[r], strings[s]);
    if (similarity >= ratio) pairs.push(r < s ? [r, s, similarity] : [s, r, similarity]);
  };

  for (const s of order) {
    const ls = strings[s].length;
    const edits = editsFor(ls);
    // Probe: shorter (or equal) strings r with ls − lr ≤ edits, cut for this string's edit budget.
    for (let lr = Math.max(0, ls - edits); lr <= ls && edits > 0; lr++) {
      if (lr < edits + 1) {
        // Too short to cut into edits + 1 pieces (only when ratio ≤ ½): compare directly.
        for (const r of ofLength.get(lr) ?? []) verify(r, s, edits);
        continue;
      }
      const pieces = index.get(indexKey(lr, edits));
      if (!pieces) continue;
      const delta = ls - lr;
      const cut = cutOf(lr, edits + 1);
      for (let p = 0; p < cut.length; p++) {
        const { start, length } = cut[p];
        const i = p + 1;
        const from = Math.max(0, start - (i - 1), start + delta - (edits + 1 - i));
        const to = Math.min(ls - length, start + (i - 1), start + delta + (edits + 1 - i));
        const table = pieces[p];
        for (let at = from; at <= to; at++) {
          const list = table.get(hashOf(s, at, length));
          if (list) for (const r of list) verify(r, s, edits);
        }
      }
    }
    const same = ofLength.get(ls);
    if (same) same.push(s);
    else ofLength.set(ls, [s]);
    // Index: cut this string for every edit budget a longer partner (up to ls / ratio) can have.
    for (let k = Math.max(1, editsFor(ls)); k <= editsFor(Math.floor(ls / ratio + 1e-9)) && k + 1 <= ls; k++) {
      let pieces = index.get(indexKey(ls, k));
      if (!pieces) index.set(indexKey(ls, k), (pieces = Array.from({ length: k + 1 }, () => new Map<number, number[]>())));
      const cut = cutOf(ls, k + 1);
      for (let p = 0; p < cut.length; p++) {
        const key = hashOf(s, cut[p].start, cut[p].length);
        const list = pieces[p].get(key);
        if (list) list.push(s);
        else pieces[p].set(key, [s]);
      }
    }
  }
  pairs.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  return { pairs, candidates, comparisons };
}

const HASH_BASE = 0x01000193;

/** A lower bound of the edit distance from character counts (bag distance; characters bucketed by code mod 64). */
function bagDistance(histograms: Int32Array, a: number, b: number): number {
  let extra = 0;
  let missing = 0;
  for (let k = 0; k < 64; k++) {
    const d = histograms[a + k] - histograms[b + k];
    if (d > 0) extra += d;
    else missing -= d;
  }
  return Math.max(extra, missing);
}

/**
 * Exact duplicates (equal after normalisation), then near-duplicates (Levenshtein ratio ≥ ratio).
 * Deterministic: texts are taken in input order and each is kept unless it matches a text kept
 * before it; a dropped text names the earliest kept text it matches.
 */
export function findNearDuplicates(texts: readonly string[], options: NearDuplicateOptions = {}): NearDuplicateResult {
  const ratio = options.ratio ?? 0.9;
  checkRatio(ratio);
  const normalize = options.normalize ?? normalizeText;
  const firstOf = new Map<string, number>();
  const distinct: string[] = [];
  const distinctIndex: number[] = []; // distinct string → its first text
  const exactOf = new Int32Array(texts.length).fill(-1);
  texts.forEach((text, i) => {
    const key = normalize(text);
    const first = firstOf.get(key);
    if (first === undefined) {
      firstOf.set(key, i);
      distinct.push(key);
      distinctIndex.push(i);
    } else exactOf[i] = first;
  });

  const { pairs, candidates, comparisons } = similarPairs(distinct, ratio);
  // For each text, its near matches among earlier texts, earliest first (pairs are sorted).
  const earlier = new Map<number, { index: number; ratio: number }[]>();
  for (const [a, b, r] of pairs) {
    const later = distinctIndex[b];
    const list = earlier.get(later) ?? [];
    list.push({ index: distinctIndex[a], ratio: r });
    earlier.set(later, list);
  }
  const kept = new Uint8Array(texts.length);
  const dropped = new Map<number, DuplicateMatch>();
  for (let i = 0; i < texts.length; i++) {
    const first = exactOf[i];
    if (first >= 0) {
      // The first text of this form may itself have been dropped as a near-duplicate: point past it.
      const via = dropped.get(first);
      dropped.set(i, via ? { ...via, index: i } : { index: i, duplicateOf: first, kind: 'exact', ratio: 1 });
      continue;
    }
    const match = (earlier.get(i) ?? []).find((m) => kept[m.index]);
    if (match) dropped.set(i, { index: i, duplicateOf: match.index, kind: 'near', ratio: match.ratio });
    else kept[i] = 1;
  }
  const duplicates = [...dropped.values()];
  return {
    kept: Array.from(kept.keys()).filter((i) => kept[i]),
    duplicates,
    stats: { texts: texts.length, distinct: distinct.length, candidates, comparisons, nearPairs: pairs.length },
  };
}
