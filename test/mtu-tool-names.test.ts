import { describe, expect, it } from 'vitest';
import { Sample } from '../core/records.ts';
import { applyScanStage } from '../core/stage.ts';
import { distinguishedToolNames } from '../stages/mtu/names.ts';
import { unifyToolSpecsStage } from '../stages/mtu/unify-tool-specs.ts';
import { sample, stageContext, tool } from './fixtures/embed/samples.ts';

const named = (names: Map<number, string>) => Object.fromEntries([...names].sort((a, b) => a[0] - b[0]));

describe('tool names distinguished by plugin', () => {
  it('gives every variant of a shared name the words in which their plugins differ, or their source', () => {
    const tools = [
      { name: 'FindRestaurants', plugin: 'Restaurants_2', source: 'sgd' },
      { name: 'GetRide', plugin: 'RideSharing_1', source: 'sgd' },
      { name: 'FindRestaurants', plugin: 'Restaurants_1', source: 'sgd' },
      { name: 'FindRestaurant', plugin: 'restaurant', source: 'multiwoz' },
      { name: 'findrestaurant', plugin: 'shop', source: 'shop' },
    ];
    expect(named(distinguishedToolNames(tools))).toEqual({ 0: 'FindRestaurants2', 2: 'FindRestaurants1', 3: 'FindRestaurantMultiwoz', 4: 'findrestaurantShop' });
    // The same names whatever the order.
    expect(named(distinguishedToolNames([...tools].reverse()))).toEqual({ 4: 'FindRestaurants2', 2: 'FindRestaurants1', 1: 'FindRestaurantMultiwoz', 0: 'findrestaurantShop' });
    // Two services of one source beside another source: the whole plugins tell all three apart.
    expect(named(distinguishedToolNames([...tools.slice(0, 3), { name: 'FindRestaurants', plugin: 'shop', source: 'shop' }]))).toEqual({ 0: 'FindRestaurantsRestaurants2', 2: 'FindRestaurantsRestaurants1', 3: 'FindRestaurantsShop' });
  });

  it('falls back to source and plugin, then a number, and never takes a name another tool has', () => {
    // Suffix `1` would give Find1, which a third tool already has.
    expect(named(distinguishedToolNames([{ name: 'Find', plugin: 'Shop_1', source: 's' }, { name: 'Find', plugin: 'Shop_2', source: 's' }, { name: 'find1', plugin: 'x' }]))).toEqual({ 0: 'FindSShop1', 1: 'FindSShop2' });
    // No plugin at all, or plugins alike but for case: numbered in plugin order (`Web` before `web`).
    expect(named(distinguishedToolNames([{ name: 'Search' }, { name: 'search' }]))).toEqual({ 0: 'Search1', 1: 'search2' });
    expect(named(distinguishedToolNames([{ name: 'Search', plugin: 'web' }, { name: 'Search', plugin: 'Web' }]))).toEqual({ 0: 'SearchWeb2', 1: 'SearchWeb1' });
    const names = [...distinguishedToolNames([{ name: 'A', plugin: 'p' }, { name: 'a', plugin: 'q' }, { name: 'Ap' }, { name: 'AQ', plugin: 'z' }]).values()];
    expect(new Set([...names, 'Ap', 'AQ'].map((n) => n.toLowerCase())).size).toBe(names.length + 2);
  });
});

