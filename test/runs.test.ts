import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../bin/cli.ts';
import { fileSystemMessage, withPath } from '../core/errors.ts';
import { writeFileAtomic } from '../core/jsonl.ts';
import { OfflineGateway } from '../core/llm/offline.ts';
import { tryLock } from '../core/lock.ts';
import { runPipeline } from '../core/run.ts';
import { parseDuration } from '../core/runs.ts';
import { echoPipeline, interruption } from './fixtures/core/echo-pipeline.ts';

const tmp = (prefix: string) => mkdtempSync(join(tmpdir(), prefix));

async function cli(home: string, ...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (t) => out.push(t), err: (t) => err.push(t), home, cwd: home, env: {} });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** Every file under `dir` whose name holds `.tmp-` (partial writes). */
function partialFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true }).map(String).filter((p) => p.includes('.tmp-'));
}

describe('toolkiln runs', () => {
  it('lists run folders with their state, and cleans old ones but never a running one', async () => {
    const home = tmp('tk-runs-');
    const file = join(home, 'lines.txt');
    writeFileSync(file, 'a\nb\nc\n');
    const run = (extra = {}) => runPipeline({ pipeline: echoPipeline, configOverrides: { file }, llm: new OfflineGateway(42), home, projectDir: process.cwd(), cwd: home, progress: { quiet: true }, ...extra });
    await run();
    interruption.onText = 'b';
    await expect(run({ force: true, concurrency: 1 })).rejects.toThrow('interrupted');
    interruption.onText = null;
    await run({ force: true });
    const runsDir = join(home, '.toolkiln', 'runs');
    const [published] = (JSON.parse((await cli(home, 'runs', 'list', '--json')).out).runs as { id: string; state: string }[]).filter((r) => r.state === 'published').slice(-1);

    // One run is held by a live process (this one), as a run in progress is.
    const unfinished = (JSON.parse((await cli(home, 'runs', 'list', '--json')).out).runs as { id: string; state: string }[]).find((r) => r.state === 'unfinished')!;
    const held = tryLock(join(runsDir, unfinished.id, 'lock'), 'test');
    if (!('lock' in held)) throw new Error('no lock');
    // Age every run by ten days.
    const old = new Date(Date.now() - 10 * 86_400_000);
    for (const id of readdirSync(runsDir)) {
      for (const entry of readdirSync(join(runsDir, id), { recursive: true })) utimesSync(join(runsDir, id, String(entry)), old, old);
      utimesSync(join(runsDir, id), old, old);
    }

    const listed = await cli(home, 'runs', 'list', '--json');
    const runs = JSON.parse(listed.out).runs as { id: string; state: string; dataset: string; bytes: number }[];
    expect(runs.map((r) => r.state).sort()).toEqual(['published', 'published', 'running']);
    expect(runs.every((r) => r.bytes > 0)).toBe(true);
    expect((await cli(home, 'runs', 'list')).out).toContain('running');

    const preview = await cli(home, 'runs', 'clean', '--keep', '0', '--dry-run', '--json');
    expect(JSON.parse(preview.out)).toMatchObject({ dryRun: true, kept: 1 });
    expect(readdirSync(runsDir)).toHaveLength(3);

    const cleaned = await cli(home, 'runs', 'clean', '--older-than', '7d');
    expect(cleaned.code).toBe(0);
    expect(cleaned.out).toMatch(/removed 2 run\(s\), [\d.]+ MB; kept 1$/);
    expect(readdirSync(runsDir)).toEqual([unfinished.id]);
    expect(published).toBeDefined();
    held.lock.release();

    expect((await cli(home, 'runs', 'clean')).err).toBe('toolkiln: say which runs to remove: --older-than <duration> and/or --keep <n> (add --dry-run to see them first)');
    expect((await cli(home, 'runs', 'clean', '--older-than', 'soon')).err).toBe('toolkiln: --older-than takes a duration such as 7d, 12h, 30m or 2w, not "soon"');
    expect(parseDuration('12h')).toBe(43_200_000);
  });
});

describe('file-system errors', () => {
  it('are one line naming the path and what to do', () => {
    let error: unknown;
    try {
      writeFileSync('/dev/full', 'data'); // a real ENOSPC; write(2) errors carry no path, so toolkiln adds it
    } catch (e) {
      error = withPath(e, '/dev/full');
    }
    expect(fileSystemMessage(error)).toBe('cannot write /dev/full: the disk is full: free space (toolkiln runs clean removes old run folders) (ENOSPC)');
    const readOnly = Object.assign(new Error('EROFS: read-only file system'), { code: 'EROFS', syscall: 'open', path: '/ro/x' });
    expect(fileSystemMessage(readOnly)).toBe('cannot open /ro/x: the file system is read-only: point TOOLKILN_HOME (or the path you gave) at a writable folder (EROFS)');
    expect(fileSystemMessage(new Error('other'))).toBeNull();
  });

  it('remove the partial file of a write that failed', () => {
    const dir = tmp('tk-partial-');
    mkdirSync(join(dir, 'taken'));
    writeFileSync(join(dir, 'taken', 'inside'), 'x');
    expect(() => writeFileAtomic(join(dir, 'taken'), 'text')).toThrow();
    expect(partialFiles(dir)).toEqual([]);
  });

  it('stop a run on a full disk with one line and the resume command, leaving no partial files', () => {
    const home = tmp('tk-disk-');
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=300k', 'tmpfs', home]);
    expect(mounted.status, `a small tmpfs is needed to fill a disk: ${mounted.stderr}`).toBe(0);
    try {
      const bin = new URL('../bin/toolkiln.js', import.meta.url).pathname;
      const child = spawnSync(process.execPath, [bin, 'run', 'mtu', '--limit', '50', '--quiet'], { cwd: home, env: { ...process.env, TOOLKILN_HOME: home }, encoding: 'utf8' });
      expect(child.status).toBe(1);
      const last = child.stderr.trim().split('\n').at(-1)!;
      expect(last).toMatch(new RegExp(`^toolkiln: cannot write ${home}/\\.toolkiln/runs/mtu-[\\w-]+/\\S+: the disk is full: free space \\(toolkiln runs clean removes old run folders\\) \\(ENOSPC\\); then resume with: toolkiln run mtu --resume mtu-`));
      expect(partialFiles(home)).toEqual([]);
      expect(existsSync(join(home, 'datasets'))).toBe(false);
    } finally {
      spawnSync('umount', [home]);
    }
  });
});

