/**
 * CPython's `random.Random`, reproduced bit for bit: the MT19937 generator seeded from an integer as
 * `random.Random(n)` / `seed(n)` does (init_by_array over the 32-bit words of |n|, least significant
 * first), and the methods built on it — random(), getrandbits(k), randrange, randint, choice,
 * shuffle — with CPython's rejection sampling (`_randbelow_with_getrandbits`). Benchmarks written in
 * Python (ToolTalk's simulated tools) derive identifiers from such a generator; reproducing it lets
 * toolkiln replay their released outputs exactly.
 */

const N = 624;
const M = 397;
const MATRIX_A = 0x9908b0df;
const UPPER_MASK = 0x80000000;
const LOWER_MASK = 0x7fffffff;

export class PythonRandom {
  private readonly mt = new Uint32Array(N);
  private index = N + 1;

  constructor(seed: number | bigint = 0) {
    this.seed(seed);
  }

  /** `random.seed(n)` for an integer n (the sign is dropped, as CPython does). */
  seed(seed: number | bigint): void {
    if (typeof seed === 'number' && !Number.isSafeInteger(seed)) throw new RangeError(`PythonRandom: seed must be an integer (got ${seed})`);
    let rest = BigInt(seed);
    if (rest < 0n) rest = -rest;
    const key: number[] = [];
    while (rest > 0n) {
      key.push(Number(rest & 0xffffffffn));
      rest >>= 32n;
    }
    if (key.length === 0) key.push(0);
    this.initByArray(key);
  }

  /** The generator's state, to copy a generator (`setState(getState())`). */
  getState(): { mt: number[]; index: number } {
    return { mt: Array.from(this.mt), index: this.index };
  }

  setState(state: { mt: readonly number[]; index: number }): void {
    if (state.mt.length !== N) throw new RangeError(`PythonRandom: a state holds ${N} words (got ${state.mt.length})`);
    this.mt.set(state.mt);
    this.index = state.index;
  }

  private initGenrand(s: number): void {
    const mt = this.mt;
    mt[0] = s >>> 0;
    for (let i = 1; i < N; i++) {
      const prev = mt[i - 1] ^ (mt[i - 1] >>> 30);
      // 1812433253 * prev + i, modulo 2^32, without losing precision.
      mt[i] = (Math.imul(1812433253, prev) + i) >>> 0;
    }
    this.index = N;
  }

  private initByArray(key: readonly number[]): void {
    const mt = this.mt;
    this.initGenrand(19650218);
    let i = 1;
    let j = 0;
    for (let k = Math.max(N, key.length); k > 0; k--) {
      const prev = mt[i - 1] ^ (mt[i - 1] >>> 30);
      mt[i] = ((mt[i] ^ Math.imul(prev, 1664525)) + key[j] + j) >>> 0;
      i++;
      j++;
      if (i >= N) {
        mt[0] = mt[N - 1];
        i = 1;
      }
      if (j >= key.length) j = 0;
    }
    for (let k = N - 1; k > 0; k--) {
      const prev = mt[i - 1] ^ (mt[i - 1] >>> 30);
      mt[i] = ((mt[i] ^ Math.imul(prev, 1566083941)) - i) >>> 0;
      i++;
      if (i >= N) {
        mt[0] = mt[N - 1];
        i = 1;
      }
    }
    mt[0] = 0x80000000;
  }

  /** The next 32-bit output of MT19937 (genrand_uint32). */
  nextUint32(): number {
    const mt = this.mt;
    if (this.index >= N) {
      let kk = 0;
      for (; kk < N - M; kk++) {
        const y = (mt[kk] & UPPER_MASK) | (mt[kk + 1] & LOWER_MASK);
        mt[kk] = mt[kk + M] ^ (y >>> 1) ^ (y & 1 ? MATRIX_A : 0);
      }
      for (; kk < N - 1; kk++) {
        const y = (mt[kk] & UPPER_MASK) | (mt[kk + 1] & LOWER_MASK);
        mt[kk] = mt[kk + (M - N)] ^ (y >>> 1) ^ (y & 1 ? MATRIX_A : 0);
      }
      const y = (mt[N - 1] & UPPER_MASK) | (mt[0] & LOWER_MASK);
      mt[N - 1] = mt[M - 1] ^ (y >>> 1) ^ (y & 1 ? MATRIX_A : 0);
      this.index = 0;
    }
    let y = mt[this.index++];
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }

  /** `random()`: a float in [0, 1) with 53 random bits. */
  random(): number {
    const a = this.nextUint32() >>> 5;
    const b = this.nextUint32() >>> 6;
    return (a * 67108864 + b) / 9007199254740992;
  }

  /** `getrandbits(k)`: k random bits as a bigint (words drawn least significant first). */
  getrandbits(k: number): bigint {
    if (!Number.isInteger(k) || k < 0) throw new RangeError('number of bits must be non-negative');
    if (k <= 32) return BigInt(this.bits32(k));
    let result = 0n;
    let shift = 0n;
    for (let left = k; left > 0; left -= 32, shift += 32n) {
      result |= BigInt(this.bits32(Math.min(left, 32))) << shift;
    }
    return result;
  }

  /** Up to 32 bits as a number, as CPython's getrandbits does for k <= 32. */
  private bits32(k: number): number {
    if (k === 0) return 0;
    return this.nextUint32() >>> (32 - k);
  }

  /** `_randbelow_with_getrandbits(n)`: uniform in [0, n) for n > 0, by rejection. */
  randbelow(n: number): number {
    if (!Number.isSafeInteger(n) || n <= 0) throw new RangeError(`randbelow: n must be a positive safe integer (got ${n})`);
    const k = bitLength(n);
    if (k <= 32) {
      let r = this.bits32(k);
      while (r >= n) r = this.bits32(k);
      return r;
    }
    const big = BigInt(n);
    let r = this.getrandbits(k);
    while (r >= big) r = this.getrandbits(k);
    return Number(r);
  }

  /** `randrange(start, stop[, step])`, or `randrange(stop)` with one argument. */
  randrange(start: number, stop?: number, step = 1): number {
    if (stop === undefined) {
      if (start <= 0) throw new RangeError('empty range for randrange()');
      return this.randbelow(start);
    }
    if (![start, stop, step].every(Number.isSafeInteger)) throw new RangeError('randrange: arguments must be safe integers');
    const width = stop - start;
    if (step === 1) {
      if (width <= 0) throw new RangeError(`empty range for randrange() (${start}, ${stop}, ${width})`);
      return start + this.randbelow(width);
    }
    if (step === 0) throw new RangeError('zero step for randrange()');
    const n = step > 0 ? Math.floor((width + step - 1) / step) : Math.floor((width + step + 1) / step);
    if (n <= 0) throw new RangeError('empty range for randrange()');
    return start + step * this.randbelow(n);
  }

  /** `randint(a, b)`: an integer in [a, b], both ends included. */
  randint(a: number, b: number): number {
    return this.randrange(a, b + 1);
  }

  /** `choice(seq)`: one element. */
  choice<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('Cannot choose from an empty sequence');
    return items[this.randbelow(items.length)];
  }

  /** `shuffle(x)`: shuffles in place (Fisher–Yates from the end, as CPython). */
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.randbelow(i + 1);
      [items[i], items[j]] = [items[j], items[i]];
    }
    return items;
  }
}

/** `int.bit_length()` for a non-negative safe integer (exact, unlike log2 near powers of two). */
function bitLength(n: number): number {
  return n === 0 ? 0 : n.toString(2).length;
}
