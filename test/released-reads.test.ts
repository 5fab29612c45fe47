import { describe, expect, it } from 'vitest';
import type { Sample } from '../core/records.ts';
import { ReleasedReads, type ReleasedSet } from '../core/released-reads.ts';

/** A released set of `count` samples (stand-ins: only their identity is looked at) that notes each read's folder. */
function countedSet(count: number): { set: ReleasedSet; reads: string[] } {
  const reads: string[] = [];
  const samples = Array.from({ length: count }, (_, i) => ({ id: `s${i}` }) as Sample);
  return { reads, set: { name: 'counted', read: (dir) => (reads.push(dir), { samples: () => samples.values() }) } };
}

const same = (path: string) => path;

describe('released sets read once for a run', () => {
  it('the samples a whole read made go to the next read of the same set and folder, once; another folder is read on its own', () => {
    const { set, reads } = countedSet(3);
    const shared = new ReleasedReads();
    const first = [...shared.samples(set, '/a', same)];
    const second = [...shared.samples(set, '/a', same)];
    expect(reads).toEqual(['/a']);
    expect(second).toEqual(first);
    expect(second[0]).toBe(first[0]);
    // Taken: a third read reads again, as does a read of another folder.
    [...shared.samples(set, '/a', same)];
    [...shared.samples(set, '/b', same)];
    expect(reads).toEqual(['/a', '/a', '/b']);
  });

  it('a read left off part way keeps nothing, and release drops what no read took', () => {
    const { set, reads } = countedSet(3);
    const shared = new ReleasedReads();
    for (const sample of shared.samples(set, '/a', same)) if (sample.id === 's0') break;
    expect([...shared.samples(set, '/a', same)].map((s) => s.id)).toEqual(['s0', 's1', 's2']);
    expect(reads).toEqual(['/a', '/a']);
    [...shared.samples(set, '/b', same)];
    shared.release();
    [...shared.samples(set, '/b', same)];
    expect(reads).toEqual(['/a', '/a', '/b', '/b']);
  });

  it('after release a read keeps nothing: no reader waits for it (the run drops a set its statistics did not take)', () => {
    const { set, reads } = countedSet(3);
    const shared = new ReleasedReads();
    shared.release();
    [...shared.samples(set, '/a', same)];
    [...shared.samples(set, '/a', same)];
    expect(reads).toEqual(['/a', '/a']);
  });
});
