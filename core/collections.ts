import { createHash } from 'node:crypto';
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
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
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

/**
 * A set of strings that keeps each one as the first 128 bits of its SHA-256 in an open-addressed
 * table: 32 bytes a string at most (the table is kept at most half full), whatever its length, and
 * no object per string. Two strings sharing those 128 bits would count as one (a chance of 2^-128 a
 * pair: never, in practice). For whole-version passes that must remember every id they met.
 */
export class HashedStringSet {
  /** Four 32-bit words per slot; all zero is an empty slot. */
  private table = new Uint32Array(4 * 1024);
  size = 0;

  /** Adds `value`; false when it was already there. */
  add(value: string): boolean {
    const digest = createHash('sha256').update(value).digest();
    const words = [digest.readUInt32LE(0), digest.readUInt32LE(4), digest.readUInt32LE(8), digest.readUInt32LE(12) || 1];
    if (!this.place(this.table, words)) return false;
    this.size++;
    if (this.size * 2 > this.table.length / 4) this.grow();
    return true;
  }

  /** Puts `words` in their slot of `table` (linear probing); false when they are there already. */
  private place(table: Uint32Array, words: readonly number[]): boolean {
    const slots = table.length / 4;
    for (let slot = words[0] & (slots - 1); ; slot = (slot + 1) & (slots - 1)) {
      const at = slot * 4;
      if (table[at + 3] === 0) {
        table.set(words, at);
        return true;
      }
      if (table[at] === words[0] && table[at + 1] === words[1] && table[at + 2] === words[2] && table[at + 3] === words[3]) return false;
    }
  }

  private grow(): void {
    const old = this.table;
    this.table = new Uint32Array(old.length * 2);
    for (let at = 0; at < old.length; at += 4) if (old[at + 3] !== 0) this.place(this.table, [old[at], old[at + 1], old[at + 2], old[at + 3]]);
  }
}
