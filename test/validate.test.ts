import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Sample, ToolSpec, type Json } from '../core/records.ts';
import { isCanonical, parseRecord, parseRecordFrom } from '../core/validate.ts';

/** A Sample as the Sample schema returns it: every default filled in, keys in schema order. */
function canonicalSample(): Record<string, Json> {
  return Sample.parse({
    id: 'demo-1',
    benchmark: 'demo',
    category: 'S-M',
    split: 'test',
    tools: [
      {
        name: 'find_flight',
        description: 'Find flights',
        parameters: { type: 'object', properties: { city: { type: 'string', enum: ['Paris', 'Rome'], default: 'Paris' }, when: { type: ['string', 'null'] } }, required: ['city'] },
        returns: { type: 'object', properties: { id: { type: 'string' } }, required: [] },
        provenance: { source: 'test', extra: { nested: [1, 'two', null, { three: true }] } },
      },
      { name: 'book' },
    ],
    dialogue: [
      { role: 'user', content: 'Book a flight to Paris' },
      {
        role: 'assistant',
        content: '',
        thought: 'find, then book',
        calls: [
          { id: 'call_1', tool: 'find_flight', arguments: { city: 'Paris', when: null } },
          { id: 'call_2', tool: 'book', arguments: { flight: { $ref: 'call_1.id' }, seats: [1, { $ref: 'call_1.id' }] } },
        ],
        observations: { call_1: { id: 'AF1' }, call_2: 'ok' },
        response: 'Booked.',
      },
    ],
    expected: { calls: [{ id: 'call_1', tool: 'find_flight', arguments: { city: 'Paris' } }], labels: ['x'], note: 'kept' },
    meta: { source: { dataset: 'demo', id: '1' }, lineage: [{ stage: 's', version: 1 }], checks: [{ name: 'c', pass: true }], tags: ['t'], free: { any: 'thing' } },
  }) as Record<string, Json>;
}

type Mutable = Record<string, any>;

/** Variants of a canonical Sample, each named: zod accepts some as they are, changes some, rejects some. */
function variants(): [string, unknown][] {
  const base = canonicalSample;
  const edit = (change: (s: Mutable) => void) => {
    const s = base() as Mutable;
    change(s);
    return s;
  };
  const reorder = (o: Mutable) => Object.fromEntries(Object.entries(o).reverse());
  return [
    ['canonical', base()],
    ['keys in reverse order', reorder(base())],
    ['a tool without its defaults', edit((s) => (s.tools[1] = { name: 'book' }))],
    ['meta without lineage, checks, tags', edit((s) => (s.meta = { source: s.meta.source }))],
    ['a key the schema strips', edit((s) => (s.surplus = 1))],
    ['a key in a passthrough object before the shape keys', edit((s) => (s.meta = { free: 1, ...s.meta }))],
    ['a key a strict $ref object refuses', edit((s) => (s.dialogue[1].calls[1].arguments.flight = { $ref: 'call_1.id', extra: 1 }))],
    ['a malformed $ref', edit((s) => (s.dialogue[1].calls[1].arguments.flight = { $ref: 'no dot' }))],
    ['a required parameter that is not a property', edit((s) => s.tools[0].parameters.required.push('missing'))],
    ['an empty id', edit((s) => (s.id = ''))],
    ['a number where a string goes', edit((s) => (s.split = 3))],
    ['a missing required key', edit((s) => delete s.expected)],
    ['an optional key set to undefined', edit((s) => (s.dialogue[0].thought = undefined))],
    ['a defaulted key set to undefined', edit((s) => (s.tools[0].description = undefined))],
    ['a non-integer lineage version', edit((s) => (s.meta.lineage[0].version = 1.5))],
    ['an infinite number in an argument', edit((s) => (s.dialogue[1].calls[0].arguments.when = Infinity))],
    ['a role outside the enum', edit((s) => (s.dialogue[0].role = 'system'))],
    ['a class instance where an object goes', edit((s) => (s.expected = Object.assign(new (class Box {})(), s.expected)))],
    ['a __proto__ key', edit((s) => Object.defineProperty(s.meta, '__proto__', { value: { x: 1 }, enumerable: true, configurable: true, writable: true }))],
  ];
}

