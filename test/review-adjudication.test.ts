import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readCsv } from '../review/csv.ts';
import { exportReview } from '../review/export.ts';
import { importReview, reviewAgreement } from '../review/import.ts';
import { ADJUDICATION_COLUMNS } from '../review/sheet.ts';
import { publishReviewDataset } from './fixtures/review/dataset.ts';
import { fill, readRawSheet, writeSheet } from './fixtures/review/sheets.ts';
import { versionSamples } from './helpers/version.ts';

const people = (n: number) => `[{"id":"call_0","tool":"book_table","arguments":{"restaurant":"Noma","people":${n}}}]`;

/** Three annotators, every item to all three (MTU-Bench: three experts, a fourth adjudicates). */
function threeAnnotators() {
  const home = mkdtempSync(join(tmpdir(), 'tk-review-adj-'));
  const { store, ref } = publishReviewDataset(home);
  const exported = exportReview({ store, ref, format: 'csv', annotators: 3, overlap: 1, raters: 3 });
  expect(exported.sheets.map((s) => s.items)).toEqual([4, 4, 4]);
  const answers: Record<string, Record<string, Record<string, string>>> = {
    'annotator-1': { 'rv-01': { decision: 'accept' }, 'rv-05': { decision: 'reject' }, 'rv-03': { decision: 'edit', corrected_query: 'Weather in Tokyo' }, 'rv-06': { decision: 'edit', corrected_calls: people(3) } },
    'annotator-2': { 'rv-01': { decision: 'accept' }, 'rv-05': { decision: 'reject' }, 'rv-03': { decision: 'edit', corrected_query: 'Weather in Tokyo' }, 'rv-06': { decision: 'edit', corrected_calls: people(4) } },
    'annotator-3': { 'rv-01': { decision: 'accept' }, 'rv-05': { decision: 'accept', notes: 'unit is implied' }, 'rv-03': { decision: 'edit', corrected_query: 'Weather in Tokyo' }, 'rv-06': { decision: 'edit', corrected_calls: people(3) } },
  };
  const files = exported.sheets.map((s) => ({ path: writeSheet(join(home, basename(s.file)), fill(readRawSheet(s.file), answers[s.annotator!])), shown: basename(s.file) }));
  return { home, store, ref, files };
}

