import { describe, expect, it } from 'vitest';
import { stableStringify } from '../core/hash.ts';
import { sameShape } from '../core/invariants.ts';
import { isJsonObject } from '../core/records.ts';
import { Rng } from '../core/rng.ts';

/** What a tool's parameters ask of a call, as text: the rule `sameShape` compares by (documenting keys left out, key order aside). */
function shapeText(schema: unknown): string {
  const documenting = new Set(['description', 'default', 'examples', 'title']);
  const strip = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(strip);
    if (!isJsonObject(value)) return value;
    return Object.fromEntries(
      Object.entries(value).map(([key, inner]) => [key, documenting.has(key) ? undefined : key === 'properties' && isJsonObject(inner) ? Object.fromEntries(Object.entries(inner).map(([name, p]) => [name, strip(p)])) : strip(inner)]),
    );
  };
  return stableStringify(strip(schema));
}

const base = {
  type: 'object',
  description: 'Books a table',
  properties: {
    city: { type: 'string', description: 'where', examples: ['Paris'] },
    party: { type: 'integer', minimum: 1, default: 2 },
    when: { type: 'object', properties: { date: { type: 'string', format: 'date', title: 'day' } }, required: ['date'] },
    description: { type: 'string' },
    tags: { type: 'array', items: { type: 'string', enum: ['a', 'b'] } },
  },
  required: ['city', 'party'],
};

/** A copy of `value` changed at one random place: documentation, key order, a value, a key added or removed. */
function mutate(value: unknown, rng: Rng): unknown {
  const copy = structuredClone(value) as Record<string, unknown>;
  const objects: Record<string, unknown>[] = [];
  const walk = (v: unknown) => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (isJsonObject(v)) {
      objects.push(v);
      Object.values(v).forEach(walk);
    }
  };
  walk(copy);
  const target = rng.pick(objects);
  const keys = Object.keys(target);
  switch (rng.int(0, 5)) {
    case 0:
      target.description = `changed ${rng.int(0, 9)}`;
      break;
    case 1: {
      const entries = rng.shuffle(Object.entries(target));
      for (const key of keys) delete target[key];
      for (const [k, v] of entries) target[k] = v;
      break;
    }
    case 2:
      if (keys.length) target[rng.pick(keys)] = rng.chance(0.5) ? 'string' : 3;
      break;
    case 3:
      target[rng.pick(['pattern', 'title', 'enum', 'examples', 'maxLength'])] = rng.chance(0.5) ? ['x'] : 7;
      break;
    case 4:
      if (keys.length) delete target[rng.pick(keys)];
      break;
    default:
      if (keys.length) target[rng.pick(keys)] = undefined;
  }
  return copy;
}

describe('sameShape (two tools of one name: do their parameters ask the same of a call?)', () => {
  it('ignores documentation and key order, but not a parameter named like a documenting key', () => {
    const reordered = { required: ['city', 'party'], properties: { ...base.properties, city: { description: 'the city', type: 'string' } }, type: 'object', title: 'Booking' };
    expect(sameShape(base, reordered)).toBe(true);
    const { description: _named, ...withoutParameter } = base.properties;
    expect(sameShape(base, { ...base, properties: withoutParameter })).toBe(false);
    expect(sameShape(base, { ...base, required: ['city'] })).toBe(false);
    expect(sameShape(base, { ...base, properties: { ...base.properties, party: { type: 'number', minimum: 1 } } })).toBe(false);
  });

  it('agrees with comparing the schemas as sorted JSON without their documentation, over random changes', () => {
    const rng = new Rng(7);
    for (let n = 0; n < 3000; n++) {
      const a = rng.chance(0.3) ? base : mutate(base, rng);
      const b = mutate(rng.chance(0.5) ? a : base, rng);
      expect(sameShape(a, b), `${JSON.stringify(a)}\nvs\n${JSON.stringify(b)}`).toBe(shapeText(a) === shapeText(b));
    }
  });
});
