import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, statfsSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stageFolder } from '../core/folders.ts';
import { hashFileSync } from '../core/hash.ts';
import { tempDirs } from './helpers/files.ts';
import { toolkilnProcess, type ProcessRun } from './helpers/toolkiln-process.ts';

/**
 * Files made from a version (exports, review sheets, evaluation results) are written whole or not at
 * all, and a home that cannot be written gets a one-line reason. Run as a user meets it: the installed
 * command in its own process, a real full file system (tmpfs), a real write limit (ulimit -f) and a
 * real read-only mount.
 */

const tmp = tempDirs('tk-derived-atomic-');

/** Every file under `dir` with its sha256. */
function snapshot(dir: string): Record<string, string> {
  if (!existsSync(dir)) return {};
  const entries = readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
  return Object.fromEntries(entries.map((e) => join(e.parentPath, e.name)).map((path) => [relative(dir, path), hashFileSync(path)]));
}

/** Staged folders and temporary files anywhere under `dir`. */
function leftovers(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((path) => /(^|\/)\.toolkiln-tmp-|\.tmp-\d+$/.test(path));
}

function expectOneLine(run: ProcessRun, pattern: RegExp): void {
  expect(run.code, run.err).not.toBe(0);
  expect(run.err.split('\n'), run.err).toHaveLength(1);
  expect(run.err).toMatch(pattern);
}

let home: string;
const derived = () => join(home, 'datasets', 'mtu', 'v1.derived');

beforeAll(() => {
  home = tmp();
  expect(toolkilnProcess(home, ['run', 'mtu', '--limit', '60', '--quiet']).code).toBe(0);
}, 180_000);

describe('a write failure part way (ulimit -f) leaves nothing half-written', () => {
  // Limits that let the smaller files of each format be written and stop a larger one.
  it.each([
    ['mtu', 64],
    ['hf', 16],
  ] as const)('export --format %s: no partial folder, a previous export untouched, a --out folder unchanged', (format, fileLimitKb) => {
    const target = join(derived(), 'export', format);
    const failed = toolkilnProcess(home, ['export', 'mtu@v1', '--format', format], { fileLimitKb });
    expect(Object.keys(snapshot(target))).toEqual([]);
    expectOneLine(failed, new RegExp(`^toolkiln: cannot write ${target}/\\S+: the file is larger than this process may write \\(ulimit -f\\).*\\(EFBIG\\)$`));
    expect(leftovers(home)).toEqual([]);

    expect(toolkilnProcess(home, ['export', 'mtu@v1', '--format', format]).code).toBe(0);
    const before = snapshot(target);
    expect(Object.keys(before).length).toBeGreaterThan(2);
    expect(toolkilnProcess(home, ['export', 'mtu@v1', '--format', format], { fileLimitKb }).code).toBe(1);
    expect(snapshot(target)).toEqual(before);

    const mine = join(tmp(), 'mine');
    mkdirSync(mine);
    writeFileSync(join(mine, 'notes.txt'), 'kept');
    expect(toolkilnProcess(home, ['export', 'mtu@v1', '--format', format, '--out', mine], { fileLimitKb }).code).toBe(1);
    expect(readdirSync(mine, { recursive: true })).toEqual(['notes.txt']);
    expect(leftovers(home)).toEqual([]);
  }, 120_000);

  it('review export: neither the queue nor any sheet', () => {
    const failed = toolkilnProcess(home, ['review', 'export', 'mtu@v1', '--format', 'csv', '--rate', '1'], { fileLimitKb: 20 });
    expect(Object.keys(snapshot(join(derived(), 'review')))).toEqual([]);
    expectOneLine(failed, /cannot write .*\/v1\.derived\/review\/mtu-v1-review\.csv: .*\(EFBIG\)$/);
    expect(leftovers(home)).toEqual([]);
  }, 60_000);
});

// ---------------------------------------------------------------- real file systems

/** Why this process cannot mount a tmpfs (not root, no CAP_SYS_ADMIN, no mount), or null when it can. */
function mountProblem(): string | null {
  const probe = tmp();
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', probe], { encoding: 'utf8' });
  if (mounted.error || mounted.status !== 0) return `cannot mount a tmpfs here: ${(mounted.stderr || String(mounted.error)).trim()}`;
  spawnSync('umount', [probe]);
  return null;
}
const cannotMount = mountProblem();
const mounted: string[] = [];

