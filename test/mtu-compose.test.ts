import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Sample } from '../core/records.ts';
import { applyScanStage } from '../core/stage.ts';
import { mtuComposePrompt } from '../prompts/mtu-compose.ts';
import { askMessages, composeStage, findChain, type Job } from '../stages/mtu/compose.ts';
import { allCalls, categoryOf, mtuMeta } from '../stages/mtu/sample.ts';
import { stageContext } from './fixtures/mtu/context.ts';
import { call, handSample, round, tool } from './fixtures/mtu/samples.ts';

const search = tool('SearchHotel', { location: {} }, ['location'], ['place_name', 'location']);
const reserve = tool('ReserveHotel', { place_name: {}, stay_length: {} }, ['place_name'], ['place_name']);
const weather = tool('GetWeather', { city: {} }, ['city'], ['temperature'], 'weather');
const music = tool('PlayMusic', { song: {} }, [], [], 'music');

const booking = (userNamesHotel: boolean) =>
  handSample('booking', [search, reserve], [
    round(userNamesHotel ? 'Find the Grand Hotel in Paris.' : 'Find me a hotel in Paris.', [call('call_0', 'SearchHotel', { location: 'Paris' })], { call_0: { place_name: 'Grand Hotel', location: 'Paris' } }, 'The Grand Hotel is nice.'),
    round('Book it for 2 nights.', [call('call_1', 'ReserveHotel', { place_name: 'Grand Hotel', stay_length: '2' })], { call_1: { place_name: 'Grand Hotel' } }, 'Booked.'),
  ]);

describe('chains', () => {
  it('link a later argument to an earlier result the user could not have known', () => {
    expect(findChain(booking(false))).toMatchObject({ first: { turn: 1 }, second: { turn: 3 }, links: { place_name: 'place_name' } });
    // Named by the user before the search: no dependency on the result.
    expect(findChain(booking(true))).toBeUndefined();
  });
});

describe('multi-tool composition', () => {
  it('writes chained and independent S-M samples and M-M samples, within one split', async () => {
    const singles = [
      handSample('w1', [weather], [round('Weather in Rome?', [call('call_0', 'GetWeather', { city: 'Rome' })])]),
      handSample('m1', [music], [round('Play Yesterday.', [call('call_0', 'PlayMusic', { song: 'Yesterday' })])]),
    ];
    const other = handSample('w2', [weather], [round('Weather in Oslo?', [call('call_0', 'GetWeather', { city: 'Oslo' })])], 'train');
    const ctx = stageContext();
    const { out } = await applyScanStage(composeStage({ singleTurnRate: 1, minTools: 2, maxTools: 2, chainRate: 1, multiTurnRate: 1, chainMultiTurnRate: 1, linkRate: 0 }), [booking(false), ...singles, other], ctx);
    const made = out.filter((s) => mtuMeta(s).composedFrom);
    const kind = (k: string) => made.filter((s) => s.meta.tags.includes(`composed:${k}`));

    const [chained] = kind('chained');
    expect(categoryOf(chained)).toBe('S-M');
    expect(allCalls(chained).map((c) => [c.tool, c.arguments])).toEqual([
      ['SearchHotel', { location: 'Paris' }],
      ['ReserveHotel', { place_name: { $ref: 'call_0.place_name' }, stay_length: '2' }],
    ]);
    expect(chained.dialogue[0].content).toMatch(/^Find me a hotel in Paris.*book it for 2 nights\.$/);
    expect(chained.dialogue[1].observations).toEqual({ call_0: { place_name: 'Grand Hotel', location: 'Paris' }, call_1: { place_name: 'Grand Hotel' } });

    const independent = kind('independent');
    expect(independent.length).toBeGreaterThan(0);
    for (const s of independent) {
      expect(s.split).toBe('test'); // never mixed with the train sample
      expect(allCalls(s).map((c) => c.tool).sort()).toEqual(['GetWeather', 'PlayMusic']);
      expect(new Set(allCalls(s).map((c) => c.id)).size).toBe(2);
      expect(s.dialogue[0].content).toMatch(/Weather in Rome.*Play Yesterday|Play Yesterday.*Weather in Rome/i);
    }

    const [multi] = kind('multi-turn');
    expect(categoryOf(multi)).toBe('M-M');
    const turn = multi.dialogue.findIndex((t) => (t.calls?.length ?? 0) > 1);
    expect(multi.dialogue[turn].content).toBe(''); // the reply is written again for both requests
    expect(multi.tools.map((t) => t.name)).toEqual(expect.arrayContaining(['SearchHotel', 'ReserveHotel']));
    expect(new Set(made.map((s) => s.id)).size).toBe(made.length);
    expect(out.length).toBe(4 + made.length);
    expect(ctx.reports.composition).toMatchObject({ made: { chained: 1, 'multi-turn': 1 } });
  });
});

