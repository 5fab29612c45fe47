import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { csvProblems, loadLikeDatasetsJson } from './helpers/datasets-json.ts';
import { loadFilesInPython, pythonHasDatasets } from './helpers/python.ts';

/** Bytes per chunk in these cases: small enough that each padded row is a chunk of its own. */
const CHUNK = 40;
const pad = 'x'.repeat(40);
const lines = (...rows: unknown[]) => rows.map((row) => `${JSON.stringify(row)}\n`).join('');

/** File → its text, and what `datasets` does with it: null when it loads (rows, JSON-text columns), else the problem. */
const CASES: Record<string, [text: string, outcome: { rows: number; jsonColumns?: string[] } | RegExp]> = {
  'null-then-bool.jsonl': [lines({ a: null, p: pad }, { a: true, p: pad }), /chunk 2 \(rows 2–2\): \/a: Couldn't cast array of type bool to null$/],
  'int-float-one-chunk.jsonl': [lines({ a: 1 }, { a: 1.5 }), { rows: 2 }],
  'int-then-float.jsonl': [lines({ a: 1, p: pad }, { a: 1.5, p: pad }), /\/a: Couldn't cast array of type double to int64: 1\.5$/],
  'float-then-int.jsonl': [lines({ a: 1.5, p: pad }, { a: 2, p: pad }), { rows: 2 }],
  'new-column-later.jsonl': [lines({ a: 1, p: pad }, { a: 1, b: 2, p: pad }), /column names don't match: new column\(s\) b$/],
  'new-nested-key-later.jsonl': [lines({ a: { x: 1 }, p: pad }, { a: { x: 1, y: 2 }, p: pad }), /\/a: Couldn't cast array of type struct<x: int64, y: int64> to struct<x: int64> \("y" not in the first chunk\)$/],
  'missing-key-later.jsonl': [lines({ a: 1, b: 2, p: pad }, { a: 1, p: pad }), { rows: 2 }],
  'string-then-int.jsonl': [lines({ a: 's', p: pad }, { a: 3, p: pad }), { rows: 2 }],
  'int-then-numeric-string.jsonl': [lines({ a: 3, p: pad }, { a: '12', p: pad }), { rows: 2 }],
  'int-then-text.jsonl': [lines({ a: 3, p: pad }, { a: 'twelve', p: pad }), /\/a: Couldn't cast array of type string to int64: "twelve"$/],
  'timestamp-then-text.jsonl': [lines({ a: '2024-01-01', p: pad }, { a: 'soon', p: pad }), /\/a: Couldn't cast array of type string to timestamp\[s\]: "soon"$/],
  'empty-list-then-ints.jsonl': [lines({ a: [], p: pad }, { a: [1], p: pad }), /\/a\/\[\]: Couldn't cast array of type int64 to null$/],
  'list-then-object.jsonl': [lines({ a: [1], p: pad }, { a: { x: 1 }, p: pad }), /\/a: Couldn't cast array of type struct<x: int64> to list<int64>$/],
  'bool-number-one-chunk.jsonl': [lines({ a: true }, { a: 1 }), { rows: 2, jsonColumns: ['/a'] }],
  'varying-keys-first-chunk.jsonl': [lines({ a: { x: 1 } }, { a: { y: 's' } }, ...Array(3).fill({ a: { z: [1] }, p: pad })), { rows: 5, jsonColumns: ['/a'] }],
  'array.json': [JSON.stringify([{ a: 1 }, { a: 2, b: 'x' }], null, 2), { rows: 2 }],
  'strings.json': [JSON.stringify(['a', 'b']), { rows: 2 }],
  'object-conflict.json': [JSON.stringify({ a: [1, 'x'] }, null, 2), /Column\(\/a\/\[\]\) changed from number to string: a single multi-line object cannot be re-encoded/],
  'object-past-a-chunk.json': [JSON.stringify({ a: 1, b: [1, 2], c: { d: 'x' } }, null, 2), /one JSON object over several lines, longer than a chunk/],
};

describe('the TypeScript replay of datasets\' JSON loader', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tk-datasets-json-'));
  const files = Object.entries(CASES).map(([name, [text]]) => {
    writeFileSync(join(dir, name), text);
    return join(dir, name);
  });

  it('reads by chunks, keeps the first chunk\'s types and casts later chunks to them as datasets and pyarrow do', () => {
    for (const [name, [, outcome]] of Object.entries(CASES)) {
      const load = loadLikeDatasetsJson(join(dir, name), { chunkBytes: CHUNK });
      if (outcome instanceof RegExp) expect({ name, problems: load.problems }).toEqual({ name, problems: [expect.stringMatching(outcome)] });
      else expect({ name, problems: load.problems, rows: load.rows, jsonColumns: load.jsonColumns }).toEqual({ name, problems: [], rows: outcome.rows, jsonColumns: outcome.jsonColumns ?? [] });
    }
    // The default chunk is datasets' 10 MiB: every case here fits in one, and a null column takes nothing later only across chunks.
    expect(loadLikeDatasetsJson(join(dir, 'null-then-bool.jsonl'))).toMatchObject({ chunks: 1, problems: [], schema: 'struct<a: bool, p: string>' });
    expect(loadLikeDatasetsJson(join(dir, 'object-past-a-chunk.json'))).toMatchObject({ rows: 1, problems: [] });
  });

  it.skipIf(!pythonHasDatasets)('agrees with datasets itself on every case, read in the same chunks (skipped without python3 with datasets)', () => {
    const loads = loadFilesInPython(files, { chunkBytes: CHUNK });
    expect(loads.map((load) => ({ file: load.file, loads: load.datasets === 'ok', rows: load.rows ?? 0, jsonColumns: load.json_columns ?? [] }))).toEqual(
      files.map((file) => {
        const ts = loadLikeDatasetsJson(file, { chunkBytes: CHUNK });
        return { file, loads: ts.problems.length === 0, rows: ts.problems.length ? 0 : ts.rows, jsonColumns: ts.problems.length ? [] : ts.jsonColumns };
      }),
    );
  }, 300_000);

  it('checks a CSV file as pandas reads it: a header and one field count per row', () => {
    writeFileSync(join(dir, 'good.csv'), 'Query,Tool\n"a, quoted\nline",x\nb,y\n');
    writeFileSync(join(dir, 'ragged.csv'), 'Query,Tool\na,x,extra\n');
    writeFileSync(join(dir, 'empty.csv'), '');
    expect(csvProblems(join(dir, 'good.csv'))).toEqual([]);
    expect(csvProblems(join(dir, 'ragged.csv'))).toEqual([`${join(dir, 'ragged.csv')}: row 2 has 3 fields where the header has 2`]);
    expect(csvProblems(join(dir, 'empty.csv'))).toEqual([`${join(dir, 'empty.csv')}: empty file: pandas reads no columns`]);
  });
});
