import { describe, expect, it } from 'vitest';
import { JsonTexts } from '../core/json-texts.ts';
import { lineString } from '../core/jsonl.ts';
import { SampleLineTexts, SharedDecodes, sampleFromLine, sampleToLine } from '../core/line-form.ts';
import { Sample, ToolSpec } from '../core/records.ts';

/** A tool whose `name` counts how often it is read: serialising it once reads it once. */
function countedTool(name: string): { tool: ToolSpec; reads: () => number } {
  let reads = 0;
  const tool = {
    get name() {
      reads++;
      return name;
    },
    description: `the ${name} tool`,
    parameters: { type: 'object', properties: { city: { type: 'string', enum: ['Oslo', 'Rome'] } }, required: ['city'] },
  };
  Object.defineProperty(tool, 'name', { enumerable: true });
  return { tool: tool as unknown as ToolSpec, reads: () => reads };
}

const sampleWith = (id: string, tools: ToolSpec[], meta: Record<string, unknown> = { source: { dataset: 'sgd', id } }) =>
  ({ id, benchmark: 'mtu', category: 'S-S', split: 'test', tools, dialogue: [{ role: 'user', content: `hi ${id}` }, { role: 'assistant', content: '', calls: [{ id: 'c1', tool: 'a', arguments: { city: 'Oslo' } }], observations: { c1: 'ok' } }], expected: { calls: [] }, meta }) as unknown as Sample;

describe('JsonTexts', () => {
  it('with freeze, a record edited in place after it was serialised throws instead of keeping a stale text', () => {
    const record = { id: 'r', meta: { source: { id: 1 } }, tools: [{ name: 'a' }] };
    const frozen = new JsonTexts({ sharedItems: ['tools'], freeze: true });
    frozen.stringify(record);
    expect(() => {
      record.meta.source.id = 2;
    }).toThrow(TypeError);
    expect(() => record.tools.push({ name: 'b' })).toThrow(TypeError);
    const open = new JsonTexts({ sharedItems: ['tools'] });
    const other = { id: 'o', meta: { n: 1 } };
    open.stringify(other);
    other.meta.n = 2;
    expect(other.meta.n).toBe(2);
  });

  it('gives the bytes JSON.stringify gives, whatever the record holds', () => {
    const texts = new JsonTexts({ sharedItems: ['tools'] });
    const shared = { a: 1 };
    const records: unknown[] = [
      { id: 'x', n: 1.5, no: undefined, f: () => 1, nested: { deep: [1, 'two', null, { three: 3 }] }, tools: [shared, 'text', undefined, () => 1, [1, 2], null], list: [undefined, shared] },
      { when: new Date(0), withJson: { toJSON: () => 'custom' }, '2': 'integer key first', '"quoted"': '\u2028', empty: {}, none: [] },
      Object.assign(Object.create(null), { bare: true, tools: [shared] }),
      [shared, { b: 2 }],
      'a string',
      42,
      null,
      { tools: { not: 'a list' }, again: shared },
    ];
    for (const record of records) {
      expect(lineString(texts.line(record))).toBe(JSON.stringify(record));
      expect(texts.stringify(record)).toBe(JSON.stringify(record));
      // The second time its parts come from what was kept: still the same bytes.
      expect(texts.stringify(record)).toBe(JSON.stringify(record));
    }
  });

  it('serialises a shared part once: a record made from another keeps its parts, and the items of a list named shared, from their second time', () => {
    const texts = new JsonTexts({ sharedItems: ['tools'] });
    const a = countedTool('a');
    const b = countedTool('b');
    const first = sampleWith('s1', [a.tool, b.tool]);
    expect(texts.stringify(first)).toBe(JSON.stringify(first));
    expect([a.reads(), b.reads()]).toEqual([2, 2]); // once by this text, once by JSON.stringify above
    // A copy of the first with a new meta: its tools list is the first's, its text is reused.
    const edited = { ...first, meta: { changed: true } };
    expect(texts.stringify(edited)).toBe(JSON.stringify(edited));
    expect([a.reads(), b.reads()]).toEqual([3, 3]); // JSON.stringify's read only
    // Another sample offering the same tools (another list): each tool is serialised once more, then kept.
    const second = sampleWith('s2', [b.tool, a.tool]);
    expect(texts.stringify(second)).toBe(JSON.stringify(second));
    expect([a.reads(), b.reads()]).toEqual([5, 5]);
    const third = sampleWith('s3', [a.tool]);
    expect(texts.stringify(third)).toBe(JSON.stringify(third));
    expect([a.reads(), b.reads()]).toEqual([6, 5]); // JSON.stringify's read only
    // A field's object given on its own gets the text kept for it.
    expect(texts.stringify(first.dialogue)).toBe(JSON.stringify(first.dialogue));
  });

  it('gives a record as parts making its JSON text: the kept text of a shared tool is one part, not copied into one string with the rest', () => {
    const texts = new JsonTexts({ sharedItems: ['tools'] });
    const a = countedTool('a');
    const b = countedTool('b');
    texts.line(sampleWith('s0', [a.tool]));
    const sample = sampleWith('s1', [b.tool, a.tool]);
    const line = texts.line(sample);
    expect(lineString(line)).toBe(JSON.stringify(sample));
    expect(Array.isArray(line)).toBe(true);
    expect(line).toContain(JSON.stringify(a.tool));
    expect(line).toContain(JSON.stringify(b.tool));
    // Made again from a copy with a new meta: the same list's parts, the tools read no more.
    const reads = [a.reads(), b.reads()];
    const edited = { ...sample, meta: { changed: true } };
    expect(lineString(texts.line(edited))).toBe(JSON.stringify(edited));
    expect([a.reads(), b.reads()]).toEqual([reads[0] + 1, reads[1] + 1]); // JSON.stringify's read only
  });

  it('keeps the items of other lists together with their list: an item is not serialised apart', () => {
    const texts = new JsonTexts();
    const a = countedTool('a');
    const one = sampleWith('s1', [a.tool]);
    const two = sampleWith('s2', [a.tool]);
    texts.stringify(one);
    texts.stringify(two);
    expect(a.reads()).toBe(2);
  });
});

