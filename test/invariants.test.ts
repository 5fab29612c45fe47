import { describe, expect, it } from 'vitest';
import { auditSamples } from '../core/audit.ts';
import { SampleInvariants, type Finding } from '../core/invariants.ts';
import type { Call, Json, Sample, ToolSpec } from '../core/records.ts';
import { nameWords, rangePairs, rangeProblems, readPoints } from '../core/value-ranges.ts';

/** The shared invariants of core/invariants.ts, each on samples made by hand. */

const tool = (name: string, properties: Record<string, Record<string, Json>> = {}, required: string[] = []): ToolSpec => ({
  name,
  description: `${name} tool`,
  parameters: { type: 'object', properties: properties as ToolSpec['parameters']['properties'], required },
  returns: { type: 'object', properties: {}, required: [] },
});

const hotel = tool('BookHotel', { city: { type: 'string' }, check_in_date: { type: 'string', format: 'date' }, check_out_date: { type: 'string', format: 'date' }, rooms: { type: 'integer', minimum: 1, maximum: 9 } }, ['city']);
const weather = tool('GetWeather', { city: { type: 'string', pattern: '^[A-Za-z ]+$' }, unit: { type: 'string', enum: ['C', 'F'] } }, ['city']);

function sample(id: string, calls: Call[], tools: ToolSpec[] = [hotel, weather], text = 'Please do it.'): Sample {
  return { id, benchmark: 'test', category: 'c', split: 'test', tools, dialogue: [{ role: 'user', content: text }], expected: { calls }, meta: { lineage: [], checks: [], tags: [] } };
}

const call = (tool: string, args: Record<string, unknown>, id = 'call_1'): Call => ({ id, tool, arguments: args as Call['arguments'] });
const checks = (findings: Finding[]) => findings.map((f) => f.check);

describe('sample ids', () => {
  it('a second sample with an id already seen is a finding; the first is not', () => {
    const invariants = new SampleInvariants([hotel, weather]);
    expect(invariants.check(sample('a', []))).toEqual([]);
    expect(invariants.check(sample('b', []))).toEqual([]);
    expect(invariants.check(sample('a', []))).toEqual([{ check: 'sample-id-unique', sampleId: 'a', where: 'id', problem: 'another sample of the version has the id "a"' }]);
  });
});

describe('tool names', () => {
  it('finds two library tools whose names differ only in case, or repeat', () => {
    const findings = new SampleInvariants([hotel, tool('bookhotel'), weather, tool('GetWeather')]).libraryFindings();
    expect(findings.map((f) => f.problem)).toEqual(['"BookHotel", "bookhotel" are one name, case aside', '2 tools are named "GetWeather"']);
    expect(new SampleInvariants([hotel, weather]).libraryFindings()).toEqual([]);
  });

  it('finds a candidate list offering a name twice, or two names that are one case aside', () => {
    const invariants = new SampleInvariants([hotel, weather]);
    expect(invariants.check(sample('twice', [], [hotel, weather, hotel])).map((f) => [f.check, f.where, f.problem])).toEqual([['tool-names-unique', 'tools[2] BookHotel', 'the candidate list offers "BookHotel" twice']]);
    const cased = invariants.check(sample('cased', [], [hotel, tool('getweather'), weather]));
    expect(cased.map((f) => f.problem)).toContain('the candidate list offers "getweather" and "GetWeather", one name case aside');
  });

  it('finds a candidate named like a library tool but for case, and one with other parameters under the same name', () => {
    const invariants = new SampleInvariants([hotel, weather]);
    expect(invariants.check(sample('case', [], [tool('bookHotel')])).map((f) => [f.check, f.problem])).toEqual([['tool-names-unique', 'the version\'s tool library also has "BookHotel", one name case aside']]);
    const other = tool('GetWeather', { location: { type: 'string' } }, ['location']);
    expect(invariants.check(sample('other', [], [other])).map((f) => [f.check, f.problem])).toEqual([['tool-names-unique', 'offers "GetWeather" with parameters other than the version\'s tool of that name (two tools share one name)']]);
    // Other words for the same parameters are the same tool.
    const reworded = { ...weather, description: 'Weather now', parameters: { ...weather.parameters, properties: { city: { type: 'string', pattern: '^[A-Za-z ]+$', description: 'where' }, unit: { type: 'string', enum: ['C', 'F'] } } } };
    expect(invariants.check(sample('reworded', [], [reworded as ToolSpec]))).toEqual([]);
  });
});

