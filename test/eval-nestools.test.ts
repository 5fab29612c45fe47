import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { EvalItem } from '../core/eval.ts';
import type { Sample } from '../core/records.ts';
import { noisyAnswer, NOISE_RATES } from '../eval/noisy-oracle.ts';
import { fromNesToolsRecord } from '../stages/nestools/import-export.ts';
import { countItem, nestoolsScorer, type GoldCall, type PredictedCall, normalizeDate, readCalls, rougeLF, valueScore } from '../stages/nestools/score.ts';
import { loadSealToolsLibrary } from '../stages/sources/seal-tools.ts';
import { fromSealToolsRecord } from '../stages/nestools/import-export.ts';

const DATA = new URL('../../shared/data/', import.meta.url).pathname;

const lines = (path: string) => readFileSync(path, 'utf8').split('\n').filter(Boolean);
const itemsOf = (samples: Sample[]) => samples.flatMap((s) => nestoolsScorer.items(s));
const oracleReport = (items: EvalItem[]) => nestoolsScorer.score(items.map((item) => ({ item, output: nestoolsScorer.oracle(item) })));

function expectPerfect(report: ReturnType<typeof oracleReport>): void {
  for (const table of [report.metrics, ...Object.values(report.byCategory)]) for (const value of Object.values(table)) expect(value).toBe(1);
}

