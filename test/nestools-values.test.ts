import { describe, expect, it } from 'vitest';
import type { Call, Sample } from '../core/records.ts';
import { dropConjunctions, replaceApiNames } from '../prompts/nestools-offline.ts';
import { cleanRewrittenTask } from '../prompts/nestools-rewrite-text.ts';
import { presenceOf, valueMentions } from '../stages/nestools/query-values.ts';
import { computeStatistics, viewOfSample } from '../stages/nestools/statistics.ts';
import { chainStructure } from '../stages/nestools/structure.ts';
import { reviewNotes } from '../stages/nestools/tag-for-review.ts';
import { loadNesToolsSamples } from '../stages/sources/nestools.ts';

const reference = new URL('../../shared/data/reference/nestools/test_data.jsonl', import.meta.url).pathname;

describe('values in the task', () => {
  const task = 'Book 2 rooms at Hotel Astoria for Ana Lima from July 15th to July 22nd, 2023, under $1,500, with a 15% deposit, for a ten-day stay.';
  it.each([
    ['Hotel Astoria', 'exact'],
    ['hotel-astoria', 'normalised'],
    ['2023-07-15', 'normalised'],
    ['2023-07-22', 'normalised'],
    [1500, 'normalised'],
    [1500.0, 'normalised'],
    ['1500', 'normalised'],
    [0.15, 'normalised'],
    [10, 'normalised'],
    [2, 'normalised'],
    ['Lima, Ana', 'loose'],
    ['2023-08-01', 'missing'],
    [3, 'missing'],
    ['Grand Budapest', 'missing'],
    [true, 'exact'],
  ] as const)('%j is %s', (value, presence) => {
    expect(presenceOf(value, task)).toBe(presence);
  });

  it('judges a list by its least present item and skips references', () => {
    const calls: Call[] = [
      { id: 'call_0', tool: 'a', arguments: { guests: ['Ana Lima', 'Rui Lima'], room: 'suite' } },
      { id: 'call_1', tool: 'b', arguments: { booking: { $ref: 'call_0.id' }, extras: ['breakfast', { $ref: 'call_0.code' }] } },
    ];
    const mentions = valueMentions('Book a suite for Ana Lima with breakfast.', calls);
    expect(mentions.map((m) => [m.param, m.presence])).toEqual([
      ['guests', 'missing'],
      ['room', 'exact'],
      ['extras', 'exact'],
    ]);
  });

  it('finds every value in most released tasks', () => {
    const samples = loadNesToolsSamples(reference);
    const complete = samples.filter((s) => valueMentions(s.dialogue[0].content, s.expected.calls!).every((m) => m.presence !== 'missing'));
    expect(complete.length).toBeGreaterThan(800);
  });
});

describe('chain structure', () => {
  const call = (id: number, ...from: number[]): Call => ({ id: `c${id}`, tool: `t${id}`, arguments: Object.fromEntries(from.map((f, i) => [`p${i}`, { $ref: `c${f}.out` }])) });
  it.each([
    ['1', [call(1)], 'single', 1, ''],
    ['1 | 2', [call(1), call(2)], 'independent', 1, ''],
    ['1→2→3', [call(1), call(2, 1), call(3, 2)], 'chain', 3, '1→2, 2→3'],
    ['1→2, 1→3', [call(1), call(2, 1), call(3, 1)], 'fan-out', 2, '1→2, 1→3'],
    ['1→3, 2→3', [call(1), call(2), call(3, 1, 2)], 'fan-in', 2, '1→3, 2→3'],
    ['1→2→3, 1→3', [call(1), call(2, 1), call(3, 1, 2)], 'mixed', 3, '1→2, 1→3, 2→3'],
  ] as const)('%s is %s', (_label, calls, kind, depth, shape) => {
    expect(chainStructure([...calls] as Call[])).toMatchObject({ kind, depth, shape });
  });

  it('reproduces the released set’s published figures', () => {
    const stats = computeStatistics(loadNesToolsSamples(reference).map(viewOfSample));
    expect(stats.samples).toBe(1000);
    expect(stats.nestedSamples).toBe(830); // Table 1: nested-tool callings
    expect(stats.toolEntries).toBe(3034); // Table 1: tools
    expect(stats.callsPerSample.toFixed(2)).toBe('3.04'); // Table 1: avg. tool call
    expect(stats.requiredPerTool.toFixed(2)).toBe('2.24'); // Table 1: avg. params (required)
  });
});

describe('review tags', () => {
  const sample = (calls: Call[], task: string): Sample => ({
    id: 's',
    benchmark: 'nestools',
    category: 'nested',
    split: 'test',
    tools: [
      { name: 'get_book', description: '', parameters: { type: 'object', properties: { isbn: { type: 'string' } }, required: ['isbn'] }, returns: { type: 'object', properties: { title: { type: 'string', description: 'book title' }, pages: { type: 'integer' } }, required: [] } },
      { name: 'find_shelf', description: '', parameters: { type: 'object', properties: { title: { type: 'string', description: 'book title' }, floor: { type: 'string', description: 'floor' } }, required: ['title'] }, returns: { type: 'object', properties: {}, required: [] } },
    ],
    dialogue: [{ role: 'user', content: task }],
    expected: { calls },
    meta: { lineage: [], checks: [], tags: [] },
  });

  it('flags a nested argument fed by an unrelated field, with a type mismatch', () => {
    const notes = reviewNotes(sample([{ id: 'a', tool: 'get_book', arguments: { isbn: '978-1' } }, { id: 'b', tool: 'find_shelf', arguments: { title: { $ref: 'a.pages' } } }], 'Find the shelf of book 978-1.'));
    expect(notes.tags).toEqual(['depth:2', 'review:nested-params', 'review:type-mismatch', 'review:weak-nested-link', 'structure:chain']);
    expect(notes.focus[0]).toBe('call 2 find_shelf.title ← call 1 get_book.pages (match 0.00)');
  });

  it('flags a literal that an earlier result should supply, and values the task lacks', () => {
    const notes = reviewNotes(sample([{ id: 'a', tool: 'get_book', arguments: { isbn: '978-1' } }, { id: 'b', tool: 'find_shelf', arguments: { title: 'Dune', floor: 'third' } }], 'Look up 978-1 and find Dune.'));
    expect(notes.tags).toContain('review:maybe-nested');
    expect(notes.tags).toContain('review:values-in-query');
    expect(notes.tags).not.toContain('review:nested-params');
    expect(notes.checks.find((c) => c.name === 'nestools/values-stated')?.reason).toContain('floor "third" (missing)');
  });

  it('flags an API name in the task', () => {
    const notes = reviewNotes(sample([{ id: 'a', tool: 'get_book', arguments: { isbn: '978-1' } }], 'Run get_book on 978-1.'));
    expect(notes.tags).toContain('review:api-name-in-query');
  });
});

describe('offline rewrites and answer cleaning', () => {
  it('drops conjunctions at sentence starts and fixes capitals', () => {
    expect(dropConjunctions('Please scan the ISBN. Then, find the book. After that, start the tour, then stop.')).toBe('Scan the ISBN. Find the book. Start the tour, stop.');
  });
  it('replaces API names with their words', () => {
    expect(replaceApiNames('Use getBookInfo, then scan_isbn.', ['getBookInfo', 'scan_isbn'])).toBe('Use get book info, then scan isbn.');
  });
  it('takes the task out of a labelled, quoted answer', () => {
    expect(cleanRewrittenTask('Rewritten task: "Find the   book."')).toBe('Find the book.');
  });
});
