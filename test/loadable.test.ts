import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { OfflineGateway } from '../core/llm/offline.ts';
import { runPipeline } from '../core/run.ts';
import { DatasetStore } from '../core/store.ts';
import { pipelines } from '../pipelines/index.ts';
import { exportCanonical } from '../stages/export/canonical.ts';
import { arrowShapeProblems } from './helpers/arrow-shape.ts';

const PROJECT = new URL('..', import.meta.url).pathname;
const homes: string[] = [];
afterAll(() => {
  for (const home of homes) rmSync(home, { recursive: true, force: true });
});

/** Every JSONL file under `dir`, by path. */
function jsonlFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.jsonl'))
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}

describe('every published file and canonical export loads as one Arrow table', () => {
  for (const name of ['mtu', 'toole', 'nestools', 'tooltalk', 'acebench']) {
    it(`${name}: one schema per file, every key in every record, one type per value`, async () => {
      const home = mkdtempSync(join(tmpdir(), `tk-loadable-${name}-`));
      homes.push(home);
      const result = await runPipeline({ pipeline: pipelines[name], llm: new OfflineGateway(42), home, projectDir: PROJECT, cwd: PROJECT, limit: 40, progress: { quiet: true } });
      const store = new DatasetStore(home);
      const ref = result.ref!;
      const out = join(home, 'canonical');
      await exportCanonical(store.sampleSource(ref), store.tools(ref), out);
      const files = [...jsonlFiles(ref.dir), ...jsonlFiles(out)];
      expect(files.some((f) => f.startsWith(join(ref.dir, 'data')))).toBe(true);
      expect(files).toContain(join(ref.dir, 'tools.jsonl'));
      // A version with rejects lists them; without, it has no (empty) rejects file.
      expect(existsSync(join(ref.dir, 'rejects.jsonl'))).toBe(result.manifest!.counts.rejects > 0);
      expect(files.flatMap(arrowShapeProblems)).toEqual([]);
    }, 600_000);
  }
});
