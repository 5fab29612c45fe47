import { z } from 'zod';
import { UserError } from '../core/errors.ts';
import { formatZodError } from '../core/records.ts';
import { DEFAULT_SEED, SEED_RANGE } from '../core/seed.ts';

/**
 * What goes into a version's review queue. A recipe may carry these under `review` in its config
 * (the pipeline owns that section; the resolved config is in the manifest); CLI flags override.
 */
export const ReviewSelection = z
  .object({
    /** Every sample with a failed check (soft checks flag records for review). */
    failedChecks: z.boolean().default(true),
    /** Tags that put a sample in the queue: exact, or a prefix when the pattern ends with `*`. */
    tags: z.array(z.string().min(1)).default(['review:*']),
    /** Share of each category drawn at random (seeded) from the samples not already selected. */
    randomRate: z.number().min(0).max(1).default(0.05),
    /** Rate per category, overriding `randomRate` for the categories it names. */
    perCategory: z.record(z.string(), z.number().min(0).max(1)).optional(),
    /** Samples that already carry a review decision (`meta.review`) are left out. */
    skipReviewed: z.boolean().default(true),
    /** Keep only the first n items by priority. */
    maxItems: z.number().int().positive().optional(),
    seed: z.number().int().min(SEED_RANGE.min).max(SEED_RANGE.max).default(DEFAULT_SEED),
  })
  .strict();
export type ReviewSelection = z.infer<typeof ReviewSelection>;

export const DEFAULT_SELECTION: ReviewSelection = ReviewSelection.parse({});

/** The selection for a version: defaults, then the recipe's `config.review`, then `overrides`. */
export function selectionFor(config: unknown, overrides: Partial<ReviewSelection> = {}): ReviewSelection {
  const fromConfig = config && typeof config === 'object' && 'review' in config ? (config as { review: unknown }).review : {};
  const parsed = ReviewSelection.safeParse({ ...(fromConfig as object), ...dropUndefined(overrides) });
  if (!parsed.success) throw new UserError(`invalid review selection (config "review" section or flags): ${formatZodError(parsed.error)}`);
  return parsed.data;
}

function dropUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** `review:*` matches every tag starting with `review:`; anything else matches exactly. */
export function tagMatches(pattern: string, tag: string): boolean {
  return pattern.endsWith('*') ? tag.startsWith(pattern.slice(0, -1)) : tag === pattern;
}
