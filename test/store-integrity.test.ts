import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { main } from '../bin/cli.ts';
import { DatasetStore } from '../core/store.ts';
import { draftManifest, makeSamples } from './fixtures/core/samples.ts';
import { publishReviewDataset } from './fixtures/review/dataset.ts';
import { fill, readRawSheet, writeSheet } from './fixtures/review/sheets.ts';

const tmp = (prefix: string) => mkdtempSync(join(tmpdir(), prefix));
const bin = new URL('../bin/toolkiln.js', import.meta.url).pathname;

async function cli(home: string, ...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (t) => out.push(t), err: (t) => err.push(t), home, cwd: home, env: {} });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

function publishDemo(store: DatasetStore, fingerprint: string) {
  return store.publish({ name: 'demo', samples: makeSamples(4), tools: [], rejects: [], manifest: draftManifest(fingerprint) });
}

describe('the store repairs what a killed publish leaves', () => {
  it('re-applies read-only modes, rewrites LATEST, removes temporary folders and skips a folder that is not a version', () => {
    const home = tmp('tk-repair-');
    const warnings: string[] = [];
    const store = new DatasetStore(home, { warn: (m) => warnings.push(m) });
    const v1 = publishDemo(store, 'a').ref;
    const datasetDir = join(home, 'datasets', 'demo');
    // Killed between the rename and the chmod: writable files, no LATEST; and between write and rename: a .tmp folder.
    for (const file of ['manifest.json', 'data/test.jsonl', 'data/train.jsonl']) chmodSync(join(v1.dir, file), 0o644);
    const latest = join(datasetDir, 'LATEST');
    chmodSync(latest, 0o644);
    writeFileSync(latest, 'v7\n');
    mkdirSync(join(datasetDir, '.tmp-999999-1', 'data'), { recursive: true });
    // A stray folder with a version's name but no manifest (written by hand or by an export into the store).
    mkdirSync(join(datasetDir, 'v3'));
    writeFileSync(join(datasetDir, 'v3', 'train.jsonl'), '{}\n');

    expect(store.versions('demo')).toEqual(['v1']);
    expect(warnings.join('\n')).toContain(`${join(datasetDir, 'v3')}: has no manifest.json; it is not treated as a version (its number is skipped)`);
    expect(() => store.resolve('demo@v3')).toThrow('demo@v3 is not a usable version: has no manifest.json');

    const next = publishDemo(store, 'b').ref;
    expect(next.version).toBe('v4');
    expect(readFileSync(latest, 'utf8')).toBe('v4\n');
    expect(readdirSync(datasetDir).filter((e) => e.startsWith('.tmp-'))).toEqual([]);
    expect(statSync(join(v1.dir, 'data/train.jsonl')).mode & 0o222).toBe(0);
    expect(store.versions('demo')).toEqual(['v1', 'v4']);
  });

  it('refuses a version folder that is a symbolic link', () => {
    const home = tmp('tk-link-');
    const warnings: string[] = [];
    const store = new DatasetStore(home, { warn: (m) => warnings.push(m) });
    const v1 = publishDemo(store, 'a').ref;
    const elsewhere = tmp('tk-elsewhere-');
    const copy = join(elsewhere, 'v2');
    mkdirSync(copy);
    for (const entry of readdirSync(v1.dir)) symlinkSync(join(v1.dir, entry), join(copy, entry));
    symlinkSync(copy, join(home, 'datasets', 'demo', 'v2'));
    expect(store.versions('demo')).toEqual(['v1']);
    expect(() => store.resolve('demo@v2')).toThrow('demo@v2 is not a usable version: is a symbolic link, and a version must be a real folder of the store');
    expect(warnings.some((w) => w.includes('is a symbolic link'))).toBe(true);
  });

  it('publishes once when the same fingerprint is published twice, and with force a new version', () => {
    const store = new DatasetStore(tmp('tk-twice-'));
    expect(publishDemo(store, 'same').status).toBe('published');
    expect(publishDemo(store, 'same')).toMatchObject({ status: 'existing', ref: { version: 'v1' } });
    expect(store.publish({ name: 'demo', samples: makeSamples(4), tools: [], rejects: [], manifest: draftManifest('same'), force: true }).ref.version).toBe('v2');
  });
});

