import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HashedStringMap, HashedStringSet } from '../core/collections.ts';
import { csvText, writeCsvAtomic } from '../core/csv.ts';
import { writeJsonArrayAtomic } from '../core/jsonl.ts';
import { openCsv, readCsv } from '../review/csv.ts';
import { samplesInMemory, type SampleSource } from '../core/sample-source.ts';
import { versionItems } from '../review/items.ts';
import { itemIdOf } from '../review/queue.ts';
import { DatasetStore, type VersionRef } from '../core/store.ts';
import { exportReview } from '../review/export.ts';
import { importReview } from '../review/import.ts';
import { draft, publishReviewDataset, reviewSamples } from './fixtures/review/dataset.ts';
import { fill, readRawSheet, writeSheet } from './fixtures/review/sheets.ts';
import { tempDirs } from './helpers/files.ts';
import { versionRejects, versionSamples } from './helpers/version.ts';

const tmp = tempDirs('tk-stream-commands-');
const ROOT = join(import.meta.dirname, '..');

/** A store that counts the passes made over a version's samples and the samples read back one at a time. */
class CountingStore extends DatasetStore {
  passes = 0;
  readBack = 0;

  override sampleSource(ref: VersionRef): SampleSource {
    const source = super.sampleSource(ref);
    const store = this;
    return {
      splits: source.splits,
      *all() {
        store.passes++;
        yield* source.all();
      },
      *inSplit(split) {
        store.passes++;
        yield* source.inSplit(split);
      },
      *located() {
        store.passes++;
        yield* source.located();
      },
      *locatedIds() {
        store.passes++;
        yield* source.locatedIds();
      },
      *readAt(positions) {
        for (const sample of source.readAt(positions)) {
          store.readBack++;
          yield sample;
        }
      },
    };
  }
}

