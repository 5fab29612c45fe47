import { describe, expect, it } from 'vitest';
import { applyScanStage } from '../core/stage.ts';
import type { Sample } from '../core/records.ts';
import { candidateToolsStage } from '../stages/mtu/candidates.ts';
import { hardRules, hardSetStage, withNonsensicalName, withoutSuitableTool } from '../stages/mtu/hard.ts';
import { ToolLibrary, toolReference } from '../stages/mtu/library.ts';
import { allCalls, categoryOf, mtuMeta } from '../stages/mtu/sample.ts';
import { Rng } from '../core/rng.ts';
import { stageContext } from './fixtures/mtu/context.ts';
import { call, handSample, round, tool } from './fixtures/mtu/samples.ts';

const weather = tool('GetWeather', { city: {}, date: { format: 'date' } }, ['city'], ['temperature', 'city']);
const music = tool('LookupMusic', { genre: {} }, [], ['song_name', 'artist']);
const play = tool('PlayMedia', { song_name: {}, playback_device: {} }, ['song_name'], ['song_name']);
const hotel = tool('SearchHotel', { area: {}, price_range: { enum: ['cheap', 'moderate', 'expensive'] } }, [], ['name']);
const limits = { maxParameters: 6, maxToolsPerTurn: 4 };

describe('settings (S-S, S-M, M-S, M-M)', () => {
  it('follow the number of user turns and the calls per turn', () => {
    const ss = handSample('ss', [weather], [round('weather in Paris?', [call('c0', 'GetWeather', { city: 'Paris' })])]);
    const ssNone = handSample('ss0', [weather], [round('hello')]);
    const sm = handSample('sm', [weather, music], [round('weather in Paris and some jazz', [call('c0', 'GetWeather', { city: 'Paris' }), call('c1', 'LookupMusic', { genre: 'jazz' })])]);
    const ms = handSample('ms', [music, play], [round('find music', [call('c0', 'LookupMusic')]), round('play it', [call('c1', 'PlayMedia', { song_name: 'x' })])]);
    const mm = handSample('mm', [weather, music, play], [round('find music', [call('c0', 'LookupMusic')]), round('play it and tell me the weather in Rome', [call('c1', 'PlayMedia', { song_name: 'x' }), call('c2', 'GetWeather', { city: 'Rome' })])]);
    const msNoCalls = handSample('ms0', [music], [round('hi'), round('find music', [call('c0', 'LookupMusic')]), round('thanks')]);
    expect([ss, ssNone, sm, ms, mm, msNoCalls].map(categoryOf)).toEqual(['S-S', 'S-S', 'S-M', 'M-S', 'M-M', 'M-S']);
  });
});

describe('hard rules (Table 8)', () => {
  it('extensive parameters: more than six arguments in one call', () => {
    const args = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`p${i}`, `v${i}`]));
    const wide = tool('BookFlight', Object.fromEntries(Object.keys(args(7)).map((p) => [p, {}])));
    expect(hardRules(handSample('a', [wide], [round('book it', [call('c0', 'BookFlight', args(7))])]), limits)).toEqual(['extensive-parameters']);
    expect(hardRules(handSample('b', [wide], [round('book it', [call('c0', 'BookFlight', args(6))])]), limits)).toEqual([]);
  });

  it('values restricted to choices: an enum value the user did not say verbatim', () => {
    const mapped = handSample('a', [hotel], [round('a mid-range hotel in the centre', [call('c0', 'SearchHotel', { area: 'centre', price_range: 'moderate' })])]);
    const verbatim = handSample('b', [hotel], [round('a moderate hotel in the centre', [call('c0', 'SearchHotel', { area: 'centre', price_range: 'moderate' })])]);
    expect(hardRules(mapped, limits)).toEqual(['choice-restricted-values']);
    expect(hardRules(verbatim, limits)).toEqual([]);
  });

  it('interaction among many tools: more than four calls in one turn', () => {
    const tools = ['A', 'B', 'C', 'D', 'E'].map((n) => tool(`Get${n}`));
    const calls = (n: number) => tools.slice(0, n).map((t, i) => call(`c${i}`, t.name));
    expect(hardRules(handSample('a', tools, [round('all of it', calls(5))]), limits)).toEqual(['many-tools']);
    expect(hardRules(handSample('b', tools, [round('all of it', calls(4))]), limits)).toEqual([]);
  });

  it('multi-turn parameter inheritance: a value from an earlier turn, not from the current message', () => {
    const inherited = handSample('a', [music, play], [
      round('Find some music please.', [call('c0', 'LookupMusic')], { c0: { song_name: 'Be My Baby', artist: 'Ariana Grande' } }, 'How about Be My Baby by Ariana Grande?'),
      round('That sounds good.', [], undefined, 'Should I play this now?'),
      round('Yes. Play on kitchen speaker please.', [call('c1', 'PlayMedia', { playback_device: 'kitchen speaker', song_name: 'Be My Baby' })]),
    ]);
    const stated = handSample('b', [music, play], [
      round('Find some music please.', [call('c0', 'LookupMusic')], { c0: { song_name: 'Be My Baby' } }),
      round('Play Be My Baby on the kitchen speaker.', [call('c1', 'PlayMedia', { playback_device: 'kitchen speaker', song_name: 'Be My Baby' })]),
    ]);
    expect(hardRules(inherited, limits)).toEqual(['parameter-inheritance']);
    expect(hardRules(stated, limits)).toEqual([]);
  });

  it('nonsensical tool names and no suitable tool are variants of a test sample', () => {
    const base = handSample('base', [toolReference(weather), toolReference(music)], [round('weather in Paris?', [call('c0', 'GetWeather', { city: 'Paris' })])]);
    const renamed = withNonsensicalName(base, new Rng(3));
    const name = allCalls(renamed)[0].tool;
    expect(name).toMatch(/^[a-z]{3,5}$/);
    expect(renamed.tools.map((t) => t.name)).toEqual([name, 'LookupMusic']);
    expect(mtuMeta(renamed)).toMatchObject({ variantOf: 'base', renamed: { [name]: 'GetWeather' } });
    expect(renamed.id).not.toBe(base.id);

    const none = withoutSuitableTool(base);
    expect(none.tools.map((t) => t.name)).toEqual(['LookupMusic']);
    expect(none.expected.calls).toEqual([]);
    expect(none.dialogue[1].calls).toBeUndefined();
    expect(none.dialogue[1].thought).toMatch(/none of the available APIs/);
    expect(mtuMeta(none).withheld).toEqual(['GetWeather']);
    expect(categoryOf(none)).toBe('S-S');
  });
});

