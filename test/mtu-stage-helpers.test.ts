import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { Json, ToolSpec, Turn } from '../core/records.ts';
import { wordsOf } from '../prompts/mtu-offline.ts';
import { valueProblem } from '../stages/mtu/infer.ts';
import { renderToolList, toMtuDoc } from '../stages/mtu/mtu-format.ts';
import { parameterNameOfSlot, toolNameOfIntent } from '../stages/mtu/names.ts';
import { strictlyEqual } from '../stages/mtu/quality.ts';
import { splitOf } from '../stages/mtu/splits.ts';
import { Rng } from '../core/rng.ts';
import { withReact } from '../stages/mtu/react.ts';

describe('quality check: calls compared as isDeepStrictEqual compares them', () => {
  const cases: [unknown, unknown][] = [
    [{ a: 1, b: [1, 2] }, { b: [1, 2], a: 1 }],
    [{ a: 1 }, { a: 1, b: undefined }],
    [{ a: undefined }, { a: undefined }],
    [{ a: undefined }, { b: undefined }],
    [[1, [2, { c: 'x' }]], [1, [2, { c: 'x' }]]],
    [[1, 2], [2, 1]],
    [[1, 2], { 0: 1, 1: 2 }],
    [0, -0],
    [{ n: -0 }, { n: 0 }],
    [null, {}],
    [[], {}],
    ['1', 1],
    [{ a: null }, { a: null }],
    [{ a: { b: [] } }, { a: { b: [null] } }],
  ];
  it.each(cases)('%j and %j', (a, b) => {
    expect(strictlyEqual(a, b)).toBe(isDeepStrictEqual(a, b));
    expect(strictlyEqual(b, a)).toBe(isDeepStrictEqual(b, a));
  });
});

describe('ReAct synthesis: an assistant turn made whole', () => {
  /** What the stage did before: a copy of the turn, the keys set one by one, empty observations deleted. */
  const setOneByOne = (turn: Turn, thought: string | undefined, observations: Record<string, Json>, response: string): Turn => {
    const out: Turn = structuredClone(turn);
    if (thought !== undefined) out.thought = thought;
    out.observations = observations;
    out.response = response;
    if (!Object.keys(out.observations ?? {}).length) delete out.observations;
    return out;
  };
  const turns: Turn[] = [
    { role: 'assistant', content: 'Done.' },
    { role: 'assistant', content: 'Done.', calls: [{ id: 'call_0', tool: 'FindHotel', arguments: {} }], observations: { call_0: { name: 'Inn' } } },
    { role: 'assistant', content: '', observations: {}, thought: '', response: 'old' },
    { role: 'assistant', content: 'Done.', response: 'x', thought: 'kept' },
  ];
  const additions: [string | undefined, Record<string, Json>][] = [
    [undefined, {}],
    ['Because.', {}],
    [undefined, { call_0: { name: 'Inn', stars: 4 } }],
    ['Because.', { call_0: {} }],
  ];
  for (const [t, turn] of turns.entries()) {
    for (const [a, [thought, observations]] of additions.entries()) {
      it(`turn ${t}, addition ${a}: the same keys in the same order as setting them one by one`, () => {
        const made = withReact(turn, thought, observations, 'Reply.');
        const before = setOneByOne(turn, thought, observations, 'Reply.');
        expect(JSON.stringify(made)).toBe(JSON.stringify(before));
        expect(Object.keys(made)).toEqual(Object.keys(before));
      });
    }
  }
  it('leaves the turn it was given as it was', () => {
    const turn = Object.freeze({ role: 'assistant', content: 'Done.', observations: Object.freeze({}) }) as Turn;
    expect(withReact(turn, 'Because.', {}, 'Done.')).toEqual({ role: 'assistant', content: 'Done.', thought: 'Because.', response: 'Done.' });
    expect(turn).toEqual({ role: 'assistant', content: 'Done.', observations: {} });
  });
});

