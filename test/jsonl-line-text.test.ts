import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { appendJournalLine, rawOutputs } from '../core/journal-line.ts';
import { Journal, JsonlWriter, lineString, type LineText } from '../core/jsonl.ts';

const scratch = (name: string) => join(mkdtempSync(join(tmpdir(), 'tk-line-text-')), name);

/** Lines given as parts: short and long, ASCII and not (a part of a few characters that is not ASCII, one whose last character is), one larger than a writer's 1 MiB buffer. */
const lines: LineText[] = [
  ['{"a":', '"é"', ',"b":', '[', '"漢字 🙂"', ',', JSON.stringify({ long: 'x'.repeat(200) + 'ü' }), ']', '}'],
  '{"plain":"one string"}',
  ['{"tail":"abcdefghijklmnopqrstuvwxyz0123456é"', '}'],
  ['{"big":', JSON.stringify('é'.repeat(400_000)), ',"n":', '1', '}'],
  [],
  ['{"after":', '"✓"', '}'],
];

describe('a line of JSON given as parts (LineText)', () => {
  it('is written by a JSONL writer with the bytes of its parts joined, between small lines and larger than the buffer', () => {
    const path = scratch('out.jsonl');
    const writer = new JsonlWriter(path, { sha256: true });
    for (const line of lines) writer.writeText(line);
    writer.close();
    const expected = lines.map((line) => `${lineString(line)}\n`).join('');
    expect(readFileSync(path, 'utf8')).toBe(expected);
    expect(writer.count).toBe(lines.length);
  });

  it('goes into a journal line as the output it makes, with the same line bytes as the joined text', () => {
    const [partsPath, joinedPath] = [scratch('parts.jsonl'), scratch('joined.jsonl')];
    const outputs = lines.filter((line) => lineString(line));
    for (const [path, given] of [
      [partsPath, outputs],
      [joinedPath, outputs.map(lineString)],
    ] as const) {
      const journal = Journal.open(path);
      given.forEach((output, i) => appendJournalLine(journal, { i, k: `key-${i}` }, [output, '{"second":true}']));
      journal.close();
    }
    const bytes = readFileSync(partsPath);
    expect(bytes.equals(readFileSync(joinedPath))).toBe(true);
    const first = bytes.subarray(0, bytes.indexOf(10));
    expect(rawOutputs(first)!.map((raw) => raw.toString('utf8'))).toEqual([lineString(outputs[0]), '{"second":true}']);
  });
});
