import { existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { DatasetStore, MAX_VERSION } from '../core/store.ts';
import { draftManifest, makeSamples } from './fixtures/core/samples.ts';
import { tempDirs, userErrorOf } from './helpers/files.ts';
import { toolkilnProcess } from './helpers/toolkiln-process.ts';

const tmp = tempDirs('tk-store-trust-');
/** The installed command, as a user runs it, in `home`. */
const toolkiln = (home: string, ...args: string[]) => toolkilnProcess(home, args);

const publishDemo = (store: DatasetStore, fingerprint: string) => store.publish({ name: 'demo', samples: makeSamples(2), tools: [], rejects: [], manifest: draftManifest(fingerprint) });

let home: string;
const STRAY = 'v99999999999999999999';
let runs: ReturnType<typeof toolkiln>[];

beforeAll(() => {
  home = tmp();
  // An empty stray folder with an absurd version number, there before the first publish of `stray`.
  mkdirSync(join(home, 'datasets', 'stray', STRAY), { recursive: true });
  const run = (...more: string[]) => toolkiln(home, 'run', 'mtu', '--limit', '3', '--quiet', ...more);
  runs = [run('--name', 'stray'), run('--name', 'stray', '--force')];
  expect(run().code).toBe(0); // mtu@v1, for the commands below
}, 180_000);

describe('version numbers are bounded integers', () => {
  it('a stray vN beyond the bound is reported and skipped: publishing goes on at v1, v2', () => {
    expect(runs.map((r) => r.code)).toEqual([0, 0]);
    expect(runs.map((r) => /published (stray@v\d+)/.exec(`${r.out}\n${r.err}`)?.[1])).toEqual(['stray@v1', 'stray@v2']);
    expect(runs[0].err).toContain(`${join(home, 'datasets', 'stray', STRAY)}: a version number beyond v${MAX_VERSION} is not one the store writes; it is not treated as a version`);
    expect(readdirSync(join(home, 'datasets', 'stray')).filter((e) => e.startsWith('v')).sort()).toEqual(['v1', 'v2', STRAY]);
    expect(JSON.parse(toolkiln(home, 'datasets', 'list', '--json').out).datasets).toContainEqual(expect.objectContaining({ name: 'stray', versions: ['v1', 'v2'] }));
  });

  it(`v${MAX_VERSION} counts (and no version is published past it); v${MAX_VERSION + 1} does not`, () => {
    const dir = tmp();
    const store = new DatasetStore(dir);
    publishDemo(store, 'a');
    mkdirSync(join(dir, 'datasets', 'demo', `v${MAX_VERSION + 1}`));
    expect(publishDemo(store, 'b').ref.version).toBe('v2');
    mkdirSync(join(dir, 'datasets', 'demo', `v${MAX_VERSION}`));
    expect(userErrorOf(() => publishDemo(store, 'c'))).toBe(`${join(dir, 'datasets', 'demo')}: demo already has v${MAX_VERSION}, the highest version number the store writes; publish under another --name`);
    expect(store.versions('demo')).toEqual(['v1', 'v2']);
  });
});

describe('datasets verify', () => {
  it('names a file added to a published version that the manifest does not list, and reading commands refuse the version', () => {
    const dir = tmp();
    const store = new DatasetStore(dir);
    const { ref } = publishDemo(store, 'a');
    // The folders older versions kept derived files in are not part of the version: not looked into.
    mkdirSync(join(ref.dir, 'review'));
    writeFileSync(join(ref.dir, 'review', 'queue.json'), '{}');
    expect(toolkiln(dir, 'datasets', 'verify', 'demo@v1')).toMatchObject({ code: 0, out: expect.stringMatching(/all \d+ files match the manifest/) });

    writeFileSync(join(ref.dir, 'data', 'injected.jsonl'), '{"id":"planted"}\n');
    mkdirSync(join(ref.dir, 'reports', 'deep'), { recursive: true });
    symlinkSync('/etc/passwd', join(ref.dir, 'reports', 'deep', 'link'));
    const verify = toolkiln(dir, 'datasets', 'verify', 'demo@v1');
    expect(verify.code).toBe(1);
    expect(verify.out.split('\n')).toEqual([
      `unlisted  ${join(ref.dir, 'data', 'injected.jsonl')}`,
      `unlisted  ${join(ref.dir, 'reports', 'deep', 'link')}`,
      'demo@v1: 2 file(s) the manifest does not list; restore the version from a copy or publish it again (or remove the files it does not list)',
    ]);
    expect(JSON.parse(toolkiln(dir, 'datasets', 'verify', 'demo@v1', '--json').out)).toMatchObject({ ok: false, problems: [{ file: 'data/injected.jsonl', problem: 'unlisted' }, { file: 'reports/deep/link', problem: 'unlisted' }] });
    expect(userErrorOf(() => new DatasetStore(dir).assertIntact(ref))).toMatch(/data\/injected\.jsonl is in demo@v1, but its manifest does not list it \(added after publishing\); remove it/);
  });
});

describe('no output path where only toolkiln writes', () => {
  it.each([
    ['.toolkiln', (h: string) => join(h, '.toolkiln')],
    ['a folder in it', (h: string) => join(h, '.toolkiln', 'cache', 'out')],
    ['a link to it', (h: string) => join(h, 'elsewhere')],
  ])('export --out %s is refused before any work', (_label, out) => {
    if (!existsSync(join(home, 'elsewhere'))) symlinkSync(join(home, '.toolkiln'), join(home, 'elsewhere'));
    const before = readdirSync(join(home, '.toolkiln'), { recursive: true }).length;
    const refused = toolkiln(home, 'export', 'mtu@v1', '--format', 'canonical', '--out', out(home));
    expect(refused.code).toBe(2);
    expect(refused.err).toBe(`toolkiln: --out ${out(home)} is inside ${join(home, '.toolkiln')}, where toolkiln keeps its runs and response cache; give a folder outside it`);
    expect(readdirSync(join(home, '.toolkiln'), { recursive: true }).length).toBe(before);
  });

  it('review export and review agreement refuse it too (agreement also refuses the dataset store)', () => {
    expect(toolkiln(home, 'review', 'export', 'mtu@v1', '--format', 'csv', '--out', '.toolkiln/sheets')).toMatchObject({ code: 2, err: expect.stringContaining('is inside') });
    writeFileSync(join(home, 'sheet.csv'), 'item_id,decision\n');
    expect(toolkiln(home, 'review', 'agreement', 'mtu@v1', 'sheet.csv', '--out', '.toolkiln/adjudication')).toMatchObject({ code: 2, err: expect.stringContaining('.toolkiln, where toolkiln keeps its runs') });
    expect(toolkiln(home, 'review', 'agreement', 'mtu@v1', 'sheet.csv', '--out', 'datasets/mtu')).toMatchObject({ code: 2, err: expect.stringContaining('is inside the dataset store') });
  });
});