describe('composition planning', () => {
  it('reads its input once, the dialogues it plans from kept on disk for the second pass', async () => {
    const records = [booking(false), handSample('w1', [weather], [round('Weather in Rome?', [call('call_0', 'GetWeather', { city: 'Rome' })])]), handSample('m1', [music], [round('Play Yesterday.', [call('call_0', 'PlayMusic', { song: 'Yesterday' })])])];
    const options = { singleTurnRate: 1, minTools: 2, maxTools: 2, chainRate: 1, multiTurnRate: 1, chainMultiTurnRate: 1, linkRate: 0 };
    let passes = 0;
    // As the runner gives `collect` its input: each pass reads it again.
    const input: Iterable<Sample> = {
      [Symbol.iterator]: () => {
        passes++;
        return records[Symbol.iterator]();
      },
    };
    const stage = composeStage(options);
    const ctx = stageContext();
    const state = await stage.collect!(input, ctx);
    try {
      expect(passes).toBe(1);
      expect(Array.from({ length: state.jobs.length }, (_, k) => state.jobs.get(k).kind).sort()).toEqual(['chained', 'independent', 'multi-turn']);
    } finally {
      await stage.dispose!(state);
    }
  });
});

describe('dependent calls in joined requests', () => {
  it('turns a chain inside a longer dialogue into an M-M turn whose second call takes the first one\'s result', async () => {
    const dialogue = booking(false);
    dialogue.dialogue.push({ role: 'user', content: 'Thanks, that is all.' }, { role: 'assistant', content: 'Bye.', calls: [] });
    dialogue.expected.turns = { ...dialogue.expected.turns, '5': [] };
    const ctx = stageContext();
    const { out } = await applyScanStage(composeStage({ singleTurnRate: 0, minTools: 2, maxTools: 2, chainRate: 0, multiTurnRate: 0, chainMultiTurnRate: 1, linkRate: 0 }), [dialogue], ctx);
    const [made] = out.filter((s) => s.meta.tags.includes('composed:chained-multi-turn'));
    expect(categoryOf(made)).toBe('M-M');
    expect(made.dialogue.map((t) => t.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(made.dialogue[1].calls!.map((c) => [c.tool, c.arguments])).toEqual([
      ['SearchHotel', { location: 'Paris' }],
      ['ReserveHotel', { place_name: { $ref: 'chain_0.place_name' }, stay_length: '2' }],
    ]);
    expect(made.dialogue[2].content).toBe('Thanks, that is all.');
  });

  it('links a joined request\'s parameter named like an earlier call\'s result field, the request saying "that one"', async () => {
    const find = tool('FindCity', { country: {} }, ['country'], ['city']);
    const singles = [
      handSample('f1', [find], [round('Which city in France is biggest?', [call('call_0', 'FindCity', { country: 'France' })])]),
      handSample('w1', [weather], [round('Weather in Rome?', [call('call_0', 'GetWeather', { city: 'Rome' })])]),
    ];
    const ctx = stageContext();
    const { out } = await applyScanStage(composeStage({ singleTurnRate: 1, minTools: 2, maxTools: 2, chainRate: 0, multiTurnRate: 0, chainMultiTurnRate: 0, linkRate: 1 }), singles, ctx);
    const [joined] = out.filter((s) => s.meta.tags.includes('composed:independent'));
    const calls = allCalls(joined);
    const [first, second] = calls[0].tool === 'FindCity' ? calls : [calls[1], calls[0]];
    if (calls[0].tool === 'FindCity') {
      expect(second.arguments).toEqual({ city: { $ref: `${first.id}.city` } });
      expect(joined.dialogue[0].content).toMatch(/weather in that one/i);
    } else {
      expect(first.arguments).toEqual({ city: 'Rome' }); // the weather request came first: nothing earlier to take
    }
  });
});

describe('what the composition keeps while it waits for its samples', () => {
  const options = { singleTurnRate: 1, minTools: 2, maxTools: 2, chainRate: 1, multiTurnRate: 1, chainMultiTurnRate: 1, linkRate: 0 };
  const inputs = () => [
    booking(false),
    // The same dialogue twice: its job is made once.
    booking(false),
    handSample('w1', [weather], [round('Weather in Rome?', [call('call_0', 'GetWeather', { city: 'Rome' })])]),
    handSample('m1', [music], [round('Play Yesterday.', [call('call_0', 'PlayMusic', { song: 'Yesterday' })])]),
  ];
  const keptFiles = (runDir: string) => (existsSync(join(runDir, 'mtu')) ? readdirSync(join(runDir, 'mtu')).filter((f) => f.startsWith('compose-')).sort() : []);

  it('keeps its jobs and their messages as plain data in files of the run folder, and removes every file once its samples are made', async () => {
    const ctx = stageContext();
    const stage = composeStage(options);
    const samples = inputs();
    const state = await stage.collect!(samples, ctx);
    expect(keptFiles(ctx.runDir)).toEqual([expect.stringMatching(/^compose-(all-)?jobs\.json$/), 'compose-messages.json']);
    // No function (a job's build) nor sample in memory: the state clones as data.
    expect(() => structuredClone(state)).not.toThrow();
    for (const sample of samples) await stage.run(sample, { ...ctx, key: sample.id, state });
    expect(keptFiles(ctx.runDir)).toContain('compose-sources.json');
    const made = [...((await stage.finish!(state, ctx)) as Iterable<Sample>)];
    await stage.dispose!(state);
    expect(keptFiles(ctx.runDir)).toEqual([]);
    expect(made.map((s) => s.meta.tags.find((t) => t.startsWith('composed:'))).sort()).toEqual(['composed:chained', 'composed:independent', 'composed:multi-turn']);
    expect(ctx.reports.composition).toEqual({ made: { chained: 1, independent: 1, 'multi-turn': 1 }, failed: {} });
  });

  it('removes its files when the run fails before its samples are made', async () => {
    const ctx = stageContext();
    const stage = composeStage(options);
    const samples = inputs();
    const state = await stage.collect!(samples, ctx);
    for (const sample of samples.slice(0, 2)) await stage.run(sample, { ...ctx, key: sample.id, state });
    await stage.dispose?.(state);
    expect(keptFiles(ctx.runDir)).toEqual([]);
  });
});

describe('asking for the jobs\' messages', () => {
  it('keeps a bounded number of requests waiting (each holds its prompt) and answers in the jobs\' order', async () => {
    const ctx = stageContext();
    const offline = ctx.llm;
    let waiting = 0;
    let most = 0;
    // Answers come back on a later turn of the event loop, as an endpoint's do.
    const llm = {
      ...offline,
      generate: (async (prompt, vars, options) => {
        most = Math.max(most, ++waiting);
        await new Promise((resolve) => setImmediate(resolve));
        waiting--;
        return offline.generate(prompt, vars, options);
      }) as typeof offline.generate,
    };
    const jobs: Job[] = Array.from({ length: 2000 }, (_, k) => ({ id: `job-${k}`, kind: 'independent', parts: [`Weather in city ${k}?`, `Play song ${k}.`], sources: [], links: [] }));
    const { asked, failures } = await askMessages(jobs, { ...ctx, llm, stage: { name: 'compose-multi-tool', version: 3, prompts: [mtuComposePrompt] } });
    expect(failures).toEqual([]);
    expect(asked.map((a) => a.job.id)).toEqual(jobs.map((j) => j.id));
    expect(asked.every((a) => typeof a.written?.message === 'string' && a.written.message.length > 0)).toBe(true);
    expect(most).toBeGreaterThan(1);
    expect(most).toBeLessThanOrEqual(256);
  });
});
