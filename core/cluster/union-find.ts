/** Disjoint sets over 0..n−1 (path halving, union by size). */
export class UnionFind {
  private readonly parent: Int32Array;
  private readonly size: Int32Array;

  constructor(readonly n: number) {
    this.parent = new Int32Array(n);
    this.size = new Int32Array(n).fill(1);
    for (let i = 0; i < n; i++) this.parent[i] = i;
  }

  find(i: number): number {
    const parent = this.parent;
    while (parent[i] !== i) {
      parent[i] = parent[parent[i]];
      i = parent[i];
    }
    return i;
  }

  /** Joins the sets of a and b; false when they were already one. */
  union(a: number, b: number): boolean {
    let x = this.find(a);
    let y = this.find(b);
    if (x === y) return false;
    if (this.size[x] < this.size[y]) [x, y] = [y, x];
    this.parent[y] = x;
    this.size[x] += this.size[y];
    return true;
  }

  /**
   * One label per item, numbered 0, 1, 2, … in order of each set's first item, so the same
   * partition always gives the same labels.
   */
  labels(): Int32Array {
    const labels = new Int32Array(this.n);
    const labelOfRoot = new Int32Array(this.n).fill(-1);
    let next = 0;
    for (let i = 0; i < this.n; i++) {
      const root = this.find(i);
      if (labelOfRoot[root] < 0) labelOfRoot[root] = next++;
      labels[i] = labelOfRoot[root];
    }
    return labels;
  }
}
