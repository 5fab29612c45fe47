import type { Sample } from '../core/records.ts';
import type { SampleAt, SampleSource } from '../core/sample-source.ts';
import type { VersionRef } from '../core/store.ts';
import { itemIdOf } from './queue.ts';

/** Item id → the version's sample, for the items a sheet or a queue names. */
export interface SampleLookup {
  get(itemId: string): Sample | undefined;
}

/**
 * The samples of the `wanted` item ids (any sample can be reviewed, queued or not): found in one
 * pass over the version's sample ids (no sample decoded), where only their positions are kept, and
 * read back one at a time when asked for. A version is never held whole: what is kept grows with the sheets and the queue, not the version.
 * A sample is read again each time it is asked for (a pread and one line parsed): samples kept a few
 * asks long outlive the young generation's collections, so a pass over a sheet moved each one to the
 * old generation, where they piled up until a full collection.
 */
export function versionItems(ref: Pick<VersionRef, 'name' | 'version'>, source: SampleSource, wanted: Iterable<string>): SampleLookup {
  const want = new Set(wanted);
  const found = new Map<string, { sampleId: string; at: SampleAt }>();
  if (want.size) {
    for (const { id: sampleId, at } of source.locatedIds()) {
      const id = itemIdOf(ref, sampleId);
      if (!want.has(id)) continue;
      const clash = found.get(id);
      if (clash && clash.sampleId !== sampleId) throw new Error(`item id ${id} is shared by samples ${clash.sampleId} and ${sampleId}`);
      found.set(id, { sampleId, at });
    }
  }
  return {
    get(itemId) {
      const place = found.get(itemId);
      if (!place) return undefined;
      const [sample] = source.readAt([place.at]);
      return sample;
    },
  };
}
