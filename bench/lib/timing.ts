/** Timing shared by the in-process benchmarks: the median of n runs after one warm-up. */

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** Milliseconds of `fn`, the median of `runs` runs after a warm-up (module compilation and JIT are not what is measured). */
export function timeSync(runs: number, fn: () => unknown): number {
  fn();
  return median(
    Array.from({ length: runs }, () => {
      const started = performance.now();
      fn();
      return performance.now() - started;
    }),
  );
}

/** The same for asynchronous work. */
export async function timeAsync(runs: number, fn: () => unknown): Promise<number> {
  await fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await fn();
    times.push(performance.now() - started);
  }
  return median(times);
}
