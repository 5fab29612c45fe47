import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sampleToLine } from '../core/line-form.ts';
import { Sample } from '../core/records.ts';
import { DatasetStore } from '../core/store.ts';
import { draftManifest } from './fixtures/core/samples.ts';
import { versionSamples } from './helpers/version.ts';

function sample(id: string, category: string, split: string): Sample {
  return Sample.parse({ id, benchmark: 'demo', category, split, tools: [], dialogue: [{ role: 'user', content: `hi from ${id}` }], expected: {}, meta: {} });
}

describe('samples published as the lines their last stage wrote', () => {
  it('are written in the line form, counted by split and category', () => {
    const home = mkdtempSync(join(tmpdir(), 'tk-lines-'));
    const samples = [sample('s1', 'A', 'train'), sample('s2', 'B', 'test'), sample('s3', 'A', 'train')];
    // One line carries the sample itself (written from it), the others only their text (parsed to write them).
    const lines = samples.map((s, i) => ({ id: s.id, category: s.category, split: s.split, text: JSON.stringify(s), ...(i === 1 ? { sample: s } : {}) }));
    const store = new DatasetStore(home);
    const { ref, manifest } = store.publish({ name: 'demo', samples: lines, tools: [], rejects: [], manifest: draftManifest('fp') });
    expect(readFileSync(join(ref.dir, 'data', 'train.jsonl'), 'utf8')).toBe(`${JSON.stringify(sampleToLine(samples[0]))}\n${JSON.stringify(sampleToLine(samples[2]))}\n`);
    expect(versionSamples(store, ref)).toEqual([samples[1], samples[0], samples[2]]);
    expect(manifest.counts).toMatchObject({ samples: 3, bySplit: { test: 1, train: 2 }, byCategory: { A: 2, B: 1 } });
  });
});
