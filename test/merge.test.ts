import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UserError } from '../core/errors.ts';
import { Sample } from '../core/records.ts';
import { applyScanStage } from '../core/stage.ts';
import { AUTO_MERGE_TAG, DECOMPOSE_UNASSIGNED_TAG, mergeToolsMetatoolStage, readDecisionsCsv } from '../stages/merge-tools-metatool.ts';
import { planOverlap } from '../stages/merge-tools-metatool-decisions.ts';
import { MERGE_CONFLICT_TAG, mergeToolsMtuStage } from '../stages/merge-tools-mtu.ts';
import { eachCall, mapCalls } from '../stages/tool-merge.ts';
import { sample, stageContext, tool } from './fixtures/embed/samples.ts';

describe('MTU-style merging', () => {
  const searchMovie = tool('search_movie', ['title', 'year?']);
  const findMovie = tool('find_movie', ['movie_title', 'year?']);
  const lookupFilm = tool('lookupFilm', ['film_title', 'language?']);
  const bookHotel = tool('book_hotel', ['city', 'check_in_date']);
  const reserveHotel = tool('reserve_hotel', ['city', 'check_in_date', 'guests']);
  const getWeather = tool('get_weather', ['city']);
  const call = (id: string, name: string, args: Record<string, string>) => ({ id, tool: name, arguments: args });
  const samples = [
    sample('m1', 'Find the movie Up', { tools: [searchMovie, getWeather], calls: [call('c1', 'search_movie', { title: 'Up' })] }),
    sample('m2', 'Look up Heat from 1995', { tools: [searchMovie], calls: [call('c1', 'search_movie', { title: 'Heat', year: '1995' })] }),
    sample('m3', 'Search for Alien', { tools: [findMovie, getWeather], calls: [call('c1', 'find_movie', { movie_title: 'Alien', year: '1979' })] }),
    sample('m4', 'Is Amélie in French?', { tools: [searchMovie, lookupFilm], calls: [call('c1', 'lookupFilm', { film_title: 'Amélie', language: 'fr' })] }),
    sample('h1', 'Book a hotel in Rome', { tools: [bookHotel, reserveHotel], calls: [call('c1', 'book_hotel', { city: 'Rome', check_in_date: '2025-05-01' })] }),
    sample('w1', 'Weather in Oslo?', { tools: [getWeather], calls: [call('c1', 'get_weather', { city: 'Oslo' })] }),
  ];

  it('renames every tool and call to the cluster medoid, with its parameter names', async () => {
    const { ctx, reports } = stageContext();
    const { out } = await applyScanStage(mergeToolsMtuStage({ threshold: 0.25 }), samples, ctx);
    out.forEach((s) => Sample.parse(s));
    const report = reports.toolMerge as any;
    expect(report).toMatchObject({ method: 'mtu', toolsBefore: 6, toolsAfter: 4, reductionRatio: 1.5 });
    // find_movie is the medoid: its parameters sit between the others'.
    expect(report.mappings.map((m: any) => [m.from, m.to, m.parameters])).toEqual([
      ['search_movie', 'find_movie', { title: 'movie_title' }],
      ['lookupFilm', 'find_movie', { film_title: 'movie_title' }],
    ]);
    const [m1, m2, m3, m4, h1, w1] = out;
    expect(m1.expected.calls).toEqual([call('c1', 'find_movie', { movie_title: 'Up' })]);
    expect(m1.dialogue[1].calls).toEqual(m1.expected.calls);
    expect(m1.tools.map((t) => t.name)).toEqual(['find_movie', 'get_weather']);
    expect(m2.expected.calls).toEqual([call('c1', 'find_movie', { movie_title: 'Heat', year: '1995' })]);
    // The merged spec keeps the representative's parameters and adds members' extra ones as optional.
    expect(m1.tools[0].parameters).toEqual({ type: 'object', properties: { movie_title: { type: 'string' }, year: { type: 'string' }, language: { type: 'string' } }, required: ['movie_title'] });
    expect(m3.expected.calls).toEqual(samples[2].expected.calls);
    expect(m3.tools[0]).toEqual(m1.tools[0]);
    expect(m4.tools.map((t) => t.name)).toEqual(['find_movie']);
    expect(m4.expected.calls).toEqual([call('c1', 'find_movie', { movie_title: 'Amélie', language: 'fr' })]);
    expect(m1.meta.lineage.at(-1)).toEqual({ stage: 'merge-tools-mtu', version: 4 });
    expect(w1).toBe(samples[5]);

    // The hotel tools disagree on required parameters: not merged, sent to review.
    expect(h1.tools.map((t) => t.name)).toEqual(['book_hotel', 'reserve_hotel']);
    expect(h1.expected.calls![0].tool).toBe('book_hotel');
    expect(h1.meta.tags).toContain(MERGE_CONFLICT_TAG);
    expect(h1.meta.checks).toEqual([{ name: 'merge-tools-mtu', pass: false, soft: true, reason: expect.stringMatching(/book_hotel, reserve_hotel.*guests/) }]);
    expect(report.conflicts).toHaveLength(1);
  });

  it('never merges tools that one turn calls together: they are different actions, however alike their names', async () => {
    const both = sample('m5', 'Find Up and also look up Heat', { tools: [searchMovie, findMovie], calls: [call('c1', 'search_movie', { title: 'Up' }), call('c2', 'find_movie', { movie_title: 'Heat' })] });
    const { ctx, reports } = stageContext();
    const { out } = await applyScanStage(mergeToolsMtuStage({ threshold: 0.25 }), [...samples, both], ctx);
    const report = reports.toolMerge as any;
    expect(report.mappings).toEqual([]);
    expect(report.conflicts).toContainEqual(expect.objectContaining({ reason: expect.stringContaining('search_movie and find_movie are called together in one turn') }));
    const m5 = out.at(-1)!;
    expect(m5.expected.calls!.map((c) => c.tool)).toEqual(['search_movie', 'find_movie']);
    expect(m5.meta.tags).toContain(MERGE_CONFLICT_TAG);
  });

  it('does not merge tools renamed apart from one name of different sources: a person decides', async () => {
    // As unify-tool-specs leaves them: SGD-like services that both have a search_movie.
    const variant = (service: string, parameters: string[]) => ({ ...tool(`search_movie${service.slice(-1)}`, parameters), plugin: service, provenance: { source: 'sgd', originalName: 'search_movie' } });
    const [first, second] = [variant('Cinema_1', ['title', 'year?']), variant('Cinema_2', ['title', 'cinema?'])];
    const both = [
      sample('c1', 'Find Up', { tools: [first], calls: [call('c1', first.name, { title: 'Up' })] }),
      sample('c2', 'Which cinema shows Up?', { tools: [second], calls: [call('c1', second.name, { title: 'Up', cinema: 'Rex' })] }),
    ];
    const { ctx, reports } = stageContext();
    const { out } = await applyScanStage(mergeToolsMtuStage({ threshold: 0.25 }), both, ctx);
    const report = reports.toolMerge as any;
    expect(report.mappings).toEqual([]);
    expect(report.conflicts).toEqual([expect.objectContaining({ tools: ['search_movie1', 'search_movie2'], reason: 'search_movie1 and search_movie2 are search_movie of different sources (Cinema_1, Cinema_2)' })]);
    expect(out.map((s) => s.tools)).toEqual([[first], [second]]);
    expect(out.every((s) => s.meta.tags.includes(MERGE_CONFLICT_TAG))).toBe(true);
  });

  it('merges nothing at threshold 0 and everything alike at a loose one', async () => {
    const { ctx, reports } = stageContext();
    const { out } = await applyScanStage(mergeToolsMtuStage({ threshold: 0 }), samples, ctx);
    expect(out).toEqual(samples);
    expect((reports.toolMerge as any).reductionRatio).toBe(1);
  });

  it('checks its config', () => {
    expect(() => mergeToolsMtuStage({ threshold: 3 })).toThrow();
    expect(() => mergeToolsMtuStage({ linkage: 'ward' as 'single' })).toThrow();
  });
});

