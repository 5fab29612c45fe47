import { describe, expect, it } from 'vitest';
import { Call, Sample, ToolSpec, fromOpenAITool, isRef, sampleId, toOpenAITool } from '../core/records.ts';
import { hashOf, stableStringify } from '../core/hash.ts';
import { Rng } from '../core/rng.ts';

const weather: ToolSpec = ToolSpec.parse({
  name: 'GetWeather',
  description: 'Current weather for a city',
  parameters: {
    properties: {
      city: { type: 'string', description: 'City name' },
      unit: { type: 'string', enum: ['C', 'F'], default: 'C' },
      date: { type: 'string', format: 'date' },
    },
    required: ['city'],
  },
  returns: { properties: { temperature: { type: 'number' } } },
  domain: 'weather',
  isAction: false,
  provenance: { source: 'sgd', id: 'Weather_1/GetWeather' },
});

describe('records', () => {
  it('fills defaults and keeps every field through a JSON round trip', () => {
    expect(weather.parameters.type).toBe('object');
    expect(weather.returns.required).toEqual([]);
    expect(ToolSpec.parse(JSON.parse(JSON.stringify(weather)))).toEqual(weather);
  });

  it('rejects a tool without a name and a required parameter that is not a property', () => {
    expect(ToolSpec.safeParse({ ...weather, name: '' }).success).toBe(false);
    const broken = ToolSpec.safeParse({ name: 'x', parameters: { properties: {}, required: ['city'] } });
    expect(broken.success).toBe(false);
    expect(JSON.stringify(broken.error?.issues)).toContain('city');
  });

  it('accepts literal and $ref arguments, also inside lists, and rejects malformed refs', () => {
    const call = Call.parse({ id: 'call_1', tool: 'Book', arguments: { city: { $ref: 'call_0.city' }, ids: ['a', { $ref: 'call_0.id' }], options: { k: 1 } } });
    expect(isRef(call.arguments.city)).toBe(true);
    expect(isRef((call.arguments.ids as unknown[])[1])).toBe(true);
    expect(isRef(call.arguments.options)).toBe(false);
    expect(Call.safeParse({ id: 'c', tool: 't', arguments: { x: { $ref: 'no-dot' } } }).success).toBe(false);
    expect(Call.safeParse({ id: 'c', tool: 't', arguments: { x: [{ $ref: 'c0.x', extra: 1 }] } }).success).toBe(false);
    expect(isRef({ $ref: 'no-dot' })).toBe(false);
  });

  it('round-trips ToolSpec through OpenAI function-tool JSON without loss', () => {
    const openai = toOpenAITool(weather);
    expect(openai.type).toBe('function');
    expect(openai.function.name).toBe('GetWeather');
    expect((openai.function.parameters as { required: string[] }).required).toEqual(['city']);
    expect(fromOpenAITool(JSON.parse(JSON.stringify(openai)))).toEqual(weather);
  });

  it('gives the same sample id for the same origin on every run, and another for another origin', () => {
    const a = sampleId('mtu', { source: 'snips', id: 'train_GetWeather.json#3' });
    expect(a).toBe(sampleId('mtu', { id: 'train_GetWeather.json#3', source: 'snips' }));
    expect(a).toMatch(/^mtu-[0-9a-f]{16}$/);
    expect(a).not.toBe(sampleId('mtu', { source: 'snips', id: 'train_GetWeather.json#4' }));
    // Fixed values (sha256 of the key-sorted JSON, checked independently): a change in hashing would
    // silently change every published id.
    expect(a).toBe('mtu-07c562b3ce40ab4d');
    expect(stableStringify({ b: 1, a: [1, { d: 2, c: 3 }] })).toBe('{"a":[1,{"c":3,"d":2}],"b":1}');
    expect(hashOf({ b: 1, a: [1, { d: 2, c: 3 }] }, 16)).toBe('e23f8d4197e06fb1');
  });

  it('validates a whole sample', () => {
    const sample = Sample.parse({
      id: 'x-1',
      benchmark: 'mtu',
      category: 'S-S',
      split: 'test',
      tools: [weather],
      dialogue: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: '', thought: 'needs weather', calls: [{ id: 'call_0', tool: 'GetWeather', arguments: { city: 'Paris' } }], observations: { call_0: { temperature: 21 } }, response: 'It is 21 degrees.' },
      ],
      expected: { calls: [{ id: 'call_0', tool: 'GetWeather', arguments: { city: 'Paris' } }] },
      meta: {},
    });
    expect(sample.meta.checks).toEqual([]);
    expect(Sample.safeParse({ ...sample, dialogue: [{ role: 'system', content: 'x' }] }).success).toBe(false);
  });

  it('derives independent, reproducible random streams', () => {
    const a = Rng.derive(42, 'stage', 'record-1');
    const b = Rng.derive(42, 'stage', 'record-1');
    const c = Rng.derive(42, 'stage', 'record-2');
    const seqA = Array.from({ length: 5 }, () => a.next());
    expect(seqA).toEqual(Array.from({ length: 5 }, () => b.next()));
    expect(seqA).not.toEqual(Array.from({ length: 5 }, () => c.next()));
    expect(new Set(Rng.derive(1, 'x').sample([1, 2, 3, 4, 5], 5))).toEqual(new Set([1, 2, 3, 4, 5]));
  });
});
