import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { main } from '../bin/cli.ts';
import type { BenchmarkScorer, EvalItem, JudgedItem } from '../core/eval.ts';
import { bootstrapDifferences, mean, percentileInterval } from '../eval/compare-bootstrap.ts';
import { resampledDifferences } from '../eval/compare.ts';
import { UnitTally } from '../core/eval-tally.ts';
import { Rng } from '../core/rng.ts';
import { noisyAnswer } from '../eval/noisy-oracle.ts';
import { pathResolver } from '../core/run.ts';
import { releasedItems, releasedSetFor, releasedSets } from '../eval/released.ts';
import { mtuScorer } from '../stages/mtu/score.ts';
import { nestoolsScorer } from '../stages/nestools/score.ts';
import { tooleScorer } from '../stages/toole/score.ts';
import { acebenchScorer } from '../stages/acebench/score.ts';
import { tooltalkScorer } from '../stages/tooltalk/score.ts';

let home: string;

const PROJECT = new URL('..', import.meta.url).pathname;
/** The items of a released set its recipe declares, read from its default place. */
const releasedItemsOf = (name: string) => releasedItems(releasedSets().find((set) => set.name === name)!, pathResolver(PROJECT, PROJECT));

async function cli(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (t) => out.push(t), err: (t) => err.push(t), home, cwd: home, env: {} });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

interface Row {
  category: string;
  metric: string;
  generated: number | null;
  released: number | null;
  difference: number | null;
  interval: { low: number; high: number; resamples: number } | null;
}
interface Doc {
  models: { model: string; items: { generated: number; released: number }; rows: Row[]; files: string[] }[];
  agreement?: { concordant: number; discordant: number; tied: number; agreement: number | null; rows: { category: string; metric: string; pairs: { generated: string; released: string }[] }[] };
  file: string;
}

const meanOf = (values: number[]) => ({ mean: mean(values) });

describe('bootstrap interval of a difference', () => {
  const a = [0.2, 0.9, 0.4, 0.7, 0.1, 0.8, 0.5, 0.3, 0.6, 1.0];
  const b = [0.1, 0.3, 0.2, 0.6, 0.0, 0.4, 0.5, 0.2, 0.3, 0.4];

  it('is the same for the same seed, another for another seed', () => {
    const first = bootstrapDifferences(a, b, meanOf, { resamples: 500, seed: 3 });
    expect(bootstrapDifferences(a, b, meanOf, { resamples: 500, seed: 3 })).toEqual(first);
    expect(bootstrapDifferences(a, b, meanOf, { resamples: 500, seed: 4 }).mean).not.toEqual(first.mean);
    expect(first.mean.resamples).toBe(500);
    // The observed difference (0.25) lies inside; a shift this large for ten scores is not zero.
    expect(first.mean.low).toBeLessThan(mean(a) - mean(b));
    expect(first.mean.high).toBeGreaterThan(mean(a) - mean(b));
    expect(first.mean.low).toBeGreaterThan(0);
  });

  it('of two identical sides contains 0, and is [0, 0] when every value is equal', () => {
    const same = bootstrapDifferences(a, [...a], meanOf, { resamples: 400, seed: 1 });
    expect(same.mean.low).toBeLessThan(0);
    expect(same.mean.high).toBeGreaterThan(0);
    const flat = bootstrapDifferences([0.5, 0.5, 0.5], [0.5, 0.5, 0.5, 0.5], meanOf, { resamples: 100, seed: 1 });
    expect(flat.mean).toEqual({ low: 0, high: 0, resamples: 100 });
  });

  it('takes the 2.5th and 97.5th percentiles, linear between order statistics', () => {
    const values = Array.from({ length: 41 }, (_, i) => i); // 0 … 40, shuffled order does not matter
    expect(percentileInterval(values.reverse())).toEqual({ low: 1, high: 39, resamples: 41 });
    expect(percentileInterval([0, 10])).toEqual({ low: 0.25, high: 9.75, resamples: 2 });
  });

  it('counts only the resamples in which both sides have the figure', () => {
    // Side a has "rare" only when its one unit carrying it is drawn.
    const stat = (units: { rare?: number; v: number }[]) => ({ v: mean(units.map((u) => u.v)), ...(units.some((u) => u.rare !== undefined) ? { rare: 1 } : {}) });
    const sideA = [{ v: 1, rare: 1 }, ...Array.from({ length: 9 }, () => ({ v: 1 }))];
    const sideB = Array.from({ length: 10 }, () => ({ v: 0, rare: 1 }));
    const intervals = bootstrapDifferences(sideA, sideB, stat, { resamples: 300, seed: 9 });
    expect(intervals.v.resamples).toBe(300);
    expect(intervals.rare.resamples).toBeLessThan(300);
    expect(intervals.rare.resamples).toBeGreaterThan(150);
  });
});

