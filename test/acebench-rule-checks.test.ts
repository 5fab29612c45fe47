import { describe, expect, it } from 'vitest';
import { ArgumentValidator } from '../core/json-schema.ts';
import type { Check, Json } from '../core/records.ts';
import { IRRELEVANT_ANSWER, type AceCategory, type AceFunction, type AceRecord } from '../stages/acebench/record.ts';
import { ruleChecks } from '../stages/acebench/rule-checks.ts';

const book: AceFunction = {
  name: 'Hotel_bookRoom',
  description: 'Books a hotel room.',
  parameters: {
    type: 'object',
    properties: {
      city: { type: 'string', description: 'City of the hotel.' },
      checkIn: { type: 'string', description: 'Arrival date.', format: 'date' },
      nights: { type: 'integer', description: 'Nights to stay.', minimum: 1, maximum: 30 },
      breakfast: { type: 'boolean', description: 'Include breakfast.' },
      guest: { type: 'object', description: 'Who stays.', properties: { name: { type: 'string', description: 'Name.' }, email: { type: 'string', description: 'Email.' } }, required: ['name'] },
    },
    required: ['city', 'checkIn', 'nights'],
  },
};
const weather: AceFunction = { name: 'Weather_forecast', description: 'Forecast for a city.', parameters: { type: 'object', properties: { city: { type: 'string', description: 'City.' } }, required: ['city'] } };

function record(category: AceCategory, question: string, groundTruth: AceRecord['answer'] extends infer A ? (A extends { ground_truth: infer G } ? G : never) : never, extra: Record<string, string> = {}): AceRecord {
  return { category, language: 'en', data: { id: `${category}_0`, question, function: [book, weather], time: '', ...extra }, answer: { id: `${category}_0`, ground_truth: groundTruth } };
}
const validator = new ArgumentValidator();
const failed = (checks: Check[]) => Object.fromEntries(checks.filter((c) => !c.pass).map((c) => [c.name, c.reason]));

