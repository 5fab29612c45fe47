import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The project folder (package.json; the shipped data files; relative config paths fall back to it):
 * the nearest folder holding package.json above this file, which runs from core/ as TypeScript and
 * from dist/core/ compiled (bin/compile.js), so a path taken relative to a module's own place would
 * differ between the two.
 */
export const PROJECT_DIR = projectDir(dirname(fileURLToPath(import.meta.url)));

function projectDir(from: string): string {
  for (let dir = dirname(from); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json above ${from}: toolkiln's files are not where they were installed`);
  }
}

/** A file of the project, by its path from the project folder. */
export function projectFile(...parts: string[]): string {
  return join(PROJECT_DIR, ...parts);
}
