import { linkSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';

/** Who holds a lock: enough to tell, on this machine, whether that process still runs. */
export interface LockOwner {
  pid: number;
  host: string;
  /** The process's start time in clock ticks since boot (Linux), so a reused pid is not taken for the owner. */
  startTicks: number | null;
  acquiredAt: string;
  /** What the lock is for, shown to whoever is refused (e.g. `run mtu-…`, `publish mtu`). */
  purpose: string;
}

/** The start time of process `pid` (field 22 of /proc/<pid>/stat), or null where /proc is not there. */
function startTicksOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count fields after its closing one.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[19]);
    return Number.isFinite(ticks) ? ticks : null;
  } catch {
    return null;
  }
}

/** Whether a process with this id runs on this machine (one this process may not signal still runs). */
export function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/** True when the lock's owner is a live process (on another host we cannot tell, so it counts as live). */
export function ownerIsAlive(owner: LockOwner): boolean {
  if (owner.host !== hostname()) return true;
  if (!processIsAlive(owner.pid)) return false;
  if (owner.startTicks === null) return true;
  return startTicksOf(owner.pid) === owner.startTicks;
}

export function readLockOwner(path: string): LockOwner | null {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as LockOwner;
  } catch {
    return null;
  }
}

/** A held lock file; `release` removes it (only if it is still ours). */
export interface Lock {
  readonly path: string;
  readonly owner: LockOwner;
  release(): void;
}

const held = new Set<Lock>();
let exitHookInstalled = false;

/**
 * Takes the lock file at `path`, or returns the live process that holds it. The file appears whole
 * or not at all (written aside, then hard-linked into place, which fails if it exists), and a lock
 * left by a process that is gone (killed, crashed) is taken over.
 */
export function tryLock(path: string, purpose: string): { lock: Lock } | { heldBy: LockOwner } {
  const owner: LockOwner = { pid: process.pid, host: hostname(), startTicks: startTicksOf(process.pid), acquiredAt: new Date().toISOString(), purpose };
  const aside = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  writeFileSync(aside, JSON.stringify(owner));
  try {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        linkSync(aside, path);
        const lock: Lock = {
          path,
          owner,
          release() {
            held.delete(lock);
            const current = readLockOwner(path);
            if (current && current.pid === owner.pid && current.acquiredAt === owner.acquiredAt) rmSync(path, { force: true });
          },
        };
        held.add(lock);
        if (!exitHookInstalled) {
          exitHookInstalled = true;
          process.once('exit', () => held.forEach((l) => l.release()));
        }
        return { lock };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const current = readLockOwner(path);
      if (current && ownerIsAlive(current)) return { heldBy: current };
      // Stale (its process is gone) or unreadable: remove it and try again.
      try {
        unlinkSync(path);
      } catch {
        // another process removed it first
      }
    }
    const current = readLockOwner(path);
    if (current) return { heldBy: current };
    throw new Error(`could not take the lock ${path}`);
  } finally {
    rmSync(aside, { force: true });
  }
}

/**
 * Waits until the lock at `path` can be taken, at most `timeoutMs`, then returns who holds it. The
 * wait blocks the thread: it guards short critical sections (publishing) where nothing else runs.
 */
export function waitForLock(path: string, purpose: string, timeoutMs = 10 * 60_000): { lock: Lock } | { heldBy: LockOwner } {
  const deadline = Date.now() + timeoutMs;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  let wait = 10;
  for (;;) {
    const result = tryLock(path, purpose);
    if ('lock' in result || Date.now() >= deadline) return result;
    Atomics.wait(pause, 0, 0, wait);
    wait = Math.min(wait * 2, 250);
  }
}

export function describeOwner(owner: LockOwner): string {
  return `process ${owner.pid}${owner.host !== hostname() ? ` on ${owner.host}` : ''} (${owner.purpose}, since ${owner.acquiredAt})`;
}
