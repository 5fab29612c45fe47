import type { Sample } from './records.ts';

/** What a released set gives to be read (core/pipeline.ts's `ReleasedSamples` is one). */
export interface ReleasedSet {
  name: string;
  read(path: string, resolvePath: (path: string) => string): { samples: () => Iterable<Sample> };
}

/**
 * The released sets one run reads, each read from its files once: the overlap gate indexes a set
 * when the run starts and the closing statistics stage counts the same set's figures, and reading
 * it (parsing, making samples, validating them) costs as much as either. The samples of the first
 * read are kept for the next read of the same set from the same folder, which takes them; what no
 * read took is dropped by `release`, which the runner calls once the stages are prepared (a
 * statistics stage takes the set then). So at most one copy of each set is held, and only from the
 * start of the run until the stages start (the samples are never edited: both only read them).
 */
export class ReleasedReads {
  /** Samples a first read made, for the next read of the same set and folder. */
  private readonly kept = new Map<string, readonly Sample[]>();
  /** Whether a read keeps its samples for a later one (until `release`: no reader waits after it). */
  private keeping = true;

  /**
   * The samples of `set` in `dir`: the ones an earlier read kept (an array, to be used at once and
   * let go), or read now (one at a time, kept once the last was read: a read left off part way keeps
   * nothing).
   */
  samples(set: ReleasedSet, dir: string, resolvePath: (path: string) => string): Iterable<Sample> {
    const key = `${set.name}\0${dir}`;
    const kept = this.kept.get(key);
    if (kept) {
      this.kept.delete(key);
      return kept;
    }
    const read = () => set.read(dir, resolvePath).samples();
    if (!this.keeping) return read();
    const keep = (samples: readonly Sample[]) => void (this.keeping && this.kept.set(key, samples));
    return {
      *[Symbol.iterator]() {
        const samples: Sample[] = [];
        for (const sample of read()) {
          samples.push(sample);
          yield sample;
        }
        keep(samples);
      },
    };
  }

  /** Drops the samples no read took, and keeps none of a later read: no reader waits for them any more. */
  release(): void {
    this.keeping = false;
    this.kept.clear();
  }
}
