import { isRef, parseRef, type Call } from '../../core/records.ts';
import { leaves } from './notation.ts';

/**
 * The dependency structure of a call chain: which call feeds which (§5.2 nesting depth, §5.3 nesting
 * structures such as 1→2, 1→3).
 */

export type StructureKind = 'single' | 'independent' | 'chain' | 'fan-out' | 'fan-in' | 'mixed';

export interface ChainStructure {
  calls: number;
  /** Producer → consumer call positions (0-based), each pair once, sorted. */
  edges: [number, number][];
  /** §5.2: 1 without nesting; a call fed by others is one deeper than the deepest of them. */
  depth: number;
  /**
   * `chain`: every call feeds at most one and is fed by at most one; `fan-out`: one call feeds
   * several; `fan-in`: one call is fed by several; `mixed`: both (e.g. 1→2, 2→3, 1→3).
   */
  kind: StructureKind;
  /** Figure 5 notation, 1-based: `1→2, 1→3`. */
  shape: string;
  /** Calls that neither feed nor are fed while others are nested. */
  isolated: number;
  args: number;
  nestedArgs: number;
}

export function chainStructure(calls: Call[]): ChainStructure {
  const position = new Map(calls.map((call, i) => [call.id, i]));
  const pairs = new Set<string>();
  let args = 0;
  let nestedArgs = 0;
  calls.forEach((call, consumer) => {
    for (const value of Object.values(call.arguments)) {
      args++;
      const refs = leaves(value).filter(isRef);
      if (refs.length) nestedArgs++;
      for (const ref of refs) {
        const producer = position.get(parseRef(ref).callId);
        if (producer !== undefined && producer < consumer) pairs.add(`${producer},${consumer}`);
      }
    }
  });
  const edges = [...pairs].map((pair) => pair.split(',').map(Number) as [number, number]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const indegree = new Array(calls.length).fill(0);
  const outdegree = new Array(calls.length).fill(0);
  const depth = new Array(calls.length).fill(1);
  for (const [from, to] of edges) {
    outdegree[from]++;
    indegree[to]++;
  }
  // Edges point forward, so one pass in call order settles every depth.
  for (let i = 0; i < calls.length; i++) for (const [from, to] of edges) if (to === i) depth[i] = Math.max(depth[i], depth[from] + 1);
  const maxIn = Math.max(0, ...indegree);
  const maxOut = Math.max(0, ...outdegree);
  let kind: StructureKind;
  if (!edges.length) kind = calls.length <= 1 ? 'single' : 'independent';
  else if (maxIn <= 1 && maxOut <= 1) kind = 'chain';
  else if (maxIn <= 1) kind = 'fan-out';
  else if (maxOut <= 1) kind = 'fan-in';
  else kind = 'mixed';
  return {
    calls: calls.length,
    edges,
    depth: Math.max(1, ...depth),
    kind,
    shape: edges.map(([from, to]) => `${from + 1}→${to + 1}`).join(', '),
    isolated: edges.length ? calls.filter((_, i) => indegree[i] === 0 && outdegree[i] === 0).length : 0,
    args,
    nestedArgs,
  };
}
