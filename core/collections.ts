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
