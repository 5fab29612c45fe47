import { normalizeText } from '../dedup/near-duplicates.ts';
import type { Sample } from '../records.ts';

/**
 * The text side of overlap: what a sample asks (its user turns), as normalised words and as hashed
 * word n-grams. Normalisation is the near-duplicate one (NFKC, lower case, punctuation and symbols
 * dropped, whitespace collapsed); a Chinese, Japanese or Korean character is a word of its own, so
 * n-grams work on text without spaces.
 */

/** The user turns of a sample, joined by new lines: what a model is asked. */
export function userText(sample: Sample): string {
  let text: string | undefined;
  for (const turn of sample.dialogue) if (turn.role === 'user') text = text === undefined ? turn.content : `${text}\n${turn.content}`;
  return text ?? '';
}

const WORD = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]|[^\s\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+/gu;

/** The normalised words of a text (each CJK character one word). */
export function words(text: string): string[] {
  return normalizeText(text).match(WORD) ?? [];
}

/**
 * A text shorter than n words is one n-gram of its own when it has at least this many words: a short
 * query copied whole is overlap, while `Thanks!` or `Yes` found in a reference is not evidence of it.
 */
export const MIN_GRAM_WORDS = 4;

/** cyrb53: a fast 53-bit string hash (collisions among millions of n-grams stay negligible). */
export function hash53(text: string, seed = 0): number {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ seed;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  return finish53(h1, h2);
}

function finish53(h1: number, h2: number): number {
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

/** `hash53(tokens.slice(start, end).join(' '), seed)`, without making the string. */
function wordsHash53(tokens: readonly string[], start: number, end: number, seed: number): number {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ seed;
  for (let w = start; w < end; w++) {
    if (w > start) {
      h1 = Math.imul(h1 ^ 32, 2654435761);
      h2 = Math.imul(h2 ^ 32, 1597334677);
    }
    const word = tokens[w];
    for (let i = 0; i < word.length; i++) {
      const c = word.charCodeAt(i);
      h1 = Math.imul(h1 ^ c, 2654435761);
      h2 = Math.imul(h2 ^ c, 1597334677);
    }
  }
  return finish53(h1, h2);
}

/** The distinct hashed word n-grams of a word list, ascending (the whole list as one gram when shorter than n, from `MIN_GRAM_WORDS` words). */
export function ngramHashes(tokens: readonly string[], n: number): number[] {
  const out = new Float64Array(Math.max(1, tokens.length));
  return Array.from(out.subarray(0, sortedNgramHashes(tokens, n, out)));
}

/**
 * `ngramHashes` written into `out` (at least as long as `tokens`, and 1): how many there are. For a
 * caller that reads them once per query: no array made and no number boxed per n-gram.
 */
export function sortedNgramHashes(tokens: readonly string[], n: number, out: Float64Array): number {
  if (tokens.length < n) {
    if (tokens.length < MIN_GRAM_WORDS) return 0;
    out[0] = wordsHash53(tokens, 0, tokens.length, n);
    return 1;
  }
  const count = tokens.length - n + 1;
  for (let i = 0; i < count; i++) out[i] = wordsHash53(tokens, i, i + n, n);
  out.subarray(0, count).sort();
  let distinct = 1;
  for (let i = 1; i < count; i++) if (out[i] !== out[distinct - 1]) out[distinct++] = out[i];
  return distinct;
}