describe('NesTools scorer', () => {
  it('scores the gold answers of the released NesTools test set 1.0 on every metric (imported by the recipe)', () => {
    const samples = lines(`${DATA}reference/nestools/test_data.jsonl`).map((line, i) => fromNesToolsRecord(JSON.parse(line), { where: `line ${i + 1}` }));
    const report = oracleReport(itemsOf(samples));
    expect(report.items).toBe(1000);
    expectPerfect(report);
    expect(Object.keys(report.byCategory).sort()).toEqual(['nested', 'non-nested']);
    expect(report.metrics).toHaveProperty('nesting_f1', 1);
  });

  it('scores the gold answers of the released Seal-Tools sets 1.0 on every metric', () => {
    const library = loadSealToolsLibrary(`${DATA}sources/seal-tools/tool.jsonl`);
    const refused: string[] = [];
    for (const file of ['dev', 'test_in_domain', 'test_out_domain']) {
      const samples = lines(`${DATA}reference/seal-tools/${file}.jsonl`).flatMap((line, i) => {
        try {
          return [fromSealToolsRecord(JSON.parse(line), library.byName, { where: `${file}:${i + 1}` })];
        } catch (error) {
          refused.push((error as Error).message);
          return [];
        }
      });
      const report = oracleReport(itemsOf(samples));
      expect(report.items).toBeGreaterThan(600);
      expectPerfect(report);
    }
    // The import refuses one released record whose call uses a placeholder no earlier call returns.
    expect(refused).toEqual([expect.stringContaining('test_out_domain:242')]);
  });

  it('ROUGE-L F and dates as utils.py compares string values', () => {
    expect(rougeLF('the cat sat', 'the cat sat')).toBeCloseTo(1, 7);
    // LCS "the cat" of 3 hypothesis and 2 reference words: P = 2/3, R = 1, F = 0.8.
    expect(rougeLF('the cat sat', 'the cat')).toBeCloseTo(0.8, 7);
    expect(() => rougeLF('', 'x')).toThrow();
    expect(normalizeDate('March 5th, 2024')).toBe('2024-03-05');
    expect(normalizeDate('March 5st, 2024')).toBe('March 5st, 2024');
    expect(normalizeDate('2024-03-05')).toBe('2024-03-05');
    // Equal after date normalising, but only through ROUGE: its 1e-8 keeps the F just below 1, as in utils.py.
    expect(valueScore('2024-03-05', 'March 5th, 2024')).toBeCloseTo(1, 7);
    expect(valueScore('2024-03-05', 'March 5th, 2024')).toBeLessThan(1);
    expect(valueScore('Paris', 'paris')).toBeCloseTo(1, 7);
    expect(valueScore(3, 3.0)).toBe(1);
    expect(valueScore(3, '3')).toBe(0);
    expect(valueScore(['a', 'b c'], ['a', 'b'])).toBeCloseTo((1 + 2 / 3) / 2, 7);
    expect(valueScore(['a'], ['a', 'b'])).toBe(0);
    expect(valueScore('x', '')).toBe(0); // rouge raises on an empty text: utils.py scores 0
    expect(valueScore(true, 1)).toBe(1);
  });

  it('API, order, parameter and nesting counts of hand-made predictions', () => {
    const gold: GoldCall[] = [
      { api_name: 'search', api_id: 1, parameters: { q: 'red shoes' }, responses: ['API_call_0'] },
      { api_name: 'buy', api_id: 2, parameters: { item: 'API_call_0', count: 2 }, responses: ['API_call_1'] },
    ];
    const right: PredictedCall[] = [
      { api_name: 'search', api_id: 1, parameters: { q: 'red shoes' }, responses: { result: 'API_call_0' } },
      { api_name: 'buy', api_id: 2, parameters: { item: 'API_call_0', count: 2 }, responses: { order: 'API_call_1' } },
    ];
    expect(countItem(gold, right)).toMatchObject({ format: 1, apiCorrect: 2, orderCorrect: 1, orderGold: 1, paramCorrect: 2 + 1, paramGold: 3, nestCorrect: 1, nestGold: 1, tree: 1 });
    // The nested value points at no return value of the matched parent: a nesting miss and a parameter miss.
    const misplaced = [right[0], { ...right[1], parameters: { item: 'API_call_7', count: 2 } }];
    expect(countItem(gold, misplaced)).toMatchObject({ nestCorrect: 0, nestPredicted: 1, paramCorrect: 2, tree: 0 });
    // Reversed order: APIs all right, the one pair wrong; the nested value now comes before its parent.
    expect(countItem(gold, [right[1], right[0]])).toMatchObject({ apiCorrect: 2, orderCorrect: 0, orderPredicted: 1, nestCorrect: 0, tree: 0 });
    // One call only, a wrong API among two: order has no predicted pair.
    expect(countItem(gold, [{ api_name: 'sell', api_id: 9, parameters: {}, responses: {} }])).toMatchObject({ apiCorrect: 0, apiPredicted: 1, orderPredicted: 0, orderGold: 1, paramPredicted: 0 });
    // Unreadable: format 0, nothing predicted.
    expect(countItem(gold, null)).toMatchObject({ format: 0, apiPredicted: 0, orderGold: 1, tree: 0 });
  });

  it('reads the list between the first "[" and the last "]"; anything else is a format error, never a crash', () => {
    expect(readCalls('Here: [{"api_name": "a", "api_id": 1, "parameters": {}}] done')).toHaveLength(1);
    expect(readCalls("[{'api_name': 'a', 'api_id': 1, 'parameters': {'x': True}}]")).toHaveLength(1);
    expect(readCalls('[]')).toEqual([]);
    expect(readCalls('no list')).toBeNull();
    expect(readCalls('[{"api_name": "a", "parameters": {}}]')).toBeNull(); // no api_id
    expect(readCalls('[{"api_name": "a", "api_id": 1, "parameters": "x=1"}]')).toBeNull();
    expect(readCalls('[{"api_name": "a", "api_id": 1, "parameters": {}}')).toBeNull();
    expect(readCalls('[1, 2]')).toBeNull();
    expect(readCalls(null)).toBeNull();
  });

  it('micro-averages over the set and reports why an item is wrong', () => {
    const sample = fromNesToolsRecord(JSON.parse(lines(`${DATA}reference/nestools/test_data.jsonl`)[0]));
    const [item] = nestoolsScorer.items(sample);
    const gold = JSON.parse(nestoolsScorer.oracle(item)) as { api_name: string; parameters: Record<string, unknown> }[];
    const dropped = gold.map((call, i) => (i === 0 ? { ...call, parameters: {} } : call));
    const report = nestoolsScorer.score([
      { item, output: JSON.stringify(gold) },
      { item: { ...item, id: 'b' }, output: 'I cannot do this.' },
      { item: { ...item, id: 'c' }, output: JSON.stringify(dropped) },
      { item: { ...item, id: 'd' }, output: null },
    ]);
    expect(report.metrics.format_accuracy).toBe(0.5);
    expect(report.metrics.tree_accuracy).toBe(0.25);
    const goldParams = gold.reduce((n, c) => n + Object.keys(c.parameters).length, 0);
    const firstParams = Object.keys(gold[0].parameters).length;
    expect(report.metrics.parameter_recall).toBeCloseTo((2 * goldParams - firstParams) / (4 * goldParams), 12);
    expect(report.metrics.parameter_precision).toBe(1);
    expect(report.details.map((d) => d.note)).toEqual([undefined, expect.stringContaining('format error'), expect.stringContaining('parameters'), 'no output']);
  });

  it('the noisy oracle: drawn at the stated rates, and each applied mistake costs what it should', () => {
    const samples = lines(`${DATA}reference/nestools/test_data.jsonl`).map((line) => fromNesToolsRecord(JSON.parse(line)));
    const items = itemsOf(samples);
    const answers = items.map((item) => ({ item, ...noisyAnswer(nestoolsScorer, item, 3) }));
    const n = items.length;
    for (const [corruption, p] of Object.entries(NOISE_RATES)) {
      expect(Math.abs(answers.filter((a) => a.drawn === corruption).length - n * p)).toBeLessThan(4 * Math.sqrt(n * p * (1 - p)));
    }
    const report = nestoolsScorer.score(answers.map((a) => ({ item: a.item, output: a.output })));
    // The released samples offer only the gold APIs: no other tool to pick, so wrong tools and extra calls cannot be applied.
    expect(answers.some((a) => a.applied && (a.drawn === 'wrong-tool' || a.drawn === 'extra-call'))).toBe(false);
    // A dropped parameter is one parameter fewer predicted: predicted = gold − drops.
    const dropped = answers.filter((a) => a.applied && a.drawn === 'drop-parameter').length;
    const goldParams = report.details.reduce((s, d) => s + Number(d.figures.paramGold), 0);
    const predictedParams = report.details.reduce((s, d) => s + Number(d.figures.paramPredicted), 0);
    expect(predictedParams).toBe(goldParams - dropped);
    // Tree accuracy is lost exactly on the items a mistake was applied to.
    const applied = answers.filter((a) => a.applied).length;
    expect(report.metrics.tree_accuracy).toBeCloseTo(1 - applied / n, 12);
  });
});