describe('tools exist', () => {
  it('finds a call to a tool the sample does not offer, in the dialogue and among the expected calls', () => {
    const invariants = new SampleInvariants([hotel, weather]);
    const s = sample('x', [call('GetWeather', { city: 'Oslo' })], [hotel]);
    s.dialogue.push({ role: 'assistant', content: '', calls: [call('Translate', {}, 'call_0')] });
    expect(invariants.check(s).map((f) => [f.check, f.where, f.problem])).toEqual([
      ['tool-exists', 'dialogue[1].calls[0] Translate', 'calls "Translate", which the sample\'s candidate list does not offer'],
      ['tool-exists', 'expected.calls[0] GetWeather', 'calls "GetWeather", which the sample\'s candidate list does not offer (the version has a tool of that name, but the sample does not offer it)'],
    ]);
  });

  it('finds calls in any list of calls the expected answer keeps (accepted alternatives)', () => {
    const s = sample('alt', [call('GetWeather', { city: 'Oslo' })]);
    (s.expected as Record<string, unknown>).alternatives = [[call('Forecast', { city: 'Oslo' })]];
    expect(new SampleInvariants([hotel, weather]).check(s).map((f) => f.where)).toEqual(['expected.alternatives[0][0] Forecast']);
  });

  it('finds a candidate the library lacks, unless its recipe leaves that name out on purpose', () => {
    const renamed = tool('qqq');
    expect(checks(new SampleInvariants([hotel, weather]).check(sample('r', [], [renamed])))).toEqual(['tool-exists']);
    const exempt = new SampleInvariants([hotel, weather], { offeredOutsideLibrary: () => ['qqq'] });
    expect(exempt.check(sample('r', [], [renamed]))).toEqual([]);
  });
});

describe('argument values against the schema', () => {
  const invariants = () => new SampleInvariants([hotel, weather]);
  it.each([
    ['a wrong type', call('BookHotel', { city: 'Oslo', rooms: '2' }), 'rooms: must be integer'],
    ['a value outside the enum', call('GetWeather', { city: 'Oslo', unit: 'K' }), 'unit: must be one of ["C","F"]'],
    ['a bad format', call('BookHotel', { city: 'Oslo', check_in_date: '2024-02-30' }), 'check_in_date: must match format "date"'],
    ['a value failing the pattern', call('GetWeather', { city: 'Oslo1' }), 'city: must match pattern "^[A-Za-z ]+$"'],
    ['a number above the maximum', call('BookHotel', { city: 'Oslo', rooms: 12 }), 'rooms: must be <= 9'],
    ['a missing required argument', call('BookHotel', { rooms: 1 }), 'required argument "city" is missing'],
    ['an argument the tool does not have', call('GetWeather', { city: 'Oslo', days: 3 }), '"days" is not a parameter of this function'],
  ])('finds %s', (_what, made, problem) => {
    expect(invariants().check(sample('v', [made])).map((f) => [f.check, f.problem])).toEqual([['argument-schema', problem]]);
  });

  it('gives one finding per call with all its problems, and judges a call held twice once', () => {
    const bad = call('BookHotel', { rooms: 0, nights: 2 });
    const s = sample('v', [bad]);
    s.dialogue.push({ role: 'assistant', content: '', calls: [bad] });
    const findings = invariants().check(s);
    expect(findings).toHaveLength(1);
    expect(findings[0].problem).toContain('required argument "city" is missing');
    expect(findings[0].problem).toContain('"nights" is not a parameter of this function');
  });

  it('leaves a reference to an earlier result alone (its value is not known here)', () => {
    const s = sample('ref', [call('GetWeather', { city: 'Oslo' }, 'call_0'), call('BookHotel', { city: { $ref: 'call_0.city' }, rooms: 1 }, 'call_1')]);
    expect(invariants().check(s)).toEqual([]);
  });

  it('passes valid calls', () => {
    expect(invariants().check(sample('ok', [call('BookHotel', { city: 'Oslo', check_in_date: '2024-05-01', check_out_date: '2024-05-03', rooms: 2 })]))).toEqual([]);
  });
});

