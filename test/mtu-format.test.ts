import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { exportMtu } from '../stages/mtu/export.ts';
import { mtuRecordReader, parseMtuRecord, toMtuDoc, toMtuRecords } from '../stages/mtu/mtu-format.ts';
import { parsePythonLiteral } from '../core/python-literal.ts';
import { withMtuMeta } from '../stages/mtu/sample.ts';
import { fromData } from './fixtures/mtu/paths.ts';
import { call, handSample, round, tool } from './fixtures/mtu/samples.ts';
import { samplesInMemory } from '../core/sample-source.ts';

const released = (file: string) =>
  readFileSync(fromData(`reference/mtu-bench/${file}_eval.jsonl`), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { id: string; question: string; answer: unknown });

describe('Python literals', () => {
  it('reads what str(dict) prints, and JSON', () => {
    expect(parsePythonLiteral(`{'a': True, "b": None, 'c': [1, -2.5e1, 'it\\'s'], 'd': ('x',), 'e': "say \\"hi\\"\\n"}`)).toEqual({ a: true, b: null, c: [1, -25, "it's"], d: ['x'], e: 'say "hi"\n' });
    expect(parsePythonLiteral('{"x": false, "y": {"z": []}}')).toEqual({ x: false, y: { z: [] } });
    expect(() => parsePythonLiteral("{'a': 1")).toThrow(/expected "," or "}"/);
  });
});

describe('released MTU-Eval records', () => {
  it('all parse: tool document, history, current message and gold calls', () => {
    const figures: Record<string, number[]> = {};
    for (const file of ['S-S', 'S-M', 'M-S', 'M-M', 'OOD']) {
      const rows = released(file).map(parseMtuRecord);
      figures[file] = [rows.length, rows.filter((r) => r.tools.length).length, rows.reduce((n, r) => n + r.calls.length, 0), rows.reduce((n, r) => n + r.calls.reduce((m, c) => m + c.references.length, 0), 0), rows.filter((r) => r.history.length).length];
      expect(rows.every((r) => r.user.length > 0)).toBe(true);
    }
    // records, records with a tool list, gold calls, "Tool.field" values, records with history
    expect(figures).toEqual({
      'S-S': [104, 103, 78, 0, 0],
      'S-M': [94, 94, 315, 163, 0],
      'M-S': [473, 473, 234, 0, 388],
      'M-M': [266, 266, 197, 89, 187],
      OOD: [72, 72, 90, 37, 26],
    });
  });

  it('read no-call answers ({} and {"": {}}) as no call, and JSON-string arguments as arguments', () => {
    const ms = released('M-S').map(parseMtuRecord);
    expect(ms.find((r) => r.id === 'M-S_0_1')!.calls).toEqual([]);
    const ood = parseMtuRecord(released('OOD')[0]);
    expect(ood.calls).toEqual([{ tool: 'get_world_record', arguments: { record_category: 'biggest snake' }, references: [] }]);
    const mm = parseMtuRecord(released('M-M').find((r) => r.id === 'M-M_1_2')!);
    expect(mm.history.filter((t) => t.role === 'assistant').map((t) => t.calls ?? [])).toEqual([[], [{ tool: 'get_current_temperature', arguments: { location: 'living room' } }]]);
    expect(mm.calls[0].references).toEqual([{ parameter: 'temperature', tool: 'get_current_temperature', field: 'temperature' }]);
  });
});

describe('released MTU-Eval tool lists read once per file', () => {
  it('records showing the same tool list share what it reads to, and read as they do alone', () => {
    const memo = new Map<string, ReturnType<typeof parseMtuRecord>['tools']>();
    for (const file of ['S-S', 'M-S', 'M-M', 'OOD']) {
      memo.clear();
      const rows = released(file);
      const read = mtuRecordReader(memo);
      const shared = rows.map((row) => read(row));
      expect(shared).toEqual(rows.map((row) => parseMtuRecord(row)));
      // Each distinct list text read once: as many tool arrays as lists.
      expect(new Set(shared.map((r) => r.tools)).size).toBe(memo.size);
    }
    expect(memo.size).toBeLessThan(released('OOD').length);
  });
});

const search = tool('FindRestaurants', { city: {}, cuisine: {}, price_range: { enum: ['cheap', 'moderate'], default: 'dontcare' } }, ['city', 'cuisine'], ['restaurant_name', 'phone_number']);
const reserve = tool('ReserveRestaurant', { restaurant_name: {}, time: { format: 'time', pattern: '^\\d{1,2}:\\d{2}$' }, party_size: {} }, ['restaurant_name', 'time'], ['restaurant_name']);

