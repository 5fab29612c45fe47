import { describe, expect, it } from 'vitest';
import type { Call, Json, Sample, ToolSpec } from '../core/records.ts';
import { editedSample, INVARIANTS_CHECK } from '../review/schema-check.ts';

/**
 * A reviewer's edit is held to the invariants the publish gate holds a run to: a correction that makes
 * a range end before it starts, or calls a tool the version's library lacks, is refused with the
 * finding, even where the recipe's own re-check (here the generic one: types, enums, required) passes.
 */
const tool = (name: string, properties: Record<string, Record<string, Json>>): ToolSpec => ({
  name,
  description: `${name} tool`,
  parameters: { type: 'object', properties: properties as ToolSpec['parameters']['properties'], required: [] },
  returns: { type: 'object', properties: {}, required: [] },
});
const hotel = tool('BookHotel', { city: { type: 'string' }, check_in_date: { type: 'string' }, check_out_date: { type: 'string' } });
const stray = tool('CancelHotel', { city: { type: 'string' } });
const call = (name: string, args: Record<string, string>): Call => ({ id: 'call_1', tool: name, arguments: args });
const sample = (tools: ToolSpec[]): Sample => ({
  id: 's1',
  benchmark: 'test',
  category: 'c',
  split: 'test',
  tools,
  dialogue: [{ role: 'user', content: 'Book a room in Paris from the 3rd to the 5th of May.' }],
  expected: { calls: [call('BookHotel', { city: 'Paris', check_in_date: '2024-05-03', check_out_date: '2024-05-05' })] },
  meta: { lineage: [], checks: [], tags: [] },
});

describe('review edits and the shared invariants', () => {
  it('applies an edit that keeps them', () => {
    const edit = editedSample(sample([hotel]), { calls: [call('BookHotel', { city: 'Lyon', check_in_date: '2024-05-03', check_out_date: '2024-05-05' })] }, undefined, [hotel]);
    expect(edit.failed).toEqual([]);
  });

  it('refuses an edit whose range ends before it starts, naming the check and the arguments', () => {
    const edit = editedSample(sample([hotel]), { calls: [call('BookHotel', { city: 'Paris', check_in_date: '2024-05-05', check_out_date: '2024-05-03' })] }, undefined, [hotel]);
    expect(edit.failed.map((c) => c.name)).toEqual([INVARIANTS_CHECK]);
    expect(edit.failed[0].reason).toMatch(/^range-order at .*check_in_date.*check_out_date/);
  });

  it('refuses an edit that calls a tool the version does not have, though the sample offers it', () => {
    const edit = editedSample(sample([hotel, stray]), { calls: [call('CancelHotel', { city: 'Paris' })] }, undefined, [hotel]);
    expect(edit.failed.map((c) => c.name)).toEqual([INVARIANTS_CHECK]);
    expect(edit.failed[0].reason).toContain('tool-exists');
  });
});
