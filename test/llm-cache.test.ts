import { appendFileSync, mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sha256 } from '../core/hash.ts';
import { ResponseCache } from '../core/llm/cache.ts';

const key = (i: number) => sha256(`entry ${i}`);

describe('response cache segments', () => {
  it('rotate at their size cap and index back every entry, also lines longer than a read chunk', () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'tk-cache-')), 'llm');
    const cache = ResponseCache.open(dir, () => {}, 1 << 20);
    const values = new Map<string, unknown>();
    for (let i = 0; i < 300; i++) {
      // Every 50th answer is 1.5 MiB, so its line spans the 1 MiB chunks the index is read in.
      const value = { i, text: (i % 50 === 7 ? 'é'.repeat(800_000) : 'x'.repeat(9_000)) + i };
      values.set(key(i), value);
      cache.put(key(i), value);
    }
    cache.close();
    const segments = readdirSync(dir);
    expect(segments.length).toBeGreaterThan(5);
    for (const segment of segments) expect(statSync(join(dir, segment)).size).toBeLessThan((1 << 20) + 1_700_000);

    // A torn last write and a line that is not an entry are skipped; everything else is found.
    appendFileSync(join(dir, segments.at(-1)!), 'not an entry\n' + key(9999) + '\t{"torn":');
    const skipped: string[] = [];
    const reopened = ResponseCache.open(dir, (m) => skipped.push(m));
    expect(reopened.size).toBe(300);
    for (const [k, value] of values) expect(reopened.get(k)).toEqual(value);
    expect(reopened.has(key(9999))).toBe(false);
    expect(skipped.map((m) => m.replace(/ in .*/, ''))).toEqual(['cache: skipped a line that is not `<key>\\t<json>`', 'cache: skipped a torn last write (no newline)']);
  });
});
