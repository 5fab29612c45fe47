/**
 * The seed every random choice starts from when none is given (runs, the offline backend, review
 * selection, the noisy oracle, eval resamples), and the range a `--seed` may take: a 32-bit unsigned
 * integer, what the seeded generators (Python's `random.seed` twin among them) are given.
 */
export const DEFAULT_SEED = 42;
export const SEED_RANGE = { min: 0, max: 2 ** 32 - 1 } as const;