describe('ACEBench rule checks', () => {
  const question = 'user: Book a room in Lisbon from 2024-05-02 for 3 nights for Ana, with breakfast.\n';
  const gold = { Hotel_bookRoom: { city: 'Lisbon', checkIn: '2024-05-02', nights: 3, breakfast: true, guest: { name: 'Ana' } } };

  it('passes a sound single-function record', () => {
    expect(failed(ruleChecks(record('normal_single_turn_single_function', question, gold), { validator }))).toEqual({});
  });

  it('fails a gold call that breaks its schema, naming the argument path', () => {
    const bad = { Hotel_bookRoom: { city: 'Lisbon', checkIn: '02/05/2024', nights: 40, guest: {} } };
    const reason = failed(ruleChecks(record('normal_single_turn_single_function', question, bad), { validator }))['acebench/gold-call'];
    expect(reason).toContain('checkIn: must match format "date"');
    expect(reason).toContain('nights: must be <= 30');
    expect(reason).toContain('guest: required argument "name" is missing');
  });

  it('fails a gold call of a function that is not offered, and an invalid definition', () => {
    const broken = record('normal_single_turn_single_function', question, { Flight_book: { city: 'Lisbon' } });
    broken.data.function = [{ ...book, parameters: { type: 'object', properties: book.parameters && (book.parameters as any).properties, required: ['city', 'rooms'] } }, weather];
    const reasons = failed(ruleChecks(broken, { validator }));
    expect(reasons['acebench/gold-call']).toBe('gold call Flight_book names no offered function');
    expect(reasons['acebench/api-definitions']).toContain('function "Hotel_bookRoom": parameters.required[1]: "rooms" is not among the properties');
  });

  it('flags an argument value nobody stated (soft) and keeps enum-free stated values quiet', () => {
    const checks = ruleChecks(record('normal_single_turn_single_function', 'user: Book a room in Lisbon for 3 nights for Ana.\n', gold), { validator });
    const grounding = checks.find((c) => c.name === 'acebench/grounding')!;
    expect(grounding).toMatchObject({ pass: false, soft: true });
    expect(grounding.reason).toBe('Hotel_bookRoom.checkIn = "2024-05-02" is not stated');
  });

  it('sends a gold range that ends before it starts to review (soft), wherever it sits', () => {
    const stay: AceFunction = {
      name: 'Hotel_hold',
      description: 'Holds rooms for a stay.',
      parameters: {
        type: 'object',
        properties: {
          stay: { type: 'object', description: 'The stay.', properties: { start: { type: 'string', description: 'From.', format: 'date' }, end: { type: 'string', description: 'To.', format: 'date' } }, required: ['start', 'end'] },
          minRooms: { type: 'integer', description: 'At least.' },
          maxRooms: { type: 'integer', description: 'At most.' },
        },
        required: ['stay'],
      },
    };
    const question = 'user: Hold 2 to 4 rooms from 2024-05-02 to 2024-05-06 (or from 2024-05-06 to 2024-05-02).\n';
    const hold = (args: Record<string, Json>): AceRecord => ({ category: 'normal_single_turn_single_function', language: 'en', data: { id: 'x_0', question, function: [stay], time: '' }, answer: { id: 'x_0', ground_truth: { Hotel_hold: args } } });
    expect(failed(ruleChecks(hold({ stay: { start: '2024-05-02', end: '2024-05-06' }, minRooms: 2, maxRooms: 4 }), { validator }))['acebench/range-order']).toBeUndefined();
    const check = ruleChecks(hold({ stay: { start: '2024-05-06', end: '2024-05-02' }, minRooms: 4, maxRooms: 2 }), { validator }).find((c) => c.name === 'acebench/range-order')!;
    expect(check).toMatchObject({ pass: false, soft: true });
    expect(check.reason).toBe('Hotel_hold: maxRooms 2 is before minRooms 4; Hotel_hold.stay: end "2024-05-02" is before start "2024-05-06"');
  });

  it('checks the category rules: parallel, atom kind, preference profile', () => {
    expect(failed(ruleChecks(record('normal_single_turn_parallel_function', question, gold), { validator }))['acebench/consistency']).toMatch(/at least two gold calls/);
    const twoCalls = { ...gold, Weather_forecast: { city: 'Lisbon' } };
    expect(failed(ruleChecks(record('normal_single_turn_parallel_function', question, twoCalls), { validator }))).toEqual({});
    expect(failed(ruleChecks(record('normal_atom_bool', question, gold), { validator }))).toEqual({});
    const noBool = { Hotel_bookRoom: { city: 'Lisbon', checkIn: '2024-05-02', nights: 3 } };
    expect(failed(ruleChecks(record('normal_atom_bool', question, noBool), { validator }))['acebench/atom-kind']).toBe('no gold argument fills a parameter of kind bool');
    const profile = "{'basic_features': {'UserName': 'Ana Lima', 'UserHomeLocation': 'Porto'}}";
    const fromProfile = { Weather_forecast: { city: 'Porto' } };
    expect(failed(ruleChecks(record('normal_preference', 'user: What will the weather be like at home?\n', fromProfile, { profile }), { validator }))).toEqual({});
    const fromQuestion = { Weather_forecast: { city: 'Porto' } };
    expect(failed(ruleChecks(record('normal_preference', 'user: Weather in Porto?\n', fromQuestion, { profile }), { validator }))['acebench/profile-used']).toMatch(/draws on the profile/);
  });

  it('checks the special answers', () => {
    const incomplete = record('special_incomplete', 'user: Book a room in Lisbon for Ana.\n', { Hotel_bookRoom: ['checkIn', 'nights'] });
    expect(failed(ruleChecks(incomplete, { validator }))).toEqual({});
    const wrongName = record('special_incomplete', 'user: Book a room.\n', { Hotel_bookRoom: ['rooms'] });
    expect(failed(ruleChecks(wrongName, { validator }))['acebench/consistency']).toBe('"rooms" is not a parameter of Hotel_bookRoom');
    const errorParam = record('special_error_param', 'user: Book a room in Lisbon from 02/05/2024 for 3 nights.\n', { checkIn: ['02/05/2024'] });
    expect(failed(ruleChecks(errorParam, { validator }))).toEqual({});
    const notWrong = record('special_error_param', 'user: Book a room in Lisbon from 2024-05-02 for 3 nights.\n', { checkIn: ['2024-05-02'] });
    expect(failed(ruleChecks(notWrong, { validator }))['acebench/consistency']).toBe('wrong value "2024-05-02" of checkIn satisfies its schema');
    expect(failed(ruleChecks(record('special_irrelevant', 'user: Order a pizza.\n', IRRELEVANT_ANSWER), { validator }))).toEqual({});
    expect(failed(ruleChecks(record('special_irrelevant', 'user: Order a pizza.\n', 'No.'), { validator }))['acebench/consistency']).toMatch(/must be the sentence/);
  });

  it('checks the question form of dialogues', () => {
    const twice = record('normal_multi_turn_user_adjust', 'user: Book a room.\nuser: In Lisbon.\n', gold);
    expect(failed(ruleChecks(twice, { validator }))['acebench/question-form']).toBe('turn 2 is a second "user:" in a row');
    const callThenResult = record('normal_multi_turn_user_switch', `user: Weather in Lisbon?\nsystem: [Weather_forecast(city="Lisbon")]\nsystem: Sunny.\nuser: ${question.slice(6)}`, gold);
    expect(failed(ruleChecks(callThenResult, { validator }))).toEqual({});
  });
});

describe('ACEBench agent records are checked by executing their gold path', () => {
  it('passes a generated task and fails one whose ground_truth was written by hand', async () => {
    const { buildAgentTask } = await import('../stages/acebench/sandbox/tasks.ts');
    const { Rng } = await import('../core/rng.ts');
    const task = buildAgentTask({ rng: new Rng(7), families: ['message', 'food'], language: 'en', category: 'agent_multi_step', index: 0 });
    expect(failed(ruleChecks(task.record, { validator }))).toEqual({});
    const edited = structuredClone(task.record);
    const truth = edited.answer!.ground_truth as Record<string, any>[];
    const base = truth.find((entry) => 'BaseApi' in entry)!;
    base.BaseApi.wifi = !base.BaseApi.wifi;
    expect(failed(ruleChecks(edited, { validator }))['acebench/agent-replay']).toMatch(/^BaseApi\.wifi is (true|false) after the mile_stone, (true|false) in the ground_truth$/);
    const noPath = structuredClone(task.record);
    delete noPath.answer!.mile_stone;
    expect(failed(ruleChecks(noPath, { validator }))['acebench/agent-replay']).toBe('the answer has no mile_stone');
  });
});
