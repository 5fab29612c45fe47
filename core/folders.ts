import { accessSync, constants, existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { withPath } from './errors.ts';
import { processIsAlive } from './lock.ts';

/**
 * `mkdir -p` that fails with the real reason. On a read-only file system Node's recursive mkdir
 * reports ENOENT for the folder it could not make; the reason (EROFS, EACCES, …) is then found on
 * the nearest folder that exists, and the error names the folder asked for.
 */
export function makeFolder(path: string): string {
  try {
    mkdirSync(path, { recursive: true });
  } catch (error) {
    throw (error as NodeJS.ErrnoException).code === 'ENOENT' ? (unwritable(nearestExisting(dirname(path)), 'mkdir', path) ?? error) : withPath(error, path);
  }
  return path;
}

/** An errno error (`syscall path`) for a folder this process cannot write in, or null when it can. */
function unwritable(folder: string, syscall: string, path: string): NodeJS.ErrnoException | null {
  try {
    accessSync(folder, constants.W_OK);
    return null;
  } catch (denied) {
    const code = (denied as NodeJS.ErrnoException).code ?? 'EACCES';
    return Object.assign(new Error(`${code}: cannot ${syscall} ${path}`), { code, syscall, path });
  }
}

function nearestExisting(path: string): string {
  let existing = path;
  while (!existsSync(existing) && dirname(existing) !== existing) existing = dirname(existing);
  return existing;
}

const STAGE_PREFIX = '.toolkiln-tmp-';
/** A staged folder's name: the prefix, then the id of the process writing it. */
const STAGED_BY = /^\.toolkiln-tmp-(\d+)-/;
let staged = 0;

/** A temporary folder whose files go into `target` at `commit` (see `stageFolder`). */
export interface StagedFolder {
  /** Where to write: a hidden folder on the target's file system. */
  readonly dir: string;
  /** Where a path under `dir` will be once committed. */
  final(path: string): string;
  /** Moves everything written into `target` (renames only, which need no space) and removes `dir`. */
  commit(): void;
  /**
   * After a failure: removes `dir` and everything in it (`target` stays as it was) and returns the
   * error, a file-system error naming the file where it was to go rather than its staged copy.
   */
  failed(error: unknown): unknown;
}

/**
 * Files made from a version (exports, review sheets, evaluation results) are written whole or not at
 * all: into a staged folder, moved into `target` only once every one of them is written, so a full
 * disk or any failure part way leaves nothing half-written there. The staged folder sits beside
 * `target` when it does not exist yet (or is replaced whole: `replace`, for a folder only toolkiln
 * writes), else hidden inside it; either way on the same file system, so the moves are renames.
 * Committing into an existing folder replaces the files of the same name and leaves the others.
 * A staged folder left by a killed process is removed by the next one staged in the same place.
 */
export function stageFolder(target: string, options: { replace?: boolean } = {}): StagedFolder {
  const whole = options.replace === true || !existsSync(target);
  const home = whole ? makeFolder(dirname(target)) : target;
  if (!whole && !statSync(target).isDirectory()) throw withPath(Object.assign(new Error(`ENOTDIR: not a directory, ${target}`), { code: 'ENOTDIR', syscall: 'write in' }), target);
  removeAbandoned(home);
  const dir = join(home, `${STAGE_PREFIX}${process.pid}-${++staged}${whole ? `-${basename(target)}` : ''}`);
  try {
    mkdirSync(dir);
  } catch (error) {
    // Named after the folder the user knows, not the hidden one.
    const [syscall, path] = existsSync(target) ? ['write in', home] : ['mkdir', target];
    throw unwritable(home, syscall, path) ?? withPath(error, path);
  }
  const discard = () => rmSync(dir, { recursive: true, force: true });
  const final = (path: string) => join(target, relative(dir, path));
  return {
    dir,
    final,
    commit() {
      if (whole && !existsSync(target)) renameSync(dir, target);
      else if (whole) {
        const old = `${dir}-old`;
        renameSync(target, old);
        renameSync(dir, target);
        rmSync(old, { recursive: true, force: true });
      } else {
        moveInto(dir, target, join(dir, `${STAGE_PREFIX}old`));
        discard();
      }
    },
    failed(error) {
      discard();
      const e = error as NodeJS.ErrnoException;
      if (e && typeof e.path === 'string' && e.path.startsWith(`${dir}/`)) e.path = final(e.path.replace(/\.tmp-\d+$/, ''));
      return error;
    },
  };
}

/**
 * Moves the entries of `from` into `to`: a file replaces a file in one rename, folders present in
 * both are merged, and whatever is in the way of a new entry (a file where a folder goes, or the
 * reverse) is moved into `trash` first.
 */
function moveInto(from: string, to: string, trash: string): void {
  for (const entry of readdirSync(from)) {
    const source = join(from, entry);
    if (source === trash) continue;
    const destination = join(to, entry);
    const there = existsSync(destination) ? statSync(destination).isDirectory() : null;
    const folder = statSync(source).isDirectory();
    if (folder && there === true) {
      moveInto(source, destination, trash);
      continue;
    }
    if (there !== null && (folder || there)) {
      mkdirSync(trash, { recursive: true });
      renameSync(destination, join(trash, `${readdirSync(trash).length}`));
    }
    renameSync(source, destination);
  }
}

/** Writes into a staged folder of `target` with `fill`, then commits it; on any failure nothing reaches `target`. */
export async function writeFolderAtomic<T>(target: string, fill: (dir: string) => T | Promise<T>, options: { replace?: boolean } = {}): Promise<{ value: T; final: (path: string) => string }> {
  const stage = stageFolder(target, options);
  try {
    const value = await fill(stage.dir);
    stage.commit();
    return { value, final: stage.final };
  } catch (error) {
    throw stage.failed(error);
  }
}

/** Staged folders of processes that are gone (killed while writing). */
function removeAbandoned(folder: string): void {
  for (const entry of readdirSync(folder)) {
    const pid = STAGED_BY.exec(entry)?.[1];
    if (pid && !processIsAlive(Number(pid))) rmSync(join(folder, entry), { recursive: true, force: true });
  }
}
