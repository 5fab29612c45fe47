import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compareStrings } from '../core/collections.ts';
import { eachJsonl, writeJsonArrayAtomic } from '../core/jsonl.ts';
import type { Sample } from '../core/records.ts';
import { inOrder, orderOf, samplesInFiles, samplesInMemory, type SampleSource } from '../core/sample-source.ts';
import { DatasetStore } from '../core/store.ts';
import { draftManifest, makeSamples } from './fixtures/core/samples.ts';

const dir = mkdtempSync(join(tmpdir(), 'tk-sample-source-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Samples whose text holds multi-byte characters, one of them longer than the 1 MiB read chunk. */
function awkwardSamples(): Sample[] {
  return makeSamples(7, 'é✓ 𝄞').map((s, i) => (i === 3 ? { ...s, dialogue: [{ role: 'user', content: 'ü'.repeat(700_000) }] } : { ...s, id: `s-${(i * 5) % 7}` }));
}

function writeSplits(samples: Sample[]): SampleSource {
  const splits = [...new Set(samples.map((s) => s.split))];
  const files = splits.map((split) => {
    const path = join(dir, `${split}-${Math.random().toString(36).slice(2)}.jsonl`);
    // A blank line between records is skipped, as every JSONL reader here skips it.
    writeFileSync(path, samples.filter((s) => s.split === split).map((s) => JSON.stringify(s) + '\n\n').join(''));
    return { split, path };
  });
  return samplesInFiles(files);
}

describe('sample sources', () => {
  for (const [kind, make] of [
    ['files', writeSplits],
    ['memory', samplesInMemory],
  ] as const) {
    it(`${kind}: every sample in split order, each pass alike; one split alone; read back by position`, () => {
      const samples = awkwardSamples();
      const source = make(samples);
      const bySplit = source.splits.flatMap((split) => samples.filter((s) => s.split === split));
      expect([...source.all()]).toEqual(bySplit);
      expect([...source.all()]).toEqual(bySplit);
      expect([...source.inSplit('train')]).toEqual(samples.filter((s) => s.split === 'train'));
      expect([...source.inSplit('nothing')]).toEqual([]);
      const located = [...source.located()];
      expect([...source.readAt(located.map((l) => l.at).reverse())]).toEqual(bySplit.reverse());
      // The ids alone, at the same positions.
      expect([...source.locatedIds()]).toEqual(located.map((l) => ({ id: l.sample.id, at: l.at })));
    });

    it(`${kind}: orderOf sorts keys and positions only, inOrder reads the samples back in that order (ties kept in input order)`, () => {
      const samples = awkwardSamples();
      const source = make(samples);
      const order = orderOf(source, (s) => s.category, compareStrings);
      expect(order.map((e) => e.key)).toEqual([...samples.map((s) => s.category)].sort());
      const read = [...inOrder(source, order)];
      const expected = source.splits.flatMap((split) => samples.filter((s) => s.split === split));
      expect(read.map((r) => r.sample)).toEqual([...expected.filter((s) => s.category === 'S-M'), ...expected.filter((s) => s.category === 'S-S')]);
      expect(read.every((r) => r.key === r.sample.category)).toBe(true);
    });
  }

  it('locatedIds reads each line\'s id without decoding the sample; a line without an id gets the decoder\'s own error', () => {
    const samples = makeSamples(4);
    const path = join(dir, 'ids.jsonl');
    writeFileSync(path, samples.map((s) => JSON.stringify(s) + '\n').join(''));
    let decoded = 0;
    const source = samplesInFiles([{ split: 'train', path }], (line) => (decoded++, line as Sample));
    expect([...source.locatedIds()].map((l) => l.id)).toEqual(samples.map((s) => s.id));
    expect(decoded).toBe(0);
    writeFileSync(path, `${JSON.stringify(samples[0])}\n${JSON.stringify({ ...samples[1], id: 7 })}\n`);
    const strict = samplesInFiles([{ split: 'train', path }], (line, where) => {
      if (typeof (line as Sample).id !== 'string') throw new Error(`${where}: id should be text`);
      return line as Sample;
    });
    expect(() => [...strict.locatedIds()]).toThrow(/ids\.jsonl:2: id should be text/);
  });

  it('a file that shrank after its positions were taken is an error naming it, not a wrong sample', () => {
    const path = join(dir, 'shrinks.jsonl');
    writeFileSync(path, makeSamples(3).map((s) => JSON.stringify(s) + '\n').join(''));
    const source = samplesInFiles([{ split: 'train', path }]);
    const located = [...source.located()];
    writeFileSync(path, '');
    expect(() => [...source.readAt(located.map((l) => l.at))]).toThrow(/shrinks\.jsonl: ended before the sample at byte 0; the file changed while it was read/);
  });
});

describe('writeJsonArrayAtomic', () => {
  it('writes the bytes JSON.stringify(items, null, 2) and a line break would', () => {
    for (const items of [[], [1], [{ a: [1, { b: 'x\ny' }], c: {} }, 'two', null, [[]]], makeSamples(3)]) {
      const path = join(dir, 'array.json');
      writeJsonArrayAtomic(path, items);
      expect(readFileSync(path, 'utf8')).toBe(JSON.stringify(items, null, 2) + '\n');
    }
  });

  it('leaves neither the file nor a temporary file when the items fail part way', () => {
    const path = join(dir, 'broken.json');
    function* items() {
      yield { ok: true };
      throw new Error('source went away');
    }
    expect(() => writeJsonArrayAtomic(path, items())).toThrow(/broken\.json.*source went away|source went away/);
    expect(existsSync(path)).toBe(false);
    expect(readdirSync(dir).filter((f) => f.startsWith('broken.json'))).toEqual([]);
  });
});

describe('export streams a version', () => {
  it('exports a version more than twice the heap it is given (canonical and openai-chat)', () => {
    const home = join(dir, 'home');
    const store = new DatasetStore(home);
    const text = 'x'.repeat(1 << 20);
    // 120 samples of 1 MiB each (each answered, as an OpenAI chat example must be): 120 MiB on disk against a 48 MiB heap, so holding the samples fails.
    function* samples(): Generator<Sample> {
      for (const sample of makeSamples(120)) yield { ...sample, dialogue: [{ role: 'user', content: `${sample.id} ${text}` }, { role: 'assistant', content: 'Done.' }] };
    }
    store.publish({ name: 'big', samples: samples(), tools: [], rejects: [], manifest: { ...draftManifest('fp'), pipeline: 'nestools' } });
    for (const format of ['canonical', 'openai-chat']) {
      const out = join(dir, `big-${format}`);
      const child = spawnSync(process.execPath, [new URL('../bin/toolkiln.js', import.meta.url).pathname, 'export', 'big@v1', '--format', format, '--out', out], {
        encoding: 'utf8',
        env: { ...process.env, TOOLKILN_HOME: home, NODE_OPTIONS: '--max-old-space-size=48' },
      });
      expect(child.stderr).not.toMatch(/heap/i);
      expect(child.status).toBe(0);
      let count = 0;
      for (const split of ['test', 'train']) for (const _ of eachJsonl(join(out, `${split}.jsonl`))) count++;
      expect(count).toBe(120);
    }
  }, 120_000);
});
