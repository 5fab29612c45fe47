import { readFileSync } from 'node:fs';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { findNearDuplicates, levenshteinRatio, normalizeText, similarPairs } from '../core/dedup/near-duplicates.ts';
import { UserError } from '../core/errors.ts';
import { Rng } from '../core/rng.ts';
import { applyScanStage } from '../core/stage.ts';
import { dedupNearStage } from '../stages/dedup-near.ts';
import { sample, stageContext } from './fixtures/embed/samples.ts';

const SHARED = new URL('../../shared/data/', import.meta.url);

describe('near-duplicates on plain strings', () => {
  it('normalises, then keeps the first of each group and names what the others repeat', () => {
    const texts = [
      'Can you find me a flight to Paris?', // 0 kept
      'can you find me a flight to paris', // 1 exact after normalisation → 0
      'Can you find me a flight to Pariss?', // 2 near → 0
      'What is the weather in Rome today?', // 3 kept
      'Book a table for two tonight.', // 4 kept
      'What is the weather in Rome today!!', // 5 exact → 3
      'Can you find me a flight to Pariss', // 6 exact of 2, which was dropped → points to 0
    ];
    const result = findNearDuplicates(texts, { ratio: 0.9 });
    expect(result.kept).toEqual([0, 3, 4]);
    expect(result.duplicates).toEqual([
      { index: 1, duplicateOf: 0, kind: 'exact', ratio: 1 },
      { index: 2, duplicateOf: 0, kind: 'near', ratio: levenshteinRatio(normalizeText(texts[2]), normalizeText(texts[0])) },
      { index: 5, duplicateOf: 3, kind: 'exact', ratio: 1 },
      { index: 6, duplicateOf: 0, kind: 'near', ratio: result.duplicates[1].ratio },
    ]);
    expect(normalizeText('  Hello,   WORLD!! ')).toBe('hello world');
  });

  it('keeps a text whose only match was itself dropped (the keeper decides, not the chain)', () => {
    // b is near a; c is near b but not near a: c stays.
    const a = 'abcdefghij';
    const b = 'abcdefghiX';
    const c = 'abcdefghXX';
    expect(levenshteinRatio(a, c)).toBeLessThan(0.9);
    const result = findNearDuplicates([a, b, c], { ratio: 0.9, normalize: (t) => t });
    expect(result.kept).toEqual([0, 2]);
    expect(result.duplicates).toEqual([{ index: 1, duplicateOf: 0, kind: 'near', ratio: 0.9 }]);
  });

  it('finds exactly the pairs all-pairs comparison finds, at any ratio', () => {
    const rng = new Rng(3);
    const alphabet = 'abcd ';
    const letter = () => alphabet[rng.int(0, alphabet.length - 1)];
    for (let round = 0; round < 6; round++) {
      const base = Array.from({ length: 15 }, () => Array.from({ length: rng.int(3, 60) }, letter).join(''));
      const strings = new Set(base);
      for (let k = 0; k < 100; k++) {
        const s = rng.pick(base).split('');
        for (let e = rng.int(0, 8); e > 0; e--) {
          const at = rng.int(0, s.length);
          const op = rng.int(0, 2);
          if (op === 0) s.splice(at, 0, letter());
          else if (op === 1 && s.length > 1) s.splice(at, 1);
          else s[Math.min(at, s.length - 1)] = letter();
        }
        strings.add(s.join(''));
      }
      const list = [...strings];
      for (const ratio of [0.4, 0.6, 0.75, 0.85, 0.9, 0.97]) {
        const truth: string[] = [];
        for (let i = 0; i < list.length; i++) for (let j = i + 1; j < list.length; j++) if (levenshteinRatio(list[i], list[j]) >= ratio) truth.push(`${i},${j}`);
        const found = similarPairs(list, ratio);
        expect(found.pairs.map(([i, j]) => `${i},${j}`)).toEqual(truth.sort((x, y) => Number(x.split(',')[0]) - Number(y.split(',')[0]) || Number(x.split(',')[1]) - Number(y.split(',')[1])));
        expect(found.comparisons).toBeLessThan((list.length * (list.length - 1)) / 2);
      }
    }
  });

  it('rejects a ratio out of range', () => {
    for (const ratio of [0, -0.5, 1.5, NaN]) expect(() => findNearDuplicates(['a'], { ratio })).toThrow(UserError);
    expect(() => findNearDuplicates(['a'], { ratio: 2 })).toThrow(/ratio 2 is out of range/);
  });

  it('handles the 20,614 ToolE queries', () => {
    const rows = parse(readFileSync(new URL('reference/metatool/all_clean_data.csv', SHARED)), { columns: true }) as { Query: string }[];
    const texts = rows.map((r) => r.Query);
    expect(texts).toHaveLength(20614);
    const result = findNearDuplicates(texts, { ratio: 0.9 });
    expect(result.stats.distinct).toBe(new Set(texts.map(normalizeText)).size);
    // Every repeat of an earlier normalised text is dropped (as exact, or as near when that text was itself near another).
    const seen = new Set<string>();
    const repeats = texts.flatMap((text, i) => (seen.has(normalizeText(text)) ? [i] : (seen.add(normalizeText(text)), [])));
    expect(repeats).toHaveLength(79);
    const droppedAt = new Set(result.duplicates.map((d) => d.index));
    expect(repeats.every((i) => droppedAt.has(i))).toBe(true);
    const at = (text: string) => texts.indexOf(text);
    const later = at('How do I convert 100 US dollars to Euros?');
    const earlier = at('How do I convert US dollars to Euros?');
    const dropped = result.duplicates.find((d) => d.index === Math.max(later, earlier))!;
    expect(dropped).toMatchObject({ kind: 'near', duplicateOf: Math.min(later, earlier) });
    expect(result.kept.length + result.duplicates.length).toBe(texts.length);
  });
});

