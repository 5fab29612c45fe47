import { describe, expect, it } from 'vitest';
import { agreementReport, cohenKappa, fleissKappa, nestoolsP } from '../review/agreement.ts';

describe('agreement figures, against values computed by hand', () => {
  it("Cohen's κ for two annotators", () => {
    const a = ['accept', 'accept', 'accept', 'reject', 'reject', 'edit', 'accept', 'accept', 'reject', 'edit'];
    const b = ['accept', 'accept', 'reject', 'reject', 'reject', 'edit', 'accept', 'edit', 'reject', 'accept'];
    // p_o = 7/10; A: accept 5, reject 3, edit 2; B: accept 4, reject 4, edit 2
    // p_e = .5·.4 + .3·.4 + .2·.2 = .36; κ = (.7 − .36) / (1 − .36) = .53125
    expect(cohenKappa(a.map((x, i) => [x, b[i]] as const))).toBeCloseTo(0.53125, 12);
    expect(cohenKappa([['accept', 'accept'], ['accept', 'accept']])).toBeNull(); // p_e = 1: undefined
    expect(cohenKappa([])).toBeNull();
  });

  it("Fleiss' κ: the 14-rater, 5-category example of Fleiss (1971) as tabulated on Wikipedia", () => {
    const counts = [
      [0, 0, 0, 0, 14],
      [0, 2, 6, 4, 2],
      [0, 0, 3, 5, 6],
      [0, 3, 9, 2, 0],
      [2, 2, 8, 1, 1],
      [7, 7, 0, 0, 0],
      [3, 2, 6, 3, 0],
      [2, 5, 3, 2, 2],
      [6, 5, 2, 1, 0],
      [0, 2, 2, 3, 7],
    ];
    const items = counts.map((row) => row.flatMap((n, category) => Array<string>(n).fill(`c${category + 1}`)));
    // Σ_i Σ_j n_ij(n_ij − 1) = 688 over 10 items of 14·13 = 182 → P̄ = 688 / 1820;
    // column totals 20, 28, 39, 21, 32 of 140 → P̄_e = 4170 / 19600.
    const expected = (688 / 1820 - 4170 / 19600) / (1 - 4170 / 19600);
    expect(fleissKappa(items)).toBeCloseTo(expected, 12);
    expect(fleissKappa(items)).toBeCloseTo(0.20993, 5);
  });

  it("Fleiss' κ for three annotators' review decisions", () => {
    const items = [
      ['accept', 'accept', 'accept'],
      ['accept', 'accept', 'reject'],
      ['reject', 'reject', 'edit'],
      ['edit', 'edit', 'edit'],
    ];
    // P_i = 1, 1/3, 1/3, 1 → P̄ = 2/3; totals accept 5, reject 3, edit 4 of 12 → P̄_e = 50/144 = 25/72
    // κ = (2/3 − 25/72) / (1 − 25/72) = 23/47
    expect(fleissKappa(items)).toBeCloseTo(23 / 47, 12);
  });

  it('NesTools p = (N_T + N_F) / N: accept is "correct", reject and edit are "has errors"', () => {
    const items = [
      ['accept', 'accept'], // N_T
      ['reject', 'edit'], // N_F
      ['accept', 'reject'], // disagree
      ['edit', 'edit'], // N_F
    ];
    expect(nestoolsP(items, (l) => l === 'accept')).toBe(3 / 4);
    expect(nestoolsP([['accept']], (l) => l === 'accept')).toBeNull(); // no item with two raters
  });

  it('reports per-item agreement and each pair of annotators over the items they share', () => {
    const ratings = [
      ['i1', 'ann', 'accept'],
      ['i1', 'bob', 'accept'],
      ['i1', 'cy', 'accept'],
      ['i2', 'ann', 'accept'],
      ['i2', 'bob', 'reject'],
      ['i3', 'bob', 'edit'],
      ['i3', 'cy', 'edit'],
      ['i4', 'ann', 'reject'], // one rater only: not part of agreement
    ].map(([item, rater, label]) => ({ item, rater, label }));
    const report = agreementReport(ratings);
    expect(report.raters).toEqual(['ann', 'bob', 'cy']);
    expect(report.items).toBe(3);
    expect(report.perItem).toEqual([
      { item: 'i1', labels: { ann: 'accept', bob: 'accept', cy: 'accept' }, pairShare: 1, unanimous: true },
      { item: 'i2', labels: { ann: 'accept', bob: 'reject' }, pairShare: 0, unanimous: false },
      { item: 'i3', labels: { bob: 'edit', cy: 'edit' }, pairShare: 1, unanimous: true },
    ]);
    expect(report.observed).toBeCloseTo(2 / 3, 12);
    expect(report.nestoolsP).toBeCloseTo(2 / 3, 12); // i1 all correct, i3 all faulty, i2 split
    expect(report.cohen.map((p) => [p.a, p.b, p.items, p.observed])).toEqual([
      ['ann', 'bob', 2, 0.5],
      ['ann', 'cy', 1, 1],
      ['bob', 'cy', 2, 1],
    ]);
    // ann/bob: (accept,accept), (accept,reject): p_o = .5; ann accept 2/2, bob accept 1/2 reject 1/2 → p_e = .5 → κ = 0
    expect(report.cohen[0].kappa).toBeCloseTo(0, 12);
    // Fleiss over i1 (3 raters), i2, i3 (2 each): P = 1, 0, 1 → P̄ = 2/3; accept 4, reject 1, edit 2 of 7
    // P̄_e = (16 + 1 + 4) / 49 = 21/49 → κ = (2/3 − 3/7) / (1 − 3/7) = (5/21) / (4/7) = 5/12
    expect(report.fleiss).toBeCloseTo(5 / 12, 12);
  });
});
