import { hash } from 'node:crypto';

/**
 * Seeded pseudo-random numbers (mulberry32). Every random choice in toolkiln goes through one of
 * these, derived from the run seed and a stable key, so the same inputs give the same dataset
 * whatever the concurrency or the order in which records finish.
 */
export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** A generator for one purpose: `Rng.derive(seed, 'stage', recordKey)`. */
  static derive(seed: number, ...keys: (string | number)[]): Rng {
    const digest = hash('sha256', `${seed}\u0000${keys.join('\u0000')}`, 'buffer');
    return new Rng(digest.readUInt32LE(0));
  }

  /** Uniform in [0, 1). */
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('Rng.pick: cannot pick from an empty list');
    return items[Math.floor(this.next() * items.length)];
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  /** A shuffled copy (Fisher–Yates). */
  shuffle<T>(items: readonly T[]): T[] {
    const out = items.slice();
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [out[i], out[j]] = [out[j], out[i]];
    }
    return out;
  }

  /** `k` distinct items in random order (all of them when k >= length). */
  sample<T>(items: readonly T[], k: number): T[] {
    return this.shuffle(items).slice(0, Math.max(0, k));
  }
}
