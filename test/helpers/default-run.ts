import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { waitForLock } from '../../core/lock.ts';
import { OfflineGateway } from '../../core/llm/offline.ts';
import type { Manifest } from '../../core/records.ts';
import { runPipeline } from '../../core/run.ts';
import { DatasetStore, type VersionRef } from '../../core/store.ts';
import { pipelines } from '../../pipelines/index.ts';

const PROJECT = new URL('../..', import.meta.url).pathname;

export interface DefaultRun {
  /** The home holding the version: shared by every test file, so read it, never write in it. */
  home: string;
  store: DatasetStore;
  ref: VersionRef;
  manifest: Manifest;
  /** A folder of this file's own, removed after its tests: write exports and results here. */
  scratch: string;
  /** Writes the version in one of its recipe's export formats under `scratch`; the folder. */
  exportAs(format: string): Promise<string>;
}

/**
 * A recipe's default offline version (seed 42, no config: what `npx toolkiln run <recipe>` publishes),
 * made once per test run and shared by every file that asks for it: the first to ask runs the pipeline
 * under a lock in one home under the run's temporary root, the others wait and find it by its
 * fingerprint. Options a test varies (`limit`) make a version of their own.
 */
export function defaultRun(name: string, options: { limit?: number } = {}): DefaultRun {
  const run = {} as DefaultRun;
  beforeAll(async () => {
    const shared = await sharedVersion(name, options);
    Object.assign(run, shared);
    run.scratch = mkdtempSync(join(tmpdir(), `tk-default-${name}-`));
    run.exportAs = async (format) => {
      const out = join(run.scratch, 'export', format);
      await pipelines[name].exports[format](run.store.sampleSource(run.ref), run.store.tools(run.ref), out, run.ref);
      return out;
    };
  }, 900_000);
  afterAll(() => rmSync(run.scratch, { recursive: true, force: true }));
  return run;
}

type SharedVersion = Pick<DefaultRun, 'home' | 'store' | 'ref' | 'manifest'>;

// Within one process the lock would wait on itself: one promise per version.
const madeHere = new Map<string, Promise<SharedVersion>>();

function sharedVersion(name: string, options: { limit?: number }): Promise<SharedVersion> {
  const key = `${name}${options.limit ? `-limit-${options.limit}` : ''}`;
  let made = madeHere.get(key);
  if (!made) madeHere.set(key, (made = makeSharedVersion(name, key, options)));
  return made;
}

async function makeSharedVersion(name: string, key: string, options: { limit?: number }): Promise<SharedVersion> {
  // The run's temporary root (test/global-setup.ts) is removed when the run ends.
  const home = join(tmpdir(), 'default-versions', key);
  mkdirSync(home, { recursive: true });
  const taken = waitForLock(join(home, '.made-by.lock'), `default ${key} version for the tests`);
  if (!('lock' in taken)) throw new Error(`the default ${key} version is still being made by process ${taken.heldBy.pid}`);
  try {
    const result = await runPipeline({ pipeline: pipelines[name], llm: new OfflineGateway(42), home, projectDir: PROJECT, cwd: PROJECT, ...options, progress: { quiet: true } });
    return { home, store: new DatasetStore(home), ref: result.ref!, manifest: result.manifest! };
  } finally {
    taken.lock.release();
  }
}
