import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ArgumentValidator } from '../core/json-schema.ts';
import type { Json } from '../core/records.ts';
import { Rng } from '../core/rng.ts';
import type { AceFunction } from '../stages/acebench/record.ts';
import { stringForPattern, synthesiseArguments, synthesiseValue, wrongValue } from '../stages/acebench/values.ts';

const REFERENCE = new URL('../../shared/data/reference/acebench/', import.meta.url);
const values = { language: 'en' as const, today: '2024-03-05' };

function released(lang: string, category: string): { function: AceFunction[] }[] {
  return readFileSync(new URL(`data_${lang}/data_${category}.json`, REFERENCE), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
}

describe('offline values from JSON Schemas', () => {
  it('fills every released target function of the normal categories with arguments its schema accepts', () => {
    const validator = new ArgumentValidator();
    let checked = 0;
    for (const category of ['normal_single_turn_single_function', 'normal_atom_object_deep', 'normal_atom_number', 'special_error_param']) {
      for (const [i, record] of released('en', category).slice(0, 25).entries()) {
        for (const fn of record.function) {
          if (!fn.parameters) continue;
          const args = synthesiseArguments(fn, Rng.derive(1, category, i, fn.name), values);
          // A few released schemas hold patterns no Unicode regex compiles; the validator says so, and that is not the values' fault.
          const problems = validator.validate(fn.parameters, args).filter((p) => !p.message.startsWith('the function\'s parameters are not a usable schema'));
          expect(problems, `${category}_${i} ${fn.name}: ${JSON.stringify(args)}`).toEqual([]);
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(100);
  });

  it('keeps enums, integer vs number, ranges, formats and defaults', () => {
    const rng = new Rng(7);
    for (let i = 0; i < 30; i++) {
      expect(['a', 'b']).toContain(synthesiseValue({ type: 'string', enum: ['a', 'b'] }, 'x', rng, values));
      const int = synthesiseValue({ type: 'integer', minimum: 3, maximum: 9 }, 'count', rng, values) as number;
      expect(Number.isInteger(int) && int >= 3 && int <= 9).toBe(true);
      const num = synthesiseValue({ type: 'number', minimum: 0.5, maximum: 0.9 }, 'ratio', rng, values) as number;
      expect(num >= 0.5 && num <= 0.9).toBe(true);
      expect(synthesiseValue({ type: 'string', format: 'date' }, 'day', rng, values)).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(synthesiseValue({ type: 'string', format: 'date-time' }, 'at', rng, values)).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:00$/);
      expect(synthesiseValue({ type: 'string', format: 'time' }, 'at', rng, values)).toMatch(/^\d{2}:\d{2}$/);
      expect(synthesiseValue({ type: 'string', format: 'email' }, 'contact', rng, values)).toMatch(/^[^@\s]+@[^@\s]+\.\w+$/);
      expect(synthesiseValue({ type: 'string', format: 'uri' }, 'target', rng, values)).toMatch(/^https:\/\//);
    }
    const seen = new Set<Json>();
    for (let i = 0; i < 40; i++) seen.add(synthesiseValue({ type: 'string', default: 'standard' }, 'mode', rng, values));
    expect(seen.has('standard')).toBe(true);
    const deep = synthesiseValue(
      { type: 'array', items: { type: 'object', properties: { name: { type: 'string' }, tags: { type: 'array', items: { type: 'string' } } }, required: ['name', 'tags'] } },
      'items',
      rng,
      values,
    ) as { name: string; tags: string[] }[];
    expect(deep.length).toBeGreaterThan(0);
    for (const item of deep) expect(typeof item.name === 'string' && Array.isArray(item.tags)).toBe(true);
  });

  it('writes realistic strings by parameter name, in Chinese for zh', () => {
    const rng = new Rng(3);
    expect(synthesiseValue({ type: 'string' }, 'userEmail', rng, values)).toMatch(/@example\.com$/);
    expect(synthesiseValue({ type: 'string' }, 'startDate', rng, values)).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(synthesiseValue({ type: 'string' }, 'city', rng, { ...values, language: 'zh' })).toMatch(/[\u4e00-\u9fff]/);
  });

  it('matches the patterns the release uses most', () => {
    const patterns = [
      '^\\d{4}-\\d{2}-\\d{2}$',
      '^#([A-Fa-f0-9]{6}|[A-Fa-f0-9]{3})$',
      '^[a-zA-Z\\s]+$',
      '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}Z$',
      '^([0-1]?[0-9]|2[0-3]):[0-5][0-9]$',
      '^\\d+-\\d+$',
      '^[a-zA-Z0-9-]{36}$',
      '^[A-Z0-9]{8}$',
      '^[a-zA-Z0-9]{8}-[a-zA-Z0-9]{4}-[a-zA-Z0-9]{4}-[a-zA-Z0-9]{4}-[a-zA-Z0-9]{12}$',
      "^[A-Za-z0-9 .&'-]+$",
      '^(\\d{4}-(0[1-9]|1[0-2])|\\d{4}-Q[1-4])$',
      '^[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\\.[a-zA-Z]{2,}$',
      '^\\+?[1-9]\\d{1,14}$',
      '^(Twitter|Facebook|Instagram|LinkedIn)$',
      '^https?://.*',
    ];
    const rng = new Rng(11);
    for (const pattern of patterns) {
      for (let i = 0; i < 5; i++) {
        const value = stringForPattern(pattern, rng);
        expect(value, pattern).toBeDefined();
        expect(new RegExp(pattern).test(value!), `${pattern} → ${value}`).toBe(true);
      }
    }
    expect(synthesiseValue({ type: 'string', pattern: '^[A-Z0-9]{8}$' }, 'code', rng, values)).toMatch(/^[A-Z0-9]{8}$/);
  });

  it('makes wrong values the validator rejects: wrong formats for constrained strings, wrong types otherwise', () => {
    const validator = new ArgumentValidator();
    const rng = new Rng(5);
    const cases: [Json, 'format' | 'type'][] = [
      [{ type: 'string', pattern: '^[a-zA-Z\\s]+$' }, 'format'],
      [{ type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' }, 'format'],
      [{ type: 'string', format: 'date' }, 'format'],
      [{ type: 'string', format: 'email' }, 'format'],
      [{ type: 'string', enum: ['low', 'high'] }, 'format'],
      [{ type: 'integer', minimum: 1, maximum: 10 }, 'format'],
      [{ type: 'number' }, 'type'],
      [{ type: 'boolean' }, 'type'],
      [{ type: 'array', items: { type: 'string' } }, 'type'],
    ];
    for (const [schema, kind] of cases) {
      const wrong = wrongValue(schema, 'param', rng, validator, values);
      expect(wrong, JSON.stringify(schema)).toBeDefined();
      expect(wrong!.kind).toBe(kind);
      expect(validator.validate({ type: 'object', properties: { param: schema } }, { param: wrong!.value }).length).toBeGreaterThan(0);
    }
    // A string parameter's wrong value is a string (as the release writes them all): an unconstrained string has none.
    for (let i = 0; i < 20; i++) expect(typeof wrongValue({ type: 'string', pattern: '^[A-Z]{3}-[0-9]{4}$' }, 'code', rng, validator, values)?.value).toBe('string');
    expect(wrongValue({ type: 'string' }, 'note', rng, validator, values)).toBeUndefined();
  });

  it('puts ranges in order: bounds of one schema trade values, other bounds are drawn again; the values stay valid', () => {
    const validator = new ArgumentValidator();
    const time = { type: 'string', format: 'time' };
    const fn: AceFunction = {
      name: 'plan',
      description: 'Plans it.',
      parameters: {
        type: 'object',
        properties: {
          window: { type: 'object', properties: { startTime: { ...time, description: 'From.' }, endTime: { ...time, description: 'To.' } }, required: ['startTime', 'endTime'] },
          period: { type: 'object', properties: { start: { type: 'string', format: 'date' }, end: { type: 'string', format: 'date' } }, required: ['start', 'end'] },
          min_price: { type: 'integer', minimum: 0, maximum: 60 },
          max_price: { type: 'integer', minimum: 40, maximum: 100 },
          date_from: { type: 'string', format: 'date' },
          date_to: { type: 'string', format: 'date' },
        },
        required: ['window', 'period', 'min_price', 'max_price', 'date_from', 'date_to'],
      },
    };
    for (let i = 0; i < 60; i++) {
      const args = synthesiseArguments(fn, Rng.derive(3, i), values) as { window: { startTime: string; endTime: string }; period: { start: string; end: string }; min_price: number; max_price: number; date_from: string; date_to: string };
      expect(validator.validate(fn.parameters, args)).toEqual([]);
      expect(args.window.startTime <= args.window.endTime, JSON.stringify(args.window)).toBe(true);
      expect(args.period.start <= args.period.end, JSON.stringify(args.period)).toBe(true);
      expect(args.min_price <= args.max_price, `${args.min_price} ${args.max_price}`).toBe(true);
      expect(args.date_from <= args.date_to).toBe(true);
    }
  });

  it('writes no whitespace in strings that ACEBench compares as printed (in a list within an object)', () => {
    const schema = { type: 'object', properties: { categories: { type: 'array', items: { type: 'string' } }, topics: { type: 'array', items: { type: 'string' } }, owners: { type: 'array', items: { type: 'object', properties: { full_name: { type: 'string' } } } } } };
    for (let i = 0; i < 30; i++) {
      const value = synthesiseValue({ ...schema, required: ['categories', 'topics', 'owners'] }, 'filters', Rng.derive(5, i), values) as { categories: string[]; topics: string[]; owners: { full_name?: string }[] };
      for (const text of [...value.categories, ...value.topics, ...value.owners.flatMap((owner) => owner.full_name ?? [])]) expect(text).not.toMatch(/\s/);
    }
    // An argument's own list of strings is normalised by the checker: it keeps its spaces.
    const spaced = Array.from({ length: 30 }, (_, i) => synthesiseValue({ type: 'array', items: { type: 'string' } }, 'topics', Rng.derive(6, i), values) as string[]).flat();
    expect(spaced.some((text) => /\s/.test(text))).toBe(true);
  });
});
