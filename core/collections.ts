import { hash } from 'node:crypto';
/** Groups items by key, keeping first-seen key order and item order. */
export function groupBy<T>(items: Iterable<T>, keyOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return groups;
}

/** Counts per value, keys sorted (so the same data prints and hashes the same). */
export function countBy(values: Iterable<string>): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) tally(counts, value);
  return sortedCounts(counts);
}

/** Counts one more of `value` (a running count, where the values are not kept). */
export function tally(counts: Record<string, number>, value: string): void {
  counts[value] = (counts[value] ?? 0) + 1;
}

/** Counts with their keys sorted, as {@link countBy} gives them. */
export function sortedCounts(counts: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(counts).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

export function byString<T>(keyOf: (item: T) => string): (a: T, b: T) => number {
  return (a, b) => compareStrings(keyOf(a), keyOf(b));
}

/** Strings in code-unit order (not the locale's), as `sort()` orders them. */
export function compareStrings(x: string, y: string): number {
  return x < y ? -1 : x > y ? 1 : 0;
}

/** `items` made into `f(item, index)` one at a time, as they are iterated. */
export function* mapIterable<T, U>(items: Iterable<T>, f: (item: T, index: number) => U): Generator<U> {
  let i = 0;
  for (const item of items) yield f(item, i++);
}

/** A string as the first 128 bits of its SHA-256: four 32-bit words, the last never zero (an all-zero slot is empty). */
function hashWords(value: string): number[] {
  // One call, no Hash object per string (the same digest).
  const digest = hash('sha256', value, 'buffer');
  return [digest.readUInt32LE(0), digest.readUInt32LE(4), digest.readUInt32LE(8), digest.readUInt32LE(12) || 1];
}

/**
 * An open-addressed table of strings kept as {@link hashWords} (linear probing, at most half full),
 * each slot `width` words: the four of the hash, then what the slot holds. No object per string.
 * Two strings sharing those 128 bits would count as one (a chance of 2^-128 a pair: never, in practice).
 */
class HashedTable {
  private table: Uint32Array;
  size = 0;

  constructor(private readonly width: number) {
    this.table = new Uint32Array(width * 1024);
  }

  /** Where `words` are in the table, or the empty slot where they would go. */
  protected slotOf(words: ArrayLike<number>, table = this.table): { at: number; found: boolean } {
    const slots = table.length / this.width;
    for (let slot = words[0] & (slots - 1); ; slot = (slot + 1) & (slots - 1)) {
      const at = slot * this.width;
      if (table[at + 3] === 0) return { at, found: false };
      if (table[at] === words[0] && table[at + 1] === words[1] && table[at + 2] === words[2] && table[at + 3] === words[3]) return { at, found: true };
    }
  }

  /** The words after the hash in the slot at `at`. */
  protected word(at: number, k: number): number {
    return this.table[at + 4 + k];
  }

  /** Fills the empty slot at `at` (from {@link slotOf}), growing the table once half full. */
  protected fill(at: number, words: readonly number[], held: readonly number[]): void {
    this.table.set(words, at);
    this.table.set(held, at + 4);
    if (++this.size * 2 > this.table.length / this.width) this.grow();
  }

  protected setWord(at: number, k: number, value: number): void {
    this.table[at + 4 + k] = value;
  }

  private grow(): void {
    const old = this.table;
    this.table = new Uint32Array(old.length * 2);
    for (let at = 0; at < old.length; at += this.width) {
      if (old[at + 3] !== 0) this.table.set(old.subarray(at, at + this.width), this.slotOf(old.subarray(at, at + 4), this.table).at);
    }
  }
}

/**
 * A set of strings, each kept as the first 128 bits of its SHA-256: a 16-byte slot whatever its
 * length (the table a quarter to half full), and no object per string. For whole-version passes that must remember every
 * id they met.
 */
export class HashedStringSet extends HashedTable {
  constructor() {
    super(4);
  }

  /** Adds `value`; false when it was already there. */
  add(value: string): boolean {
    const words = hashWords(value);
    const { at, found } = this.slotOf(words);
    if (!found) this.fill(at, words, []);
    return !found;
  }
}

/**
 * Strings mapped to 32-bit integers, each string kept as the first 128 bits of its SHA-256: a
 * 20-byte slot an entry whatever its length (the table a quarter to half full), and no object per entry. For a stage that must find
 * again, by id, records of the whole set (where each is kept on disk).
 */
export class HashedStringMap extends HashedTable {
  constructor() {
    super(5);
  }

  get(key: string): number | undefined {
    const { at, found } = this.slotOf(hashWords(key));
    return found ? this.word(at, 0) | 0 : undefined;
  }

  has(key: string): boolean {
    return this.slotOf(hashWords(key)).found;
  }

  /** Sets `key` to `value` (a signed or unsigned 32-bit integer; read back signed). */
  set(key: string, value: number): void {
    const words = hashWords(key);
    const { at, found } = this.slotOf(words);
    if (found) this.setWord(at, 0, value);
    else this.fill(at, words, [value]);
  }
}