describe('MetaTool-style merging', () => {
  const weatherNow = tool('WeatherNow', [], 'Get the current weather and the forecast for any city.');
  const weatherForecast = tool('WeatherForecast', [], 'Get the weather forecast for a city for the coming days.');
  const travelAll = tool('TravelAll', [], 'Book flights and hotels for your trip.');
  const flightTool = tool('FlightTool', [], 'Search and book flights between cities.');
  const hotelTool = tool('HotelTool', [], 'Find and reserve hotel rooms.');
  const stockTool = tool('StockTool', [], 'Stock prices, charts and market news.');
  const all = [weatherNow, weatherForecast, travelAll, flightTool, hotelTool, stockTool];
  const samples = [
    sample('q1', 'Will it rain in Paris tomorrow?', { tools: all, labels: ['WeatherForecast'] }),
    sample('q2', "What's the weather now in Rome?", { tools: [weatherNow, stockTool], labels: ['WeatherNow'] }),
    sample('q3', 'Book me a flight to Berlin', { tools: [travelAll, stockTool], labels: ['TravelAll'] }),
    sample('q4', 'Find a hotel in Lisbon', { tools: [travelAll], labels: ['TravelAll'] }),
    sample('q5', 'Plan my trip to Oslo', { tools: [travelAll], labels: ['TravelAll'] }),
    sample('q6', 'How is AAPL doing?', { tools: [stockTool], labels: ['StockTool'] }),
  ];
  const decisions = {
    merge: [{ tools: ['WeatherNow', 'WeatherForecast'], into: 'WeatherTool' }],
    decompose: [{ tool: 'TravelAll', into: ['FlightTool', 'HotelTool'], queries: { 'Book me a flight to Berlin': 'FlightTool', q4: 'HotelTool' } }],
    keep: ['StockTool'],
  };

  async function run(decisionsFile: (dir: string) => string) {
    const { ctx, reports } = stageContext();
    const file = decisionsFile(ctx.runDir);
    const { out } = await applyScanStage(mergeToolsMetatoolStage({ decisions: file, threshold: 0.5, silhouetteClusters: [2, 3] }), samples, ctx);
    return { out, reports, ctx };
  }

  it('applies merge / decompose / keep decisions to the labels and the candidate tools', async () => {
    const { out, reports, ctx } = await run((dir) => {
      writeFileSync(join(dir, 'decisions.json'), JSON.stringify(decisions));
      return 'decisions.json';
    });
    out.forEach((s) => Sample.parse(s));
    const [q1, q2, q3, q4, q5, q6] = out;
    expect([q1, q2, q3, q4, q5, q6].map((s) => s.expected.labels)).toEqual([['WeatherTool'], ['WeatherTool'], ['FlightTool'], ['HotelTool'], ['TravelAll'], ['StockTool']]);
    expect(q1.tools.map((t) => t.name)).toEqual(['WeatherTool', 'FlightTool', 'HotelTool', 'StockTool']);
    expect(q3.tools.map((t) => t.name)).toEqual(['FlightTool', 'StockTool']);
    expect(q1.tools[0].description).toBe('Merged tool: Get the current weather and the forecast for any city; Get the weather forecast for a city for the coming days.');
    expect(q5.meta.tags).toContain(DECOMPOSE_UNASSIGNED_TAG);
    expect(q5.meta.checks[0]).toMatchObject({ name: 'merge-tools-metatool', pass: false, soft: true });
    expect(q5.tools.map((t) => t.name)).toEqual(['FlightTool', 'HotelTool']);
    expect(q6).toBe(samples[5]);

    const report = reports.toolMergeMetatool as any;
    expect(report).toMatchObject({ toolsBefore: 6, toolsAfter: 4, relabelled: 5 });
    expect(report.merges).toEqual([{ into: 'WeatherTool', members: ['WeatherNow', 'WeatherForecast'], description: q1.tools[0].description, describedBy: 'offline-template' }]);
    expect(report.decompositions).toEqual([{ tool: 'TravelAll', into: ['FlightTool', 'HotelTool'], assignedQueries: 2 }]);
    expect(report.silhouette.before.tools).toBe(6);
    expect(report.silhouette.after.tools).toBe(4);
    for (const curve of [report.silhouette.before, report.silhouette.after]) for (const k of ['2', '3']) expect(typeof curve.byClusters[k]).toBe('number');
    const proposals = JSON.parse(readFileSync(join(ctx.runDir, 'merge-tools-metatool', 'proposals.json'), 'utf8'));
    expect(proposals).toHaveProperty('merge');
    expect(JSON.parse(ctx.attachments['merge-tools-metatool/proposals.json'])).toEqual(proposals);
    for (const s of out) expect(s.meta.tags).not.toContain(AUTO_MERGE_TAG); // every merge here was decided
  });

  it('reads the same decisions from a CSV sheet', async () => {
    const csv = ['decision,tool,into,query,description', 'merge,WeatherNow,WeatherTool,,', 'merge,WeatherForecast,WeatherTool,,', 'decompose,TravelAll,FlightTool,Book me a flight to Berlin,', 'decompose,TravelAll,HotelTool,q4,', 'keep,StockTool,,,'].join('\n');
    const fromJson = await run((dir) => (writeFileSync(join(dir, 'd.json'), JSON.stringify(decisions)), 'd.json'));
    const fromCsv = await run((dir) => (writeFileSync(join(dir, 'd.csv'), csv), 'd.csv'));
    expect(fromCsv.out).toEqual(fromJson.out);
  });

  it('names the row of a bad decisions sheet', () => {
    const { ctx } = stageContext();
    const path = join(ctx.runDir, 'bad.csv');
    writeFileSync(path, 'decision,tool,into\nsplit,TravelAll,FlightTool\n');
    expect(() => readDecisionsCsv(path)).toThrow(UserError);
    expect(() => readDecisionsCsv(path)).toThrow(/row 2: decision/);
    writeFileSync(path, 'decision,tool,into\nmerge,WeatherNow,\n');
    expect(() => readDecisionsCsv(path)).toThrow(/row 2: a merge row needs the merged tool's name/);
    expect(existsSync(path)).toBe(true);
  });

  it('a merged tool takes the human name and provenance of the member it is named after, or its new name', async () => {
    const now = { ...weatherNow, plugin: 'Weather', provenance: { source: 'metatool', id: 'WeatherNow' } };
    const forecast = { ...weatherForecast, plugin: 'WeatherWhiz', provenance: { source: 'metatool', id: 'WeatherForecast' } };
    const weatherSamples = [sample('w1', 'Rain in Oslo?', { tools: [now, forecast], labels: ['WeatherNow'] }), sample('w2', 'Sun in Rome?', { tools: [forecast, now], labels: ['WeatherForecast'] })];
    const mergedInto = async (into: string) => {
      const { ctx } = stageContext();
      writeFileSync(join(ctx.runDir, 'd.json'), JSON.stringify({ merge: [{ tools: ['WeatherNow', 'WeatherForecast'], into }] }));
      const { out } = await applyScanStage(mergeToolsMetatoolStage({ decisions: 'd.json', describe: false, silhouetteClusters: [2] }), weatherSamples, ctx);
      return out.map((s) => s.tools.map((t) => ({ name: t.name, plugin: t.plugin, id: t.provenance?.id })));
    };
    // Named after the second member: its human name, not the first member's ("Weather" would name another tool).
    for (const tools of await mergedInto('WeatherForecast')) expect(tools).toEqual([{ name: 'WeatherForecast', plugin: 'WeatherWhiz', id: 'WeatherForecast' }]);
    for (const tools of await mergedInto('WeatherTool')) expect(tools).toEqual([{ name: 'WeatherTool', plugin: 'WeatherTool', id: 'WeatherNow' }]);
  });

  it('a merge may not take the name of another tool, or of another merge, in any letter case', () => {
    const plan = (merge: { tools: string[]; into?: string }[]) => () => planOverlap({ decisions: { merge, decompose: [], keep: [] }, proposals: [], tools: ['WeatherNow', 'WeatherForecast', 'Weather', 'RainRadar', 'RainAlert'], undecided: 'keep', source: 'd.json' });
    expect(plan([{ tools: ['WeatherNow', 'WeatherForecast'], into: 'weather' }])).toThrow('d.json: merge[0] is named "weather", the name of another tool that is not in the merge (Weather, in other letter case)');
    expect(plan([{ tools: ['WeatherNow', 'WeatherForecast'], into: 'WeatherTool' }, { tools: ['RainRadar', 'RainAlert'], into: 'weathertool' }])).toThrow('d.json: merge[1] is named "weathertool", as merge[0] is');
    // A member's own name in other letter case is allowed.
    expect(plan([{ tools: ['WeatherNow', 'WeatherForecast'], into: 'weathernow' }])().merges).toHaveLength(1);
  });

  it('without decisions only proposes (and merges proposals when told to)', async () => {
    const { ctx, reports } = stageContext();
    const { out } = await applyScanStage(mergeToolsMetatoolStage({ threshold: 0.5, silhouetteClusters: [2] }), samples, ctx);
    expect(out).toEqual(samples);
    expect((reports.toolMergeMetatool as any).proposals).toBeGreaterThan(0);
    const merged = await applyScanStage(mergeToolsMetatoolStage({ threshold: 0.5, undecided: 'merge', describe: false, silhouetteClusters: [2] }), samples, stageContext().ctx);
    expect(new Set(merged.out.flatMap((s) => s.expected.labels ?? [])).size).toBeLessThan(5);
    // Merges nobody decided send the relabelled samples to review.
    const relabelled = merged.out.filter((s, i) => JSON.stringify(s.expected.labels) !== JSON.stringify(samples[i].expected.labels));
    expect(relabelled.length).toBeGreaterThan(0);
    for (const s of relabelled) {
      expect(s.meta.tags).toContain(AUTO_MERGE_TAG);
      expect(s.meta.checks).toContainEqual(expect.objectContaining({ name: 'merge-tools-metatool:auto', pass: false, soft: true }));
    }
    expect(merged.out.length).toBe(samples.length);
  });
});

describe('calls of a sample, visited without rewriting', () => {
  const call = (id: string, name: string) => ({ id, tool: name, arguments: {} });
  const base = sample('s1', 'Find Up, then the weather', { tools: [tool('search_movie', ['title']), tool('get_weather', ['city'])], calls: [call('c1', 'search_movie'), call('c2', 'get_weather'), call('c3', 'search_movie')] });
  const withTurns = { ...base, expected: { ...base.expected, turns: { '1': [call('c1', 'search_movie'), call('c2', 'get_weather')] } } };

  it('come in the order mapCalls rewrites them, and the sample is not copied', () => {
    const visited: string[] = [];
    const mapped: string[] = [];
    eachCall(withTurns, (c) => visited.push(c.id));
    mapCalls(withTurns, (c) => (mapped.push(c.id), c));
    expect(visited).toEqual(mapped);
    expect(visited).toEqual(['c1', 'c2', 'c3', 'c1', 'c2', 'c1', 'c2', 'c3']);
  });
});
