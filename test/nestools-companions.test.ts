import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readJsonl } from '../core/jsonl.ts';
import type { Sample } from '../core/records.ts';
import { samplesInMemory } from '../core/sample-source.ts';
import { exportNesTools, exportSealTools, fromNesToolsRecord } from '../stages/nestools/import-export.ts';
import { tempDirs } from './helpers/files.ts';

const REFERENCE = new URL('../../shared/data/reference/', import.meta.url);
const tmp = tempDirs('tk-nestools-companions-');
const jsonLines = (url: URL) => readFileSync(url, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line));

type ApiIds = { test_id: number; api_ids: number[] };

/** Groups the api entries of each record by their id: which definitions share an id. */
function partition(records: { test_id: number; api: unknown[] }[], ids: ApiIds[]): string[][] {
  const byId = new Map<number, Set<string>>();
  for (const record of records) {
    const line = ids[record.test_id - 1];
    record.api.forEach((api, i) => {
      const id = line.api_ids[i];
      (byId.get(id) ?? byId.set(id, new Set()).get(id)!).add(JSON.stringify(api));
    });
  }
  return [...byId.values()].map((set) => [...set].sort()).sort((a, b) => (a[0] < b[0] ? -1 : 1));
}

describe("NesTools' test_api_ids.jsonl", () => {
  it('is written beside the records in the released shape: one line per test_id, in order, one id per api entry, one id per distinct definition (as the release numbers them)', async () => {
    const released = jsonLines(new URL('nestools/test_data.jsonl', REFERENCE));
    const releasedIds = jsonLines(new URL('nestools/test_api_ids.jsonl', REFERENCE)) as ApiIds[];
    const samples = released.map((raw, i) => fromNesToolsRecord(raw, { where: `test_data.jsonl:${i + 1}` }));
    const out = tmp();
    const files = await exportNesTools(samplesInMemory(samples), [], out);
    expect(files.map((f) => f.slice(out.length + 1))).toEqual(['test.jsonl', 'test_api_ids.jsonl']);
    const ids = readJsonl<ApiIds>(join(out, 'test_api_ids.jsonl'));
    expect(ids).toHaveLength(releasedIds.length);
    ids.forEach((line, i) => {
      expect(Object.keys(line)).toEqual(Object.keys(releasedIds[i]));
      expect(line.test_id).toBe(releasedIds[i].test_id);
      expect(line.api_ids).toHaveLength(releasedIds[i].api_ids.length);
    });
    const records = readJsonl<{ test_id: number; api: unknown[] }>(join(out, 'test.jsonl'));
    expect(partition(records, ids)).toEqual(partition(released, releasedIds));
  });

  it('refuses a test_id its eval.py cannot index, naming the sample', async () => {
    const [first] = jsonLines(new URL('nestools/test_data.jsonl', REFERENCE));
    const sample = fromNesToolsRecord({ ...first, test_id: 'abc' });
    const message = await exportNesTools(samplesInMemory([sample]), [], tmp()).then(
      () => '',
      (error: Error) => error.message,
    );
    expect(message).toMatch(new RegExp(`^sample ${sample.id} \\(split test\\): test_id "abc" is not a positive integer`));
  });
});

describe('Seal-Tools ids', () => {
  it('carry split and difficulty for records that did not come from Seal-Tools (easy: one call, difficult: several), as its scorer splits them', async () => {
    const released = jsonLines(new URL('nestools/test_data.jsonl', REFERENCE)).slice(0, 40);
    const samples: Sample[] = released.map((raw) => ({ ...fromNesToolsRecord(raw), split: 'test_in_domain' }));
    // NesTools chains have several calls; a chain cut to its first call (which takes no earlier result) is an easy one.
    for (const i of [3, 17]) samples[i] = { ...samples[i], expected: { calls: samples[i].expected.calls!.slice(0, 1) } };
    expect(samples.some((s) => s.expected.calls!.length === 1) && samples.some((s) => s.expected.calls!.length > 1)).toBe(true);
    const out = tmp();
    await exportSealTools(samplesInMemory(samples), [], out);
    const records = readJsonl<{ id: string; calling: unknown[] }>(join(out, 'test_in_domain.jsonl'));
    records.forEach((record, i) => {
      expect(record.id).toBe(`test_in_domain-${record.calling.length > 1 ? 'difficult' : 'easy'}-${i}`);
      // Seal-Tools' scorer: `"easy" in id` makes the easy set.
      expect(record.id.includes('easy')).toBe(record.calling.length === 1);
    });
    // The released ids follow the same pattern.
    for (const r of jsonLines(new URL('seal-tools/test_in_domain.jsonl', REFERENCE))) expect(r.id).toMatch(/^test_in_domain-(easy|difficult)-\d+$/);
  });
});
