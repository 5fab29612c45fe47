/** Adjusted Rand index of two labelings of the same items: 1 = same partition, ≈0 = chance agreement. */
export function adjustedRandIndex(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new Error(`adjustedRandIndex: ${a.length} vs ${b.length} labels`);
  const n = a.length;
  const pairs = (m: number) => (m * (m - 1)) / 2;
  const joint = new Map<string, number>();
  const rows = new Map<number, number>();
  const cols = new Map<number, number>();
  for (let i = 0; i < n; i++) {
    const key = `${a[i]}:${b[i]}`;
    joint.set(key, (joint.get(key) ?? 0) + 1);
    rows.set(a[i], (rows.get(a[i]) ?? 0) + 1);
    cols.set(b[i], (cols.get(b[i]) ?? 0) + 1);
  }
  let index = 0;
  for (const m of joint.values()) index += pairs(m);
  let sumRows = 0;
  for (const m of rows.values()) sumRows += pairs(m);
  let sumCols = 0;
  for (const m of cols.values()) sumCols += pairs(m);
  const expected = n > 1 ? (sumRows * sumCols) / pairs(n) : 0;
  const max = (sumRows + sumCols) / 2;
  if (max === expected) return 1; // both all singletons or both one cluster: identical partitions
  return (index - expected) / (max - expected);
}
