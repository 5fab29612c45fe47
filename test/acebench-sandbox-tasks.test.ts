import { describe, expect, it } from 'vitest';
import type { Json } from '../core/records.ts';
import { Rng } from '../core/rng.ts';
import { SandboxSession } from '../stages/acebench/sandbox/execute.ts';
import { parseCallString } from '../stages/acebench/sandbox/python-call.ts';
import { compareWithAnswer } from '../stages/acebench/sandbox/replay.ts';
import { buildAgentTask, type AgentCategory, type TaskFamily } from '../stages/acebench/sandbox/tasks.ts';

const FAMILY_SETS: TaskFamily[][] = [['message'], ['reminder'], ['food'], ['food', 'message'], ['food', 'reminder'], ['message', 'reminder'], ['food', 'message', 'reminder'], ['travel'], ['finance'], ['finance', 'message']];
const CATEGORIES: AgentCategory[] = ['agent_multi_step', 'agent_multi_turn'];

function* allTasks(seeds: number) {
  for (const families of FAMILY_SETS) {
    for (const language of ['en', 'zh'] as const) {
      for (const category of CATEGORIES) {
        for (let seed = 0; seed < seeds; seed++) {
          yield buildAgentTask({ rng: Rng.derive(seed, families.join('+'), language, category), families, language, category, index: seed });
        }
      }
    }
  }
}

describe('agent task generator', () => {
  it('gives records in the released key order whose ground_truth is what the mile_stone does from the initial_config', () => {
    let tasks = 0;
    for (const { record, calls } of allTasks(6)) {
      tasks++;
      expect(Object.keys(record.data)).toEqual(['id', 'question', 'initial_config', 'path', 'function', 'involved_classes']);
      expect(Object.keys(record.answer!)).toEqual(['id', 'ground_truth', 'mile_stone']);
      const mileStone = record.answer!.mile_stone as string[];
      // Rendered strings are valid Python: no lenient reading needed.
      expect(mileStone.map((step) => parseCallString(step, { lenient: false }).calls)).toEqual(calls);
      const session = new SandboxSession({ initialConfig: record.data.initial_config, involvedClasses: record.data.involved_classes as string[], language: record.language });
      const outcomes = session.execute(mileStone);
      expect(outcomes.every((o) => o.ok)).toBe(true);
      expect(compareWithAnswer(session.state(), record.answer!.ground_truth).differences).toEqual([]);
      // Every gold call is offered, in the released description shape.
      const offered = new Set(record.data.function.map((f) => f.name));
      for (const step of calls) for (const call of step) expect(offered.has(call.name)).toBe(true);
      for (const f of record.data.function) expect(f.parameters).toMatchObject({ type: expect.stringMatching(/^(dict|object)$/), required: expect.any(Array), properties: expect.any(Object) });
      // The task changes something: the final state is not the initial one.
      const untouched = new SandboxSession({ initialConfig: record.data.initial_config, involvedClasses: record.data.involved_classes as string[], language: record.language });
      expect(JSON.stringify(untouched.groundTruth())).not.toBe(JSON.stringify(record.answer!.ground_truth));
    }
    expect(tasks).toBe(FAMILY_SETS.length * 2 * 2 * 6);
  });

  it('is reproducible from the seed and varies with it', () => {
    const build = (seed: number) => buildAgentTask({ rng: new Rng(seed), families: ['food', 'message'], language: 'en', category: 'agent_multi_step', index: 7 });
    expect(build(11)).toEqual(build(11));
    const questions = new Set(Array.from({ length: 8 }, (_, seed) => build(seed).record.data.question));
    expect(questions.size).toBeGreaterThan(4);
    expect(build(11).record.data.id).toBe('agent_multi_step_7');
  });

  it('writes the question as an instruction (multi_step) or a simulated-user persona (multi_turn), in either language', () => {
    const task = (language: 'en' | 'zh', category: AgentCategory) => buildAgentTask({ rng: new Rng(5), families: ['food', 'message'], language, category, index: 0 }).record;
    expect(task('en', 'agent_multi_step').data.question).toMatch(/^I am \w+ \(username: \w+, password: password\d+\)\. I need to order \d "[^"]+" from .+ on the food platform, then send a text message to \w+ with the content "The total cost is \(\) yuan\."/);
    const persona = task('en', 'agent_multi_turn').data.question;
    expect(persona).toMatch(/^You are \w+ .*You want to order .*You will respond to the agent but will not proactively provide any unsolicited information\./);
    expect(task('zh', 'agent_multi_turn').data.question).toMatch(/^你是\w+.*你想在外卖平台上从.*你会对agent做出反应，但不会主动提供任何未被询问的信息。/);
  });

  it('fills the amount into the message from the executed order, and deletes by the rule the question states', () => {
    for (let seed = 0; seed < 10; seed++) {
      const { record } = buildAgentTask({ rng: new Rng(seed), families: ['food', 'message'], language: 'en', category: 'agent_multi_step', index: 0 });
      const food = (record.answer!.ground_truth as Json[]).find((entry) => Object.hasOwn(entry as object, 'FoodPlatform')) as { FoodPlatform: { orders: { total_price: number }[] } };
      const total = food.FoodPlatform.orders[0].total_price;
      const mileStone = (record.answer!.mile_stone as string[]).join(' ');
      expect(mileStone).toContain(`message='The total cost is ${total.toFixed(1)} yuan.'`);
      const latest = record.data.question.includes('delete the most recent message');
      expect(mileStone).toContain(latest ? '[get_latest_message_id()] [delete_message(message_id=4)]' : '[get_earliest_message_id()] [delete_message(message_id=3)]');
    }
  });

  it('refuses family sets it cannot combine, with the reason', () => {
    const build = (families: string[]) => buildAgentTask({ rng: new Rng(1), families: families as TaskFamily[], language: 'en', category: 'agent_multi_step', index: 0 });
    expect(() => build(['travel', 'food'])).toThrow('agent task families: travel stands alone (got travel, food)');
    expect(() => build(['finance', 'reminder'])).toThrow('agent task families: finance combines only with message (got finance, reminder)');
    expect(() => build(['weather'])).toThrow("agent task families: unknown family 'weather' (known: message, reminder, food, travel, finance)");
    expect(() => build([])).toThrow('agent task families: give at least one of message, reminder, food, travel, finance');
  });
});
