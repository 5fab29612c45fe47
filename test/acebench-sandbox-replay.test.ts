import { beforeAll, describe, expect, it } from 'vitest';
import { replayReleased, type ReleasedReplay } from '../stages/acebench/sandbox/replay.ts';

// Runs the mile_stone of each of the 100 released agent records (multi_step and multi_turn, en
// and zh) from its initial_config and compares the final state with its ground_truth, class by
// class, exactly (a record whose mile_stone lists alternative paths counts when one of them gets
// there). Every difference below is in the release, not the sandboxes: the mile_stone and the
// answer disagree, as the reasons say.
const RELEASED = '../shared/data/reference/acebench';

const REPRODUCED = 82;
const TOTAL = 100;
const CALLS = 550;

const SUPER_SUPREME = "mile_stone orders 'Super Supreme', which is not on Domino's menu ('Super Supreme Pizza'), so the order fails; the answer holds the 88.0 order";
const OLD_REMINDERS = "answer's reminder_list comes from a sandbox with two default reminders (no 'To-do list', counter at 2): the new reminder is 3 with reminder_id 3, where the released sandbox gives 4 (ACEBench's checker never compares it: the answer spells the class 'ReminderAPI')";
const NO_FOOD_LOGIN = 'mile_stone never calls login_food_platform, so the order fails (Helen not logged in); the answer holds the 22.0 order';
const DELETES_EARLIEST = 'mile_stone deletes the earliest message (3), the answer the most recent one (4) as the question asks';
const NO_DEVICE_LOGIN = 'mile_stone never calls login_device though initial_config has the device logged out, so the logged-in steps fail; the answer is logged in';

/** [language, id, differing "Class path"s (first difference per class), why]. */
const EXPECTED_MISMATCHES: [string, string, string[], string][] = [
  ['en', 'agent_multi_step_0', ['FoodPlatform users.Eve.balance', 'ReminderApi reminder_list.3.reminder_id'], `${SUPER_SUPREME}; ${OLD_REMINDERS}`],
  ['en', 'agent_multi_step_1', ['FoodPlatform users.Eve.balance', 'ReminderApi reminder_list.3.reminder_id'], `${SUPER_SUPREME}; ${OLD_REMINDERS}`],
  ['en', 'agent_multi_step_12', ['FoodPlatform users.Helen.balance'], NO_FOOD_LOGIN],
  ['en', 'agent_multi_step_13', ['FoodPlatform users.Helen.balance'], NO_FOOD_LOGIN],
  ['en', 'agent_multi_step_14', ['MessageApi inbox.3'], DELETES_EARLIEST],
  ['en', 'agent_multi_step_15', ['MessageApi inbox.3'], DELETES_EARLIEST],
  ['en', 'agent_multi_step_16', ['BaseApi logged_in', 'MessageApi inbox.7'], `${NO_DEVICE_LOGIN} (delete and send included); and ${DELETES_EARLIEST}`],
  ['en', 'agent_multi_step_17', ['MessageApi inbox.3'], DELETES_EARLIEST],
  ['en', 'agent_multi_turn_6', ['BaseApi logged_in', 'ReminderApi reminder_list.4'], `${NO_DEVICE_LOGIN}, with the reminder added`],
  ['zh', 'agent_multi_step_0', ['ReminderApi reminder_list.3.reminder_id'], OLD_REMINDERS],
  ['zh', 'agent_multi_step_1', ['ReminderApi reminder_list.3.reminder_id'], OLD_REMINDERS],
  ['zh', 'agent_multi_step_12', ['FoodPlatform users.Helen.balance'], NO_FOOD_LOGIN],
  ['zh', 'agent_multi_step_13', ['FoodPlatform users.Helen.balance'], NO_FOOD_LOGIN],
  ['zh', 'agent_multi_step_14', ['MessageApi inbox.3'], DELETES_EARLIEST],
  ['zh', 'agent_multi_step_15', ['MessageApi inbox.3'], DELETES_EARLIEST],
  ['zh', 'agent_multi_step_16', ['MessageApi inbox.3'], DELETES_EARLIEST],
  ['zh', 'agent_multi_step_17', ['MessageApi inbox.3'], DELETES_EARLIEST],
  ['zh', 'agent_multi_turn_6', ['BaseApi logged_in', 'ReminderApi reminder_list.4'], `${NO_DEVICE_LOGIN}, with the reminder added`],
];

/**
 * Records whose mile_stone lists alternative paths: [language, id, reproduced per path]. In 8 and
 * 9 the second path leaves out the login_device the first has, with the device logged out.
 */
