import { groupBy } from '../core/collections.ts';

/** One annotator's label for one item. */
export interface Rating {
  item: string;
  rater: string;
  label: string;
}

export interface PairAgreement {
  a: string;
  b: string;
  /** Items both rated. */
  items: number;
  observed: number | null;
  /** Cohen's κ; null when undefined (no shared items, or chance agreement is 1). */
  kappa: number | null;
}

export interface ItemAgreement {
  item: string;
  labels: Record<string, string>;
  /** Share of rater pairs that agree (1 = unanimous). */
  pairShare: number;
  unanimous: boolean;
}

export interface AgreementReport {
  raters: string[];
  /** Items rated by two or more annotators: the ones agreement is measured on. */
  items: number;
  /** Share of those items where every annotator gave the same label. */
  observed: number | null;
  /** NesTools p = (N_T + N_F) / N: all say "correct" (N_T) or all say "has errors" (N_F), over N items. */
  nestoolsP: number | null;
  /** Cohen's κ for each pair of annotators who share items. */
  cohen: PairAgreement[];
  /** Fleiss' κ over all items with two or more ratings. */
  fleiss: number | null;
  perItem: ItemAgreement[];
}

/** Cohen's κ = (p_o − p_e) / (1 − p_e) over the items two raters share; null when p_e = 1 or no items. */
export function cohenKappa(pairs: readonly (readonly [string, string])[]): number | null {
  if (!pairs.length) return null;
  const n = pairs.length;
  const observed = pairs.filter(([x, y]) => x === y).length / n;
  const left = countOf(pairs.map((p) => p[0]));
  const right = countOf(pairs.map((p) => p[1]));
  let expected = 0;
  for (const [label, count] of left) expected += (count / n) * ((right.get(label) ?? 0) / n);
  return expected === 1 ? null : (observed - expected) / (1 - expected);
}

/**
 * Fleiss' κ over items rated by two or more raters: P_i = Σ_j n_ij(n_ij − 1) / (n_i(n_i − 1)),
 * P̄ their mean, p_j the share of all ratings in category j, P̄_e = Σ p_j², κ = (P̄ − P̄_e) / (1 − P̄_e).
 * With the same number of raters per item this is Fleiss (1971); differing counts use each item's n_i.
 */
export function fleissKappa(items: readonly (readonly string[])[]): number | null {
  const rated = items.filter((labels) => labels.length >= 2);
  if (!rated.length) return null;
  let sumP = 0;
  const totals = new Map<string, number>();
  let ratings = 0;
  for (const labels of rated) {
    const counts = countOf(labels);
    const n = labels.length;
    let agreeing = 0;
    for (const [label, c] of counts) {
      agreeing += c * (c - 1);
      totals.set(label, (totals.get(label) ?? 0) + c);
    }
    sumP += agreeing / (n * (n - 1));
    ratings += n;
  }
  const meanP = sumP / rated.length;
  let expected = 0;
  for (const total of totals.values()) expected += (total / ratings) ** 2;
  return expected === 1 ? null : (meanP - expected) / (1 - expected);
}

/** NesTools agreement: items all raters call correct plus items all call faulty, over all items. */
export function nestoolsP(items: readonly (readonly string[])[], isCorrect: (label: string) => boolean): number | null {
  const rated = items.filter((labels) => labels.length >= 2);
  if (!rated.length) return null;
  const allTrue = rated.filter((labels) => labels.every(isCorrect)).length;
  const allFalse = rated.filter((labels) => labels.every((l) => !isCorrect(l))).length;
  return (allTrue + allFalse) / rated.length;
}

/** Agreement of review decisions: `accept` counts as "correct" for the NesTools p, `reject`/`edit` as "has errors". */
export function agreementReport(ratings: readonly Rating[], isCorrect: (label: string) => boolean = (l) => l === 'accept'): AgreementReport {
  const raters = [...new Set(ratings.map((r) => r.rater))].sort();
  const byItem = [...groupBy(ratings, (r) => r.item)].filter(([, list]) => list.length >= 2);
  const perItem: ItemAgreement[] = byItem.map(([item, list]) => {
    let pairs = 0;
    let agreeing = 0;
    for (let i = 0; i < list.length; i++) {
      for (let j = i + 1; j < list.length; j++) {
        pairs++;
        if (list[i].label === list[j].label) agreeing++;
      }
    }
    return { item, labels: Object.fromEntries(list.map((r) => [r.rater, r.label])), pairShare: agreeing / pairs, unanimous: agreeing === pairs };
  });
  const labelLists = byItem.map(([, list]) => list.map((r) => r.label));
  const cohen: PairAgreement[] = [];
  for (let i = 0; i < raters.length; i++) {
    for (let j = i + 1; j < raters.length; j++) {
      const shared = byItem
        .map(([, list]) => [list.find((r) => r.rater === raters[i]), list.find((r) => r.rater === raters[j])] as const)
        .filter((p): p is readonly [Rating, Rating] => !!p[0] && !!p[1])
        .map(([x, y]) => [x.label, y.label] as const);
      if (!shared.length) continue;
      cohen.push({ a: raters[i], b: raters[j], items: shared.length, observed: shared.filter(([x, y]) => x === y).length / shared.length, kappa: cohenKappa(shared) });
    }
  }
  return {
    raters,
    items: perItem.length,
    observed: perItem.length ? perItem.filter((p) => p.unanimous).length / perItem.length : null,
    nestoolsP: nestoolsP(labelLists, isCorrect),
    cohen,
    fleiss: fleissKappa(labelLists),
    perItem,
  };
}

function countOf(labels: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const label of labels) counts.set(label, (counts.get(label) ?? 0) + 1);
  return counts;
}