/** The judged items of a scoring, grouped in the scorer's units. */
function judged(scorer: BenchmarkScorer, items: EvalItem[], answer: (item: EvalItem) => string | null): { tables: unknown; units: JudgedItem[][] } {
  const report = scorer.score(items.map((item) => ({ item, output: answer(item) })));
  const figures = new Map(report.details.map((d) => [d.id, d.figures]));
  const units = new Map<string, JudgedItem[]>();
  for (const item of items) {
    const unit = scorer.unitOf?.(item) ?? item.sampleId;
    units.set(unit, [...(units.get(unit) ?? []), { item, figures: figures.get(item.id)! }]);
  }
  return { tables: { metrics: report.metrics, byCategory: report.byCategory }, units: [...units.values()] };
}

describe('re-aggregating judged figures (tablesOf)', () => {
  const cases: [string, BenchmarkScorer, () => EvalItem[]][] = [
    ['MTU-Bench', mtuScorer, () => releasedItemsOf('mtu-bench')],
    ['NesTools', nestoolsScorer, () => releasedItemsOf('nestools')],
    ['MetaTool', tooleScorer, () => releasedItemsOf('metatool').filter((_, i) => i % 20 === 0)],
    ['ToolTalk', tooltalkScorer, () => releasedItemsOf('tooltalk')],
    ['ACEBench', acebenchScorer, () => releasedItemsOf('acebench')],
  ];
  /** Mistakes to score: the noisy oracle, or (a scorer without one) every third item unanswered. */
  const answers = (scorer: BenchmarkScorer) => {
    let n = 0;
    return (item: EvalItem) => (scorer.corrupt ? noisyAnswer(scorer, item, 11).output : n++ % 3 === 0 ? null : scorer.oracle(item));
  };
  it.each(cases)('%s: gives the tables score gives, and counts a unit given twice twice', (_name, scorer, read) => {
    const items = read();
    const { tables, units } = judged(scorer, items, answers(scorer));
    expect(Object.values((tables as { metrics: Record<string, number> }).metrics).some((v) => v > 0 && v < 1)).toBe(true);
    expect(scorer.tablesOf!(units)).toEqual(tables);
    // Every unit twice: each rate is unchanged, and differs from giving the first unit alone twice more.
    const doubled = scorer.tablesOf!([...units, ...units]);
    for (const [metric, value] of Object.entries((tables as { metrics: Record<string, number> }).metrics)) expect(doubled.metrics[metric], metric).toBeCloseTo(value, 12);
  });

  it.each(cases)('%s: its tally gives exactly the tables tablesOf gives, for every draw, and the same intervals', (_name, scorer, read) => {
    expect(scorer.tally, 'the scorer has a tally').toBeDefined();
    const items = read();
    const { units } = judged(scorer, items, answers(scorer));
    const other = judged(scorer, items, (item) => scorer.oracle(item)).units;
    const tally = UnitTally.of(scorer.tally!, units);
    expect(tally.units).toBe(units.length);
    expect(tally.tablesOf(units.map((_, i) => i))).toEqual(scorer.tablesOf(units));
    const rng = Rng.derive(5, 'tally-test');
    for (let r = 0; r < 20; r++) {
      // Draws as the bootstrap makes them (repeats and all), and a few small ones that leave categories out.
      const drawn = Array.from({ length: r < 5 ? 1 + r : units.length }, () => rng.int(0, units.length - 1));
      expect(tally.tablesOf(drawn), `draw ${r}`).toEqual(scorer.tablesOf(drawn.map((i) => units[i])));
    }
    const options = { resamples: 30, seed: 7 };
    const byTally = resampledDifferences(scorer, tally, UnitTally.of(scorer.tally!, other), options);
    expect(byTally).toEqual(resampledDifferences({ ...scorer, tally: undefined }, units, other, options));
    expect(Object.keys(byTally).length).toBeGreaterThan(3);
  });

  it('ACEBench: a multi-turn dialogue drawn twice is two dialogues', () => {
    const items = releasedItemsOf('acebench').filter((item) => item.category === 'normal_multi_turn_user_adjust');
    // Dialogues with an even number: their first turn unanswered.
    const { units } = judged(acebenchScorer, items, (item) => (/[02468]$/.test(acebenchScorer.unitOf!(item)) && item === items.find((i) => acebenchScorer.unitOf!(i) === acebenchScorer.unitOf!(item)) ? null : acebenchScorer.oracle(item)));
    const failed = units.find((unit) => unit.length > 1 && unit.some((j) => j.figures.valid === false))!;
    const passed = units.find((unit) => unit.length > 1 && unit.every((j) => j.figures.valid === true))!;
    expect(acebenchScorer.unitOf!(failed[0].item)).toBe(acebenchScorer.unitOf!(failed[1].item));
    expect(acebenchScorer.tablesOf!([failed, failed, passed]).byCategory.normal_multi_turn_user_adjust.accuracy).toBeCloseTo(1 / 3, 12);
  });

  it('MTU: a dialogue drawn twice is two dialogues (success rate counts it twice)', () => {
    const items = releasedItemsOf('mtu-bench').filter((item) => item.category === 'M-M');
    const { units } = judged(mtuScorer, items, (item) => noisyAnswer(mtuScorer, item, 11).output);
    const failed = units.find((unit) => unit.length > 1 && unit.some((j) => j.figures.success === false))!;
    const passed = units.find((unit) => unit.every((j) => j.figures.success === true))!;
    expect(mtuScorer.tablesOf!([failed, failed, passed]).metrics.success_rate).toBeCloseTo(1 / 3, 12);
  });
});

