import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { OfflineGateway } from '../core/llm/offline.ts';
import { runPipeline } from '../core/run.ts';
import { DatasetStore } from '../core/store.ts';
import { sha256 } from '../core/hash.ts';
import { mtuPipeline } from '../pipelines/mtu.ts';
import { draftManifest, makeSamples } from './fixtures/core/samples.ts';

const tmp = (p: string) => mkdtempSync(join(tmpdir(), p));

describe('dataset store', () => {
  it('publishes the documented layout with checksums, counts and a LATEST pointer', () => {
    const home = tmp('tk-store-');
    const store = new DatasetStore(home);
    const { ref, manifest } = store.publish({ name: 'demo', samples: makeSamples(6), tools: [], rejects: [], manifest: draftManifest('fp') });
    expect(ref.version).toBe('v1');
    // No tools and no rejects: those files are not written (an empty JSONL file breaks loaders).
    expect(readdirSync(ref.dir).sort()).toEqual(['data', 'manifest.json']);
    expect(readdirSync(join(ref.dir, 'data')).sort()).toEqual(['test.jsonl', 'train.jsonl']);
    expect(manifest.counts).toMatchObject({ samples: 6, bySplit: { test: 2, train: 4 }, byCategory: { 'S-M': 3, 'S-S': 3 } });
    for (const [file, hash] of Object.entries(manifest.files)) expect(sha256(readFileSync(join(ref.dir, file)))).toBe(hash);
    expect(readFileSync(join(home, 'datasets', 'demo', 'LATEST'), 'utf8').trim()).toBe('v1');
    for (const file of Object.keys(manifest.files)) expect(statSync(join(ref.dir, file)).mode & 0o222).toBe(0); // read-only
  });

  it('leaves no visible version when publishing is killed between writing and renaming', () => {
    const home = tmp('tk-crash-');
    const script = new URL('./fixtures/core/crash-publish.ts', import.meta.url).pathname;
    const child = spawnSync(process.execPath, ['--import', 'tsx', script, home]);
    expect(child.signal).toBe('SIGKILL');
    const store = new DatasetStore(home);
    expect(store.versions('crashy')).toEqual([]);
    expect(store.names()).toEqual([]);
    expect(() => store.resolve('crashy@v1')).toThrow(/no dataset named "crashy"/);
    // The next publish is v1 and unaffected by the leftover temporary folder.
    expect(store.publish({ name: 'crashy', samples: makeSamples(2), tools: [], rejects: [], manifest: draftManifest('fp') }).ref.version).toBe('v1');
  });

  it('removes its temporary folder when publishing fails in-process', () => {
    const home = tmp('tk-fail-');
    const store = new DatasetStore(home);
    expect(() =>
      store.publish({ name: 'x', samples: makeSamples(2), tools: [], rejects: [], manifest: draftManifest('fp'), beforeRename: () => { throw new Error('disk full'); } }),
    ).toThrow('disk full');
    expect(readdirSync(join(home, 'datasets', 'x'))).toEqual([]);
  });

  it('diffs two versions by sample id', () => {
    const store = new DatasetStore(tmp('tk-diff-'));
    const a = store.publish({ name: 'd', samples: makeSamples(5), tools: [], rejects: [], manifest: draftManifest('a') }).ref;
    const next = makeSamples(6).filter((s) => s.id !== 's-0');
    next[0] = { ...next[0], dialogue: [{ role: 'user', content: 'edited' }] }; // s-1 changed
    const b = store.publish({ name: 'd', samples: next, tools: [], rejects: [], manifest: draftManifest('b', 'v1') }).ref;
    expect(b.version).toBe('v2');
    expect(store.diff(a, b)).toEqual({ a: 'd@v1', b: 'd@v2', added: ['s-5'], removed: ['s-0'], changed: ['s-1'], unchanged: 3 });
  });

  it('publishes nothing new when a run with the same fingerprint is repeated, and publishes with force', async () => {
    const home = tmp('tk-same-');
    const run = (force = false) => runPipeline({ pipeline: mtuPipeline, limit: 50, llm: new OfflineGateway(42), home, projectDir: process.cwd(), force, progress: { quiet: true } });
    const first = await run();
    expect(first.status).toBe('published');
    const second = await run();
    expect(second).toMatchObject({ status: 'existing', fingerprint: first.fingerprint });
    expect(second.ref?.version).toBe('v1');
    expect(new DatasetStore(home).versions('mtu')).toEqual(['v1']);
    expect((await run(true)).ref?.version).toBe('v2');
  });

  it('names the file when a manifest is damaged', () => {
    const store = new DatasetStore(tmp('tk-damaged-'));
    const { ref } = store.publish({ name: 'd', samples: makeSamples(1), tools: [], rejects: [], manifest: draftManifest('a') });
    const path = join(ref.dir, 'manifest.json');
    chmodSync(path, 0o644);
    writeFileSync(path, '{"name": ');
    expect(() => store.manifest(ref)).toThrow(`${path}: not readable JSON`);
    writeFileSync(path, '{"name": "d"}');
    expect(() => store.manifest(ref)).toThrow(new RegExp(`${path}: not a toolkiln manifest \\(version`));
  });

  it('refuses dataset names that could escape the store', () => {
    for (const name of ['a/b', 'a\\b', '..', 'x..y', '']) expect(() => DatasetStore.checkName(name)).toThrow(/invalid dataset name/);
  });
});