describe('exported MTU records', () => {
  const chained = handSample('chain', [search, reserve], [
    round('Find a cheap Thai place in Oakland and book it for 2 at 19:00.', [
      call('call_0', 'FindRestaurants', { city: 'Oakland', cuisine: 'Thai', price_range: 'cheap' }),
      call('call_1', 'ReserveRestaurant', { restaurant_name: { $ref: 'call_0.restaurant_name' }, time: '19:00', party_size: '2' }),
    ]),
  ]);
  const dialogue = handSample('dialogue', [search, reserve], [
    round('I want Thai food.', [], undefined, 'Which city?'),
    round('Oakland.', [call('call_0', 'FindRestaurants', { city: 'Oakland', cuisine: 'Thai' })], { call_0: { restaurant_name: 'Kin Khao', phone_number: '555-0100' } }, 'Kin Khao is nice.'),
    round('Book it for 19:00.', [call('call_1', 'ReserveRestaurant', { restaurant_name: 'Kin Khao', time: '19:00' })], { call_1: { restaurant_name: 'Kin Khao' } }, 'Booked.'),
  ]);
  dialogue.dialogue[3].thought = 'The user gave the city, so I search.';

  it('write one record per answered user turn, answers as {Tool: {param: value}} with "Tool.field" and {"": {}}', () => {
    const [single] = toMtuRecords(chained, 0, '2019-03-01');
    expect(single.id).toBe('S-M_0');
    expect(single.answer).toEqual({
      FindRestaurants: { city: 'Oakland', cuisine: 'Thai', price_range: 'cheap' },
      ReserveRestaurant: { restaurant_name: 'FindRestaurants.restaurant_name', time: '19:00', party_size: '2' },
    });
    expect(single.question).toContain('Today is Friday, March 1, 2019.');
    const turns = toMtuRecords(dialogue, 3, '2019-03-01');
    expect(turns.map((r) => [r.id, r.answer])).toEqual([
      ['M-S_3_0', { '': {} }], // as the released S-S and M-S files write a turn without a call
      ['M-S_3_1', { FindRestaurants: { city: 'Oakland', cuisine: 'Thai' } }],
      ['M-S_3_2', { ReserveRestaurant: { restaurant_name: 'Kin Khao', time: '19:00' } }],
    ]);
  });

  it('parse back, with the same parser as the released files, to the samples they came from', () => {
    const parsed = parseMtuRecord(toMtuRecords(chained, 0, '2019-03-01')[0]);
    expect(parsed.tools).toEqual([toMtuDoc(search), toMtuDoc(reserve)]);
    expect(parsed.tools[0].required_parameters.map((p) => p.name)).toEqual(['city', 'cuisine']);
    expect(parsed.tools[0].optional_parameters).toEqual([{ name: 'price_range', type: 'string', enum: ['cheap', 'moderate'], default: 'dontcare' }]);
    expect(parsed.user).toBe(chained.dialogue[0].content);
    expect(parsed.history).toEqual([]);
    expect(parsed.calls.map((c) => c.tool)).toEqual(['FindRestaurants', 'ReserveRestaurant']);
    expect(parsed.calls[1].references).toEqual([{ parameter: 'restaurant_name', tool: 'FindRestaurants', field: 'restaurant_name' }]);

    const last = parseMtuRecord(toMtuRecords(dialogue, 0, '2019-03-01')[2]);
    expect(last.user).toBe('Book it for 19:00.');
    expect(last.history).toEqual([
      { role: 'user', content: 'I want Thai food.' },
      { role: 'assistant', content: 'Which city?' },
      { role: 'user', content: 'Oakland.' },
      {
        role: 'assistant',
        content: 'Kin Khao is nice.',
        thought: 'The user gave the city, so I search.',
        calls: [{ tool: 'FindRestaurants', arguments: { city: 'Oakland', cuisine: 'Thai' } }],
        observations: [{ restaurant_name: 'Kin Khao', phone_number: '555-0100' }],
      },
    ]);
    // The same shape as a released multi-turn record.
    const releasedRecord = parseMtuRecord(released('M-S').find((r) => r.id === 'M-S_0_4')!);
    expect(Object.keys(last).sort()).toEqual(Object.keys(releasedRecord).sort());
    expect(Object.keys(last.history[3]).sort()).toEqual(Object.keys(releasedRecord.history[1]).sort());
  });

  it('go to one file per setting and split, with an index of samples and hard rules', async () => {
    const out = mkdtempSync(join(tmpdir(), 'tk-mtu-export-'));
    const hard = withMtuMeta({ ...chained, id: 'hard', meta: { ...chained.meta, tags: ['hard', 'hard:many-tools'] } }, { hard: ['many-tools'], today: '2024-01-04' });
    const ood = { ...dialogue, id: 'ood', split: 'ood' };
    const train = { ...chained, id: 'train', split: 'train' };
    await exportMtu(samplesInMemory([chained, dialogue, hard, ood, train]), [], out);
    expect(readdirSync(out).sort()).toEqual(['M-S_eval.jsonl', 'OOD_eval.jsonl', 'S-M_eval.jsonl', 'S-M_train.jsonl', 'index.jsonl']);
    const rows = (f: string) => readFileSync(join(out, f), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(rows('S-M_eval.jsonl').map((r) => r.id)).toEqual(['S-M_0', 'S-M_1']);
    expect(rows('OOD_eval.jsonl').map((r) => r.id)).toEqual(['OOD_0_0', 'OOD_0_1', 'OOD_0_2']);
    expect(rows('S-M_eval.jsonl')[1].question).toContain('Today is Thursday, January 4, 2024.');
    const index = rows('index.jsonl');
    expect(index.find((r) => r.sample === 'hard')).toMatchObject({ id: 'S-M_1', file: 'S-M_eval.jsonl', hard: ['many-tools'] });
    for (const file of ['M-S_eval.jsonl', 'OOD_eval.jsonl', 'S-M_eval.jsonl', 'S-M_train.jsonl']) for (const r of rows(file)) expect(() => parseMtuRecord(r)).not.toThrow();
  });
});
