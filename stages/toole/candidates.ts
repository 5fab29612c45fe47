import type { Vector } from '../../core/embed/index.ts';
import type { Rng } from '../../core/rng.ts';

/**
 * Candidate tool lists of MetaTool's tool-selection tasks (paper §2.3.2). Each function returns the
 * names shown to the model, shuffled so the gold tool has no fixed position, without repeats, of
 * exactly the requested size — or null when the library is too small to fill it.
 */

/** For each tool, every other tool by descending cosine similarity of their description embeddings (ties by name). */
export function similarityRanking(names: readonly string[], vectors: readonly Vector[]): Map<string, string[]> {
  const n = names.length;
  const norms = vectors.map((v) => Math.sqrt(Array.from(v).reduce((s, x) => s + x * x, 0)) || 1);
  const sim = (i: number, j: number) => {
    let dot = 0;
    for (let k = 0; k < vectors[i].length; k++) dot += vectors[i][k] * vectors[j][k];
    return dot / (norms[i] * norms[j]);
  };
  const matrix = Array.from({ length: n }, () => new Float64Array(n));
  for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) matrix[i][j] = matrix[j][i] = sim(i, j);
  const ranking = new Map<string, string[]>();
  names.forEach((name, i) => {
    const others = names.map((_, j) => j).filter((j) => j !== i);
    others.sort((a, b) => matrix[i][b] - matrix[i][a] || (names[a] < names[b] ? -1 : names[a] > names[b] ? 1 : 0));
    ranking.set(name, others.map((j) => names[j]));
  });
  return ranking;
}

/** Sub-task 1, similar choices: the gold tool and its n − 1 most similar tools. */
export function similarCandidates(gold: string, ranking: Map<string, string[]>, n: number, rng: Rng): string[] | null {
  const similar = ranking.get(gold) ?? [];
  if (similar.length < n - 1) return null;
  return rng.shuffle([gold, ...similar.slice(0, n - 1)]);
}

/**
 * Sub-task 3, reliability: n tools drawn at random from those left when the gold tool and its k
 * most similar tools are removed — the right answer is "none of these".
 */
export function reliabilityCandidates(gold: string, ranking: Map<string, string[]>, library: readonly string[], n: number, k: number, rng: Rng): string[] | null {
  const excluded = new Set([gold, ...(ranking.get(gold) ?? []).slice(0, k)]);
  const pool = library.filter((t) => !excluded.has(t));
  if (pool.length < n) return null;
  return rng.sample(pool, n);
}

/**
 * Sub-task 4, multi-tool: the gold tools plus n − |gold| tools drawn at random from those not
 * among any gold tool's k most similar tools (so no distractor can stand in for a gold one).
 */
export function multiToolCandidates(golds: readonly string[], ranking: Map<string, string[]>, library: readonly string[], n: number, k: number, rng: Rng): string[] | null {
  const unique = [...new Set(golds)];
  const excluded = new Set([...unique, ...unique.flatMap((g) => (ranking.get(g) ?? []).slice(0, k))]);
  const pool = library.filter((t) => !excluded.has(t));
  if (n < unique.length || pool.length < n - unique.length) return null;
  return rng.shuffle([...unique, ...rng.sample(pool, n - unique.length)]);
}