describe('SampleLineTexts', () => {
  it('writes the line form byte for byte, each shared tool line made once, meta taken from the run texts', () => {
    const parts = new JsonTexts({ sharedItems: ['tools'] });
    const lines = new SampleLineTexts(parts);
    const a = countedTool('a');
    const samples = [sampleWith('s1', [a.tool]), sampleWith('s2', [a.tool, ToolSpec.parse({ name: 'plain' })]), sampleWith('s3', [])];
    const expected = samples.map((sample) => JSON.stringify(sampleToLine(sample)));
    const readsBefore = a.reads();
    expect(samples.map((sample) => lineString(lines.text(sample)))).toEqual(expected);
    expect(a.reads() - readsBefore).toBe(1);
    // A sample missing what the line needs is written the plain way (same bytes as before).
    const odd = { ...samples[0], id: undefined } as unknown as Sample;
    expect(lineString(lines.text(odd))).toBe(JSON.stringify(sampleToLine(odd)));
  });
});

describe('SharedDecodes', () => {
  it('decodes the same tool texts of many lines once, to values equal to a decode of each line', () => {
    const a = ToolSpec.parse({ name: 'a', parameters: { type: 'object', properties: { x: { type: 'string' } }, required: ['x'] }, provenance: { source: 'sgd' } });
    const lines = ['s1', 's2'].map((id) => JSON.parse(JSON.stringify(sampleToLine(sampleWith(id, [a])))) as unknown);
    const shared = new SharedDecodes();
    const [one, two] = lines.map((line) => sampleFromLine(line, 'here', shared));
    expect(one).toStrictEqual(sampleFromLine(lines[0], 'here'));
    expect(two).toStrictEqual(sampleFromLine(lines[1], 'here'));
    expect(two.tools[0].parameters).toBe(one.tools[0].parameters);
    expect(two.tools[0].provenance).toBe(one.tools[0].provenance);
  });
});
