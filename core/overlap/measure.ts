import type { Embedder } from '../embed/types.ts';
import type { Sample } from '../records.ts';
import { levelsOf, thresholdOf, type OverlapConfig, type OverlapLevel } from './config.ts';
import { ReferenceIndex, type BatchMatches, type ReferenceSet } from './reference-index.ts';

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
  const measurement = await OverlapMeasurement.start(references, options);
  for (const sample of samples) await measurement.push(sample);
  return measurement.finish();
}

/**
 * A measurement under way: the reference sets indexed once, then the samples given one at a time
 * (a batch scored when full), then the report. With an embedder that needs no I/O (or no embedding
 * level) samples are taken synchronously (`add`), so a caller that sees them one at a time without
 * waiting (the publish gate) measures them as they go by.
 */
export class OverlapMeasurement {
  private readonly rows = new Map<string, OverlapRow>();
  private readonly total: Record<string, LevelCounts>;
  private batch: Sample[] = [];
  private count = 0;

  private constructor(
    private readonly references: readonly ReferenceSet[],
    private readonly options: MeasureOptions,
    private readonly indexes: ReferenceIndex[],
    private readonly thresholds: { level: OverlapLevel; threshold: number }[],
    private readonly started: number,
    private readonly indexed: number,
  ) {
    this.total = Object.fromEntries(references.map((set) => [set.name, emptyCounts(this.levels)]));
  }

  static async start(references: readonly ReferenceSet[], options: MeasureOptions): Promise<OverlapMeasurement> {
    const levels = levelsOf(options.config);
    const thresholds = levels.map((level) => ({ level, threshold: thresholdOf(options.config.thresholds, level)! }));
    const started = performance.now();
    const indexes: ReferenceIndex[] = [];
    for (const set of references) indexes.push(await ReferenceIndex.build(set, { ngrams: options.config.ngrams, levels, embedder: options.embedder }));
    return new OverlapMeasurement(references, options, indexes, thresholds, started, performance.now());
  }

  /** Whether a measurement with these options will be `synchronous` (told before the reference sets are indexed). */
  static measuresAtOnce(options: Pick<MeasureOptions, 'config' | 'embedder'>): boolean {
    return !levelsOf(options.config).includes('embedding') || !options.embedder || !!options.embedder.embedSparse;
  }

  private get levels(): OverlapLevel[] {
    return this.thresholds.map((t) => t.level);
  }

  /** Whether `add` can be used: every index matches at once. */
  get synchronous(): boolean {
    return this.indexes.every((index) => index.synchronous);
  }

  /** Takes the next sample, scoring the batch at once when it is full (only when `synchronous`). */
  add(sample: Sample): void {
    this.batch.push(sample);
    if (this.batch.length >= (this.options.batch ?? 256)) this.scoreNow();
  }

  /** Takes the next sample, whatever the embedder. */
  async push(sample: Sample): Promise<void> {
    this.batch.push(sample);
    if (this.batch.length >= (this.options.batch ?? 256)) await this.score();
  }

  /** Scores what is left and reports. */
  async finish(): Promise<OverlapReport> {
    if (this.batch.length) await this.score();
    const finished = performance.now();
    const { indexes, thresholds, levels } = this;
    return {
      samples: this.count,
      levels: thresholds,
      references: indexes.map((index) => ({ ...index.set, samples: index.ids.length, indexBytes: index.bytes })),
      embedder: levels.includes('embedding') ? (this.options.embedder?.id ?? null) : null,
      rows: [...this.rows.values()].sort((a, b) => (a.split < b.split ? -1 : a.split > b.split ? 1 : a.category < b.category ? -1 : a.category > b.category ? 1 : 0)),
      total: this.total,
      seconds: { index: (this.indexed - this.started) / 1000, measure: (finished - this.indexed) / 1000 },
    };
  }

  private scoreNow(): void {
    const batch = this.takeBatch();
    this.tally(
      batch,
      this.indexes.map((index) => index.matchNow(batch)),
    );
  }

  private async score(): Promise<void> {
    const batch = this.takeBatch();
    this.tally(batch, await Promise.all(this.indexes.map((index) => index.match(batch))));
  }

  private takeBatch(): Sample[] {
    const batch = this.batch;
    this.batch = [];
    return batch;
  }

  /** Counts a scored batch and tells each sample's hits. */
  private tally(batch: readonly Sample[], matches: BatchMatches[]): void {
    const { rows, total, references, indexes, thresholds, levels } = this;
    // Where each threshold's level is in each index's matches.
    const at = matches.map((match) => thresholds.map(({ level }) => match.levels.indexOf(level)));
    batch.forEach((sample, i) => {
      const key = `${sample.split}\u0000${sample.category}`;
      let row = rows.get(key);
      if (!row) rows.set(key, (row = { split: sample.split, category: sample.category, samples: 0, overlap: Object.fromEntries(references.map((set) => [set.name, emptyCounts(levels)])) }));
      row.samples++;
      const hits: OverlapHit[] = [];
      indexes.forEach((index, r) => {
        const name = index.set.name;
        let any = false;
        const { scores, refs } = matches[r];
        const width = matches[r].levels.length;
        for (let t = 0; t < thresholds.length; t++) {
          const { level, threshold } = thresholds[t];
          if (at[r][t] < 0) continue;
          const score = scores[i * width + at[r][t]];
          const ref = refs[i * width + at[r][t]];
          if (ref < 0 || score <= 0 || score < threshold) continue;
          any = true;
          row.overlap[name][level]! += 1;
          total[name][level]! += 1;
          hits.push({ sample: sample.id, split: sample.split, category: sample.category, reference: name, level, score: Math.round(score * 1e4) / 1e4, match: index.ids[ref] });
        }
        if (any) {
          row.overlap[name].any++;
          total[name].any++;
        }
      });
      this.options.onSample?.(sample, hits);
    });
    this.count += batch.length;
  }
}