describe('ranges in order', () => {
  const invariants = () => new SampleInvariants([hotel, weather, range]);
  const range = tool('Range', {
    start_date: { type: 'string' },
    end_date: { type: 'string' },
    startTime: { type: 'string' },
    endTime: { type: 'string' },
    from: {},
    to: {},
    min_price: { type: 'number' },
    max_price: { type: 'number' },
    departure_date: { type: 'string' },
    return_date: { type: 'string' },
    departure_time: { type: 'string' },
    return_time: { type: 'string' },
    begin: {},
    finish: {},
    period: {},
    depart_time_start_time: { type: 'string' },
    depart_time_end_time: { type: 'string' },
  });
  const problems = (args: Record<string, unknown>, text?: string) =>
    invariants()
      .check(sample('r', [call('Range', args)], [range], text))
      .filter((f) => f.check === 'range-order')
      .map((f) => [f.check, f.where, f.problem]);

  it('finds a date range that ends before it starts, and a check-out before the check-in', () => {
    expect(problems({ start_date: '2024-05-03', end_date: '2024-05-01' })).toEqual([['range-order', 'expected.calls[0] Range', 'start_date "2024-05-03" is after end_date "2024-05-01"']]);
    expect(invariants().check(sample('h', [call('BookHotel', { city: 'Oslo', check_in_date: '2024-05-03', check_out_date: '2024-05-01' })])).map((f) => f.problem)).toEqual(['check_in_date "2024-05-03" is after check_out_date "2024-05-01"']);
  });

  it('reads the common date and time formats', () => {
    expect(problems({ start_date: 'March 5, 2024', end_date: '03/01/2024' })).toHaveLength(1);
    expect(problems({ start_date: '5 March 2024', end_date: '2024/03/06' })).toEqual([]);
    expect(problems({ start_date: '2024年3月5日', end_date: '2024年3月1日' })).toHaveLength(1);
    expect(problems({ start_date: '2024-03-05T10:00:00Z', end_date: '2024-03-05T11:00:00+02:00' })).toHaveLength(1); // 09:00 UTC
    expect(problems({ start_date: '2024-03-05 18:00', end_date: '2024-03-05' })).toEqual([]); // a date-time on the end date's day
    // 03/04/2024 is 4 March or 3 April: judged wrong only if every reading is.
    expect(problems({ start_date: '03/04/2024', end_date: '2024-03-20' })).toEqual([]);
    expect(problems({ start_date: '03/04/2024', end_date: '2024-03-01' })).toHaveLength(1);
  });

  it('finds numbers out of order in min/max, from/to and begin/finish pairs, and ranges inside objects and lists', () => {
    expect(problems({ min_price: 300, max_price: 100 }).map((p) => p[2])).toEqual(['min_price 300 is above max_price 100']);
    expect(problems({ from: '10', to: '2' })).toHaveLength(1);
    expect(problems({ begin: 5, finish: 5 })).toEqual([]);
    expect(problems({ period: { start: '2020-11-17T18:45:00', end: '2020-11-03T14:30:00' } }).map((p) => p[1])).toEqual(['expected.calls[0] Range: period']);
    expect(problems({ period: [{ from: 3, to: 1 }] }).map((p) => p[1])).toEqual(['expected.calls[0] Range: period[0]']);
  });

  it('judges nothing it cannot compare: places, mixed kinds', () => {
    expect(problems({ from: 'Oslo', to: 'Bergen' })).toEqual([]);
    expect(problems({ start_date: '2024-05-01', end_date: '18:00' })).toEqual([]);
  });

  it('allows a time range past midnight only where the text says it runs overnight', () => {
    expect(problems({ startTime: '22:00', endTime: '02:00' }).map((p) => p[2])).toEqual(['startTime "22:00" is after endTime "02:00" (a range past midnight needs the text to say it runs overnight)']);
    expect(problems({ startTime: '22:00', endTime: '02:00' }, 'Keep the shop open overnight.')).toEqual([]);
    expect(problems({ startTime: '22:00', endTime: '02:00' }, '晚上十点到凌晨两点')).toEqual([]);
    // An end at midnight closes the day; dates that span days carry the times.
    expect(problems({ startTime: '18:00', endTime: '00:00' })).toEqual([]);
    expect(problems({ start_date: '2024-05-01', end_date: '2024-05-02', startTime: '22:00', endTime: '02:00' })).toEqual([]);
    expect(problems({ startTime: '6 pm', endTime: '9:30 am' })).toHaveLength(1);
  });

  it('does not compare the times of a departure and a return (different days), but does compare their dates', () => {
    expect(problems({ departure_time: '18:00', return_time: '09:00' })).toEqual([]);
    expect(problems({ departure_date: '2024-06-10', return_date: '2024-06-03' })).toHaveLength(1);
  });

  it('reads a bare number of a parameter named for a time as an hour, morning or afternoon', () => {
    // "between 12 and 4": noon to 4 pm.
    expect(problems({ depart_time_start_time: '12', depart_time_end_time: '4' })).toEqual([]);
    expect(problems({ depart_time_start_time: '23', depart_time_end_time: '13' })).toHaveLength(1);
  });
});

