import { describe, expect, it } from 'vitest';
import type { Sample } from '../core/records.ts';
import { isReject } from '../core/stage.ts';
import { ToolLibrary, toolReference } from '../stages/mtu/library.ts';
import { reconcile, synthesizeReactStage } from '../stages/mtu/react.ts';
import { stageContext } from './fixtures/mtu/context.ts';
import { call, handSample, round, tool } from './fixtures/mtu/samples.ts';

describe('observation consistency', () => {
  it('echoes arguments and keeps what an earlier result said about the same entity', () => {
    const earlier = [{ restaurant_name: 'Kin Khao', phone_number: '555-0100', city: 'Oakland' }];
    const simulated = { restaurant_name: 'Other', phone_number: '000', time: '18:00', city: 'Berkeley' };
    expect(reconcile(simulated, { restaurant_name: 'Kin Khao', time: '19:00' }, earlier)).toEqual({ restaurant_name: 'Kin Khao', phone_number: '555-0100', time: '19:00', city: 'Oakland' });
    // Another entity: nothing carried over.
    expect(reconcile(simulated, { restaurant_name: 'Nopa' }, earlier)).toEqual({ ...simulated, restaurant_name: 'Nopa' });
  });
});

describe('ReAct synthesis', () => {
  it('adds thoughts, keeps real observations, simulates the rest from the documented returns, and fills missing replies', async () => {
    const find = tool('FindRestaurants', { city: {}, cuisine: {} }, ['city'], ['restaurant_name', 'phone_number', 'city']);
    const book = tool('ReserveRestaurant', { restaurant_name: {}, time: { format: 'time', pattern: '^\\d{1,2}:\\d{2}$' } }, ['restaurant_name', 'time'], ['restaurant_name', 'phone_number', 'time', 'confirmation']);
    const ctx = stageContext('react');
    ToolLibrary.of([find, book]).save(ctx.runDir);
    const sample: Sample = handSample('r', [toolReference(find), toolReference(book)], [
      round('Thai food please.', [], undefined, 'In which city?'),
      round('Oakland.', [call('call_0', 'FindRestaurants', { city: 'Oakland', cuisine: 'Thai' })], { call_0: { restaurant_name: 'Kin Khao', phone_number: '555-0100', city: 'Oakland' } }, 'Kin Khao is good.'),
      round('Book it at 19:00.', [call('call_1', 'ReserveRestaurant', { restaurant_name: 'Kin Khao', time: '19:00' })], undefined, ''),
    ]);
    const out = (await synthesizeReactStage({ today: '2019-03-01', multiwozDir: '' }).run(sample, ctx)) as Sample;
    expect(isReject(out)).toBe(false);
    const [a1, a3, a5] = [1, 3, 5].map((i) => out.dialogue[i]);
    expect([a1, a3, a5].every((t) => t.thought)).toBe(true);
    expect(a1.thought).toMatch(/missing|ask/);
    expect(a3.observations).toEqual({ call_0: { restaurant_name: 'Kin Khao', phone_number: '555-0100', city: 'Oakland' } });
    const simulated = a5.observations!.call_1 as Record<string, unknown>;
    expect(Object.keys(simulated).sort()).toEqual(['confirmation', 'phone_number', 'restaurant_name', 'time']);
    expect(simulated).toMatchObject({ restaurant_name: 'Kin Khao', time: '19:00', phone_number: '555-0100' });
    expect(a3.response).toBe('Kin Khao is good.');
    expect(a5.response).toBeTruthy();
    // Tool references stay references; the full entries live in the library.
    expect(out.tools).toEqual(sample.tools);
    expect(out.meta.lineage.map((l) => l.prompt)).toEqual(['mtu/thought', 'mtu/observation']);
  });
});
