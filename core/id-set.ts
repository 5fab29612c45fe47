/**
 * A set of strings (ids seen in a pass over a version) held compactly: each string's UTF-8 bytes
 * once in a growing buffer, found through an open-addressing table of their offsets. A string costs
 * its length and about 20 bytes, where a `Set<string>` holds a string object and its table entry
 * (about 70 bytes for a 24-character id). Exact: strings are compared byte for byte.
 */
export class IdSet {
  /** Each entry: its byte length (4 bytes), then its bytes. */
  private bytes = Buffer.allocUnsafe(1 << 16);
  private used = 0;
  /** Offset of an entry in `bytes` + 1 (0: empty slot). */
  private slots = new Float64Array(1 << 10);
  private readonly scratch = Buffer.allocUnsafe(1 << 12);
  size = 0;

  has(value: string): boolean {
    const key = this.encode(value);
    return this.slots[this.find(key)] !== 0;
  }

  /** Adds `value`; false when it was already there. */
  add(value: string): boolean {
    const key = this.encode(value);
    const slot = this.find(key);
    if (this.slots[slot] !== 0) return false;
    if (this.used + 4 + key.length > this.bytes.length) {
      const grown = Buffer.allocUnsafe(Math.max(this.bytes.length * 2, this.used + 4 + key.length));
      this.bytes.copy(grown, 0, 0, this.used);
      this.bytes = grown;
    }
    this.bytes.writeUInt32LE(key.length, this.used);
    key.copy(this.bytes, this.used + 4);
    this.slots[slot] = this.used + 1;
    this.used += 4 + key.length;
    // Kept at most half full, so that probing stays short.
    if (++this.size * 2 > this.slots.length) this.grow();
    return true;
  }

  /** The string's bytes (in a scratch buffer, valid until the next call). */
  private encode(value: string): Buffer {
    if (value.length * 3 <= this.scratch.length) return this.scratch.subarray(0, this.scratch.write(value, 'utf8'));
    return Buffer.from(value, 'utf8');
  }

  /** The slot holding `key`, or the empty slot where it would go. */
  private find(key: Buffer): number {
    const mask = this.slots.length - 1;
    for (let slot = hashOf(key) & mask; ; slot = (slot + 1) & mask) {
      const at = this.slots[slot];
      if (at === 0 || this.equals(at - 1, key)) return slot;
    }
  }

  private equals(at: number, key: Buffer): boolean {
    return this.bytes.readUInt32LE(at) === key.length && this.bytes.compare(key, 0, key.length, at + 4, at + 4 + key.length) === 0;
  }

  private grow(): void {
    const old = this.slots;
    this.slots = new Float64Array(old.length * 2);
    const mask = this.slots.length - 1;
    for (const at of old) {
      if (at === 0) continue;
      const length = this.bytes.readUInt32LE(at - 1);
      let slot = hashOf(this.bytes.subarray(at + 3, at + 3 + length)) & mask;
      while (this.slots[slot] !== 0) slot = (slot + 1) & mask;
      this.slots[slot] = at;
    }
  }
}

/** FNV-1a over bytes. */
function hashOf(bytes: Uint8Array): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) hash = Math.imul(hash ^ bytes[i], 0x01000193);
  return hash >>> 0;
}
