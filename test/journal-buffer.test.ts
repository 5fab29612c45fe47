import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as turn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { appendJournalLine, rawOutputs } from '../core/journal-line.ts';
import { Journal } from '../core/jsonl.ts';

const journalPath = () => join(mkdtempSync(join(tmpdir(), 'tk-journal-')), 'journal.jsonl');

describe('a stage journal', () => {
  it('writes the entries appended in one turn of the event loop together once the turn ends, each where append said', async () => {
    const path = journalPath();
    const journal = Journal.open<{ i: number; text?: string }>(path);
    const places = [journal.append({ i: 0 }), journal.append({ i: 1, text: 'é ✓ 🙂' }), journal.append({ i: 2 })];
    // Nothing yet: one write for the three, after the work of this turn.
    expect(readFileSync(path, 'utf8')).toBe('');
    await turn();
    const bytes = readFileSync(path);
    expect(bytes.toString('utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line).i)).toEqual([0, 1, 2]);
    for (const [i, { start, length }] of places.entries()) expect(JSON.parse(bytes.subarray(start, start + length).toString('utf8')).i).toBe(i);
    journal.close();
  });

  it('writes its buffer out on flush and on close, and reopened lists every entry where it was', async () => {
    const path = journalPath();
    const journal = Journal.open<{ i: number; pad: string }>(path);
    journal.append({ i: 0, pad: '' });
    journal.flush();
    expect(readFileSync(path, 'utf8')).toBe('{"i":0,"pad":""}\n');
    // Entries past the buffer's size (1 MiB) are written as it fills, in order.
    const big = 'x'.repeat(300_000);
    const places = [1, 2, 3, 4, 5].map((i) => journal.append({ i, pad: big }));
    journal.close();
    const seen: [number, number, number][] = [];
    Journal.open<{ i: number }>(path, (entry, start, length) => void seen.push([entry.i, start, length])).close();
    expect(seen.slice(1)).toEqual(places.map(({ start, length }, k) => [k + 1, start, length]));
  });

  it('writes the line of a record with its outputs as they were given, between small lines and larger than its buffer, each where append said', () => {
    const path = journalPath();
    const journal = Journal.open(path);
    const outputs = [[JSON.stringify({ text: 'é ✓ 🙂' })], [JSON.stringify({ text: 'é'.repeat(400_000) }), JSON.stringify({ n: 1 })], [JSON.stringify({ text: 'small' })]];
    const places = outputs.map((texts, i) => appendJournalLine(journal, { i, k: `key-${i}` }, texts));
    journal.close();
    const bytes = readFileSync(path);
    for (const [i, { start, length }] of places.entries()) {
      const line = bytes.subarray(start, start + length);
      expect(JSON.parse(line.toString('utf8'))).toMatchObject({ i, k: `key-${i}` });
      expect(rawOutputs(line)!.map((raw) => raw.toString('utf8'))).toEqual(outputs[i]);
    }
  });

  it('writes out the journal it comes after before any write of its own, so no entry reaches the disk before the one it was made from', () => {
    const earlierPath = journalPath();
    const laterPath = journalPath();
    const earlier = Journal.open<{ i: number }>(earlierPath);
    const later = Journal.open<{ i: number; pad: string }>(laterPath);
    later.writesAfter(() => earlier.flush());
    earlier.append({ i: 0 });
    // The later stage's buffer fills within the same turn: it writes out, and the earlier entry goes first.
    for (let k = 0; k < 5; k++) later.append({ i: k, pad: 'x'.repeat(300_000) });
    expect(readFileSync(laterPath).length).toBeGreaterThan(0);
    expect(readFileSync(earlierPath, 'utf8')).toBe('{"i":0}\n');
    later.close();
    earlier.close();
  });
});
