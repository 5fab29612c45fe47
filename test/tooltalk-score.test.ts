import { describe, expect, it } from 'vitest';
import type { EvalItem, EvalOutput, EvalReport } from '../core/eval.ts';
import { OfflineGateway } from '../core/llm/offline.ts';
import { runPipeline } from '../core/run.ts';
import { DatasetStore } from '../core/store.ts';
import { getPipeline } from '../pipelines/index.ts';
import { conversationFiles } from '../stages/tooltalk/conversation-files.ts';
import { importConversationFile } from '../stages/tooltalk/import.ts';
import { createComparator, type CallRecord } from '../stages/tooltalk/comparators.ts';
import { tooltalkScorer } from '../stages/tooltalk/score.ts';
import { tempDirs } from './helpers/files.ts';
import { versionSamples } from './helpers/version.ts';

const RELEASED = '../shared/data/reference/tooltalk';
const scorer = tooltalkScorer;
const tmp = tempDirs('tk-tooltalk-score-');

const PERFECT = { precision: 1, recall: 1, action_precision: 1, incorrect_action_rate: 0, success_rate: 1 };

function oracleReport(items: EvalItem[]): EvalReport {
  return scorer.score(items.map((item) => ({ item, output: scorer.oracle(item) })));
}

/** The items of one released file. */
function itemsOf(file: string): EvalItem[] {
  return scorer.items(importConversationFile(RELEASED, file));
}

// AccountTools-Alarm-Calendar-AddAlarm-0: assistant turns 1 (no call), 3 (RegisterUser) and
// 5 (CreateEvent, AddAlarm) — three items, three ground-truth calls, all actions.
const HARD = 'tooltalk/AccountTools-Alarm-Calendar-AddAlarm-0.json';
const REGISTER = { api_name: 'RegisterUser', parameters: { username: 'hestler', password: 'Meizuch4uu', email: 'j.hester@gahoo.com', phone: '708-340-0190', name: 'Julian Hester' } };
const EVENT = { api_name: 'CreateEvent', parameters: { name: 'Client Meeting', event_type: 'meeting', start_time: '2023-09-12 08:00:00', end_time: '2023-09-12 09:00:00', attendees: ['alice59'] } };
const ALARM = { api_name: 'AddAlarm', parameters: { time: '07:30:00' } };

function answer(items: EvalItem[], outputs: (string | null)[]): EvalOutput[] {
  expect(items.map((item) => (item.gold as { turn: number }).turn)).toEqual([1, 3, 5]);
  return items.map((item, index) => ({ item, output: outputs[index] }));
}