describe('unify-tool-specs: one name per tool', () => {
  const call = (id: string, name: string, args: Record<string, string>) => ({ id, tool: name, arguments: args });
  const service = (name: string, plugin: string, parameters: string[], description = '') => ({ ...tool(name, parameters, description), plugin, provenance: { source: 'sgd', id: `${plugin}/${name}`, schema: true } });
  const find1 = service('FindRestaurants', 'Restaurants_1', ['city', 'cuisine'], 'Find a restaurant of a cuisine in a city');
  const find2 = service('FindRestaurants', 'Restaurants_2', ['location', 'category'], 'Find restaurants by location and category');
  const reserve1 = service('ReserveRestaurant', 'Restaurants_1', ['restaurant_name', 'time']);
  const ride = service('GetRide', 'RideSharing_1', ['destination']);

  it('renames same-named tools of different plugins in tool lists, calls, expected turns and thoughts; keeps the created name in provenance', async () => {
    const first = Sample.parse({
      ...sample('s1', 'Thai food in Oakland, then book it', { tools: [find1, reserve1], calls: [call('c0', 'FindRestaurants', { city: 'Oakland', cuisine: 'Thai' })] }),
      dialogue: [
        { role: 'user', content: 'Thai food in Oakland' },
        { role: 'assistant', content: '', thought: 'FindRestaurants fits; FindRestaurantsX does not exist.', calls: [call('c0', 'FindRestaurants', { city: 'Oakland', cuisine: 'Thai' })] },
      ],
      expected: { calls: [call('c0', 'FindRestaurants', { city: 'Oakland', cuisine: 'Thai' })], turns: { '1': [call('c0', 'FindRestaurants', { city: 'Oakland', cuisine: 'Thai' })] } },
    });
    const second = sample('s2', 'Pizza downtown', { tools: [find2, ride], calls: [call('c0', 'FindRestaurants', { location: 'downtown', category: 'Pizza' })] });
    const untouched = sample('s3', 'A ride home', { tools: [ride], calls: [call('c0', 'GetRide', { destination: 'home' })] });
    const { ctx, reports } = stageContext();
    const { out, rejects } = await applyScanStage(unifyToolSpecsStage(), [first, second, untouched], ctx);
    expect(rejects).toEqual([]);
    out.forEach((s) => Sample.parse(s));
    const [a, b, c] = out;
    expect(a.tools.map((t) => t.name)).toEqual(['FindRestaurants1', 'ReserveRestaurant']);
    expect(a.tools[0]).toMatchObject({ plugin: 'Restaurants_1', description: find1.description, provenance: { source: 'sgd', id: 'Restaurants_1/FindRestaurants', schema: true, originalName: 'FindRestaurants' } });
    expect(a.dialogue[1].calls!.map((x) => x.tool)).toEqual(['FindRestaurants1']);
    expect(a.expected.calls!.map((x) => x.tool)).toEqual(['FindRestaurants1']);
    expect(a.expected.turns!['1'].map((x) => x.tool)).toEqual(['FindRestaurants1']);
    expect(a.dialogue[1].thought).toBe('FindRestaurants1 fits; FindRestaurantsX does not exist.');
    expect(b.tools.map((t) => t.name)).toEqual(['FindRestaurants2', 'GetRide']);
    expect(b.expected.calls!.map((x) => x.tool)).toEqual(['FindRestaurants2']);
    expect(c.tools).toEqual(untouched.tools);
    expect(c.expected).toEqual(untouched.expected);
    expect(reports.toolsCreated).toEqual({
      tools: 4,
      names: 3,
      distinguished: [
        { name: 'FindRestaurants1', originalName: 'FindRestaurants', plugin: 'Restaurants_1' },
        { name: 'FindRestaurants2', originalName: 'FindRestaurants', plugin: 'Restaurants_2' },
      ],
    });
  });

  it('rejects a sample offering two tools of one name, whose calls cannot say which they mean', async () => {
    const both = sample('s4', 'Find a restaurant', { tools: [find1, find2], calls: [call('c0', 'FindRestaurants', { city: 'Oakland' })] });
    const { ctx } = stageContext();
    const { out, rejects } = await applyScanStage(unifyToolSpecsStage(), [both], ctx);
    expect(out).toEqual([]);
    expect(rejects).toEqual([expect.objectContaining({ reason: 'ambiguous_tool_name', detail: expect.stringContaining('two tools named FindRestaurants (plugins Restaurants_1, Restaurants_2)') })]);
  });
});
