import { describe, expect, it } from 'vitest';
import type { Sample } from '../core/records.ts';
import { isReject } from '../core/stage.ts';
import { createToolsStage } from '../stages/mtu/create-tools.ts';
import { ToolLibrary } from '../stages/mtu/library.ts';
import { qualityFilterStage, ruleProblems } from '../stages/mtu/quality.ts';
import { mtuMeta } from '../stages/mtu/sample.ts';
import { parseGenericDialogues } from '../stages/sources/generic-dialogue.ts';
import { useTestEndpoint, type RecordedRequest } from './helpers/openai-server.ts';
import { stageContext } from './fixtures/mtu/context.ts';
import { fromFixtures } from './fixtures/mtu/paths.ts';
import { call, handSample, round, tool } from './fixtures/mtu/samples.ts';

const hotel = tool('SearchHotel', { area: { enum: ['north', 'south'] }, date: { pattern: '^\\d{4}-\\d{2}-\\d{2}$', format: 'date' }, stars: { type: 'integer' } }, ['area'], ['name', 'phone']);
const book = tool('BookHotel', { name: {}, people: {} }, ['name'], ['reference']);
const one = (args: Record<string, unknown>, tools = [hotel, book], name = 'SearchHotel') => handSample('s', tools, [round('find a hotel', [call('c0', name, args)])]);

describe('quality filters', () => {
  it('pass a sample whose calls fit their documentation', () => {
    const rules = ruleProblems(one({ area: 'north', date: '2019-03-04', stars: 4 }));
    expect(Array.isArray(rules) && rules.every((c) => c.pass)).toBe(true);
  });

  it('reject each kind of defect with its reason', () => {
    const reason = (sample: Sample) => {
      const r = ruleProblems(sample);
      return Array.isArray(r) ? 'pass' : r.reason;
    };
    expect(reason(one({ area: 'north' }, [hotel, book], 'FindHotel'))).toBe('undefined_tool');
    expect(reason(one({ area: 'north', pool: 'yes' }))).toBe('fabricated_parameter');
    expect(reason(one({ area: 'east' }))).toBe('invalid_value');
    expect(reason(one({ area: 'north', date: 'next monday' }))).toBe('invalid_value');
    expect(reason(one({ area: 'north', stars: '4' }))).toBe('invalid_value');
    expect(reason(one({ date: '2019-03-04' }))).toBe('missing_required');
    const chained = (field: string) =>
      handSample('c', [hotel, book], [round('find a hotel in the north and book it', [call('c0', 'SearchHotel', { area: 'north' }), call('c1', 'BookHotel', { name: { $ref: `c0.${field}` } })])]);
    expect(reason(chained('name'))).toBe('pass');
    expect(reason(chained('rating'))).toBe('invalid_reference');
    const twice = handSample('t', [hotel], [round('two searches', [call('c0', 'SearchHotel', { area: 'north' }), call('c1', 'SearchHotel', { area: 'south' })])]);
    expect(reason(twice)).toBe('repeated_tool_in_turn');
    const sameId = handSample('d', [hotel, book], [round('a', [call('c0', 'SearchHotel', { area: 'north' })]), round('b', [call('c0', 'BookHotel', { name: 'x' })])]);
    expect(reason(sameId)).toBe('duplicate_call_id');
  });

  it('check the items of a list parameter, and dates and times as the calendar and the clock have them', () => {
    const flights = tool('GetFlight', { flight_number: { type: 'array', items: { type: 'string', pattern: '^-?\\d+$' } }, time: { pattern: '^\\d{1,2}:\\d{2}$', format: 'time' } }, [], []);
    const problem = (args: Record<string, unknown>, tools = [hotel, book], name = 'SearchHotel') => {
      const r = ruleProblems(one(args, tools, name));
      return Array.isArray(r) ? 'pass' : r.detail;
    };
    // ATIS tags "number" in "flight number 813" as the flight number.
    expect(problem({ flight_number: ['813', '1291'], time: '19:05' }, [flights], 'GetFlight')).toBe('pass');
    expect(problem({ flight_number: ['number'] }, [flights], 'GetFlight')).toBe('turn 1, GetFlight: flight_number: item 0: "number" does not match ^-?\\d+$');
    expect(problem({ time: '25:70' }, [flights], 'GetFlight')).toBe('turn 1, GetFlight: time: "25:70" is no time');
    expect(problem({ area: 'north', date: '2019-02-30' })).toBe('turn 1, SearchHotel: date: "2019-02-30" is no date');
    expect(problem({ area: 'north', date: '2020-02-29' })).toBe('pass');
  });

  it('run the LLM check offline as agreement and record the checks', async () => {
    const ctx = stageContext();
    ToolLibrary.of([hotel, book]).save(ctx.runDir);
    const out = (await qualityFilterStage({ verify: true }).run(one({ area: 'north' }), ctx)) as Sample;
    expect(isReject(out)).toBe(false);
    expect(out.meta.checks.map((c) => c.name)).toContain('llm_verification');
  });
});