describe('validating a record without zod when its answer is plain', () => {
  it('agrees with zod on every variant: the same success, the same value as JSON, zod’s own errors', () => {
    for (const [name, value] of variants()) {
      const ours = parseRecord(Sample, value);
      const zods = Sample.safeParse(value);
      expect(ours.success, name).toBe(zods.success);
      if (zods.success) expect(JSON.stringify(ours.data), name).toBe(JSON.stringify(zods.data));
      else expect(ours.error!.issues, name).toEqual(zods.error.issues);
    }
  });

  it('takes a canonical record as it is, and fills in defaults without touching the input', () => {
    const sample = canonicalSample();
    expect(isCanonical(Sample, sample)).toBe(true);
    expect(parseRecord(Sample, sample).data).toBe(sample);

    const bare = canonicalSample() as Mutable;
    bare.tools[1] = { name: 'book' };
    const before = JSON.stringify(bare);
    expect(isCanonical(Sample, bare)).toBe(false);
    const parsed = parseRecord(Sample, bare);
    expect(parsed.success).toBe(true);
    expect((parsed.data as Mutable).tools[1]).toEqual({ name: 'book', description: '', parameters: { type: 'object', properties: {}, required: [] }, returns: { type: 'object', properties: {}, required: [] } });
    expect(JSON.stringify(bare)).toBe(before);
  });

  it('returns what zod returns from a union: its first option that accepts the value', () => {
    const First = z.object({ a: z.string() });
    const Second = z.object({ a: z.string(), b: z.number() });
    const union = z.union([First, Second]);
    for (const value of [{ a: 'x', b: 1 }, { a: 'x' }, { b: 1, a: 'x' }, { a: 1 }]) {
      const ours = parseRecord(union, value);
      const zods = union.safeParse(value);
      expect(ours.success).toBe(zods.success);
      expect(JSON.stringify(ours.data)).toBe(JSON.stringify(zods.data));
    }
  });

  it('leaves to zod what it cannot model: transforms, overwriting checks, coercion', () => {
    const schemas: z.ZodType[] = [z.object({ a: z.string().transform((s) => s.toUpperCase()) }), z.object({ a: z.string().trim() }), z.object({ a: z.coerce.number() })];
    for (const schema of schemas) {
      const value = { a: ' 1 ' };
      expect(isCanonical(schema, value)).toBe(false);
      expect(parseRecord(schema, value)).toEqual(schema.safeParse(value));
    }
  });
});

/** parseRecordFrom's answer on `made` from `base` is zod's: the same success, the same data or the same issues. */
function expectAgreesWithZod(name: string, made: unknown, base: unknown): void {
  const ours = parseRecordFrom(Sample, made, base);
  const zods = Sample.safeParse(made);
  expect(ours.success, name).toBe(zods.success);
  if (zods.success) expect(JSON.stringify(ours.data), name).toBe(JSON.stringify(zods.data));
  else expect(ours.error!.issues, name).toEqual(zods.error.issues);
}

