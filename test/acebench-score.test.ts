import { beforeAll, describe, expect, it } from 'vitest';
import type { EvalItem, EvalOutput } from '../core/eval.ts';
import { OfflineGateway } from '../core/llm/offline.ts';
import type { Json, Sample } from '../core/records.ts';
import { runPipeline } from '../core/run.ts';
import { DatasetStore } from '../core/store.ts';
import { getPipeline } from '../pipelines/index.ts';
import { aceRecordToSample, aceMetaOf } from '../stages/acebench/format.ts';
import { importAceFolder } from '../stages/acebench/import.ts';
import type { AceCategory, AceRecord } from '../stages/acebench/record.ts';
import { acebenchScorer as scorer } from '../stages/acebench/score.ts';
import { tempDirs } from './helpers/files.ts';
import { versionSamples } from './helpers/version.ts';

const RELEASED = '../shared/data/reference/acebench';
const tmp = tempDirs('tk-acebench-score-');

/**
 * Released records whose gold answer fails ACEBench's own rules ([language, id, why]): the agent
 * ones are the records whose mile_stone does not reach their ground_truth (see
 * test/acebench-sandbox-replay.test.ts for each reason); the normal one leaves out a required parameter.
 */
const RELEASE_INCONSISTENT: [string, string, string][] = [
  ['zh', 'normal_atom_object_short_1', 'the answer leaves out the required parameter budget_constraints'],
  ...['en', 'zh'].flatMap((language) =>
    ['agent_multi_step_12', 'agent_multi_step_13', 'agent_multi_step_14', 'agent_multi_step_15', 'agent_multi_step_16', 'agent_multi_step_17', 'agent_multi_turn_6'].map(
      (id): [string, string, string] => [language, id, 'the mile_stone does not reach the ground_truth'],
    ),
  ),
  ['en', 'agent_multi_step_0', "the mile_stone orders 'Super Supreme', not on the menu"],
  ['en', 'agent_multi_step_1', "the mile_stone orders 'Super Supreme', not on the menu"],
];

const released = (sample: Sample) => `${aceMetaOf(sample).language} ${aceMetaOf(sample).id}`;
const oracleOutputs = (items: EvalItem[]): EvalOutput[] => items.map((item) => ({ item, output: scorer.oracle(item) }));

/** A hand-made record → its one item. */
function itemOf(category: AceCategory, id: string, question: string, groundTruth: Json, extra: Record<string, Json> = {}): EvalItem {
  const record: AceRecord = { category, language: 'en', data: { id, question, function: [BOOK_TABLE], time: '', ...extra } as AceRecord['data'], answer: { id, ground_truth: groundTruth } };
  const items = scorer.items(aceRecordToSample(record));
  expect(items).toHaveLength(1);
  return items[0];
}

const BOOK_TABLE = {
  name: 'book_table',
  description: 'Books a restaurant table.',
  parameters: {
    type: 'dict',
    properties: { restaurant: { type: 'string' }, city: { type: 'string' }, people: { type: 'integer' }, tags: { type: 'array', items: { type: 'string' } } },
    required: ['restaurant', 'people'],
  },
} as unknown as AceRecord['data']['function'][number];
const GOLD = { book_table: { restaurant: 'Luigi', city: 'New York', people: 4, tags: ['window seat'] } };
const QUESTION = 'user: Book a table for 4 at Luigi in New York, by the window.';

const validityOf = (item: EvalItem, outputs: (string | null)[]) => scorer.score(outputs.map((output) => ({ item, output }))).details.map((d) => d.figures.valid);