/** The prompt a request carries: the user message of the chat. */
function prompt(request: RecordedRequest): string {
  const messages = (request.body?.messages ?? []) as { role: string; content: string }[];
  return messages.filter((m) => m.role === 'user').map((m) => m.content).join('\n');
}

describe('with a model behind an OpenAI-compatible endpoint', () => {
  const endpoint = useTestEndpoint();

  it('rejects a sample the data quality check corrects, and one whose check fails, with the reason', async () => {
    const ctx = { ...stageContext(), llm: endpoint.llm };
    ToolLibrary.of([hotel, book]).save(ctx.runDir);
    const stage = qualityFilterStage({ verify: true });
    endpoint.server.setResponder('chat', () => ({ content: JSON.stringify({ thought: 'a booking was asked for', actions: [{ action: 'BookHotel', action_input: { name: 'x' } }] }) }));
    const corrected = await stage.run(one({ area: 'north' }), ctx);
    expect(corrected).toMatchObject({ reject: true, reason: 'llm_verification_failed' });
    endpoint.server.setResponder('chat', () => ({ content: JSON.stringify({ thought: 'fine', actions: [{ action: 'SearchHotel', action_input: { area: 'north' } }] }) }));
    expect(isReject(await stage.run(one({ area: 'north' }), ctx))).toBe(false);
    endpoint.server.setResponder('chat', () => ({ content: 'not json at all' }));
    const failed = await stage.run(one({ area: 'north' }), ctx);
    expect(failed).toMatchObject({ reject: true });
    expect((failed as { reason: string }).reason).toMatch(/invalid_json|schema_invalid/);
  });

  it('creates tools for a plain dialogue only at turns the model calls "specific API call"', async () => {
    endpoint.server.setResponder('chat', (request) => {
      const text = prompt(request);
      if (text.includes('Pick exactly one situation')) {
        const assistant = [...text.matchAll(/\nAssistant: (.*)\n/g)].at(-1)?.[1] ?? '';
        if (assistant.startsWith("Luigi's")) return { content: JSON.stringify({ analysis: 'searched', situation: 'api_call', apis: ['search_restaurant'] }) };
        if (assistant.includes('booked')) return { content: JSON.stringify({ analysis: 'booked', situation: 'api_call', apis: ['book_restaurant'] }) };
        if (assistant.includes('Which day')) return { content: JSON.stringify({ analysis: 'day missing', situation: 'information_missing', apis: [] }) };
        return { content: JSON.stringify({ analysis: 'small talk', situation: 'chit_chat', apis: [] }) };
      }
      if (text.includes('Write the calls')) {
        const booking = text.includes('book_restaurant');
        return {
          content: JSON.stringify({
            thought: booking ? 'book the table' : 'search restaurants',
            actions: [booking ? { action: 'book_restaurant', action_input: { restaurant_name: "Luigi's", date: 'tomorrow', time: '7 pm', party_size: 2 }, description: 'Book a table.' } : { action: 'search_restaurant', action_input: { cuisine: 'Italian', city: 'Boston' }, description: 'Find restaurants.' }],
          }),
        };
      }
      return { status: 400, error: { message: 'unexpected prompt' } };
    });
    const [dialogue] = parseGenericDialogues(fromFixtures('generic/dialogues.jsonl'), { name: 'shop', split: 'train' });
    const sample = (await createToolsStage({ excludeIntents: [] }).run(dialogue, { ...stageContext('shop-1'), llm: endpoint.llm })) as Sample;
    expect(isReject(sample), JSON.stringify(sample).slice(0, 600)).toBe(false);
    const assistant = sample.dialogue.flatMap((t, i) => (t.role === 'assistant' ? [[i, mtuMeta(sample).situations[String(i)], (t.calls ?? []).map((c) => c.tool)]] : []));
    expect(assistant).toEqual([
      [0, 'chit_chat', []],
      [2, 'api_call', ['SearchRestaurant']],
      [4, 'information_missing', []],
      [6, 'api_call', ['BookRestaurant']],
      [8, 'chit_chat', []],
    ]);
    expect(sample.tools.map((t) => [t.name, Object.keys(t.parameters.properties)])).toEqual([
      ['SearchRestaurant', ['cuisine', 'city']],
      ['BookRestaurant', ['restaurant_name', 'date', 'time', 'party_size']],
    ]);
    expect(sample.dialogue[6].thought).toBe('book the table');
    expect(sample.category).toBe('M-S');
  });
});