describe('names remembered per run: each call answers as a fresh conversion would', () => {
  it('keeps a name converted with a prefix or service apart from the same name without, or with another', () => {
    expect(toolNameOfIntent('atis_flight', 'atis_')).toBe('GetFlight');
    expect(toolNameOfIntent('atis_flight')).toBe('GetAtisFlight');
    expect(toolNameOfIntent('atis_flight', 'atis_')).toBe('GetFlight');
    expect(toolNameOfIntent('flight', '1:a')).toBe('GetFlight');
    expect(toolNameOfIntent('1:aflight', '')).toBe('Get1Aflight');
    expect(parameterNameOfSlot('hotel-pricerange', 'hotel')).toBe('pricerange');
    expect(parameterNameOfSlot('hotel-pricerange')).toBe('hotel_pricerange');
    expect(parameterNameOfSlot('hotel-pricerange', 'hotel')).toBe('pricerange');
    expect(parameterNameOfSlot('a:b-c', 'a:b')).toBe('c');
    expect(parameterNameOfSlot('b-c', 'a:')).toBe('b_c');
  });
  it('splits a tool name into words the same way every time', () => {
    expect(wordsOf('SearchScreeningEvent')).toBe('search screening event');
    expect(wordsOf('SearchScreeningEvent')).toBe('search screening event');
    expect(wordsOf('number_of_seats')).toBe('number of seats');
  });
});

describe('value checks: patterns and enums read once per documented property', () => {
  it('checks each value against the pattern and enum it is given, whatever was checked before', () => {
    const property = { type: 'string', pattern: '^\\d+$', enum: ['1', '22'] };
    expect(valueProblem('22', property)).toBeUndefined();
    expect(valueProblem('3', property)).toBe('"3" is not one of ["1","22"]');
    expect(valueProblem('x', { type: 'string', pattern: '^\\d+$' })).toBe('"x" does not match ^\\d+$');
    expect(valueProblem('7', { type: 'string', pattern: '^\\d+$' })).toBeUndefined();
    expect(valueProblem(2, { type: 'integer', enum: [1, 2] })).toBeUndefined();
    expect(valueProblem('2', { type: 'string', enum: [1, 2] })).toBe('"2" is not one of [1,2]');
    expect(() => valueProblem('x', { type: 'string', pattern: '(' })).toThrow();
    expect(() => valueProblem('x', { type: 'string', pattern: '(' })).toThrow();
  });
});

describe('tool lists written once per list of the same tools', () => {
  const tool = (name: string): ToolSpec => ({
    name,
    description: `${name} things.`,
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    returns: { type: 'object', properties: {}, required: [] },
  });
  const [a, b, c] = [tool('FindA'), tool('FindB'), tool('FindC')];
  const written = (tools: ToolSpec[]) => JSON.stringify(tools.map(toMtuDoc));
  it('gives each list, its prefixes and its reorderings their own text', () => {
    for (const list of [[a, b, c], [a, b], [a], [], [b, a], [a, b, c], [c, b, a], [a, b], [a, a]]) expect(renderToolList(list)).toBe(written(list));
  });
});

describe('assign-splits: the seeded draw made only when due', () => {
  const options = { mode: 'random' as const, map: {}, testFraction: 0.5, oodDomains: ['Weather'] };
  const sample = (domains: string[]) => ({ meta: { mtu: { services: [], domains, sourceSplit: 'train' } } }) as never;
  it('draws from the generator it is given or made, the same split either way', () => {
    for (let seed = 0; seed < 20; seed++) {
      expect(splitOf(sample(['Hotels']), options, () => Rng.derive(seed, 'split'))).toBe(splitOf(sample(['Hotels']), options, Rng.derive(seed, 'split')));
    }
  });
  it('makes no generator for a held-out topic or a split the source decides', () => {
    const never = () => {
      throw new Error('no draw is due');
    };
    expect(splitOf(sample(['Weather']), options, never)).toBe('ood');
    expect(splitOf(sample(['Hotels']), { ...options, mode: 'source', map: { train: 'train' } }, never)).toBe('train');
  });
});
