import type { Rejection, Sample } from '../../core/records.ts';
import type { DatasetStore, VersionRef } from '../../core/store.ts';

/**
 * Every sample of a small test version, checked against its manifest. The store has no such call:
 * commands stream a version (store.sampleSource) and never hold it whole; tests may, on their fixtures.
 */
export function versionSamples(store: DatasetStore, ref: VersionRef): Sample[] {
  store.assertIntact(ref);
  return [...store.sampleSource(ref).all()];
}

/** Every reject of a small test version (the store streams them). */
export function versionRejects(store: DatasetStore, ref: VersionRef): Rejection[] {
  return [...store.rejects(ref)];
}
