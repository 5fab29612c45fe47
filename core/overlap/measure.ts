import type { Embedder } from '../embed/types.ts';
import type { Sample } from '../records.ts';
import { levelsOf, thresholdOf, type OverlapConfig, type OverlapLevel } from './config.ts';
import { ReferenceIndex, type ReferenceSet } from './reference-index.ts';

/**
 * Overlap of a stream of samples with reference sets: each reference set indexed once, the samples
 * read once in batches (never held together), each sample scored at every level against every
 * reference set, and counted per split and category where a score reaches its level's threshold.
 * Every such hit names the reference sample matched.
 */

/** One sample at or over one level's threshold against one reference set. */
export interface OverlapHit {
  sample: string;
  split: string;
  category: string;
  /** The reference set's name. */
  reference: string;
  level: OverlapLevel;
  score: number;
  /** The id of the reference sample matched. */
  match: string;
}

/** Samples at or over each level's threshold, and at or over any of them. */
export type LevelCounts = Partial<Record<OverlapLevel, number>> & { any: number };

export interface OverlapRow {
  split: string;
  category: string;
  samples: number;
  /** By reference set name. */
  overlap: Record<string, LevelCounts>;
}

export interface OverlapReport {
  samples: number;
  levels: { level: OverlapLevel; threshold: number }[];
  references: { name: string; kind: ReferenceSet['kind']; path: string; samples: number; indexBytes: number }[];
  /** The embedder of the embedding level, by its id (null: not measured). */
  embedder: string | null;
  /** Per split and category, sorted by both. */
  rows: OverlapRow[];
  /** Every sample, by reference set name. */
  total: Record<string, LevelCounts>;
  seconds: { index: number; measure: number };
}

export interface MeasureOptions {
  config: Pick<OverlapConfig, 'ngrams' | 'thresholds'>;
  /** The embedding level's embedder (made from the config's by the caller, who has what it needs). */
  embedder?: Embedder;
  /** Told each sample's hits (none when it overlaps nothing), in the order of the stream. */
  onSample?: (sample: Sample, hits: OverlapHit[]) => void;
  /** Samples scored together (the embedder's batch). */
  batch?: number;
}

const emptyCounts = (levels: readonly OverlapLevel[]): LevelCounts => ({ ...Object.fromEntries(levels.map((level) => [level, 0])), any: 0 });

/** Indexes the reference sets and measures the samples' overlap with each (see the module comment). */
export async function measureOverlap(samples: Iterable<Sample>, references: readonly ReferenceSet[], options: MeasureOptions): Promise<OverlapReport> {
  const levels = levelsOf(options.config);
  const thresholds = levels.map((level) => ({ level, threshold: thresholdOf(options.config.thresholds, level)! }));
  const started = performance.now();
  const indexes: ReferenceIndex[] = [];
  for (const set of references) indexes.push(await ReferenceIndex.build(set, { ngrams: options.config.ngrams, levels, embedder: options.embedder }));
  const indexed = performance.now();

  const rows = new Map<string, OverlapRow>();
  const total = Object.fromEntries(references.map((set) => [set.name, emptyCounts(levels)]));
  let count = 0;
  const score = async (batch: Sample[]) => {
    const matches = await Promise.all(indexes.map((index) => index.match(batch)));
    batch.forEach((sample, i) => {
      const key = `${sample.split}\u0000${sample.category}`;
      let row = rows.get(key);
      if (!row) rows.set(key, (row = { split: sample.split, category: sample.category, samples: 0, overlap: Object.fromEntries(references.map((set) => [set.name, emptyCounts(levels)])) }));
      row.samples++;
      const hits: OverlapHit[] = [];
      indexes.forEach((index, r) => {
        const name = index.set.name;
        let any = false;
        for (const { level, threshold } of thresholds) {
          const match = matches[r][i].get(level);
          if (!match || match.ref < 0 || match.score <= 0 || match.score < threshold) continue;
          any = true;
          row.overlap[name][level]! += 1;
          total[name][level]! += 1;
          hits.push({ sample: sample.id, split: sample.split, category: sample.category, reference: name, level, score: Math.round(match.score * 1e4) / 1e4, match: index.ids[match.ref] });
        }
        if (any) {
          row.overlap[name].any++;
          total[name].any++;
        }
      });
      options.onSample?.(sample, hits);
    });
    count += batch.length;
  };
  let batch: Sample[] = [];
  for (const sample of samples) {
    batch.push(sample);
    if (batch.length >= (options.batch ?? 256)) {
      await score(batch);
      batch = [];
    }
  }
  if (batch.length) await score(batch);
  const finished = performance.now();
  return {
    samples: count,
    levels: thresholds,
    references: indexes.map((index) => ({ ...index.set, samples: index.ids.length, indexBytes: index.bytes })),
    embedder: levels.includes('embedding') ? (options.embedder?.id ?? null) : null,
    rows: [...rows.values()].sort((a, b) => (a.split < b.split ? -1 : a.split > b.split ? 1 : a.category < b.category ? -1 : a.category > b.category ? 1 : 0)),
    total,
    seconds: { index: (indexed - started) / 1000, measure: (finished - indexed) / 1000 },
  };
}
