import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Every temporary folder the suites make (runs, stores, sheets) goes under one root that is removed
 * when the run ends, so `npm test` leaves nothing behind in the system temp folder.
 */
export default function setup(): () => void {
  const root = mkdtempSync(join(tmpdir(), 'toolkiln-tests-'));
  process.env.TMPDIR = root;
  return () => rmSync(root, { recursive: true, force: true });
}