describe('several annotators: agreement and adjudication', () => {
  it('computes agreement, writes an adjudication sheet for disagreements, and applies nothing yet', () => {
    const { store, ref, files } = threeAnnotators();
    const result = importReview({ store, ref, files });
    expect(result.problems).toEqual([]);
    expect(result).toMatchObject({ status: 'needs-adjudication', newVersion: null, counts: { decided: 12, items: 2, disagreements: 2 } });
    expect(store.versions('demo')).toEqual(['v1']);

    // decisions per item: rv-01 a a a, rv-05 r r a, rv-03 e e e, rv-06 e e e (edits differ, decisions agree)
    const a = result.agreement;
    expect(a.items).toBe(4);
    expect(a.observed).toBe(3 / 4);
    expect(a.nestoolsP).toBe(3 / 4); // rv-01 all "correct", rv-03 and rv-06 all "has errors"
    // P_i = 1, 1/3, 1, 1 → P̄ = 5/6; accept 4, reject 2, edit 6 of 12 → P̄_e = 56/144 = 7/18; κ = (5/6 − 7/18)/(11/18) = 8/11
    expect(a.fleiss).toBeCloseTo(8 / 11, 12);
    // 1 vs 3: p_o = 3/4; p_e = (1/4)(2/4) + (1/4)(0) + (2/4)(2/4) = 3/8 → κ = (3/8)/(5/8) = 3/5
    expect(a.cohen.map((p) => [p.a, p.b, p.observed])).toEqual([
      ['annotator-1', 'annotator-2', 1],
      ['annotator-1', 'annotator-3', 3 / 4],
      ['annotator-2', 'annotator-3', 3 / 4],
    ]);
    expect(a.cohen[0].kappa).toBeCloseTo(1, 12);
    expect(a.cohen[1].kappa).toBeCloseTo(3 / 5, 12);

    const sheet = readCsv(result.adjudicationSheet!);
    expect(sheet.header).toEqual([...ADJUDICATION_COLUMNS]);
    expect(sheet.records.map((r) => r.cells.sample_id)).toEqual(['rv-05', 'rv-06']);
    expect(sheet.records[0].cells.annotations).toBe('annotator-1: reject\nannotator-2: reject\nannotator-3: accept\n  notes: unit is implied');
    expect(sheet.records[1].cells.annotations).toContain('annotator-2: edit\n  corrected_calls: [\n    {"id":"call_0","tool":"book_table","arguments":{"restaurant":"Noma","people":4}}\n  ]');
    expect(sheet.records.every((r) => r.cells.annotator === 'adjudicator' && r.cells.decision === '')).toBe(true);

    // The agreement command gives the same figures and the same sheet.
    const agreement = reviewAgreement(store, ref, files);
    expect(agreement).toMatchObject({ disagreements: 2, adjudicationSheet: result.adjudicationSheet });
    expect(agreement.agreement.fleiss).toBeCloseTo(8 / 11, 12);
  });

  it("publishes once the adjudication sheet is filled: the adjudicator's decisions win", () => {
    const { home, store, ref, files } = threeAnnotators();
    const pending = importReview({ store, ref, files });
    const raw = readRawSheet(pending.adjudicationSheet!);
    const half = writeSheet(join(home, 'adjudication-half.csv'), fill(raw, { 'rv-05': { decision: 'reject', notes: 'no unit in the query' } }));
    // One disagreement still open: still nothing applied.
    expect(importReview({ store, ref, files: [...files, { path: half }] })).toMatchObject({ status: 'needs-adjudication', counts: { disagreements: 1 } });
    expect(store.versions('demo')).toEqual(['v1']);

    const done = writeSheet(join(home, 'adjudication-done.csv'), fill(raw, { 'rv-05': { decision: 'reject', notes: 'no unit in the query' }, 'rv-06': { decision: 'edit', corrected_calls: people(4) } }));
    const result = importReview({ store, ref, files: [...files, { path: done, shown: 'adjudication-done.csv' }] });
    expect(result.problems).toEqual([]);
    expect(result).toMatchObject({ status: 'published', newVersion: 'v2', counts: { items: 4, accepted: 1, rejected: 1, edited: 2, adjudicated: 2 } });
    const next = store.resolve('demo@v2');
    const byId = new Map(versionSamples(store, next).map((s) => [s.id, s]));
    expect(byId.get('rv-06')!.expected.calls).toEqual(JSON.parse(people(4)));
    expect(byId.get('rv-06')!.meta.review![0]).toMatchObject({ decision: 'edit', adjudicated: true });
    expect(byId.get('rv-03')!.meta.review![0]).toMatchObject({ decision: 'edit', adjudicated: false });
    expect(byId.has('rv-05')).toBe(false);
    expect(store.manifest(next).stats.review).toMatchObject({ items: { adjudicated: 2 }, annotators: { 'annotator-1': 4, 'annotator-2': 4, 'annotator-3': 4 }, agreement: { items: 4, observed: 0.75 } });

    // An item adjudicated twice is a duplicate.
    const twice = importReview({ store, ref, files: [...files, { path: done }, { path: writeSheet(join(home, 'adjudication-again.csv'), readRawSheet(done)) }] });
    expect(twice.status).toBe('invalid');
    expect(twice.problems.map((p) => p.message)).toEqual([
      expect.stringMatching(/^the adjudicator already answered item it-\w+ in .*adjudication-done\.csv row 2; import each answer once$/),
      expect.stringMatching(/^the adjudicator already answered item it-\w+ in .*adjudication-done\.csv row 3; import each answer once$/),
    ]);
  });
});
