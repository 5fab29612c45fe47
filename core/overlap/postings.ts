/**
 * Reference samples by key (an n-gram's hash, a call signature, a word, an LSH bucket), held as
 * typed arrays: each distinct key once (sorted), where its values start, and the values key after
 * key (each key's ascending). Where a key's values end is where the next key's start: no scan
 * through a common key's values. A key's slot is found through a hash table of the slots (open
 * addressing on the key's low 32 bits: the keys are hashes, or small numbers), one or two probes
 * where a binary search over the keys takes a dozen. Built by adding pairs, then frozen.
 */
export class Postings {
  private pendingKeys: number[] = [];
  private pendingValues: number[] = [];
  private keys = new Float64Array(0);
  private bounds = new Uint32Array(1);
  private values = new Uint32Array(0);
  /** Slots by the key's low bits (-1: empty), twice as many places as keys or more. */
  private table = new Int32Array(1).fill(-1);

  add(key: number, value: number): void {
    this.pendingKeys.push(key);
    this.pendingValues.push(value);
  }

  /** Sorts the pairs added (by key, then value) into the arrays lookups read; adding again starts over. */
  freeze(): this {
    const { pendingKeys: keys, pendingValues: values } = this;
    const sortedKeys = Float64Array.from(keys).sort();
    let distinct = 0;
    for (let k = 0; k < sortedKeys.length; k++) if (k === 0 || sortedKeys[k] !== sortedKeys[k - 1]) sortedKeys[distinct++] = sortedKeys[k];
    this.keys = sortedKeys.slice(0, distinct);
    let size = 2;
    while (size < 2 * distinct) size *= 2;
    this.table = new Int32Array(size).fill(-1);
    for (let s = 0; s < distinct; s++) {
      let at = (this.keys[s] >>> 0) & (size - 1);
      while (this.table[at] !== -1) at = (at + 1) & (size - 1);
      this.table[at] = s;
    }
    this.bounds = new Uint32Array(distinct + 1);
    let ascending = true;
    for (let k = 1; k < values.length && ascending; k++) ascending = values[k - 1] <= values[k];
    if (ascending) {
      // Values added in ascending order (an index adds a reference sample's keys after the one
      // before's): each key's values, placed in the order added, are in order. Counted, then placed.
      const slots = new Uint32Array(keys.length);
      for (let k = 0; k < keys.length; k++) this.bounds[(slots[k] = this.slot(keys[k])) + 1]++;
      for (let s = 0; s < distinct; s++) this.bounds[s + 1] += this.bounds[s];
      const next = this.bounds.slice(0, distinct);
      this.values = new Uint32Array(values.length);
      for (let k = 0; k < values.length; k++) this.values[next[slots[k]]++] = values[k];
    } else {
      const order = new Uint32Array(keys.length);
      for (let i = 0; i < order.length; i++) order[i] = i;
      order.sort((a, b) => keys[a] - keys[b] || values[a] - values[b]);
      this.values = Uint32Array.from(order, (i) => values[i]);
      let slot = -1;
      for (let k = 0; k < order.length; k++) if (slot < 0 || keys[order[k]] !== this.keys[slot]) this.bounds[++slot] = k;
      this.bounds[distinct] = order.length;
    }
    this.pendingKeys = [];
    this.pendingValues = [];
    return this;
  }

  /** Every key's values, key after key: the key in slot `s` has `sorted[starts[s]]` up to `sorted[starts[s + 1]]`, read in place (no call per value). */
  get sorted(): Uint32Array {
    return this.values;
  }

  /** Where each slot's values start in `sorted` (one more than the slots: the last is where the values end). */
  get starts(): Uint32Array {
    return this.bounds;
  }

  /** The slot of `key` (its position among the distinct keys, ascending), or -1 when it has no values. */
  slot(key: number): number {
    const { table, keys } = this;
    const mask = table.length - 1;
    let at = (key >>> 0) & mask;
    for (let slot = table[at]; slot !== -1; slot = table[at]) {
      if (keys[slot] === key) return slot;
      at = (at + 1) & mask;
    }
    return -1;
  }

  /** Pairs held. */
  get size(): number {
    return this.values.length;
  }

  get bytes(): number {
    return this.keys.byteLength + this.bounds.byteLength + this.values.byteLength + this.table.byteLength;
  }
}