describe('commands read a version as a stream', () => {
  it('the store has no call that loads a version whole, and no command path spreads a pass over a version into an array', () => {
    expect('samples' in DatasetStore.prototype).toBe(false);
    const home = tmp();
    const { store, ref } = publishReviewDataset(home);
    // The rejects come one at a time too.
    expect(Array.isArray(store.rejects(ref))).toBe(false);
    const whole = [
      /\bstore\.samples\(/i,
      /\[\.\.\.[^\]\n]*\.(all|located|inSplit|rejects)\(/,
      /Array\.from\([^)\n]*\.(all|located|inSplit|rejects)\(/,
    ];
    const found: string[] = [];
    for (const folder of ['bin', 'core', 'eval', 'review', 'pipelines']) {
      for (const file of readdirSync(join(ROOT, folder), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'))) {
        const lines = readFileSync(join(ROOT, folder, file), 'utf8').split('\n');
        lines.forEach((line, i) => {
          if (whole.some((pattern) => pattern.test(line))) found.push(`${posix.join(folder, file)}:${i + 1}: ${line.trim()}`);
        });
      }
    }
    expect(found).toEqual([]);
  });

  it('review export makes one pass over the version and reads back only the queued samples; review import reads back only the samples its sheet names, and publishes in one more pass', () => {
    const home = tmp();
    publishReviewDataset(home, { review: { randomRate: 0.2 } });
    const store = new CountingStore(home);
    const ref = store.resolve('demo@v1');
    const exported = exportReview({ store, ref, format: 'csv' });
    expect(store.passes).toBe(1);
    // Each queued sample is read back for its row; a random pick also once when drawn (to learn its id).
    const random = exported.counts.random;
    expect(random).toBeGreaterThan(0);
    expect(store.readBack).toBe(exported.items + random);
    expect(exported.items).toBeLessThan(reviewSamples().length);

    const sheet = readRawSheet(exported.sheets[0].file);
    const [first, second] = sheet.rows.map((row) => row[sheet.header.indexOf('sample_id')]);
    const filled = writeSheet(join(tmp(), 'filled.csv'), fill(sheet, { [first]: { decision: 'accept' }, [second]: { decision: 'reject', notes: 'off topic' } }));
    store.passes = 0;
    store.readBack = 0;
    const imported = importReview({ store, ref, files: [{ path: filled }] });
    expect(imported.status).toBe('published');
    // One pass finds the sheet's items, one streams the version into the next.
    expect(store.passes).toBe(2);
    expect(store.readBack).toBeLessThanOrEqual(sheet.rows.length);
    const next = store.resolve(`demo@${imported.newVersion}`);
    expect(versionSamples(store, next).map((s) => s.id)).toEqual(reviewSamples().map((s) => s.id).filter((id) => id !== second));
    expect(versionRejects(store, next).map((r) => r.recordId)).toEqual([second]);
    expect(store.manifest(next).stages.at(-1)).toMatchObject({ stage: 'review', in: 12, out: 11, rejected: 1 });
  });

  it('datasets diff reads each version once', () => {
    const home = tmp();
    publishReviewDataset(home);
    const samples = reviewSamples();
    const store = new CountingStore(home);
    const b = store.publish({ name: 'demo', manifest: { ...draft(), fingerprint: 'other' }, samples: [...samples.slice(1, 6), { ...samples[6], category: 'S-S' }, ...samples.slice(7)], tools: [], rejects: [] }).ref;
    expect(store.diff(store.resolve('demo@v1'), b)).toMatchObject({ added: [], removed: ['rv-00'], changed: ['rv-06'], unchanged: 10 });
    expect(store.passes).toBe(2);
  });
});

describe('sheets written row by row', () => {
  const rows = [
    ['id', 'text'],
    ['1', '=HYPERLINK("x")'],
    ['2', 'two\nlines, "quoted"'],
    ['3', '-5 degrees 東京'],
  ];
  it('a CSV file: the bytes of the whole text, BOM and CRLF included', () => {
    const layout = { bom: true, recordDelimiter: 'windows' } as const;
    const file = join(tmp(), 'sheet.csv');
    writeCsvAtomic(file, rows, layout);
    expect(readFileSync(file, 'utf8')).toBe(csvText(rows, layout));
  });
  it('a JSON array at any indentation: the bytes of JSON.stringify and a line break', () => {
    const items = [{ a: 1, b: [1, { c: 'x\ny' }] }, { d: null }, []];
    for (const indent of [1, 2]) {
      const file = join(tmp(), `array-${indent}.json`);
      writeJsonArrayAtomic(file, items, indent);
      expect(readFileSync(file, 'utf8')).toBe(`${JSON.stringify(items, null, indent)}\n`);
    }
    const empty = join(tmp(), 'empty.json');
    writeJsonArrayAtomic(empty, [], 1);
    expect(readFileSync(empty, 'utf8')).toBe('[]\n');
  });
});

describe('a whole version\'s ids remembered as hashes (datasets audit, the publish gate)', () => {
  it('finds every repeat among 300,000 strings as a Set does', () => {
    const hashed = new HashedStringSet();
    const plain = new Set<string>();
    const differ: string[] = [];
    for (let i = 0; i < 300_000; i++) {
      const id = `sample-${(i * 7919) % 200_000}`;
      if (hashed.add(id) !== !plain.has(id)) differ.push(id);
      plain.add(id);
    }
    expect(differ).toEqual([]);
    expect(hashed.size).toBe(200_000);
  });
});

describe('ids mapped to numbers as hashes (compose-multi-tool\'s samples kept on disk)', () => {
  it('gives back what a Map does for 120,000 strings set, overwritten and asked for, negative numbers included', () => {
    const hashed = new HashedStringMap();
    const plain = new Map<string, number>();
    for (let i = 0; i < 120_000; i++) {
      const id = `sample-${(i * 7919) % 80_000}`;
      const value = i % 3 === 0 ? -1 : i;
      hashed.set(id, value);
      plain.set(id, value);
    }
    const differ: string[] = [];
    for (let i = 0; i < 100_000; i++) {
      const id = `sample-${i}`;
      if (hashed.get(id) !== plain.get(id) || hashed.has(id) !== plain.has(id)) differ.push(id);
    }
    expect(differ).toEqual([]);
    expect(hashed.size).toBe(80_000);
  });
});

describe('sheets read a part at a time', () => {
  /** What readCsv (the whole file at once) gives, as openCsv gives it. */
  const whole = (path: string) => {
    const parsed = readCsv(path);
    return { header: parsed.header, problems: parsed.problems, count: parsed.records.length, records: parsed.records };
  };
  const parts = (path: string) => {
    const sheet = openCsv(path);
    return { header: sheet.header, problems: sheet.problems, count: sheet.count, records: [...sheet.records()] };
  };

  it('a sheet of several MiB, quoted cells with line breaks, quotes and delimiters across the cuts, blank and ragged rows: what reading it whole gives', () => {
    const dir = tmp();
    for (const [name, delimiter, eol] of [['comma.csv', ',', '\r\n'], ['semicolon.csv', ';', '\n']] as const) {
      const cell = (i: number) => (i % 3 === 0 ? `"line ${i}${eol}next ""quoted""${delimiter} 東京 ${'x'.repeat(i % 500)}"` : `plain ${i}`);
      const lines = [`\uFEFFitem_id${delimiter}dialogue${delimiter}notes`];
      for (let i = 0; i < 30_000; i++) lines.push(i % 997 === 0 ? '' : i % 1009 === 0 ? `it-${i}${delimiter}${cell(i)}${delimiter}n${delimiter}outside` : `it-${i}${delimiter}${cell(i)}${delimiter}'=${i}`);
      const path = join(dir, name);
      writeFileSync(path, lines.join(eol) + eol);
      expect(readFileSync(path).length).toBeGreaterThan(3 << 20);
      const read = parts(path);
      expect(read.count).toBeGreaterThan(29_000);
      expect(read.problems.length).toBeGreaterThan(0);
      expect(read).toEqual(whole(path));
    }
  });

  it('a CRLF sheet whose cells hold bare line feeds, quoted or not (as a tool sheet writes them): what reading it whole gives', () => {
    const dir = tmp();
    const path = join(dir, 'crlf.csv');
    const lines = ['question_id,tools,notes'];
    for (let i = 0; i < 40_000; i++) lines.push(i % 2 ? `tq-${i},tool_a\ntool_b\ntool_${i},n ${i}` : `tq-${i},"tool_a\ntool_b, ${i}","q\n""${i}"""`);
    writeFileSync(path, lines.join('\r\n') + '\r\n');
    expect(readFileSync(path).length).toBeGreaterThan(1 << 20);
    const read = parts(path);
    expect(read.count).toBe(40_000);
    expect(read.records[1].cells.tools).toBe('tool_a\ntool_b\ntool_1');
    expect(read).toEqual(whole(path));
  });

  it('a file it cannot read in parts (a quote left open, an empty file) gives the whole-file problem', () => {
    const dir = tmp();
    const open = join(dir, 'open.csv');
    writeFileSync(open, `a,b\n1,"never closed\n${'y,'.repeat(600_000)}\n`);
    const empty = join(dir, 'empty.csv');
    writeFileSync(empty, '');
    for (const path of [open, empty]) {
      expect(parts(path)).toEqual(whole(path));
      expect(parts(path).problems[0].row).toBeNull();
    }
  });
});

describe('samples a sheet names, read back by position', () => {
  it('are read again each time a row asks for one: none is kept between rows', () => {
    const samples = reviewSamples();
    const memory = samplesInMemory(samples);
    let reads = 0;
    const source: SampleSource = { ...memory, located: () => memory.located(), readAt: (positions) => [...memory.readAt(positions)].map((s) => (reads++, structuredClone(s))) };
    const ref = { name: 'review', version: 'v1' };
    const [first, second] = samples.map((s) => itemIdOf(ref, s.id));
    const items = versionItems(ref, source, [first, second, 'not-an-item']);
    expect(items.get('not-an-item')).toBeUndefined();
    const once = items.get(first);
    const again = items.get(first);
    expect(once).toEqual(samples[0]);
    expect(again).toEqual(once);
    // Read twice, as two objects: the first was not held for the second ask.
    expect(again).not.toBe(once);
    expect(reads).toBe(2);
    expect(items.get(second)).toEqual(samples[1]);
    expect(reads).toBe(3);
  });
});