describe('validating a record made from a checked one (parseRecordFrom)', () => {
  it('agrees with zod on every variant made from a canonical record (sharing its objects where the variant did not change them)', () => {
    for (const [name, value] of variants()) {
      const base = canonicalSample();
      // The variant, made as a stage makes one: the same objects wherever it equals the base.
      const made = Object.fromEntries(Object.entries(value as Mutable).map(([k, v]) => [k, JSON.stringify(v) === JSON.stringify(base[k]) && v !== undefined ? base[k] : v]));
      expectAgreesWithZod(name, made, base);
    }
  });

  it('walks only what the record does not share with its base', () => {
    const base = canonicalSample() as Mutable;
    const made = { ...base, split: 'train' };
    expect(parseRecordFrom(Sample, made, base).data).toBe(made);
    // The shared dialogue is taken as checked: edited in place behind the check's back, it is not looked at again…
    base.dialogue[0].role = 'system';
    expect(parseRecordFrom(Sample, made, base).success).toBe(true);
    expect(parseRecord(Sample, made).success).toBe(false);
    // …while what the record changed is (against a base nothing edited).
    const intact = canonicalSample() as Mutable;
    expect(parseRecordFrom(Sample, { ...intact, split: 7 }, intact).success).toBe(false);
    expect(parseRecordFrom(Sample, { ...intact, dialogue: [{ role: 'system', content: '' }] }, intact).success).toBe(false);
  });

  it('agrees with zod on every variant that shares the objects of the base at any depth where it did not change them', () => {
    /** `value` with every part deep-equal to `base`'s part at the same place replaced by base's object, as a stage that copies what it keeps makes it. */
    const sharing = (value: unknown, base: unknown): unknown => {
      if (value !== undefined && JSON.stringify(value) === JSON.stringify(base)) return base;
      if (Array.isArray(value) && Array.isArray(base)) return value.map((item, i) => sharing(item, base[i]));
      if (value && base && typeof value === 'object' && typeof base === 'object' && !Array.isArray(value) && !Array.isArray(base)) {
        return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, sharing(v, (base as Mutable)[k])]));
      }
      return value;
    };
    for (const [name, value] of variants()) {
      const base = canonicalSample();
      const made = sharing(value, base);
      expectAgreesWithZod(name, made, base);
    }
  });

  it('takes what a changed part shares with the part of the base there as checked, at any depth (a turn kept, a call kept)', () => {
    const base = canonicalSample() as Mutable;
    let reads = 0;
    const counted = (object: Mutable, key: string) => {
      const value = object[key];
      Object.defineProperty(object, key, { enumerable: true, get: () => (reads++, value) });
    };
    // Base's user turn and its assistant turn's calls, read-counted: a stage keeps them in a new dialogue.
    counted(base.dialogue[0], 'content');
    counted(base.dialogue[1].calls[0], 'tool');
    const [user, assistant] = base.dialogue;
    const made = { ...base, dialogue: [user, { ...assistant, response: 'Booked again.' }, { role: 'user', content: 'thanks' }] };
    reads = 0;
    expect(parseRecordFrom(Sample, made, base).data).toBe(made);
    expect(reads).toBe(0);
    // What differs below a shared part is still checked: a call the stage changed, in the kept order.
    const broken = { ...base, dialogue: [user, { ...assistant, calls: [assistant.calls[0], { ...assistant.calls[1], tool: '' }] }] };
    expect(parseRecordFrom(Sample, broken, base).success).toBe(false);
    expect(Sample.safeParse(broken).success).toBe(false);
  });
});

describe('values records share by identity (ToolSpec)', () => {
  it('walks a tool object it found valid once, however many records offer it, and remembers no invalid one', () => {
    const tool = ToolSpec.parse({
      name: 'book',
      parameters: { type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' }, c: { type: 'string' } }, required: ['a'] },
      returns: { type: 'object', properties: { x: { type: 'string' }, y: { type: 'string' } }, required: [] },
    });
    let reads = 0;
    const counted = { ...tool };
    Object.defineProperty(counted, 'description', { enumerable: true, get: () => (reads++, tool.description) });
    const sampleWith = (id: string, tools: unknown[]) => ({ ...canonicalSample(), id, tools });
    expect(parseRecord(Sample, sampleWith('s1', [counted])).success).toBe(true);
    const once = reads;
    expect(once).toBeGreaterThan(0);
    expect(parseRecord(Sample, sampleWith('s2', [counted])).success).toBe(true);
    expect(parseRecordFrom(Sample, sampleWith('s3', [counted]), canonicalSample()).success).toBe(true);
    expect(reads).toBe(once);
    // A tool found invalid is walked (and found invalid) every time.
    const broken = { ...tool, parameters: { ...tool.parameters, required: ['missing'] } };
    expect(parseRecord(Sample, sampleWith('s4', [broken])).success).toBe(false);
    expect(parseRecord(Sample, sampleWith('s5', [broken])).success).toBe(false);
  });
});
