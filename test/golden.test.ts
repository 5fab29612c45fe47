import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hashFileSync } from '../core/hash.ts';
import { pipelines } from '../pipelines/index.ts';
import { defaultRun } from './helpers/default-run.ts';

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

for (const name of ['mtu', 'toole', 'nestools', 'tooltalk', 'acebench']) {
  describe(`published and exported bytes of the default offline ${name} run`, () => {
    const run = defaultRun(name);
    it(`${name}: fingerprint, every file checksum and every export as recorded`, async () => {
      const exports: Record<string, Record<string, string>> = {};
      for (const format of Object.keys(pipelines[name].exports)) exports[format] = checksums(await run.exportAs(format));
      const published = { fingerprint: run.manifest.fingerprint, files: run.manifest.files, exports };
      if (process.env.UPDATE_GOLDEN) {
        golden[name] = published;
        writeFileSync(GOLDEN, `${JSON.stringify(golden, null, 2)}\n`);
      }
      expect(published).toEqual(golden[name]);
    }, 600_000);
  });
}