/** A fresh tmpfs of `sizeKb` holding a copy of the home's datasets (no derived files). */
function tmpfsHome(sizeKb: number): string {
  const dir = tmp();
  const result = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeKb}k`, 'tmpfs', dir], { encoding: 'utf8' });
  expect(result.status, result.stderr).toBe(0);
  mounted.push(dir);
  cpSync(join(home, 'datasets'), join(dir, 'datasets'), { recursive: true, filter: (path) => !path.includes('.derived') });
  return dir;
}

/** Leaves `bytes` free on the file system of `dir` (a filler file takes the rest). */
function leaveFree(dir: string, bytes: number): void {
  rmSync(join(dir, 'filler'), { force: true });
  const { bavail, bsize } = statfsSync(dir);
  writeFileSync(join(dir, 'filler'), Buffer.alloc(Math.max(0, Number(bavail) * Number(bsize) - bytes)));
}

const remount = (dir: string, mode: 'ro' | 'rw') => expect(spawnSync('mount', ['-o', `remount,${mode}`, dir]).status).toBe(0);

afterAll(() => {
  for (const dir of mounted) spawnSync('umount', [dir]);
});

describe.skipIf(cannotMount !== null)(`on a real tmpfs${cannotMount ? ` (skipped: ${cannotMount})` : ''}`, () => {
  it('a full disk: export (mtu, hf) and eval leave nothing half-written, with a one-line reason', () => {
    const disk = tmpfsHome(4096);
    leaveFree(disk, 16 * 1024);
    for (const format of ['mtu', 'hf']) {
      const failed = toolkilnProcess(disk, ['export', 'mtu@v1', '--format', format]);
      expect(Object.keys(snapshot(join(disk, 'datasets', 'mtu', 'v1.derived', 'export')))).toEqual([]);
      expectOneLine(failed, new RegExp(`^toolkiln: cannot write ${disk}/datasets/mtu/v1\\.derived/export/${format}/\\S+: the disk is full.*\\(ENOSPC\\)$`));
    }

    // Room for the items file of an evaluation but not for its report: neither is kept.
    const evaluated = toolkilnProcess(home, ['eval', 'mtu@v1', '--model', 'oracle', '--json']);
    expect(evaluated.code).toBe(0);
    const itemsFile = (JSON.parse(evaluated.out).files as string[]).find((f) => f.endsWith('items.jsonl'))!;
    const block = Number(statfsSync(disk).bsize);
    leaveFree(disk, Math.ceil(statSync(itemsFile).size / block) * block);
    const failed = toolkilnProcess(disk, ['eval', 'mtu@v1', '--model', 'oracle']);
    expect(Object.keys(snapshot(join(disk, 'datasets', 'mtu', 'v1.derived', 'eval')))).toEqual([]);
    expectOneLine(failed, /the disk is full.*\(ENOSPC\)$/);
    expect(leftovers(disk)).toEqual([]);
  }, 180_000);

  it('a read-only home: every command that writes says so in one line, naming the folder, whether or not the derived folders exist yet', () => {
    const ro = tmpfsHome(8192);
    const commands: [string, string[]][] = [
      ['export', ['export', 'mtu@v1', '--format', 'mtu']],
      ['review export', ['review', 'export', 'mtu@v1', '--format', 'csv']],
      ['eval', ['eval', 'mtu@v1', '--model', 'oracle']],
      ['run', ['run', 'mtu', '--limit', '3', '--quiet', '--force']],
      ['review serve', ['review', 'serve', 'mtu@v1', '--port', '0']],
    ];
    const check = () => {
      for (const [label, args] of commands) {
        const refused = toolkilnProcess(ro, args, { timeoutMs: 60_000 });
        expect(refused.code, `${label}: ${refused.err}`).not.toBe(null); // it stopped on its own
        expectOneLine(refused, new RegExp(`^toolkiln: cannot (mkdir|write in|open|write) ${ro}/\\S+: the file system is read-only: point TOOLKILN_HOME \\(or the path you gave\\) at a writable folder \\(EROFS\\)`));
      }
    };
    remount(ro, 'ro');
    check(); // no derived folder yet

    remount(ro, 'rw');
    for (const args of [['export', 'mtu@v1', '--format', 'mtu'], ['review', 'export', 'mtu@v1', '--format', 'csv'], ['eval', 'mtu@v1', '--model', 'oracle']]) expect(toolkilnProcess(ro, args).code).toBe(0);
    remount(ro, 'ro');
    check(); // the derived folders exist
  }, 300_000);
});

describe('stageFolder', () => {
  it('replaces a folder only toolkiln writes whole, merges into a user folder, and clears what a killed process left', () => {
    const dir = tmp();
    const owned = join(dir, 'owned');
    mkdirSync(join(owned, 'data'), { recursive: true });
    writeFileSync(join(owned, 'data', 'stale.jsonl'), 'old');
    const replace = stageFolder(owned, { replace: true });
    mkdirSync(join(replace.dir, 'data'));
    writeFileSync(join(replace.dir, 'data', 'new.jsonl'), 'new');
    replace.commit();
    expect(snapshot(owned)).toEqual({ 'data/new.jsonl': expect.any(String) });

    const mine = join(dir, 'mine');
    mkdirSync(join(mine, 'data'), { recursive: true });
    writeFileSync(join(mine, 'data', 'notes.txt'), 'kept');
    writeFileSync(join(mine, 'README.md'), 'old readme');
    mkdirSync(join(mine, 'was-a-folder'));
    // A staged folder of a process that no longer runs (pid 2^22 + 1 is above Linux's pid_max).
    mkdirSync(join(mine, `.toolkiln-tmp-${2 ** 22 + 1}-1`));
    const merge = stageFolder(mine);
    expect(merge.dir.startsWith(`${mine}/`)).toBe(true);
    mkdirSync(join(merge.dir, 'data'));
    writeFileSync(join(merge.dir, 'data', 'train.jsonl'), 'rows');
    writeFileSync(join(merge.dir, 'README.md'), 'new readme');
    writeFileSync(join(merge.dir, 'was-a-folder'), 'now a file');
    expect(merge.final(join(merge.dir, 'data', 'train.jsonl'))).toBe(join(mine, 'data', 'train.jsonl'));
    merge.commit();
    expect(Object.keys(snapshot(mine)).sort()).toEqual(['README.md', 'data/notes.txt', 'data/train.jsonl', 'was-a-folder']);
    expect(readdirSync(mine).filter((e) => e.startsWith('.'))).toEqual([]);

    const failing = stageFolder(join(dir, 'new'));
    writeFileSync(join(failing.dir, 'half'), 'x');
    expect(failing.failed(Object.assign(new Error('ENOSPC'), { code: 'ENOSPC', path: join(failing.dir, 'half.tmp-12') }))).toMatchObject({ path: join(dir, 'new', 'half') });
    expect(readdirSync(dir).sort()).toEqual(['mine', 'owned']);
  });
});