describe('hard set and candidate lists', () => {
  it('tag test samples with their rules, leave train alone, and show renamed / withheld tools as documented', async () => {
    const ctx = stageContext();
    ToolLibrary.of([weather, music, play, hotel]).save(ctx.runDir);
    const ref = (t: typeof weather) => toolReference(t);
    const samples: Sample[] = [
      handSample('t1', [ref(hotel)], [round('a mid-range hotel', [call('c0', 'SearchHotel', { price_range: 'moderate' })])]),
      handSample('t2', [ref(weather)], [round('weather in Paris?', [call('c0', 'GetWeather', { city: 'Paris' })])]),
      handSample('tr', [ref(hotel)], [round('a mid-range hotel', [call('c0', 'SearchHotel', { price_range: 'moderate' })])], 'train'),
    ];
    const hard = await applyScanStage(hardSetStage({ ...limits, nonsensicalNameRate: 1, noSuitableToolRate: 1 }), samples, ctx);
    const byId = (id: string) => hard.out.find((s) => s.id === id)!;
    expect(byId('t1').meta.tags).toEqual(['hard', 'hard:choice-restricted-values']);
    expect(byId('t2').meta.tags).toEqual([]);
    expect(byId('tr').meta.tags).toEqual([]);
    const variants = hard.out.filter((s) => mtuMeta(s).variantOf);
    // Two test samples: each a renamed variant, and each (single-tool S-S) a no-suitable-tool variant.
    expect(variants.map((s) => mtuMeta(s).hard)).toEqual([
      ['choice-restricted-values', 'nonsensical-tool-name'],
      ['no-suitable-tool'],
      ['nonsensical-tool-name'],
      ['no-suitable-tool'],
    ]);
    expect(ctx.reports.hardSet).toMatchObject({ samples: 5, byRule: { 'no-suitable-tool': 2, 'nonsensical-tool-name': 2, 'choice-restricted-values': 2 } });

    const listed = await applyScanStage(candidateToolsStage({ max: 4, distractors: 0 }), hard.out, ctx);
    for (const sample of listed.out) {
      const { renamed = {}, withheld = [] } = mtuMeta(sample);
      for (const gold of allCalls(sample)) expect(sample.tools.map((t) => t.name)).toContain(gold.tool);
      for (const name of withheld) expect(sample.tools.map((t) => t.name)).not.toContain(name);
      for (const [shown, documented] of Object.entries(renamed)) {
        const entry = sample.tools.find((t) => t.name === shown)!;
        expect(entry.parameters).toEqual([weather, hotel].find((t) => t.name === documented)!.parameters);
      }
      expect(sample.tools.length).toBeGreaterThan(0);
    }
    // A tool shown under its own name is the library's entry itself, one object in every sample that offers it.
    const offered = (id: string) => listed.out.find((s) => s.id === id)!.tools.find((t) => t.name === 'SearchHotel');
    expect(offered('t1')).toBeDefined();
    expect(offered('t1')).toBe(offered('tr'));
    // The withheld tool's service still fills the list with its other tools.
    const noTool = listed.out.find((s) => mtuMeta(s).withheld?.includes('GetWeather'))!;
    expect(noTool.tools.map((t) => t.name).sort()).toEqual(['LookupMusic', 'PlayMedia', 'SearchHotel']);
  });
});