describe('ACEBench scorer', () => {
  let samples: Sample[];
  beforeAll(() => {
    samples = [...importAceFolder(RELEASED)];
  });

  it('gives the gold answers (oracle) exactly 1 on every released record but those whose gold breaks ACEBench\'s own rules', () => {
    const items = samples.flatMap((sample) => scorer.items(sample));
    expect(items).toHaveLength(2040);
    const report = scorer.score(oracleOutputs(items));
    const bySample = new Map(samples.map((sample) => [sample.id, sample]));
    const failed = report.details.filter((d) => !d.figures.valid).map((d) => released(bySample.get(d.id)!));
    expect(failed.sort()).toEqual(RELEASE_INCONSISTENT.map(([language, id]) => `${language} ${id}`).sort());
    // The mile_stone itself is always followed: process accuracy 1 everywhere.
    expect(report.details.every((d) => d.figures.process === undefined || d.figures.process === 1)).toBe(true);
    const consistent = items.filter((item) => !failed.includes(released(bySample.get(item.sampleId)!)));
    const clean = scorer.score(oracleOutputs(consistent));
    expect(clean.metrics).toEqual({ normal: 1, special: 1, agent: 1, agent_process: 1, overall: 1 });
    expect(Object.keys(clean.byCategory)).toHaveLength(17);
    for (const table of Object.values(clean.byCategory)) expect(Object.values(table).every((value) => value === 1)).toBe(true);
  });

  it('gives the gold answers exactly 1 on the recipe\'s offline run', async () => {
    const home = tmp();
    await runPipeline({ pipeline: getPipeline('acebench'), configOverrides: { scale: 0.05, tree: { domains: 6 } }, llm: new OfflineGateway(42), home, projectDir: process.cwd(), progress: { quiet: true } });
    const store = new DatasetStore(home);
    const generated = versionSamples(store, store.resolve('acebench@v1'));
    expect(getPipeline('acebench').scorer).toBe(scorer);
    const report = scorer.score(oracleOutputs(generated.flatMap((sample) => scorer.items(sample))));
    expect(report.metrics).toEqual({ normal: 1, special: 1, agent: 1, agent_process: 1, overall: 1 });
    expect(Object.keys(report.byCategory).length).toBeGreaterThanOrEqual(15);
  }, 300_000);

  it('checks call answers by ACEBench\'s rules: standardised strings contained, required and extra parameters, types; numbers by type only', () => {
    const item = itemOf('normal_single_turn_single_function', 'normal_single_turn_single_function_0', QUESTION, GOLD);
    expect(scorer.oracle(item)).toBe("[book_table(restaurant='Luigi', city='New York', people=4, tags=['window seat'])]");
    expect(
      validityOf(item, [
        scorer.oracle(item),
        "[book_table(restaurant='luigi', city='new-york', people=4, tags=['Window_Seat'])]", // standardised: spaces, -, _ and case ignored
        "[book_table(restaurant='Trattoria Luigi', people=4)]", // the answer is contained in the value
        "[book_table(restaurant='Mario', people=4)]", // wrong string
        "[book_table(city='New York', people=4)]", // required restaurant missing
        "[book_table(restaurant='Luigi', people='four')]", // wrong type
        "[book_table(restaurant='Luigi', people=5)]", // ACEBench checks a number's type, not its value
        "[book_table(restaurant='Luigi', people=4, time='8pm')]", // a parameter the function lacks
        "[book_table(restaurant='Luigi', people=4), book_table(restaurant='Luigi', people=4)]", // one call too many
        "[book_table(restaurant='Luigi', people=4, tags=['window'])]", // list values compare whole
      ]),
    ).toEqual([true, true, true, false, false, false, true, false, false, false]);
    // Hand-computed: 2 right of 4 → accuracy 0.5; normal is that category's accuracy; overall is normal alone.
    const report = scorer.score([scorer.oracle(item), "[book_table(restaurant='Mario', people=4)]", "[book_table(restaurant='Luigi', people=5)]", null].map((output) => ({ item, output })));
    expect(report.byCategory).toEqual({ normal_single_turn_single_function: { accuracy: 0.5 } });
    expect(report.metrics).toEqual({ normal: 0.5, overall: 0.5 });
    expect(report.details[1].note).toMatch(/wrong value for parameter \(restaurant\)/);
  });

  it('scores a multi-turn dialogue as right only when every turn is, with process accuracy the share of right turns (hand-computed)', () => {
    const turn = (id: string) => itemOf('normal_multi_turn_user_adjust', id, QUESTION, GOLD);
    const [d0t0, d0t1, d1t0] = [turn('normal_multi_turn_user_adjust_0_0'), turn('normal_multi_turn_user_adjust_0_1'), turn('normal_multi_turn_user_adjust_1_0')];
    const report = scorer.score([
      { item: d0t0, output: scorer.oracle(d0t0) },
      { item: d0t1, output: "[book_table(restaurant='Mario', people=4)]" },
      { item: d1t0, output: scorer.oracle(d1t0) },
    ]);
    // Dialogue 0: 1 of 2 turns right (end 0, process 0.5); dialogue 1: right (1, 1).
    expect(report.byCategory.normal_multi_turn_user_adjust).toEqual({ accuracy: 0.5, process_accuracy: 0.75 });
  });

  it('checks special answers for their phrase and the names and values they must mention (hand-computed overall weighting)', () => {
    const incomplete = itemOf('special_incomplete', 'special_incomplete_0', 'user: Book me a table.', { book_table: ['restaurant', 'people'] });
    expect(validityOf(incomplete, [scorer.oracle(incomplete), '["Missing necessary parameters (restaurant) for the api (book_table)"]', 'Which restaurant, and for how many people?', null])).toEqual([true, false, false, false]);
    const wrong = itemOf('special_error_param', 'special_error_param_0', 'user: Book Luigi for four people.', { people: ['four'] });
    expect(validityOf(wrong, [scorer.oracle(wrong), '["There is incorrect value (4) for the parameters (people) in the conversation history."]'])).toEqual([true, false]);
    const irrelevant = itemOf('special_irrelevant', 'special_irrelevant_0', 'user: Fly me to the moon.', 'Due to the limitations of the function, I cannot solve this problem.');
    expect(validityOf(irrelevant, [scorer.oracle(irrelevant), "[book_table(restaurant='Moon', people=1)]"])).toEqual([true, false]);
    // Normal 0.5 over 2 items, special 1 over 3 items (one per category): overall (√2·0.5 + √3·1) / (√2 + √3).
    const normal = itemOf('normal_single_turn_single_function', 'normal_single_turn_single_function_0', QUESTION, GOLD);
    const report = scorer.score([
      { item: normal, output: scorer.oracle(normal) },
      { item: normal, output: '[]' },
      ...oracleOutputs([incomplete, wrong, irrelevant]),
    ]);
    expect(report.metrics).toEqual({ normal: 0.5, special: 1, overall: (Math.SQRT2 * 0.5 + Math.sqrt(3)) / (Math.SQRT2 + Math.sqrt(3)) });
  });

  it('runs agent answers in the sandbox: end state against the ground truth, process accuracy from the mile_stone (hand-computed)', () => {
    // en agent_multi_step_2: mile_stone [turn_on_wifi()], [login_food_platform(Jack)], [add_food_delivery_order(…)].
    const sample = samples.find((s) => released(s) === 'en agent_multi_step_2')!;
    const [item] = scorer.items(sample);
    const [wifi, login, order] = JSON.parse(scorer.oracle(item)) as string[];
    expect(wifi).toBe('[turn_on_wifi()]');
    const report = scorer.score(
      [
        [wifi, login, order], // right
        [wifi, login], // no order: 2 of 3 steps
        [login, order], // no Wi-Fi first: the search for turn_on_wifi runs past every step, so 0 of 3
        [wifi, '[get_products(merchant_name=\'Jiutian BBQ\')]', login, order], // an extra look-up: still right
      ].map((steps) => ({ item, output: JSON.stringify(steps) })),
    );
    expect(report.details.map((d) => d.figures)).toEqual([
      { valid: true, process: 1 },
      { valid: false, process: 2 / 3 },
      { valid: false, process: 0 },
      { valid: true, process: 1 },
    ]);
    expect(report.byCategory.agent_multi_step).toEqual({ accuracy: 0.5, process_accuracy: (1 + 2 / 3 + 0 + 1) / 4 });
    expect(report.metrics).toEqual({ agent: 0.5, agent_process: (1 + 2 / 3 + 0 + 1) / 4, overall: 0.5 });
  });

  it('scores malformed outputs as ACEBench does, without throwing', () => {
    const normal = itemOf('normal_single_turn_single_function', 'normal_single_turn_single_function_0', QUESTION, GOLD);
    const bad = scorer.score(
      ["book_table(restaurant='Luigi', people=4)", "[book_table(restaurant='Luigi', people=4)", 'Sure, booked!', '{"book_table": {}}', "[order_pizza(size='L')]", null].map((output) => ({ item: normal, output })),
    );
    expect(bad.details.map((d) => d.figures.valid)).toEqual([false, false, false, false, false, false]);
    expect(bad.details.slice(0, 4).every((d) => d.note?.startsWith('wrong_output_format'))).toBe(true);
    expect(bad.details[4].note).toMatch(/order_pizza is not in the ground truth/);
    const agent = scorer.items(samples.find((s) => released(s) === 'en agent_multi_step_2')!)[0];
    const agentReport = scorer.score(['not json [[[', '["[make_coffee()]"]', null].map((output) => ({ item: agent, output })));
    expect(agentReport.details.map((d) => d.figures)).toEqual([
      { valid: false, process: 0 },
      { valid: false, process: 0 },
      { valid: false, process: 0 },
    ]);
    expect(agentReport.details[1].note).toMatch(/unknown method 'make_coffee'/);
  });
});