describe('value-ranges helpers', () => {
  it('splits names in any case style into words', () => {
    expect(nameWords('checkInDate')).toEqual(['check', 'in', 'date']);
    expect(nameWords('check_out-date')).toEqual(['check', 'out', 'date']);
    expect(nameWords('startURLTime')).toEqual(['start', 'url', 'time']);
  });

  it('pairs start and end words around the same rest of the name', () => {
    expect(rangePairs(['start_date', 'end_date', 'startTime', 'endTime', 'min_price', 'price_max', 'dateFrom', 'dateTo', 'check_in', 'check_out', 'departure_date', 'return_date']).map((p) => `${p.start}/${p.end}`)).toEqual([
      'start_date/end_date',
      'startTime/endTime',
      'dateFrom/dateTo',
      'check_in/check_out',
      'departure_date/return_date',
    ]);
    expect(rangePairs(['first_name', 'last_name', 'from_city'])).toEqual([]);
  });

  it('reads points of each kind', () => {
    expect(readPoints('2024-01-02')).toEqual([{ kind: 'date', value: 19724 }]);
    expect(readPoints('6:30 pm')).toEqual([{ kind: 'time', value: 18.5 * 3600 }]);
    expect(readPoints(42)).toEqual([{ kind: 'number', value: 42 }]);
    expect(readPoints('Oslo')).toEqual([]);
    expect(rangeProblems({ a: 1 }, { overnight: false })).toEqual({ judged: 0, problems: [] });
  });
});

describe('auditSamples', () => {
  it('counts findings per check with the first offending ids, what each check looked at, and every check even when it found nothing', () => {
    const report = auditSamples([sample('a', [call('GetWeather', { city: 'Oslo', unit: 'K' })]), sample('b', []), sample('a', [])], [hotel, weather]);
    const byCheck = Object.fromEntries(report.checks.map((c) => [c.check, c]));
    expect(report.samples).toBe(3);
    expect(Object.keys(byCheck)).toEqual(['sample-id-unique', 'tool-names-unique', 'tool-exists', 'argument-schema', 'range-order']);
    expect(byCheck['argument-schema']).toMatchObject({ checked: 1, findings: 1, samples: 1, first: ['a'] });
    expect(byCheck['sample-id-unique']).toMatchObject({ checked: 3, findings: 1, samples: 1, first: ['a'] });
    expect(byCheck['range-order']).toMatchObject({ findings: 0, samples: 0, first: [] });
  });
});

describe('the work done per sample', () => {
  it('judges an offered tool against the library once per tool object, with the same findings in every sample', () => {
    const invariants = new SampleInvariants([hotel, weather]);
    let reads = 0;
    const copy = (base: ToolSpec) => Object.defineProperty({ ...base }, 'parameters', { enumerable: true, get: () => (reads++, base.parameters) }) as ToolSpec;
    // A copy of a library tool (its parameters compared once), and a tool that clashes with the library's.
    const same = copy(weather);
    const other = copy(tool('BookHotel', { town: { type: 'string' } }));
    const first = invariants.check(sample('one', [], [same, other]));
    const readsOnce = reads;
    const second = invariants.check(sample('two', [], [other, same]));
    expect(reads).toBe(readsOnce);
    expect(first.map((f) => [f.where, f.problem])).toEqual([['tools[1] BookHotel', 'offers "BookHotel" with parameters other than the version\'s tool of that name (two tools share one name)']]);
    expect(second.map((f) => [f.where, f.problem])).toEqual([['tools[0] BookHotel', 'offers "BookHotel" with parameters other than the version\'s tool of that name (two tools share one name)']]);
  });

  it('reads whether the text says overnight only when two times of day are compared', () => {
    const unread = {
      get overnight(): boolean {
        throw new Error('the overnight wording was read');
      },
    };
    expect(rangeProblems({ city: 'Paris', stay: { check_in: '2024-05-03', check_out: '2024-05-01' } }, unread).problems.map((p) => p.path)).toEqual(['stay']);
    expect(rangeProblems({ start_time: '22:00', end_time: '02:00' }, { overnight: true })).toEqual({ judged: 0, problems: [] });
  });
});
