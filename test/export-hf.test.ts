import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sampleToLine } from '../core/line-form.ts';
import { Sample } from '../core/records.ts';
import { samplesInMemory } from '../core/sample-source.ts';
import { DatasetStore } from '../core/store.ts';
import { exportHuggingFace } from '../stages/export/hf.ts';
import { sourceLicense } from '../stages/export/hf-card.ts';
import { readDatasetCard } from './helpers/dataset-card.ts';
import { parquetRowGroups, readParquetRows } from './helpers/parquet-read.ts';
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
    expect(header.configs).toEqual([{ config_name: 'default', default: true, data_files: [{ split: 'train', path: 'data/train-00000-of-00001.parquet' }] }]);
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
