import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { OfflineGateway } from '../core/llm/offline.ts';
import { runPipeline } from '../core/run.ts';
import { pipelines } from '../pipelines/index.ts';

/**
 * The published bytes of each recipe's default offline run, recorded once: a change to the runner,
 * the store or a stage's memory layout must not change a single byte. A change meant to alter the
 * output bumps the stage's version and re-records this file (`UPDATE_GOLDEN=1 npx vitest run test/golden.test.ts`).
 */
const PROJECT = new URL('..', import.meta.url).pathname;
const GOLDEN = join(PROJECT, 'test/fixtures/golden/published.json');
const golden = existsSync(GOLDEN) ? (JSON.parse(readFileSync(GOLDEN, 'utf8')) as Record<string, { fingerprint: string; files: Record<string, string> }>) : {};

describe('published bytes of the default offline runs', () => {
  for (const name of ['mtu', 'toole', 'nestools']) {
    it(`${name}: fingerprint and every file checksum as recorded`, async () => {
      const home = mkdtempSync(join(tmpdir(), `tk-golden-${name}-`));
      try {
        const result = await runPipeline({ pipeline: pipelines[name], llm: new OfflineGateway(42), home, projectDir: PROJECT, cwd: PROJECT, progress: { quiet: true } });
        const published = { fingerprint: result.fingerprint, files: result.manifest!.files };
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
