import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { jsonlLines, jsonlTexts } from '../core/jsonl.ts';

describe('jsonlLines', () => {
  it('gives the lines that are not blank as trim sees it (Unicode spaces too), with their numbers, each decoded when asked', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'tk-lines-')), 'in.jsonl');
    const lines = ['{"a":1}', '', '   \t', '\r', '\u00a0 \u2028', '\ufeff', '  {"b":"é"}  ', '\u00a0{"c":2}', '{"d":3}\r'];
    writeFileSync(path, lines.join('\n'));
    const seen = [...jsonlLines(path)].map((line) => [line.number, line.text()]);
    expect(seen).toEqual([
      [1, '{"a":1}'],
      [7, '{"b":"é"}'],
      [8, '{"c":2}'],
      [9, '{"d":3}'],
    ]);
    expect([...jsonlTexts(path)].map(({ number, text }) => [number, text])).toEqual(seen);
    expect([...jsonlLines(join(path, '..', 'missing.jsonl'))]).toEqual([]);
  });
});