describe('ToolTalk scorer', () => {
  it('gives the ground truth (oracle) exactly 1 on every metric over the 78 released conversations, easy and hard', () => {
    const items = conversationFiles(RELEASED).flatMap(itemsOf);
    expect(new Set(items.map((item) => item.sampleId)).size).toBe(78);
    const report = oracleReport(items);
    expect(report.metrics).toEqual(PERFECT);
    expect(report.byCategory).toEqual({ easy: PERFECT, tooltalk: PERFECT });
    expect(report.details.filter((d) => d.note)).toEqual([]);
  });

  it('gives the ground truth exactly 1 on the recipe\'s offline run', async () => {
    const home = tmp();
    await runPipeline({ pipeline: getPipeline('tooltalk'), configOverrides: { conversations: 4, plugins: ['Alarm', 'Calendar', 'Reminder', 'Weather', 'AccountTools'] }, llm: new OfflineGateway(42), home, projectDir: process.cwd(), progress: { quiet: true } });
    const store = new DatasetStore(home);
    const samples = versionSamples(store, store.resolve('tooltalk@v1'));
    expect(getPipeline('tooltalk').scorer).toBe(scorer);
    const items = samples.flatMap((sample) => scorer.items(sample));
    expect(items.length).toBeGreaterThan(28);
    const report = oracleReport(items);
    expect(report.metrics).toEqual(PERFECT);
    expect(Object.keys(report.byCategory).sort()).toEqual(['easy', 'tooltalk']);
  });

  it('shows the model the conversation before the turn, earlier calls with their results, and the suites\' tools', () => {
    const [first, second, third] = itemsOf(HARD);
    expect(first.messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(first.messages[0].content).toContain('location: Seattle\ntimestamp: 2023-09-11 09:00:00');
    expect(third.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user', 'assistant', 'tool', 'assistant', 'user']);
    expect(third.messages[4].tool_calls).toEqual([expect.objectContaining({ function: { name: 'RegisterUser', arguments: JSON.stringify(REGISTER.parameters) } })]);
    expect(second.tools.map((t) => t.name)).toContain('RegisterUser');
    expect(JSON.parse(scorer.oracle(first))).toEqual([]);
    expect(JSON.parse(scorer.oracle(third))).toEqual([EVENT, ALARM]);
  });

  it('counts a wrong action that succeeds as an incorrect action and fails the conversation (hand-computed)', () => {
    const wrongEvent = { ...EVENT, parameters: { ...EVENT.parameters, start_time: '2023-09-12 10:00:00', end_time: '2023-09-12 11:00:00' } };
    const report = scorer.score([
      ...answer(itemsOf(HARD), ['[]', JSON.stringify([REGISTER]), JSON.stringify([wrongEvent, ALARM])]),
      ...itemsOf('easy/AddAlarm-easy.json').map((item) => ({ item, output: scorer.oracle(item) })),
    ]);
    // Hard: 3 predictions, 2 matches (RegisterUser, AddAlarm), 3 ground truths, 3 actions, 1 incorrect.
    expect(report.byCategory.tooltalk).toEqual({ precision: 2 / 3, recall: 2 / 3, action_precision: 2 / 3, incorrect_action_rate: 1 / 3, success_rate: 0 });
    // With the easy conversation (1 AddAlarm, matched): 3/4 everywhere, 1 of 2 conversations succeeds.
    expect(report.metrics).toEqual({ precision: 3 / 4, recall: 3 / 4, action_precision: 3 / 4, incorrect_action_rate: 1 / 4, success_rate: 1 / 2 });
    expect(report.byCategory.easy).toEqual(PERFECT);
    const turn5 = report.details.find((d) => d.id.endsWith('#5'))!;
    expect(turn5.figures).toEqual({ predictions: 2, groundTruths: 2, matches: 1, actions: 2, validActions: 1, incorrectActions: 1, conversationSuccess: false });
    expect(turn5.note).toMatch(/CreateEvent.*start_time.*incorrect action/);
  });

  it('does not count an action that failed as incorrect; an extra failing call only lowers precision (hand-computed)', () => {
    // Turn 1 sets an alarm before anyone is logged in: it fails ("User is not logged in").
    const report = scorer.score(answer(itemsOf(HARD), [JSON.stringify([ALARM]), JSON.stringify([REGISTER]), JSON.stringify([EVENT, ALARM])]));
    // 4 predictions, 3 matches, 3 ground truths, 4 actions, none incorrect: recall 1, success.
    expect(report.metrics).toEqual({ precision: 3 / 4, recall: 1, action_precision: 3 / 4, incorrect_action_rate: 0, success_rate: 1 });
    expect(report.details[0].note).toContain('User is not logged in');
  });

  it('matches a prediction to a ground-truth call of another turn (the repository matches over the whole conversation)', () => {
    // RegisterUser one turn early, nothing in its own turn: still a match, recall 1.
    const report = scorer.score(answer(itemsOf(HARD), [JSON.stringify([REGISTER]), '[]', JSON.stringify([EVENT, ALARM])]));
    expect(report.metrics).toEqual(PERFECT);
  });

  it('scores malformed outputs as ToolTalk does, without throwing: no JSON list = no calls, unknown tool and unreadable arguments = failed calls', () => {
    const report = scorer.score(
      answer(itemsOf(HARD), [
        'I will create your account now.',
        JSON.stringify([{ api_name: 'MakeCoffee', parameters: {} }, { tool: 'RegisterUser', arguments: '{"username": "hestler",' }]),
        null,
      ]),
    );
    // 2 predictions (both failed), 0 matches, 3 ground truths; 1 action (RegisterUser), not incorrect since it failed.
    expect(report.metrics).toEqual({ precision: 0, recall: 0, action_precision: 0, incorrect_action_rate: 0, success_rate: 0 });
    const [text, calls, none] = report.details;
    expect(text.figures.predictions).toBe(0);
    expect(text.note).toMatch(/not JSON/);
    expect(calls.figures).toMatchObject({ predictions: 2, actions: 1, incorrectActions: 0 });
    expect(calls.note).toMatch(/API MakeCoffee not found/);
    expect(calls.note).toMatch(/Failed to parse API call/);
    expect(none.note).toMatch(/no output/);
    const object = scorer.score(answer(itemsOf(HARD), ['{"api_name": "RegisterUser"}', '[1, "x"]', '[]']));
    expect(object.details[0].note).toMatch(/not a JSON list/);
    expect(object.details[1].figures.predictions).toBe(2);
  });

  it('compares free text synchronously exactly as the comparator does asynchronously', async () => {
    const comparator = createComparator();
    const email = (body: string): CallRecord => ({ request: { api_name: 'SendEmail', parameters: { to: ['a@b.c'], subject: 'Meeting', body } }, response: { status: 'success' }, exception: null });
    const truth = email('See you at the meeting tomorrow at noon');
    for (const body of ['See you at the meeting tomorrow at noon!', 'see you at the meeting tomorrow at noon', 'Dinner is cancelled']) {
      expect(comparator.compareSync(email(body), truth)).toEqual(await comparator.compare(email(body), truth));
    }
    expect(comparator.compareSync(email('Dinner is cancelled'), truth).match).toBe(false);
    expect(comparator.compareSync(email('See you at the meeting tomorrow at noon!'), truth).match).toBe(true);
  });
});
