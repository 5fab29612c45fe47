import { describe, expect, it } from 'vitest';
import { IdSet } from '../core/id-set.ts';

describe('IdSet (the ids a pass over a version has seen, held compactly)', () => {
  it('tells every string added from every one not added, through growth of its table and buffer', () => {
    const ids = new IdSet();
    const made = Array.from({ length: 20_000 }, (_, i) => (i % 7 === 0 ? `é-${i}-ünïcode` : `mtu-${i.toString(16).padStart(16, '0')}`));
    for (const id of made) expect(ids.add(id)).toBe(true);
    expect(ids.size).toBe(made.length);
    for (const id of made) expect(ids.has(id)).toBe(true);
    for (const id of made) expect(ids.add(id)).toBe(false);
    expect(ids.size).toBe(made.length);
    for (let i = 0; i < 2_000; i++) expect(ids.has(`mtu-${i.toString(16).padStart(16, '0')}x`)).toBe(false);
    expect(ids.has('')).toBe(false);
  });

  it('holds the empty string and strings longer than its scratch space, compared byte for byte', () => {
    const ids = new IdSet();
    const long = 'x'.repeat(10_000);
    expect(ids.add('')).toBe(true);
    expect(ids.add(long)).toBe(true);
    expect(ids.has('')).toBe(true);
    expect(ids.has(long)).toBe(true);
    expect(ids.has(`${long.slice(1)}y`)).toBe(false);
    expect(ids.add(long)).toBe(false);
  });
});
