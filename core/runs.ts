import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { readJsonFileOrNull } from './jsonl.ts';
import { ownerIsAlive, readLockOwner } from './lock.ts';
import type { RunOutcome, RunSpec } from './run.ts';
import { RUN_LOCK, RUN_OUTCOME } from './run-folder.ts';

/** One run folder under `<home>/.toolkiln/runs/`, as `toolkiln runs list` shows it. */
export interface RunEntry {
  id: string;
  dir: string;
  pipeline: string | null;
  dataset: string | null;
  /** `running`: a live process holds it; `unfinished`: stopped before publishing (resumable). */
  state: 'running' | 'unfinished' | RunOutcome['status'];
  /** When anything in it last changed (for a finished run: when it finished). */
  lastActivity: Date;
  bytes: number;
}

export function runsDir(home: string): string {
  return join(home, '.toolkiln', 'runs');
}

/** Every run folder, newest first. */
export function listRuns(home: string): RunEntry[] {
  const root = runsDir(home);
  if (!existsSync(root)) return [];
  const entries: RunEntry[] = [];
  for (const id of readdirSync(root)) {
    const dir = join(root, id);
    if (!statSync(dir).isDirectory()) continue;
    const spec = readJsonFileOrNull<RunSpec>(join(dir, 'run.json'));
    const outcome = readJsonFileOrNull<RunOutcome>(join(dir, RUN_OUTCOME));
    const owner = readLockOwner(join(dir, RUN_LOCK));
    const { bytes, newest } = folderSize(dir);
    entries.push({
      id,
      dir,
      pipeline: spec?.pipeline ?? null,
      dataset: outcome?.dataset ?? spec?.name ?? null,
      state: owner && ownerIsAlive(owner) ? 'running' : (outcome?.status ?? 'unfinished'),
      lastActivity: new Date(newest),
      bytes,
    });
  }
  return entries.sort((a, b) => b.lastActivity.getTime() - a.lastActivity.getTime() || (a.id < b.id ? 1 : -1));
}

export interface CleanRunsOptions {
  /** Remove runs whose last activity is older than this. */
  olderThanMs?: number;
  /** Always keep this many of the newest runs. */
  keep?: number;
  /** Say what would be removed, remove nothing. */
  dryRun?: boolean;
  now?: Date;
}

/**
 * Removes run folders that match both limits given (older than, beyond the newest `keep`). A
 * running run is never removed.
 */
export function cleanRuns(home: string, options: CleanRunsOptions): { removed: RunEntry[]; kept: RunEntry[] } {
  const now = (options.now ?? new Date()).getTime();
  const removed: RunEntry[] = [];
  const kept: RunEntry[] = [];
  listRuns(home).forEach((run, index) => {
    const old = options.olderThanMs === undefined || now - run.lastActivity.getTime() > options.olderThanMs;
    const beyondKeep = options.keep === undefined || index >= options.keep;
    if (run.state !== 'running' && old && beyondKeep) removed.push(run);
    else kept.push(run);
  });
  if (!options.dryRun) for (const run of removed) rmSync(run.dir, { recursive: true, force: true });
  return { removed, kept };
}

function folderSize(dir: string): { bytes: number; newest: number } {
  let bytes = 0;
  let newest = statSync(dir).mtimeMs;
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const stat = statSync(join(entry.parentPath, entry.name));
    bytes += stat.size;
    newest = Math.max(newest, stat.mtimeMs);
  }
  return { bytes, newest };
}

/** `7d`, `12h`, `30m`, `2w`, `45s` → milliseconds, or null when it is not such a duration. */
export function parseDuration(text: string): number | null {
  const match = /^(\d+(?:\.\d+)?)\s*(s|m|h|d|w)$/.exec(text.trim());
  if (!match) return null;
  const unit = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }[match[2] as 's' | 'm' | 'h' | 'd' | 'w'];
  return Number(match[1]) * unit;
}
