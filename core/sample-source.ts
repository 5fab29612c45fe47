import { closeSync, openSync, readSync } from 'node:fs';
import { UserError } from './errors.ts';
import { fileLines, parseJsonLine } from './jsonl.ts';
import type { Sample } from './records.ts';

/** Where a sample is in its source: which part (split file), and where its line starts and how long it is. */
export interface SampleAt {
  part: number;
  start: number;
  length: number;
}

/**
 * A version's samples, read again on each pass and never held together: an exporter goes over them
 * once per file it writes, or sorts a small projection of them (`inOrder`) and reads each sample
 * back by its position.
 */
export interface SampleSource {
  /** Split names, in the version's order. */
  readonly splits: readonly string[];
  /** Every sample, split by split. */
  all(): Iterable<Sample>;
  /** The samples of one split (none for a split the version lacks). */
  inSplit(split: string): Iterable<Sample>;
  /** Every sample with its position. */
  located(): Iterable<{ sample: Sample; at: SampleAt }>;
  /**
   * Every sample's id with its position, the sample not decoded: for a pass that only finds samples
   * (decoding each sample's nested texts makes objects that outlive the young generation's collections).
   */
  locatedIds(): Iterable<{ id: string; at: SampleAt }>;
  /** The samples at these positions, in the order given. */
  readAt(positions: Iterable<SampleAt>): Iterable<Sample>;
}

/** Samples already in memory (tests, imports) as a source: split by split, in the order the splits first appear. */
export function samplesInMemory(given: readonly Sample[]): SampleSource {
  const splits = [...new Set(given.map((s) => s.split))];
  const samples = splits.flatMap((split) => given.filter((s) => s.split === split));
  return {
    splits,
    all: () => samples,
    inSplit: (split) => samples.filter((s) => s.split === split),
    *located() {
      for (let i = 0; i < samples.length; i++) yield { sample: samples[i], at: { part: 0, start: i, length: 0 } };
    },
    *locatedIds() {
      for (let i = 0; i < samples.length; i++) yield { id: samples[i].id, at: { part: 0, start: i, length: 0 } };
    },
    *readAt(positions) {
      for (const at of positions) yield samples[at.start];
    },
  };
}

/**
 * A version's split files (JSON lines, one sample each) as a source, in the order given; `decode`
 * makes a line's record into its Sample (the store passes the line-form decoder; default: as it is).
 */
export function samplesInFiles(files: readonly { split: string; path: string }[], decode: (line: unknown, where: string) => Sample = (line) => line as Sample): SampleSource {
  /** The parsed lines of the given parts (blank ones skipped), each with where it is. */
  const linesIn = function* (parts: number[]): Generator<{ line: unknown; where: string; at: SampleAt }> {
    for (const part of parts) {
      const { path } = files[part];
      let number = 0;
      for (const { bytes, start } of fileLines(path)) {
        number++;
        const text = bytes.toString('utf8');
        if (!text.trim()) continue;
        yield { line: parseJsonLine(text, path, number), where: `${path}:${number}`, at: { part, start, length: bytes.length } };
      }
    }
  };
  const every = () => files.map((_, part) => part);
  const locatedIn = function* (parts: number[]): Generator<{ sample: Sample; at: SampleAt }> {
    for (const { line, where, at } of linesIn(parts)) yield { sample: decode(line, where), at };
  };
  const located = () => locatedIn(every());
  /** A line's id read as the decoder reads it; a line without one is decoded, for the decoder's own error. */
  const locatedIds = function* (): Generator<{ id: string; at: SampleAt }> {
    for (const { line, where, at } of linesIn(every())) {
      const id = (line as { id?: unknown } | null)?.id;
      yield { id: typeof id === 'string' ? id : decode(line, where).id, at };
    }
  };
  return {
    splits: files.map((f) => f.split),
    *all() {
      for (const { sample } of located()) yield sample;
    },
    *inSplit(split) {
      for (const { sample } of locatedIn(files.flatMap((f, part) => (f.split === split ? [part] : [])))) yield sample;
    },
    located,
    locatedIds,
    *readAt(positions) {
      const fds = new Map<number, number>();
      // One buffer for every line read (grown to the longest): a line's bytes are text at once, and a
      // buffer per line (past the small-buffer pool's size) would be memory allocated and freed per sample.
      let buffer = Buffer.allocUnsafe(0);
      try {
        for (const at of positions) {
          let fd = fds.get(at.part);
          if (fd === undefined) fds.set(at.part, (fd = openSync(files[at.part].path, 'r')));
          if (buffer.length < at.length) buffer = Buffer.allocUnsafe(Math.max(at.length, 2 * buffer.length));
          const bytes = buffer.subarray(0, at.length);
          for (let read = 0; read < at.length; ) {
            const n = readSync(fd, bytes, read, at.length - read, at.start + read);
            if (n === 0) throw new Error(`${files[at.part].path}: ended before the sample at byte ${at.start}; the file changed while it was read`);
            read += n;
          }
          const where = `${files[at.part].path} (byte ${at.start})`;
          let value: unknown;
          try {
            value = JSON.parse(bytes.toString('utf8'));
          } catch (error) {
            throw new UserError(`${where}: not valid JSON (${(error as Error).message}); the file changed after it was read: check it with toolkiln datasets verify`);
          }
          yield decode(value, where);
        }
      } finally {
        for (const fd of fds.values()) closeSync(fd);
      }
    },
  };
}

/** Every sample's key and position, sorted by key (one pass; only the keys and positions are kept). */
export function orderOf<K>(source: SampleSource, key: (sample: Sample) => K, compare: (a: K, b: K) => number): { key: K; at: SampleAt }[] {
  const entries: { key: K; at: SampleAt }[] = [];
  for (const { sample, at } of source.located()) entries.push({ key: key(sample), at });
  return entries.sort((a, b) => compare(a.key, b.key));
}

/** The samples of an `orderOf` list, read back one at a time in its order, each with its key. */
export function* inOrder<K>(source: SampleSource, order: readonly { key: K; at: SampleAt }[]): Generator<{ sample: Sample; key: K }> {
  let i = 0;
  for (const sample of source.readAt(order.map((e) => e.at))) yield { sample, key: order[i++].key };
}

/**
 * Positions of many samples kept compactly (three numbers each in typed arrays, no object per
 * sample), numbered in the order they were added: a whole-version pass can remember where every
 * sample is without holding it.
 */
export class SamplePositions {
  private parts = new Uint32Array(1024);
  private starts = new Float64Array(1024);
  private lengths = new Uint32Array(1024);
  size = 0;

  /** Keeps `at`; returns its number. */
  add(at: SampleAt): number {
    if (this.size === this.starts.length) {
      const grow = <A extends Uint32Array | Float64Array>(array: A): A => {
        const bigger = new (array.constructor as new (length: number) => A)(array.length * 2);
        bigger.set(array);
        return bigger;
      };
      this.parts = grow(this.parts);
      this.starts = grow(this.starts);
      this.lengths = grow(this.lengths);
    }
    this.parts[this.size] = at.part;
    this.starts[this.size] = at.start;
    this.lengths[this.size] = at.length;
    return this.size++;
  }

  at(number: number): SampleAt {
    if (number < 0 || number >= this.size) throw new RangeError(`no sample position ${number} (${this.size} kept)`);
    return { part: this.parts[number], start: this.starts[number], length: this.lengths[number] };
  }
}
