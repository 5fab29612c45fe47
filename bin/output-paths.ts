import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { UserError } from '../core/errors.ts';
import { DatasetStore, isInsideFolder } from '../core/store.ts';
import type { Io } from './command.ts';

/**
 * Refuses an output path the user named that lies where only toolkiln writes: the dataset store
 * (published data is never overwritten) or `.toolkiln/` (run journals, the response cache, prices).
 */
function assertOutsideToolkiln(path: string, flag: string, given: string, io: Io): void {
  new DatasetStore(io.home).assertOutsideStore(path, flag, given);
  const state = join(io.home, '.toolkiln');
  if (isInsideFolder(path, state)) {
    throw new UserError(`${flag} ${given} is inside ${state}, where toolkiln keeps its runs and response cache; give a folder outside it`);
  }
}

/**
 * Checks an output folder the user named (`--out`) before any work: never inside the dataset
 * store or `.toolkiln/`, never an existing file. Returns its absolute path.
 */
export function outputFolder(given: string, flag: string, io: Io): string {
  const path = resolve(io.cwd, given);
  assertOutsideToolkiln(path, flag, given, io);
  if (existsSync(path) && !statSync(path).isDirectory()) throw new UserError(`${flag} ${given} is an existing file; give a folder (new or existing)`);
  return path;
}

/** Checks an output file the user named (`--plot`) before any work: never inside the store or `.toolkiln/`, never a folder. */
export function outputFile(given: string, flag: string, io: Io): string {
  const path = resolve(io.cwd, given);
  assertOutsideToolkiln(path, flag, given, io);
  if (existsSync(path) && statSync(path).isDirectory()) throw new UserError(`${flag} ${given} is a folder; give a file name`);
  return path;
}
