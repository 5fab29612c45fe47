import { UserError } from '../core/errors.ts';
import { Rng } from '../core/rng.ts';

export interface AssignOptions {
  /** How many annotators (sheets). */
  annotators: number;
  /** Share of items given to `raters` annotators instead of one (for agreement). */
  overlap: number;
  /** Annotators per overlapping item (2 … annotators). */
  raters: number;
  seed: number;
}

export function annotatorName(index: number): string {
  return `annotator-${index + 1}`;
}

export function checkAssignOptions(options: AssignOptions): void {
  if (!Number.isInteger(options.annotators) || options.annotators < 1) throw new UserError(`--annotators must be a whole number of at least 1 (got ${options.annotators})`);
  if (!(options.overlap >= 0 && options.overlap <= 1)) throw new UserError(`--overlap is a share between 0 and 1 (got ${options.overlap})`);
  if (options.annotators === 1 && options.overlap > 0) throw new UserError('--overlap needs --annotators 2 or more (one annotator cannot overlap with anyone)');
  if (options.overlap > 0 && (!Number.isInteger(options.raters) || options.raters < 2 || options.raters > options.annotators)) {
    throw new UserError(`--raters must be between 2 and --annotators (${options.annotators}); got ${options.raters}`);
  }
}

/**
 * Who reviews which item: `round(overlap × items)` items, chosen at random (seeded), go to `raters`
 * annotators each, every other item to one; each item goes to the least loaded annotators so the
 * sheets come out the same size (± 1). Returns annotator indices per item, in item order.
 */
export function assignItems(itemCount: number, options: AssignOptions): number[][] {
  checkAssignOptions(options);
  const shared = new Set(Rng.derive(options.seed, 'review-overlap').sample([...Array(itemCount).keys()], Math.round(options.overlap * itemCount)));
  const load = new Array<number>(options.annotators).fill(0);
  // Overlapping items first, so they spread evenly before single items fill the gaps.
  const order = [...Array(itemCount).keys()].sort((a, b) => Number(shared.has(b)) - Number(shared.has(a)) || a - b);
  const assigned: number[][] = new Array(itemCount);
  let turn = 0;
  for (const item of order) {
    const count = shared.has(item) ? options.raters : 1;
    // Least loaded first; ties broken by a rotating start so pairs vary.
    const ranked = [...load.keys()].sort((a, b) => load[a] - load[b] || ((a - turn + options.annotators) % options.annotators) - ((b - turn + options.annotators) % options.annotators));
    assigned[item] = ranked.slice(0, count).sort((a, b) => a - b);
    for (const a of assigned[item]) load[a]++;
    turn = (turn + 1) % options.annotators;
  }
  return assigned;
}