describe('dedup-near stage', () => {
  const samples = [
    sample('s1', 'Find me a cheap flight to Tokyo.', { labels: ['FlightTool'] }),
    sample('s2', 'find me a cheap flight to tokyo', { labels: ['FlightTool'] }),
    sample('s3', 'Find me a cheap flight to Tokio.', { labels: ['FlightTool'] }),
    sample('s4', 'Find me a cheap flight to Tokyo!', { labels: ['TravelTool'] }),
    sample('s5', 'What will the weather be like tomorrow?', { labels: ['WeatherTool'] }),
  ];

  it('rejects repeats with the reason and the id they repeat', async () => {
    const { ctx, reports } = stageContext();
    const { out, rejects } = await applyScanStage(dedupNearStage({ ratio: 0.9 }), samples, ctx);
    expect(out.map((s) => s.id)).toEqual(['s1', 's5']);
    expect(rejects!.map((r) => [r.recordId, r.reason, r.duplicateOf])).toEqual([
      ['s2', 'exact_duplicate', 's1'],
      ['s3', 'near_duplicate', 's1'],
      ['s4', 'exact_duplicate', 's1'],
    ]);
    expect(rejects![1].detail).toMatch(/^Levenshtein ratio 0\.9\d\d to s1: "Find me a cheap flight to Tokyo\."$/);
    expect(reports.dedupNear).toMatchObject({ in: 5, kept: 2, exactDuplicates: 2, nearDuplicates: 1 });
  });

  it('can compare only among samples with the same gold tools', async () => {
    const { ctx } = stageContext();
    const { out, rejects } = await applyScanStage(dedupNearStage({ ratio: 0.9, scope: 'label' }), samples, ctx);
    expect(out.map((s) => s.id)).toEqual(['s1', 's4', 's5']);
    expect(rejects!.map((r) => r.recordId)).toEqual(['s2', 's3']);
  });

  it('checks its config', () => {
    expect(() => dedupNearStage({ ratio: 1.5 })).toThrow();
  });
});
