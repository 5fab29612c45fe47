/**
 * Reference samples by key (an n-gram's hash, a call signature, a word, an LSH bucket), held as two
 * sorted typed arrays: 12 bytes a pair, found by binary search. Built by adding pairs, then frozen.
 */
export class Postings {
  private pendingKeys: number[] = [];
  private pendingValues: number[] = [];
  private keys = new Float64Array(0);
  private values = new Uint32Array(0);

  add(key: number, value: number): void {
    this.pendingKeys.push(key);
    this.pendingValues.push(value);
  }

  /** Sorts the pairs added (by key, then value) into the arrays lookups read; adding again starts over. */
  freeze(): this {
    const { pendingKeys: keys, pendingValues: values } = this;
    const order = new Uint32Array(keys.length);
    for (let i = 0; i < order.length; i++) order[i] = i;
    order.sort((a, b) => keys[a] - keys[b] || values[a] - values[b]);
    this.keys = Float64Array.from(order, (i) => keys[i]);
    this.values = Uint32Array.from(order, (i) => values[i]);
    this.pendingKeys = [];
    this.pendingValues = [];
    return this;
  }

  /** Every key's values, key after key: `key`'s are `sorted[find(key)]` up to `sorted[endOf(start, key)]`, read in place (no call per value). */
  get sorted(): Uint32Array {
    return this.values;
  }

  /** Where `key`'s values start in `sorted` (where they would be, when it has none). */
  find(key: number): number {
    const keys = this.keys;
    let lo = 0;
    let hi = keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (keys[mid] < key) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Where `key`'s values end in `sorted`, given where `find` says they start (`start` itself when it has none). */
  endOf(start: number, key: number): number {
    const keys = this.keys;
    let end = start;
    while (end < keys.length && keys[end] === key) end++;
    return end;
  }

  get size(): number {
    return this.keys.length;
  }

  get bytes(): number {
    return this.keys.byteLength + this.values.byteLength;
  }
}
