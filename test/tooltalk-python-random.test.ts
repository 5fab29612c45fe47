import { describe, expect, it } from 'vitest';
import { PythonRandom } from '../core/python-random.ts';

// Every expected value below was printed by CPython 3.11.7 (`import random; r = random.Random(seed)`)
// and pasted here; the test needs no Python at run time.
describe('PythonRandom reproduces CPython random.Random', () => {
  it('seeds like Random(489): the first three randint draws make ToolTalk\'s first session token', () => {
    const r = new PythonRandom(489);
    expect([r.randint(0, 0xffffffff), r.randint(0, 0xffff), r.randint(0, 0xffff)]).toEqual([3779683183, 55754, 1938]);
    // 3779683183 = 0xe149636f, 55754 = 0xd9ca, 1938 = 0x0792: "e149636f-d9ca-0792"
  });

  it('random() and getrandbits(k) for k below, at and above 32 bits', () => {
    const r = new PythonRandom(489);
    expect(r.random()).toBe(0.9389118770036148);
    expect(r.getrandbits(32)).toBe(771719745n);
    expect(r.getrandbits(7)).toBe(78n);
    expect(r.getrandbits(64)).toBe(9338661150054680010n);
    expect(r.getrandbits(100)).toBe(937852446495514168837473395567n);
    expect(new PythonRandom(489).getrandbits(0)).toBe(0n);
  });

  it('Random(0), a negative seed, a seed above 32 bits and one above 64 bits', () => {
    const zero = new PythonRandom(0);
    expect([zero.random(), zero.random(), zero.random()]).toEqual([0.8444218515250481, 0.7579544029403025, 0.420571580830845]);
    expect(new PythonRandom(-17).random()).toBe(0.5219839097124932);
    const wide = new PythonRandom(2 ** 40 + 5);
    expect([wide.randint(1, 6), wide.randrange(10, 100, 7), wide.choice([...'abcdefg']), wide.getrandbits(1)]).toEqual([5, 66, 'c', 1n]);
    const huge = new PythonRandom(12345678901234567890123n);
    expect(huge.random()).toBe(0.15803717805068784);
    expect(huge.randint(0, 2 ** 52)).toBe(1790006613371900); // width above 32 bits: two words per try
  });

  it('randrange with a negative step, randrange(stop), randint over bytes', () => {
    const r = new PythonRandom(7);
    expect(r.randrange(100, 0, -3)).toBe(40);
    expect(r.randrange(50)).toBe(9);
    expect(Array.from({ length: 5 }, () => r.randint(0, 255))).toEqual([202, 24, 37, 48, 187]);
  });

  it('shuffle, and the state after a shuffle', () => {
    const r = new PythonRandom(489);
    expect(r.shuffle([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])).toEqual([7, 9, 0, 3, 4, 5, 8, 1, 6, 2]);
    expect(r.randint(0, 999999)).toBe(569139);
  });

  it('regenerates the state block after 624 words', () => {
    const r = new PythonRandom(489);
    for (let i = 0; i < 700; i++) r.random();
    expect(r.getrandbits(32)).toBe(293084950n);
  });

  it('a copied state continues the same sequence', () => {
    const a = new PythonRandom(489);
    a.random();
    const b = new PythonRandom(1);
    b.setState(a.getState());
    expect(b.randint(0, 0xffff)).toBe(a.randint(0, 0xffff));
  });

  it('refuses empty ranges and empty sequences as CPython does', () => {
    const r = new PythonRandom(1);
    expect(() => r.randrange(0)).toThrow('empty range for randrange()');
    expect(() => r.randint(5, 4)).toThrow('empty range');
    expect(() => r.choice([])).toThrow('Cannot choose from an empty sequence');
  });
});
