import { clusterSpace, renderClusterPlot, silhouette, VectorSpace, type Linkage } from '../core/cluster/index.ts';
// Apart from the index: PCA (ml-pca, ml-matrix) is loaded only by the recipes that plot clusters.
import { project2d } from '../core/cluster/projection.ts';
import type { Embedder } from '../core/embed/index.ts';

/**
 * Overlap detection (paper Appendix A.1 step 1, A.2): tool descriptions are embedded and clustered
 * hierarchically; every cluster of two or more tools is a merge proposal for a person (or the
 * decisions file) to accept, change or refuse. The silhouette coefficient at several cluster counts
 * measures how much the tools overlap: lower after merging means functions are spread more evenly.
 */

export interface ProposalOptions {
  linkage: Linkage;
  /** Cosine distance at or below which tools join one cluster. */
  threshold: number;
}

export interface MergeProposal {
  /** Stable id of the proposal (its sorted member names). */
  id: string;
  tools: string[];
  /** Mean cosine similarity between the members' descriptions. */
  similarity: number;
}

export async function embedTools(embedder: Embedder, tools: { description: string }[]): Promise<VectorSpace> {
  const vectors = await embedder.embed(tools.map((t) => t.description));
  return VectorSpace.from(vectors, 'cosine', 'tool descriptions');
}

export function proposeMerges(space: VectorSpace, names: string[], options: ProposalOptions): MergeProposal[] {
  if (space.n < 2) return [];
  const clustering = clusterSpace(space, { threshold: options.threshold, linkage: options.linkage, metric: 'cosine', source: 'tool descriptions' });
  return clustering.clusters
    .filter((members) => members.length > 1)
    .map((members) => {
      let sum = 0;
      let pairs = 0;
      for (let a = 0; a < members.length; a++) for (let b = a + 1; b < members.length; b++, pairs++) sum += 1 - space.pair(members[a], members[b]);
      const tools = members.map((i) => names[i]);
      return { id: [...tools].sort().join('+'), tools, similarity: Math.round((sum / pairs) * 1000) / 1000 };
    });
}

export interface SilhouetteCurve {
  tools: number;
  /** Cluster count → silhouette (null where undefined: fewer than 2 or more than n − 1 clusters). */
  byClusters: Record<string, number | null>;
}

/** Silhouette of the description embedding cut into each of `counts` clusters (average linkage, as A.2 compares). */
export function silhouetteCurve(space: VectorSpace, counts: number[], linkage: Linkage, seed: number): SilhouetteCurve {
  const byClusters: Record<string, number | null> = {};
  for (const k of counts) {
    if (k < 2 || k > space.n - 1) {
      byClusters[k] = null;
      continue;
    }
    const clustering = clusterSpace(space, { clusters: k, linkage, metric: 'cosine', source: 'tool descriptions' });
    const score = silhouette(space, clustering.labels, { seed }).score;
    byClusters[k] = score === null ? null : Math.round(score * 10000) / 10000;
  }
  return { tools: space.n, byClusters };
}

/** A self-contained HTML page plotting the tools in 2-D, coloured by their clusters at `clusters`. */
export function overlapPlot(space: VectorSpace, names: string[], options: { title: string; clusters: number; linkage: Linkage; seed: number; notes?: string[] }): string {
  const k = Math.max(1, Math.min(options.clusters, space.n));
  const labels = clusterSpace(space, { clusters: k, linkage: options.linkage, metric: 'cosine', source: 'tool descriptions' }).labels;
  const { points, explained } = project2d(space, { seed: options.seed });
  return renderClusterPlot({
    title: options.title,
    notes: [...(options.notes ?? []), `${space.n} tools, ${k} clusters (${options.linkage} linkage), PCA axes carry ${(explained[0] * 100).toFixed(1)}% and ${(explained[1] * 100).toFixed(1)}% of the variance`],
    points,
    labels,
    names,
  });
}