describe('toolkiln eval compare', () => {
  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), 'tk-eval-compare-'));
    for (const [recipe, limit] of [['mtu', '150'], ['nestools', '30']]) {
      const run = await cli(['run', recipe, '--limit', limit, '--quiet', '--name', recipe]);
      expect(run.code, run.err).toBe(0);
    }
  }, 600_000);

  it('the oracle on a small MTU version and on MTU-Eval: 1.0 on both sides, no difference, a [0, 0] interval; results beside the version', async () => {
    const result = await cli(['eval', 'compare', 'mtu@v1', '--model', 'oracle', '--resamples', '50', '--json']);
    expect(result.code, result.err).toBe(0);
    const doc = JSON.parse(result.out) as Doc;
    const [oracle] = doc.models;
    expect(oracle.items.released).toBe(1009);
    const both = oracle.rows.filter((r) => r.difference !== null);
    expect(new Set(both.map((r) => r.category))).toEqual(new Set(['all', 'S-S', 'S-M', 'M-S', 'M-M', 'OOD']));
    for (const row of both) {
      expect([row.generated, row.released, row.difference], `${row.category} ${row.metric}`).toEqual([1, 1, 0]);
      // A category of the small version can be drawn empty: such a resample does not count.
      expect(row.interval).toEqual({ low: 0, high: 0, resamples: expect.any(Number) });
      expect(row.interval!.resamples).toBeGreaterThan(row.category === 'all' ? 49 : 0);
    }
    // MTU-Eval marks no hard set: the generated side's "hard" rows have no released figure.
    expect(oracle.rows.filter((r) => r.category === 'hard').every((r) => r.released === null && r.generated === 1)).toBe(true);
    const dir = join(home, 'datasets', 'mtu', 'v1.derived', 'eval', 'compare', 'mtu-bench');
    expect(doc.file).toBe(join(dir, 'oracle.json'));
    expect(JSON.parse(readFileSync(doc.file, 'utf8')).models[0].rows).toEqual(oracle.rows);
    for (const side of ['generated', 'released']) expect(existsSync(join(dir, 'oracle', side, 'items.jsonl'))).toBe(true);
    expect(existsSync(join(home, 'datasets', 'mtu', 'v1', 'eval'))).toBe(false);
    expect((await cli(['datasets', 'verify', 'mtu@v1'])).code).toBe(0);
    // Human text: the side-by-side table.
    const text = await cli(['eval', 'compare', 'mtu@v1', '--model', 'oracle', '--resamples', '20']);
    expect(text.out).toMatch(/category\s+metric\s+generated\s+released\s+difference\s+95% interval/);
    expect(text.out).toMatch(/M-M\s+success_rate\s+100\.0\s+100\.0\s+0\.0\s+\[0\.0, 0\.0\]/);
  });

  it('the noisy oracle scores below the released set somewhere, with intervals that move with the seed only', async () => {
    const run = async (seed: string) => JSON.parse((await cli(['eval', 'compare', 'nestools@v1', '--model', 'noisy-oracle', '--resamples', '100', '--seed', seed, '--json'])).out) as Doc;
    const [first, again, other] = [await run('5'), await run('5'), await run('6')];
    expect(again.models[0].rows).toEqual(first.models[0].rows);
    expect(other.models[0].rows).not.toEqual(first.models[0].rows);
    const tree = first.models[0].rows.find((r) => r.category === 'all' && r.metric === 'tree_accuracy')!;
    expect(tree.generated).toBeLessThan(1);
    expect(tree.released).toBeLessThan(1);
    expect(tree.interval!.low).toBeLessThanOrEqual(tree.difference!);
    expect(tree.interval!.high).toBeGreaterThanOrEqual(tree.difference!);
    expect(tree.interval!.high).toBeGreaterThan(tree.interval!.low);
  });

  it('oracle against noisy oracle: both sides rank the oracle first, full agreement', async () => {
    const result = await cli(['eval', 'compare', 'mtu@v1', '--model', 'oracle', '--model', 'noisy-oracle:3', '--resamples', '20', '--json']);
    expect(result.code, result.err).toBe(0);
    const { agreement, models } = JSON.parse(result.out) as Doc;
    expect(models.map((m) => m.model)).toEqual(['oracle', 'noisy-oracle-seed3']);
    expect(agreement!.discordant).toBe(0);
    expect(agreement!.concordant).toBeGreaterThan(20);
    expect(agreement!.agreement).toBe(1);
    for (const row of agreement!.rows) for (const pair of row.pairs) for (const order of [pair.generated, pair.released]) expect(['>', '='], `${row.category} ${row.metric}`).toContain(order);
    // Rows of one side only ("hard") are not compared.
    expect(agreement!.rows.some((r) => r.category === 'hard')).toBe(false);
  });

  it('a predictions file that ranks the models the other way on the released side: no agreement', async () => {
    // Model "flip": the gold answers on the generated side (above the noisy oracle), no answer at all on the released side (below it).
    const dir = join(home, 'datasets', 'mtu', 'v1.derived', 'eval', 'compare', 'mtu-bench', 'oracle');
    const lines = (side: string) => readFileSync(join(dir, side, 'items.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { id: string; output: string });
    writeFileSync(join(home, 'flip-generated.jsonl'), lines('generated').map((l) => JSON.stringify({ id: l.id, output: l.output })).join('\n') + '\n');
    writeFileSync(join(home, 'flip-released.jsonl'), lines('released').map((l) => JSON.stringify({ id: l.id, output: null })).join('\n') + '\n');
    const result = await cli(['eval', 'compare', 'mtu@v1', '--model', 'predictions:flip-generated.jsonl,flip-released.jsonl', '--model', 'noisy-oracle', '--resamples', '20', '--json']);
    expect(result.code, result.err).toBe(0);
    const { agreement } = JSON.parse(result.out) as Doc;
    expect(agreement!.concordant).toBe(0);
    expect(agreement!.discordant).toBeGreaterThan(20);
    expect(agreement!.agreement).toBe(0);
    const success = agreement!.rows.find((r) => r.category === 'all' && r.metric === 'success_rate')!;
    expect(success.pairs[0]).toMatchObject({ generated: '>', released: '<' });
    const text = await cli(['eval', 'compare', 'mtu@v1', '--model', 'predictions:flip-generated.jsonl,flip-released.jsonl', '--model', 'noisy-oracle', '--resamples', '5']);
    expect(text.out).toMatch(/ranking agreement of predictions-flip-generated, noisy-oracle-seed42: 0\.0% \(0 pair\(s\) ordered alike, \d+ the other way/);
  });

  it('says what is wrong in one line: no released reader, an unknown released set or model, a missing folder', async () => {
    expect(() => releasedSetFor('made-up-bench', 'x@v1')).toThrow(/x@v1 is scored by made-up-bench rules, and no released set is read by that scorer; eval compare compares versions scored by mtu-bench, nestools, metatool, tooltalk, acebench/);
    expect(releasedSets().map((s) => s.name)).toEqual(['mtu-bench', 'nestools', 'metatool', 'tooltalk', 'acebench']);
    const cases: [string[], RegExp][] = [
      [['eval', 'compare', 'mtu@v1', '--model', 'oracle', '--reference', 'nestools'], /--reference nestools: not a released set the mtu-bench scorer reads; mtu@v1 compares with mtu-bench/],
      [['eval', 'compare', 'mtu@v1', '--model', 'gpt-4o'], /--model gpt-4o needs --llm openai/],
      [['eval', 'compare', 'mtu@v1'], /say which model answers both sides/],
      [['eval', 'compare', 'mtu@v1', '--model', 'predictions:only-one.jsonl'], /give a predictions file for each side/],
      [['eval', 'compare', 'mtu@v1', '--model', 'noisy-oracle:x'], /the seed after noisy-oracle: is a whole number/],
      [['eval', 'compare', 'mtu@v1', '--model', 'oracle', '--model', 'oracle'], /--model oracle is given twice/],
      [['eval', 'compare', 'mtu@v1', '--model', 'oracle', '--reference-dir', 'nowhere'], /released mtu-bench not found at .*nowhere; put its files \(MTU-Eval/],
      [['eval', 'compare', 'mtu@v1', '--model', 'oracle', '--resamples', '0'], /--resamples must be at least 1/],
      [['eval', 'compare', 'nope@v1', '--model', 'oracle'], /no dataset named "nope"/],
    ];
    for (const [argv, message] of cases) {
      const result = await cli(argv);
      expect(result.code, argv.join(' ')).toBe(2);
      expect(result.err).toMatch(message);
      expect(result.err.split('\n')).toHaveLength(1);
    }
  });
});
