import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Every temporary folder the suites make (runs, stores, sheets) goes under one root that is removed
 * when the run ends, so `npm test` leaves nothing behind in the system temp folder.
 */
export default function setup(): () => void {
  // The CLI processes the suites start run the compiled JavaScript (bin/compile.js): compiled here,
  // once, rather than by the first of them while the others run the source through tsx. A file that
  // does not compile is reported and left to the tests (the CLI then runs the source).
  spawnSync(process.execPath, [fileURLToPath(new URL('../bin/compile.js', import.meta.url))], { stdio: ['ignore', 'ignore', 'inherit'] });
  const root = mkdtempSync(join(tmpdir(), 'toolkiln-tests-'));
  process.env.TMPDIR = root;
  return () => rmSync(root, { recursive: true, force: true });
}
