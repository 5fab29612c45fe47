import { describe, expect, it } from 'vitest';
import type { Sample, ToolSpec } from '../core/records.ts';
import { acebenchAudits } from '../stages/acebench/audit.ts';
import { importAceFolder } from '../stages/acebench/import.ts';
import { mtuAudits, spanStated } from '../stages/mtu/audit.ts';
import { nestoolsAudits } from '../stages/nestools/audit.ts';
import { eachNesToolsSample } from '../stages/sources/nestools.ts';
import { tooltalkAudits } from '../stages/tooltalk/audit.ts';
import { importConversationFile } from '../stages/tooltalk/import.ts';

/** Each recipe's own audit on samples it passes and on the same samples with one planted fault. */

const REFERENCE = new URL('../../shared/data/reference/', import.meta.url).pathname;
const DATABASES = new URL('../../shared/data/sources/tooltalk/databases', import.meta.url).pathname;

describe('tooltalk/replay', () => {
  const [replay] = tooltalkAudits(DATABASES);
  const released = importConversationFile(`${REFERENCE}tooltalk`, 'easy/AddAlarm-easy.json');

  it('executes the gold calls again and finds them as recorded', () => {
    expect(replay.check(released)).toEqual([]);
    expect(replay.checked!()).toBe(released.dialogue.flatMap((t) => t.calls ?? []).length);
  });

  it('finds a recorded response the tools do not give, naming where it differs', () => {
    const edited = structuredClone(released);
    const turn = edited.dialogue.findIndex((t) => t.calls?.some((c) => c.tool === 'AddAlarm'));
    const id = edited.dialogue[turn].calls!.find((c) => c.tool === 'AddAlarm')!.id;
    const observed = edited.dialogue[turn].observations![id] as { response: { alarm_id: string } };
    const recorded = observed.response.alarm_id;
    observed.response.alarm_id = 'ffff-0000';
    expect(replay.check(edited).map((f) => [f.check, f.sampleId, f.problem])).toEqual([['tooltalk/replay', edited.id, `executed again, response.alarm_id is "${recorded}" where the conversation records "ffff-0000"`]]);
  });
});

describe('acebench/agent-replay', () => {
  const [replay] = acebenchAudits();
  const agents = [...importAceFolder(`${REFERENCE}acebench`)].filter((s) => s.meta.source?.file === 'data_en/data_agent_multi_turn.json');
  const task = agents.find((s) => s.meta.source?.id === 'agent_multi_turn_0')!;

  it('runs the mile_stone in the sandboxes and reaches the ground_truth', () => {
    expect(replay.check(task)).toEqual([]);
  });

  it('finds a ground_truth the mile_stone does not reach, and leaves other categories alone', () => {
    const edited = structuredClone(task) as Sample & { expected: { finalState: Record<string, Record<string, unknown>>[] } };
    const state = edited.expected.finalState.find((entry) => 'BaseApi' in entry)!;
    state.BaseApi = { ...state.BaseApi, wifi: !state.BaseApi.wifi };
    const findings = replay.check(edited);
    expect(findings).toHaveLength(1);
    expect(findings[0]).toMatchObject({ check: 'acebench/agent-replay', sampleId: edited.id, where: 'expected.milestones' });
    expect(findings[0].problem).toMatch(/^BaseApi\.wifi is (true|false) after the mile_stone, (true|false) in the ground_truth$/);
    expect(replay.check({ ...edited, category: 'normal_atom_bool' })).toEqual([]);
  });
});

describe('nestools/program', () => {
  const [program] = nestoolsAudits();
  const first = eachNesToolsSample(`${REFERENCE}nestools/test_data.jsonl`).next().value as Sample;

  it('writes the chain as a program that parses and passes the program check', () => {
    expect(program.check(first)).toEqual([]);
  });

  it('finds a call with an argument its tool does not take, and a chain no Python program can hold', () => {
    const extra = structuredClone(first);
    extra.expected.calls![0].arguments.extra = 'x';
    expect(program.check(extra).map((f) => f.problem)).toEqual([expect.stringMatching(/unknown_parameter: scan_isbn\(\) has no parameter "extra"/)]);
    const keyword = structuredClone(first);
    const tool = keyword.tools.find((t) => t.name === 'scan_isbn')!;
    tool.parameters.properties = { class: tool.parameters.properties.isbn };
    tool.parameters.required = ['class'];
    keyword.expected.calls![0].arguments = { class: keyword.expected.calls![0].arguments.isbn };
    expect(program.check(keyword).map((f) => f.problem)).toEqual([expect.stringMatching(/^cannot be written as a program: .*"class" is not a Python identifier/)]);
  });
});

describe('mtu/span', () => {
  const [span] = mtuAudits();
  const tool: ToolSpec = {
    name: 'FindEvents',
    description: 'Find events',
    parameters: { type: 'object', properties: { city: { type: 'string' }, date: { type: 'string' }, time: { type: 'string' }, category: { type: 'string', enum: ['Music', 'Sports'] }, seats: { type: 'integer' } }, required: ['city'] },
    returns: { type: 'object', properties: {}, required: [] },
  };
  const sample = (text: string, args: Record<string, unknown>): Sample => ({
    id: 'mtu-x',
    benchmark: 'mtu',
    category: 'S-S',
    split: 'test',
    tools: [tool],
    dialogue: [
      { role: 'user', content: text },
      { role: 'assistant', content: '', calls: [{ id: 'call_0', tool: 'FindEvents', arguments: args as Record<string, never> }] },
    ],
    expected: { calls: [{ id: 'call_0', tool: 'FindEvents', arguments: args as Record<string, never> }] },
    meta: { lineage: [], checks: [], tags: [] },
  });

  it('passes values stated in the conversation, as people say them', () => {
    expect(span.check(sample('Any Music in San Jose on the 7th at 6:30 pm for two?', { city: 'San Jose', date: '2019-03-07', time: '18:30', category: 'Music', seats: 2 }))).toEqual([]);
    expect(spanStated('2019-03-07', 'something on march 7th')).toBe(true);
    // SGD's "no preference" and booleans are no spans.
    expect(span.check(sample('Anything on?', { city: 'dontcare', seats: true as never }))).toEqual([]);
  });

  it('finds a value nobody said, once for a call the dialogue and the expected calls both hold', () => {
    const findings = span.check(sample('Anything fun in NY?', { city: 'New York', category: 'Sports' }));
    expect(findings).toEqual([{ check: 'mtu/span', sampleId: 'mtu-x', where: 'dialogue[1].calls[0] FindEvents: city', problem: '"New York" is not stated in the conversation before the call' }]);
  });
});
