import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { OfflineGateway } from '../../core/llm/offline.ts';
import { runPipeline } from '../../core/run.ts';
import { DatasetStore, type VersionRef } from '../../core/store.ts';
import { pipelines } from '../../pipelines/index.ts';

const PROJECT = new URL('../..', import.meta.url).pathname;

export interface DefaultRun {
  home: string;
  store: DatasetStore;
  ref: VersionRef;
  /** Writes the version in one of its recipe's export formats under the run's folder; the folder. */
  exportAs(format: string): Promise<string>;
}

/**
 * A recipe's default offline version (seed 42, no config: what `npx toolkiln run <recipe>` publishes),
 * made once before the file's tests and removed after them. Options a test varies (`limit`) are passed on.
 */
export function defaultRun(name: string, options: { limit?: number } = {}): DefaultRun {
  const run = {} as DefaultRun;
  beforeAll(async () => {
    run.home = mkdtempSync(join(tmpdir(), `tk-default-${name}-`));
    const result = await runPipeline({ pipeline: pipelines[name], llm: new OfflineGateway(42), home: run.home, projectDir: PROJECT, cwd: PROJECT, ...options, progress: { quiet: true } });
    run.store = new DatasetStore(run.home);
    run.ref = result.ref!;
    run.exportAs = async (format) => {
      const out = join(run.home, 'export', format);
      await pipelines[name].exports[format](run.store.sampleSource(run.ref), run.store.tools(run.ref), out, run.ref);
      return out;
    };
  }, 600_000);
  afterAll(() => rmSync(run.home, { recursive: true, force: true }));
  return run;
}
