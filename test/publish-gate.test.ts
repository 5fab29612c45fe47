import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gateOverFiles, PublishGate, type GateOptions, type GateResult } from '../core/publish-gate.ts';
import type { Call, Json, Sample, ToolSpec } from '../core/records.ts';
import { DistinctTools } from '../core/run.ts';

/** The publish gate made as the last stage writes its samples (library not known yet), against the gate over the files with the library made first. */

const tool = (name: string, properties: Record<string, Record<string, Json>>, required: string[] = [], description = `${name} tool`): ToolSpec => ({
  name,
  description,
  parameters: { type: 'object', properties: properties as ToolSpec['parameters']['properties'], required },
  returns: { type: 'object', properties: {}, required: [] },
});
const hotel = tool('BookHotel', { city: { type: 'string' }, rooms: { type: 'integer', minimum: 1 } }, ['city']);
const weather = tool('GetWeather', { city: { type: 'string' } }, ['city']);
const call = (name: string, args: Record<string, unknown>): Call => ({ id: 'call_1', tool: name, arguments: args as Call['arguments'] });

function sample(id: string, calls: Call[], tools: ToolSpec[], split = 'test'): Sample {
  return { id, benchmark: 'test', category: calls.length > 1 ? 'S-M' : 'S-S', split, tools, dialogue: [{ role: 'user', content: `ask ${id}` }], expected: { calls }, meta: { lineage: [], checks: [], tags: [] } };
}

/** Samples as a last stage makes them: tools that are the same objects where they are the same tool (as copied from a library), some shown with other documentation. */
function made(extra: Sample[] = []): Sample[] {
  const documented = { ...hotel, description: 'Books a room', parameters: { ...hotel.parameters, properties: { ...hotel.parameters.properties, city: { type: 'string', description: 'where' } } } };
  return [
    sample('a', [call('BookHotel', { city: 'Rome', rooms: 2 })], [hotel, weather]),
    sample('b', [call('GetWeather', { city: 'Oslo' })], [{ ...weather }, documented], 'train'),
    sample('c', [call('BookHotel', { city: 'Rome', rooms: 0 })], [hotel]),
    sample('a', [call('GetWeather', { city: 'Oslo' })], [weather]),
    sample('d', [], [weather, hotel], 'ood'),
    ...extra,
  ];
}

function options(dir: string): Omit<GateOptions, 'library'> {
  return { mode: 'reject', toolLibrary: () => new DistinctTools(), dir };
}

/** What a gate result publishes: data files, tools, rejects and summary, as text. */
function published(result: GateResult): Record<string, unknown> {
  const data = Object.fromEntries(readdirSync(result.prepared.dir).sort().map((file) => [file, readFileSync(join(result.prepared.dir, file), 'utf8')]));
  return { data, splits: result.prepared.splits, byCategory: result.prepared.byCategory, tools: result.tools, rejects: [...result.rejects()], summary: result.summary };
}

describe('the publish gate made as the samples are written', () => {
  it('publishes what the gate over the files with the library made first publishes', () => {
    const early = new PublishGate({ ...options(mkdtempSync(join(tmpdir(), 'tk-gate-early-'))), library: null });
    for (const s of made()) early.add(s);
    const ended = early.end();
    expect('redo' in ended).toBe(false);
    const files = gateOverFiles(() => made(), options(mkdtempSync(join(tmpdir(), 'tk-gate-files-'))));
    const ours = published(ended as GateResult);
    expect(ours).toEqual(published(files));
    // It did check: a duplicate id and an argument out of range were rejected.
    expect((ours.summary as GateResult['summary']).rejected).toBe(2);
  });

  it('asks to be run again over the files when the library, known at the end, finds what it could not check', () => {
    // Two tools of one name that take other parameters: a finding only the library tells.
    const clash = sample('e', [call('GetWeather', { town: 'Oslo' })], [tool('GetWeather', { town: { type: 'string' } }, ['town'])]);
    // A call of a tool the sample does not offer: its words say whether the library has it.
    const notOffered = sample('f', [call('GetWeather', { city: 'Oslo' })], [hotel]);
    for (const extra of [[clash], [notOffered]]) {
      const early = new PublishGate({ ...options(mkdtempSync(join(tmpdir(), 'tk-gate-early-'))), library: null });
      for (const s of made(extra)) early.add(s);
      const ended = early.end();
      expect('redo' in ended).toBe(true);
      const again = gateOverFiles(() => made(extra), { ...options(mkdtempSync(join(tmpdir(), 'tk-gate-again-'))), library: (ended as { library: ToolSpec[] }).library });
      const first = gateOverFiles(() => made(extra), options(mkdtempSync(join(tmpdir(), 'tk-gate-files-'))));
      expect(published(again)).toEqual(published(first));
    }
  });
});
