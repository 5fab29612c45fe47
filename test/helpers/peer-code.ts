import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/**
 * The benchmarks' own public code, for tests that run it on toolkiln's exports. Those tests are
 * skipped where the code or Python is missing (CI may have neither): the checks they stand for are
 * also written in TypeScript beside them. Checkouts are bare git mirrors under
 * `$TOOLKILN_PEER_MIRRORS` (default `/work/.mirror`), named `<owner>+<name>/repo`.
 */
const MIRRORS = process.env.TOOLKILN_PEER_MIRRORS ?? '/work/.mirror';

/**
 * Whether to run the peer programs that go over a whole default version (datasets loading every
 * exported file, MetaTool's prompt builder, LLaMA-Factory's converter on every row): minutes of CPU
 * between them, so `npm test` leaves them to `npm run test:peers` (TOOLKILN_PEER_CHECKS=all). The
 * TypeScript rules they stand beside run in both.
 */
export const wholeVersionPeerRuns = process.env.TOOLKILN_PEER_CHECKS === 'all';

/** Whether there is a checkout of a benchmark's repository (`owner/name`) to run. */
export function hasPeer(repo: string): boolean {
  return existsSync(join(MIRRORS, repo.replace('/', '+'), 'repo'));
}

/** The files under `paths` of a benchmark's repository written to a temporary folder, or null when there is no checkout of it. */
export function peerFiles(repo: string, paths: string[]): string | null {
  const gitDir = join(MIRRORS, repo.replace('/', '+'), 'repo');
  if (!existsSync(gitDir)) return null;
  const listed = spawnSync('git', ['--git-dir', gitDir, 'ls-tree', '-r', '--name-only', 'HEAD', '--', ...paths], { encoding: 'utf8' });
  if (listed.status !== 0 || !listed.stdout.trim()) return null;
  const dir = mkdtempSync(join(tmpdir(), 'peer-'));
  for (const path of listed.stdout.trim().split('\n')) {
    const blob = spawnSync('git', ['--git-dir', gitDir, 'show', `HEAD:${path}`], { maxBuffer: 1 << 30 });
    if (blob.status !== 0) return null;
    mkdirSync(join(dir, dirname(path)), { recursive: true });
    writeFileSync(join(dir, path), blob.stdout);
  }
  return dir;
}

/** Whether `python3` runs and imports every one of `modules`. */
export function pythonHas(modules: string[]): boolean {
  const run = spawnSync('python3', ['-c', modules.map((m) => `import ${m}`).join('; ') || 'pass'], { encoding: 'utf8' });
  return run.status === 0;
}

/** Runs a Python script (its text) with `PYTHONPATH` set; stdout, or an error with stderr when it fails. */
export function runPython(script: string, args: string[], options: { cwd: string; pythonPath: string[] }): string {
  const run = spawnSync('python3', ['-c', script, ...args], {
    cwd: options.cwd,
    encoding: 'utf8',
    maxBuffer: 1 << 28,
    env: { ...process.env, PYTHONPATH: options.pythonPath.join(':') },
  });
  if (run.status !== 0) throw new Error(`python3 exited ${run.status}: ${run.stderr.slice(-4000)}`);
  return run.stdout;
}
