import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { decodeBio } from '../stages/sources/atis.ts';
import { argumentsOfSlots } from '../stages/mtu/grammar-tools.ts';
import { fromData } from './fixtures/mtu/paths.ts';

/** Spans back to BIO tags over the tokens of the text. */
function encode(text: string, slots: { name: string; start: number; end: number }[]): string[] {
  const tags: string[] = [];
  let offset = 0;
  for (const token of text.split(' ')) {
    const slot = slots.find((s) => offset >= s.start && offset < s.end);
    tags.push(slot ? `${offset === slot.start ? 'B' : 'I'}-${slot.name}` : 'O');
    offset += token.length + 1;
  }
  return tags;
}

describe('BIO decoding', () => {
  it('decodes multi-token spans to exact character offsets', () => {
    const tokens = 'flights from new york city to las vegas on monday'.split(' ');
    const tags = ['O', 'O', 'B-fromloc.city_name', 'I-fromloc.city_name', 'I-fromloc.city_name', 'O', 'B-toloc.city_name', 'I-toloc.city_name', 'O', 'B-depart_date.day_name'];
    const { text, slots } = decodeBio(tokens, tags);
    expect(text).toBe(tokens.join(' '));
    expect(slots).toEqual([
      { name: 'fromloc.city_name', value: 'new york city', start: 13, end: 26 },
      { name: 'toloc.city_name', value: 'las vegas', start: 30, end: 39 },
      { name: 'depart_date.day_name', value: 'monday', start: 43, end: 49 },
    ]);
    for (const s of slots) expect(text.slice(s.start, s.end)).toBe(s.value);
  });

  it('starts a new span at B- even right after a span of the same slot, and at an orphan I-', () => {
    const { slots } = decodeBio(['boston', 'denver', 'to', 'dallas', 'fort'], ['B-city', 'B-city', 'O', 'I-city', 'I-state']);
    expect(slots.map((s) => [s.name, s.value])).toEqual([
      ['city', 'boston'],
      ['city', 'denver'],
      ['city', 'dallas'],
      ['state', 'fort'],
    ]);
  });

  it('refuses a tag count that differs from the token count', () => {
    expect(() => decodeBio(['a', 'b'], ['O'])).toThrow(/1 tags for 2 tokens/);
  });

  it('round-trips every real ATIS line: spans encode back to its tags', () => {
    let checked = 0;
    for (const split of ['train', 'valid', 'test']) {
      const inputs = readFileSync(fromData(`sources/atis/${split}/seq.in`), 'utf8').trim().split('\n');
      const outputs = readFileSync(fromData(`sources/atis/${split}/seq.out`), 'utf8').trim().split('\n');
      inputs.forEach((line, i) => {
        const tokens = line.trim().split(/\s+/);
        const tags = outputs[i].trim().split(/\s+/);
        const { text, slots } = decodeBio(tokens, tags);
        // An orphan I- (no open span of its slot) is read as a B-: normalise before comparing.
        const normalised = tags.map((tag, k) => (tag.startsWith('I-') && tags[k - 1]?.slice(2) !== tag.slice(2) ? `B-${tag.slice(2)}` : tag));
        expect(encode(text, slots)).toEqual(normalised);
        checked++;
      });
    }
    expect(checked).toBe(5871);
  });

  it('turns slots into arguments, keeping repeated values of one slot in order', () => {
    const { text, slots } = decodeBio('from boston to denver or from boston to dallas'.split(' '), ['O', 'B-fromloc.city_name', 'O', 'B-toloc.city_name', 'O', 'O', 'B-fromloc.city_name', 'O', 'B-toloc.city_name']);
    expect(argumentsOfSlots({ speaker: 'user', text, slots })).toEqual({ fromloc_city_name: 'boston', toloc_city_name: ['denver', 'dallas'] });
  });
});
