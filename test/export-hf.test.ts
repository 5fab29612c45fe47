import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { main } from '../bin/cli.ts';
import { sampleToLine } from '../core/line-form.ts';
import { Sample } from '../core/records.ts';
import { samplesInMemory } from '../core/sample-source.ts';
import { DatasetStore } from '../core/store.ts';
import { exportHuggingFace } from '../stages/export/hf.ts';
import { cardPath, sourceLicense } from '../stages/export/hf-card.ts';
import { readDatasetCard } from './helpers/dataset-card.ts';
import { parquetRowGroups, readParquetRows } from './helpers/parquet-read.ts';
import { loadFoldersInOneCache, pythonHasDatasets } from './helpers/python.ts';
import { draftManifest } from './fixtures/core/samples.ts';

const tmp = () => mkdtempSync(join(tmpdir(), 'tk-hf-'));

function sample(i: number, split: string): Sample {
  return Sample.parse({
    id: `s-${i}`,
    benchmark: 'demo',
    category: i % 2 ? 'S-S' : 'M-M',
    split,
    tools: i % 3 ? [] : [{ name: 'find', isAction: i % 2 === 0, parameters: { type: 'object', properties: { q: { type: 'string' } } } }],
    dialogue: [{ role: 'user', content: `ask ${i}` }, { role: 'assistant', content: '', ...(i % 4 ? { calls: [{ id: 'c1', tool: 'find', arguments: { q: i % 5 ? 'x' : { $ref: 'c0.y' } } }] } : {}) }],
    expected: i % 2 ? { labels: ['find'] } : {},
    meta: { source: { dataset: 'd', id: String(i) } },
  });
}

describe('hf export', () => {
  it('writes a large split in row groups, read back whole and in order', async () => {
    const store = new DatasetStore(tmp());
    const samples = Array.from({ length: 2500 }, (_, i) => sample(i, 'train'));
    const { ref } = store.publish({ name: 'big', samples, tools: [], rejects: [], manifest: { ...draftManifest('fp'), sources: { '../shared/data/sources/sgd/train': 'abc' } } });
    const out = tmp();
    const files = await exportHuggingFace(store.sampleSource(ref), store.tools(ref), out, ref);
    expect(files.map((f) => f.slice(out.length + 1))).toEqual(['data/train-00000-of-00001.parquet', 'toolkiln-config.json', 'README.md']);
    expect(await parquetRowGroups(files[0])).toEqual([1000, 1000, 500]);
    expect(readParquetRows(files[0]).rows).toEqual(JSON.parse(JSON.stringify(samples.map(sampleToLine))));
    // No tools: no tools file and no tools config; the only source is CC BY-SA.
    const { header } = readDatasetCard(join(out, 'README.md'));
    expect(header.configs).toEqual([{ config_name: 'big-v1', default: true, data_files: [{ split: 'train', path: 'data/train-00000-of-00001.parquet' }] }]);
    expect(header.license).toBe('cc-by-sa-4.0');
    expect(header.size_categories).toEqual(['1K<n<10K']);
    expect(readdirSync(join(out, 'data')).filter((f) => f.includes('.tmp-'))).toEqual([]);
  });

  it('names splits as the Hub takes them, and refuses two that would clash', async () => {
    const store = new DatasetStore(tmp());
    const { ref } = store.publish({ name: 'splits', samples: [sample(1, 'task-awareness'), sample(2, 'multi.tool')], tools: [], rejects: [], manifest: draftManifest('fp') });
    const out = tmp();
    await exportHuggingFace(store.sampleSource(ref), [], out, ref);
    expect(readDatasetCard(join(out, 'README.md')).header.configs[0].data_files).toEqual([
      { split: 'multi_tool', path: 'data/multi_tool-00000-of-00001.parquet' },
      { split: 'task_awareness', path: 'data/task_awareness-00000-of-00001.parquet' },
    ]);
    const clash = samplesInMemory([sample(1, 'a-b'), sample(2, 'a_b')]);
    await expect(exportHuggingFace(clash, [], tmp(), ref)).rejects.toThrow('splits "a-b" and "a_b" both become "a_b" on the Hugging Face Hub, which takes only letters, digits and _ in a split name; rename one of them');
  });

  it('needs the published version for its card', async () => {
    const out = tmp();
    await expect(exportHuggingFace(samplesInMemory([sample(1, 'test')]), [], out)).rejects.toThrow(/the hf format needs the published version/);
    expect(existsSync(join(out, 'data'))).toBe(false);
  });

  it('knows the license of each shipped source folder, and no other', () => {
    expect(sourceLicense('../shared/data/sources/snips')).toBe('cc0-1.0');
    expect(sourceLicense('../shared/data/sources/multiwoz/schema.json')).toBe('mit');
    expect(sourceLicense('../shared/data/reference/mtu-bench/test.jsonl')).toBe('apache-2.0');
    expect(sourceLicense('../shared/data/sources/atis/train')).toBeNull();
    expect(sourceLicense('my/own/sources/sgdx/file.json')).toBeNull();
  });
});

