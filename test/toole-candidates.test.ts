import { describe, expect, it } from 'vitest';
import { Rng } from '../core/rng.ts';
import { multiToolCandidates, reliabilityCandidates, similarCandidates, similarityRanking } from '../stages/toole/candidates.ts';

function library(size: number, seed: number) {
  const rng = new Rng(seed);
  const names = Array.from({ length: size }, (_, i) => `tool_${i}`);
  const vectors = names.map(() => Array.from({ length: 8 }, () => rng.next() - 0.5));
  return { names, vectors, ranking: similarityRanking(names, vectors) };
}

const cosine = (a: number[], b: number[]) => {
  const dot = a.reduce((s, x, i) => s + x * b[i], 0);
  return dot / (Math.hypot(...a) * Math.hypot(...b));
};

describe('candidate tool lists of the selection tasks', () => {
  it('ranks every other tool by descending cosine similarity', () => {
    const { names, vectors, ranking } = library(30, 1);
    for (const name of names) {
      const ranked = ranking.get(name)!;
      const i = names.indexOf(name);
      expect(ranked).toHaveLength(29);
      expect(ranked).not.toContain(name);
      const sims = ranked.map((other) => cosine(vectors[i], vectors[names.indexOf(other)]));
      for (let k = 1; k < sims.length; k++) expect(sims[k]).toBeLessThanOrEqual(sims[k - 1] + 1e-12);
    }
  });

  it('similar choices: the gold tool and exactly its n − 1 most similar tools, no repeats, size n', () => {
    for (let seed = 0; seed < 20; seed++) {
      const { names, ranking } = library(40, seed);
      const rng = new Rng(seed);
      const gold = rng.pick(names);
      const n = rng.int(2, 12);
      const list = similarCandidates(gold, ranking, n, rng)!;
      expect(list).toHaveLength(n);
      expect(new Set(list).size).toBe(n);
      expect(list).toContain(gold);
      expect(new Set(list)).toEqual(new Set([gold, ...ranking.get(gold)!.slice(0, n - 1)]));
    }
  });

  it('reliability: neither the gold tool nor any of its k most similar tools, no repeats, size n', () => {
    for (let seed = 0; seed < 20; seed++) {
      const { names, ranking } = library(60, seed);
      const rng = new Rng(100 + seed);
      const gold = rng.pick(names);
      const [n, k] = [rng.int(1, 10), rng.int(0, 20)];
      const list = reliabilityCandidates(gold, ranking, names, n, k, rng)!;
      expect(list).toHaveLength(n);
      expect(new Set(list).size).toBe(n);
      expect(list).not.toContain(gold);
      for (const similar of ranking.get(gold)!.slice(0, k)) expect(list).not.toContain(similar);
    }
  });

  it('multi-tool: both gold tools, the rest similar to neither, no repeats, size n', () => {
    for (let seed = 0; seed < 20; seed++) {
      const { names, ranking } = library(80, seed);
      const rng = new Rng(200 + seed);
      const [a, b] = rng.sample(names, 2);
      const [n, k] = [rng.int(3, 10), rng.int(0, 15)];
      const list = multiToolCandidates([a, b], ranking, names, n, k, rng)!;
      expect(list).toHaveLength(n);
      expect(new Set(list).size).toBe(n);
      expect(list).toEqual(expect.arrayContaining([a, b]));
      const excluded = new Set([...ranking.get(a)!.slice(0, k), ...ranking.get(b)!.slice(0, k)]);
      for (const other of list.filter((t) => t !== a && t !== b)) expect(excluded.has(other)).toBe(false);
    }
  });

  it('gives no list when the library cannot fill one', () => {
    const { names, ranking } = library(12, 7);
    const rng = new Rng(7);
    expect(similarCandidates(names[0], ranking, 13, rng)).toBeNull();
    // 12 tools − gold − 5 most similar = 6 left: not enough for 7.
    expect(reliabilityCandidates(names[0], ranking, names, 7, 5, rng)).toBeNull();
    expect(reliabilityCandidates(names[0], ranking, names, 6, 5, rng)).toHaveLength(6);
    expect(multiToolCandidates([names[0], names[1]], ranking, names, 1, 0, rng)).toBeNull();
  });

  it('is the same list for the same seed', () => {
    const { names, ranking } = library(50, 3);
    expect(reliabilityCandidates(names[4], ranking, names, 10, 20, Rng.derive(42, 'x'))).toEqual(reliabilityCandidates(names[4], ranking, names, 10, 20, Rng.derive(42, 'x')));
  });
});