const ALTERNATIVES: [string, string, boolean[]][] = ['en', 'zh'].flatMap((language) => [
  [language, 'agent_multi_step_6', [true, true]],
  [language, 'agent_multi_step_7', [true, true]],
  [language, 'agent_multi_step_8', [true, false]],
  [language, 'agent_multi_step_9', [true, false]],
  [language, 'agent_multi_step_10', [true, true, true]],
] as [string, string, boolean[]][]);

/** Answer class names that are typos of the class ([language, id, as written]). */
const CLASS_TYPOS: [string, string, string][] = [
  ['en', 'agent_multi_step_0', 'ReminderAPI'],
  ['en', 'agent_multi_step_1', 'ReminderAPI'],
  ['en', 'agent_multi_turn_7', 'Reminderpi'],
  ['en', 'agent_multi_turn_9', 'BaseAPI'],
  ['zh', 'agent_multi_step_0', 'ReminderAPI'],
  ['zh', 'agent_multi_step_1', 'ReminderAPI'],
  ['zh', 'agent_multi_turn_7', 'Reminderpi'],
  ['zh', 'agent_multi_turn_9', 'BaseAPI'],
];

describe('ACEBench sandboxes against the released agent records', () => {
  let replay: ReleasedReplay;
  beforeAll(() => {
    replay = replayReleased(RELEASED);
  });

  it(`reproduces ${REPRODUCED} of the ${TOTAL} released final states exactly`, () => {
    expect(replay.total).toBe(TOTAL);
    expect(replay.calls).toBe(CALLS);
    expect(replay.reproduced).toBe(REPRODUCED);
    expect(REPRODUCED + EXPECTED_MISMATCHES.length).toBe(TOTAL);
  });

  it('differs from the release only where the release contradicts itself, at the listed places', () => {
    const mismatches = replay.records
      .filter((record) => !record.reproduced)
      .map((record) => [record.language, record.id, record.paths.flatMap((path) => path.differences.map((d) => `${d.className} ${d.path}`))]);
    expect(mismatches).toEqual(EXPECTED_MISMATCHES.map(([language, id, differences]) => [language, id, differences]));
  });

  it('pins what each listed difference holds (the released value against the sandbox one)', () => {
    const find = (language: string, id: string) => replay.records.find((r) => r.language === language && r.id === id)!;
    const difference = (language: string, id: string, className: string) => find(language, id).paths[0].differences.find((d) => d.className === className)!;
    expect(difference('en', 'agent_multi_step_0', 'FoodPlatform')).toMatchObject({ expected: 412, actual: 500 });
    expect(difference('en', 'agent_multi_step_0', 'ReminderApi')).toMatchObject({ expected: 3, actual: 1003 });
    expect(difference('en', 'agent_multi_step_12', 'FoodPlatform')).toMatchObject({ expected: 778, actual: 800 });
    expect(difference('en', 'agent_multi_step_14', 'MessageApi')).toMatchObject({ actual: undefined, expected: expect.objectContaining({ sender_id: 'USR102', time: '2023-12-05' }) });
    expect(difference('en', 'agent_multi_turn_6', 'BaseApi')).toMatchObject({ expected: true, actual: false });
  });

  it('runs every released call: none rejected, and the alternatives replay as listed', () => {
    expect(replay.records.flatMap((record) => record.paths.flatMap((path) => path.rejected))).toEqual([]);
    const alternatives = replay.records.filter((r) => r.paths.length > 1).map((r) => [r.language, r.id, r.paths.map((p) => p.reproduced)]);
    expect(alternatives).toEqual(ALTERNATIVES);
  });

  it("reads the answers' misspelt class names, the ignored initial_config key and the unescaped quotes", () => {
    const typos = replay.records.flatMap((record) => record.classTypos.map((typo) => [record.language, record.id, typo]));
    expect(typos).toEqual(CLASS_TYPOS);
    const ignored = replay.records.flatMap((record) => record.ignoredConfigKeys.map((key) => [record.language, record.id, key]));
    // zh multi_turn 12 spells BaseApi 'Baspi': ACEBench then loads the defaults (Wi-Fi off), and so does the replay.
    expect(ignored).toEqual([['zh', 'agent_multi_turn_12', 'Baspi']]);
    // Strings such as 'Domino's' that Python's ast.parse rejects, read leniently.
    const repaired = replay.records.reduce((sum, record) => sum + record.paths.reduce((s, p) => s + p.repairedQuotes, 0), 0);
    expect(repaired).toBe(18);
  });

  it('names the folder when the release is not there', () => {
    expect(() => replayReleased('/nonexistent/acebench')).toThrow(/acebench\/data_en\/possible_answer\/data_agent_multi_step\.json: cannot read the released ACEBench file.*point the replay at the folder holding data_en/);
  });
});
