import type { ModelComparison, Side } from './compare.ts';

/** How a side orders two models on one figure: the first above, below, or level with the second. */
export type Order = '>' | '<' | '=';

/** One metric of one category: each model's figure on each side, and how each side orders each pair of models. */
export interface AgreementRow {
  category: string;
  metric: string;
  /** Figures by side, in model order. */
  scores: Record<Side, number[]>;
  /** Per pair of models (first, second) in model order: the order on each side. */
  pairs: { first: string; second: string; generated: Order; released: Order }[];
}

/**
 * Whether the generated version ranks the models as the released benchmark does, over every
 * metric × category both sides have for every model. Each pair of models on each row is concordant
 * (both sides order it the same way), discordant (opposite ways) or tied (level on a side);
 * `agreement` = concordant / (concordant + discordant), Kendall's tau-b numerator read as a share:
 * 1 when no row orders a pair the other way, 0 when every row does. With two models it is the share
 * of rows (without ties) where both sides put the same model first.
 */
export interface Agreement {
  models: string[];
  rows: AgreementRow[];
  concordant: number;
  discordant: number;
  tied: number;
  /** null when every pair is tied somewhere (nothing to agree on). */
  agreement: number | null;
}

/** Figures closer than this are level (the same rate computed two ways can differ in the last bits). */
const LEVEL = 1e-12;

const orderOf = (a: number, b: number): Order => (Math.abs(a - b) <= LEVEL ? '=' : a > b ? '>' : '<');

export function agreementOf(comparisons: readonly ModelComparison[]): Agreement {
  const [first] = comparisons;
  const rows: AgreementRow[] = [];
  let concordant = 0;
  let discordant = 0;
  let tied = 0;
  for (const row of first.rows) {
    const same = comparisons.map((c) => c.rows.find((r) => r.category === row.category && r.metric === row.metric));
    if (same.some((r) => r?.generated == null || r.released == null)) continue;
    const scores = { generated: same.map((r) => r!.generated!), released: same.map((r) => r!.released!) };
    const pairs: AgreementRow['pairs'] = [];
    for (let i = 0; i < comparisons.length; i++) {
      for (let j = i + 1; j < comparisons.length; j++) {
        const pair = { first: comparisons[i].model, second: comparisons[j].model, generated: orderOf(scores.generated[i], scores.generated[j]), released: orderOf(scores.released[i], scores.released[j]) };
        pairs.push(pair);
        if (pair.generated === '=' || pair.released === '=') tied++;
        else if (pair.generated === pair.released) concordant++;
        else discordant++;
      }
    }
    rows.push({ category: row.category, metric: row.metric, scores, pairs });
  }
  return { models: comparisons.map((c) => c.model), rows, concordant, discordant, tied, agreement: concordant + discordant ? concordant / (concordant + discordant) : null };
}