describe('published data cannot be overwritten or silently changed', () => {
  let home: string;
  beforeAll(async () => {
    home = tmp('tk-tamper-');
    expect((await cli(home, 'run', 'mtu', '--limit', '20', '--quiet', '--name', 'small')).code).toBe(0);
  });

  it('writes default exports beside the version, never inside it', async () => {
    const res = await cli(home, 'export', 'small@v1', '--format', 'canonical', '--json');
    expect(res.code).toBe(0);
    const { files } = JSON.parse(res.out);
    expect(files.every((f: string) => f.startsWith(join(home, 'datasets', 'small', 'v1.derived', 'export', 'canonical')))).toBe(true);
    const written = readdirSync(join(home, 'datasets', 'small', 'v1')).sort();
    expect(written.filter((f) => f !== 'rejects.jsonl')).toEqual(['data', 'manifest.json', 'reports', 'tools.jsonl']);
    expect((await cli(home, 'datasets', 'list', '--json')).out).toContain('"versions":["v1"]');
  });

  it('refuses output paths inside the store or onto an existing file, before any work', async () => {
    const inside = await cli(home, 'export', 'small@v1', '--format', 'canonical', '--out', 'datasets/small/v2');
    expect(inside.code).toBe(2);
    expect(inside.err).toMatch(/^toolkiln: --out datasets\/small\/v2 is inside the dataset store/);
    expect(existsSync(join(home, 'datasets', 'small', 'v2'))).toBe(false);

    writeFileSync(join(home, 'notes.txt'), 'mine');
    const onFile = await cli(home, 'export', 'small@v1', '--format', 'canonical', '--out', 'notes.txt');
    expect(onFile).toMatchObject({ code: 2, err: 'toolkiln: --out notes.txt is an existing file; give a folder (new or existing)' });
    expect(readFileSync(join(home, 'notes.txt'), 'utf8')).toBe('mine');

    const review = await cli(home, 'review', 'export', 'small@v1', '--format', 'csv', '--out', join(home, 'datasets', 'x'));
    expect(review.code).toBe(2);
    expect(review.err).toContain('is inside the dataset store');
    writeFileSync(join(home, 'tools.jsonl'), readFileSync(join(home, 'datasets', 'small', 'v1', 'tools.jsonl')));
    const plot = await cli(home, 'tools', 'cluster', 'tools.jsonl', '--plot', 'datasets/small/plot.html');
    expect(plot.code).toBe(2);
    expect(plot.err).toMatch(/^toolkiln: --plot datasets\/small\/plot.html is inside the dataset store/);
    expect(existsSync(join(home, 'datasets', 'small', 'plot.html'))).toBe(false);
  });

  it('verifies every file against the manifest and refuses to read a changed one', async () => {
    expect(await cli(home, 'datasets', 'verify', 'small@v1')).toMatchObject({ code: 0, out: expect.stringMatching(/^small@v1: all \d+ files match the manifest$/) });
    const tampered = join(home, 'datasets', 'small', 'v1', 'tools.jsonl');
    chmodSync(tampered, 0o644); // as root, read-only modes protect nothing
    writeFileSync(tampered, readFileSync(tampered, 'utf8').replace('"description":"', '"description":"X'));
    const verify = await cli(home, 'datasets', 'verify', 'small@v1', '--json');
    expect(verify.code).toBe(1);
    expect(JSON.parse(verify.out)).toMatchObject({ ok: false, problems: [{ file: 'tools.jsonl', problem: 'changed' }] });
    const exported = await cli(home, 'export', 'small@v1', '--format', 'openai-chat', '--out', 'chat');
    expect(exported.code).toBe(2);
    expect(exported.err).toBe(`toolkiln: ${tampered} does not match its checksum in the manifest of small@v1 (changed after publishing); restore it from a copy or publish the version again`);
    expect(existsSync(join(home, 'chat'))).toBe(false);
    expect((await cli(home, 'review', 'export', 'small@v1', '--format', 'csv')).err).toContain(`${tampered} does not match its checksum`);
  });
});

describe('review imports racing each other', () => {
  it('publish the decisions once and both end with a clear message', async () => {
    const home = tmp('tk-import-race-');
    publishReviewDataset(home);
    const exported = JSON.parse((await cli(home, 'review', 'export', 'demo@v1', '--format', 'csv', '--json')).out);
    writeSheet(join(home, 'sheet.csv'), fill(readRawSheet(exported.files[0]), { 'rv-01': { decision: 'accept' }, 'rv-05': { decision: 'reject' } }));
    const importOnce = () =>
      new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
        const child = spawn(process.execPath, [bin, 'review', 'import', 'demo@v1', 'sheet.csv'], { cwd: home, env: { ...process.env, TOOLKILN_HOME: home }, stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        let err = '';
        child.stdout.on('data', (d) => (out += d));
        child.stderr.on('data', (d) => (err += d));
        child.on('exit', (code) => resolve({ code, out, err }));
      });
    const results = await Promise.all([importOnce(), importOnce(), importOnce()]);
    for (const r of results) {
      expect(r.code, r.err).toBe(0);
      expect(r.err).not.toMatch(/ENOTEMPTY|EEXIST|Error:/);
    }
    expect(results.map((r) => r.out).join('\n')).toContain('demo@v2 already holds exactly these decisions');
    expect(new DatasetStore(home).versions('demo')).toEqual(['v1', 'v2']);
  }, 60_000);
});
