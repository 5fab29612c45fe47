import type { Embedder } from '../../core/embed/types.ts';
import { levelsOf, type OverlapConfig, type OverlapLevel } from '../../core/overlap/config.ts';
import { measureOverlap } from '../../core/overlap/measure.ts';
import { PLANT_KINDS, type PlantedSet, type PlantKind } from './overlap-plants.ts';

/**
 * What `datasets overlap` finds among the plants of overlap-plants.ts, with a config's thresholds:
 * per benchmark and kind of plant, the share found at each level, by the levels that kind is meant
 * to be found by, and at any level (for a clean look-alike: the share flagged, the false positives).
 */

/** The levels each kind is meant to be found by: a paraphrase by its text, a call plant by its calls. */
export const FOUND_BY: Record<PlantKind, 'text' | 'calls' | 'any'> = { verbatim: 'any', paraphrase: 'text', call: 'calls', translation: 'any', 'look-alike': 'any' };

export interface PlantScores {
  benchmark: string;
  kind: PlantKind;
  plants: number;
  /** Plants at or over each level's threshold. */
  byLevel: Partial<Record<OverlapLevel, number>>;
  /** Plants found by the levels FOUND_BY names. */
  found: number;
}

const isText = (level: OverlapLevel) => level.startsWith('ngram-') || level === 'embedding';

/** Measures each planted set against its reference half and counts the plants found. */
export async function scorePlants(sets: readonly PlantedSet[], config: Pick<OverlapConfig, 'ngrams' | 'thresholds'>, embedder: Embedder): Promise<PlantScores[]> {
  const levels = levelsOf(config);
  const out: PlantScores[] = [];
  for (const set of sets) {
    const hitLevels = new Map<string, Set<OverlapLevel>>();
    await measureOverlap(
      set.plants.map((p) => p.sample),
      [set.reference],
      { config, embedder, onSample: (sample, hits) => hitLevels.set(sample.id, new Set(hits.map((h) => h.level))) },
    );
    for (const kind of PLANT_KINDS) {
      const plants = set.plants.filter((p) => p.kind === kind);
      if (!plants.length) continue;
      const by = FOUND_BY[kind];
      const found = plants.filter((p) => [...(hitLevels.get(p.sample.id) ?? [])].some((level) => by === 'any' || (by === 'text') === isText(level))).length;
      const byLevel = Object.fromEntries(levels.map((level) => [level, plants.filter((p) => hitLevels.get(p.sample.id)?.has(level)).length]));
      out.push({ benchmark: set.benchmark, kind, plants: plants.length, byLevel, found });
    }
  }
  return out;
}

/** The scores of every benchmark added up, per kind (`benchmark: 'all'`). */
export function pooled(scores: readonly PlantScores[]): PlantScores[] {
  return PLANT_KINDS.flatMap((kind) => {
    const of = scores.filter((s) => s.kind === kind);
    if (!of.length) return [];
    const byLevel: Partial<Record<OverlapLevel, number>> = {};
    for (const s of of) for (const [level, n] of Object.entries(s.byLevel) as [OverlapLevel, number][]) byLevel[level] = (byLevel[level] ?? 0) + n;
    return [{ benchmark: 'all', kind, plants: of.reduce((n, s) => n + s.plants, 0), byLevel, found: of.reduce((n, s) => n + s.found, 0) }];
  });
}

const percent = (n: number, of: number) => `${((n / Math.max(1, of)) * 100).toFixed(1)}%`;

/** A Markdown table of the scores (the one docs/overlap.md shows). */
export function scoresTable(scores: readonly PlantScores[], levels: readonly OverlapLevel[]): string {
  const header = ['benchmark', 'plants', 'n', ...levels, 'found by', 'found'];
  return [
    `| ${header.join(' | ')} |`,
    `|${header.map((_, i) => (i < 2 ? '---' : '---:')).join('|')}|`,
    ...scores.map((s) => `| ${s.benchmark} | ${s.kind} | ${s.plants} | ${levels.map((l) => percent(s.byLevel[l] ?? 0, s.plants)).join(' | ')} | ${FOUND_BY[s.kind]} | ${s.kind === 'look-alike' ? `**${percent(s.found, s.plants)} flagged**` : `**${percent(s.found, s.plants)}**`} |`),
  ].join('\n');
}
