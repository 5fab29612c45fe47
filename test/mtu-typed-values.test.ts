import { describe, expect, it } from 'vitest';
import { inferProperty, typedValue } from '../stages/mtu/infer.ts';

const options = { minConformity: 0.95, enumMaxValues: 0, enumMinObservations: 30, listShare: 0.1 };

describe('argument types from the documentation', () => {
  it('documents strings that all read as integers or booleans as that type, and one exception keeps them strings', () => {
    expect(inferProperty(['2', '4', '10'], options)).toEqual({ type: 'integer' });
    expect(inferProperty(['True', 'False', 'true'], options)).toEqual({ type: 'boolean' });
    expect(inferProperty(['2', '4', 'dontcare'], options).type).toBe('string');
    expect(inferProperty(['02134'], options).type).toBe('string'); // a leading zero is no number
  });

  it('documents a parameter as a list when enough of its values are several values, else joins them', () => {
    const repeated = [['denver', 'dallas'], 'boston', 'miami', 'austin', 'reno', 'tulsa', 'omaha', 'boise', 'salem'];
    expect(inferProperty(repeated, options)).toEqual({ type: 'array', items: { type: 'string' } });
    expect(inferProperty(repeated, { ...options, listShare: 0.5 })).toEqual({ type: 'string' });
  });

  it('converts values to the documented type: numbers, booleans, one-item lists, joined lists', () => {
    expect(typedValue('2', { type: 'integer' })).toBe(2);
    expect(typedValue('True', { type: 'boolean' })).toBe(true);
    expect(typedValue('dontcare', { type: 'integer' })).toBe('dontcare');
    expect(typedValue('boston', { type: 'array', items: { type: 'string' } })).toEqual(['boston']);
    expect(typedValue(['1', '2'], { type: 'array', items: { type: 'integer' } })).toEqual([1, 2]);
    expect(typedValue(['denver', 'dallas'], { type: 'string' })).toBe('denver, dallas');
  });
});
