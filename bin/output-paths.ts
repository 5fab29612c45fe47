import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { UserError } from '../core/errors.ts';
import { DatasetStore } from '../core/store.ts';
import type { Io } from './command.ts';

/**
 * Checks an output folder the user named (`--out`) before any work: never inside the dataset
 * store, never an existing file. Returns its absolute path.
 */
export function outputFolder(given: string, flag: string, io: Io): string {
  const path = resolve(io.cwd, given);
  new DatasetStore(io.home).assertOutsideStore(path, flag, given);
  if (existsSync(path) && !statSync(path).isDirectory()) throw new UserError(`${flag} ${given} is an existing file; give a folder (new or existing)`);
  return path;
}

/** Checks an output file the user named (`--plot`) before any work: never inside the store, never a folder. */
export function outputFile(given: string, flag: string, io: Io): string {
  const path = resolve(io.cwd, given);
  new DatasetStore(io.home).assertOutsideStore(path, flag, given);
  if (existsSync(path) && statSync(path).isDirectory()) throw new UserError(`${flag} ${given} is a folder; give a file name`);
  return path;
}