describe('hf export: names a datasets cache tells apart, and a card the Hub takes', () => {
  const home = tmp();
  /** Two datasets, and two versions of a third, each with samples of its own (ids name the dataset and version). */
  const published = [
    { name: 'acebench', pipeline: 'acebench', size: 5 },
    { name: 'nestools', pipeline: 'nestools', size: 3 },
    { name: 'mtu', pipeline: 'mtu', size: 4 },
    { name: 'mtu', pipeline: 'mtu', size: 6 },
  ];
  const folders: string[] = [];
  const ids: string[][] = [];
  beforeAll(async () => {
    const store = new DatasetStore(home);
    for (const [n, { name, pipeline, size }] of published.entries()) {
      const samples = Array.from({ length: size }, (_, i) => ({ ...sample(i, 'test'), id: `${name}-${n}-${i}` }));
      const { ref } = store.publish({ name, samples, tools: [], rejects: [], manifest: { ...draftManifest(`fp-${n}`), pipeline } });
      ids.push(samples.map((s) => s.id));
      const out: string[] = [];
      const code = await main(['export', `${ref.name}@${ref.version}`, '--format', 'hf', '--json'], { out: (t) => out.push(t), err: () => {}, home, cwd: home, env: {} });
      expect(code).toBe(0);
      folders.push(dirname((JSON.parse(out.join('')) as { files: string[] }).files.find((f) => f.endsWith('README.md'))!));
    }
  });

  it('names the default folder and the card configs after the dataset and version', () => {
    expect(folders.map((f) => f.slice(home.length))).toEqual([
      '/datasets/acebench/v1.derived/export/hf/acebench-v1',
      '/datasets/nestools/v1.derived/export/hf/nestools-v1',
      '/datasets/mtu/v1.derived/export/hf/mtu-v1',
      '/datasets/mtu/v2.derived/export/hf/mtu-v2',
    ]);
    expect(folders.map((f) => readDatasetCard(join(f, 'README.md')).header.configs.map((c: { config_name: string }) => c.config_name))).toEqual([['acebench-v1'], ['nestools-v1'], ['mtu-v1'], ['mtu-v2']]);
    expect(new Set(folders.map((f) => basename(f))).size).toBe(4);
  });

  it.skipIf(!pythonHasDatasets)('gives each export its own rows when datasets loads them one after the other in one cache (skipped without python3 with datasets)', () => {
    const loads = loadFoldersInOneCache(folders);
    expect(loads.map((load) => load.splits)).toEqual(ids.map((test) => ({ test })));
  }, 300_000);

  it('writes a card with no absolute path, license_name for a license the Hub does not know, the paper to cite, hf upload and npx toolkiln', async () => {
    const store = new DatasetStore(tmp());
    const sources = { '/home/someone/data/atis/train': 'aaa', 'C:\\Users\\someone\\sgd\\train': 'bbb', '../shared/data/sources/sgd/train': 'ccc' };
    const config = { sources: { atis: { dir: '/home/someone/data/atis' }, sgd: { dir: 'C:\\Users\\someone\\sgd', enabled: true } }, seed: 7 };
    const { ref } = store.publish({ name: 'mine', samples: [sample(1, 'test')], tools: [], rejects: [], manifest: { ...draftManifest('fp'), pipeline: 'mtu', config, sources } });
    const out = tmp();
    await exportHuggingFace(store.sampleSource(ref), [], out, ref);
    const card = readFileSync(join(out, 'README.md'), 'utf8');
    const { header, body } = readDatasetCard(join(out, 'README.md'));
    expect(card).not.toMatch(/someone|(?:^|[\s`"'(|])\/(?!\/)[\w.-]+\/|[A-Za-z]:\\/m);
    expect(body).toContain('| `<local>/train` | `aaa` | unknown: check the source |');
    expect(body).toContain('"dir": "<local>/atis"');
    expect(header).toMatchObject({ license: ['cc-by-sa-4.0', 'other'], license_name: 'unknown-source-license', license_link: 'README.md' });
    expect(body).toMatch(/## Citation\n\n[^\n]*\n\n```bibtex\n@article\{wang2024mtubench,\n {2}title {3}= \{MTU-Bench: A Multi-Granularity Tool-Use Benchmark for Large Language Models\},\n {2}author {2}= \{Pei Wang and Yanan Wu and [^}]*Bo Zheng\},\n {2}journal = \{arXiv preprint arXiv:2410\.11710\},\n {2}year {4}= \{2024\}\n\}\n```/);
    expect(body).toContain('npx toolkiln run mtu --config toolkiln-config.json --name mine --llm offline');
    expect(body).toContain('npx toolkiln export mine@<version> --format hf --out <folder>');
    expect(body).toContain('hf upload <user>/<dataset> <folder> --repo-type dataset');
    expect(body).not.toContain('huggingface-cli');
    // Known licenses alone need no license_name.
    const known = store.publish({ name: 'known', samples: [sample(1, 'test')], tools: [], rejects: [], manifest: { ...draftManifest('fp'), pipeline: 'mtu', sources: { '../shared/data/sources/sgd/train': 'ccc' } } }).ref;
    await exportHuggingFace(store.sampleSource(known), [], join(out, 'known'), known);
    expect(readDatasetCard(join(out, 'known', 'README.md')).header).toMatchObject({ license: 'cc-by-sa-4.0' });
    expect(readDatasetCard(join(out, 'known', 'README.md')).header).not.toHaveProperty('license_name');
    expect(cardPath('../shared/data/sources/sgd')).toBe('../shared/data/sources/sgd');
  });
});
