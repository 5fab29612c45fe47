import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hashFileSync } from '../core/hash.ts';
import { OfflineGateway } from '../core/llm/offline.ts';
import { runPipeline } from '../core/run.ts';
import { DatasetStore } from '../core/store.ts';
import { pipelines } from '../pipelines/index.ts';

/**
 * The published bytes of each recipe's default offline run, and of every format it exports, recorded
 * once: a change to the runner, the store, an exporter or a stage's memory layout must not change a
 * single byte. A change meant to alter the
 * output bumps the stage's version and re-records this file (`UPDATE_GOLDEN=1 npx vitest run test/golden.test.ts`).
 */
const PROJECT = new URL('..', import.meta.url).pathname;
const GOLDEN = join(PROJECT, 'test/fixtures/golden/published.json');
const golden = existsSync(GOLDEN) ? (JSON.parse(readFileSync(GOLDEN, 'utf8')) as Record<string, { fingerprint: string; files: Record<string, string>; exports?: Record<string, Record<string, string>> }>) : {};

/** The sha256 of every file under `dir`, by path relative to it. */
function checksums(dir: string): Record<string, string> {
  const files = readdirSync(dir, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile());
  return Object.fromEntries(files.map((entry) => join(entry.parentPath, entry.name)).sort().map((path) => [relative(dir, path), hashFileSync(path)]));
}

describe('published and exported bytes of the default offline runs', () => {
  for (const name of ['mtu', 'toole', 'nestools', 'tooltalk', 'acebench']) {
    it(`${name}: fingerprint, every file checksum and every export as recorded`, async () => {
      const home = mkdtempSync(join(tmpdir(), `tk-golden-${name}-`));
      try {
        const pipeline = pipelines[name];
        const result = await runPipeline({ pipeline, llm: new OfflineGateway(42), home, projectDir: PROJECT, cwd: PROJECT, progress: { quiet: true } });
        const store = new DatasetStore(home);
        const exports: Record<string, Record<string, string>> = {};
        for (const [format, exporter] of Object.entries(pipeline.exports)) {
          const out = join(home, 'export', format);
          await exporter(store.sampleSource(result.ref!), store.tools(result.ref!), out, result.ref!);
          exports[format] = checksums(out);
        }
        const published = { fingerprint: result.fingerprint, files: result.manifest!.files, exports };
        if (process.env.UPDATE_GOLDEN) {
          golden[name] = published;
          writeFileSync(GOLDEN, `${JSON.stringify(golden, null, 2)}\n`);
        }
        expect(published).toEqual(golden[name]);
      } finally {
        rmSync(home, { recursive: true, force: true });
      }
    }, 600_000);
  }
});
