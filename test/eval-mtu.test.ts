import { describe, expect, it } from 'vitest';
import type { EvalItem } from '../core/eval.ts';
import { noisyAnswer, NOISE_RATES } from '../eval/noisy-oracle.ts';
import { mtuRecordItem, mtuScorer, releasedMtuItems, toolOrderAccuracy } from '../stages/mtu/score.ts';

const REFERENCE = new URL('../../shared/data/reference/mtu-bench/', import.meta.url).pathname;
const referenceItems = () => releasedMtuItems(REFERENCE);

const tool = (name: string) => ({ name, description: '', parameters: { type: 'object' as const, properties: {}, required: [] }, returns: { type: 'object' as const, properties: {}, required: [] } });

/** A hand-made item: `answer` as in the released files. */
function item(id: string, setting: 'S-S' | 'S-M' | 'M-S' | 'M-M', answer: Record<string, unknown>, turn = 0, dialogue = id): EvalItem {
  return mtuRecordItem(id, { question: 'q', answer: answer as never }, { setting, category: setting, dialogue, turn, hard: false, sampleId: dialogue, tools: ['A', 'B', 'C', 'FindRestaurants', 'ReserveRestaurant'].map(tool) });
}

const scoreOne = (it: EvalItem, output: string | null) => mtuScorer.score([{ item: it, output }]);

describe('MTU-Eval scorer', () => {
  it('scores the gold answers of every released MTU-Eval file 1.0 on every metric', () => {
    const items = referenceItems();
    expect(items.length).toBe(1009);
    const report = mtuScorer.score(items.map((it) => ({ item: it, output: mtuScorer.oracle(it) })));
    expect(Object.keys(report.byCategory).sort()).toEqual(['M-M', 'M-S', 'OOD', 'S-M', 'S-S']);
    for (const table of [report.metrics, ...Object.values(report.byCategory)]) {
      for (const value of Object.values(table)) expect(value).toBe(1);
    }
    expect(report.metrics).toHaveProperty('tool_number_accuracy');
    expect(report.metrics).toHaveProperty('soft_averaged_turn_success_rate');
  });

  it('single tool: tool selection and parameter selection as util.py compares them', () => {
    const gold = item('s', 'S-S', { FindRestaurants: { city: 'San Francisco', party_size: 3 } });
    const ask = (output: string | null) => scoreOne(gold, output).details[0];
    expect(ask('Thought: x\nAction: FindRestaurants\nAction Input: {"city": "san francisco", "party_size": "three"}').figures).toMatchObject({ tool_selection: true, parameter_selection: true });
    // The gold value only has to be inside the predicted one, after lower-casing.
    expect(ask('Action: FindRestaurants\nAction Input: {"city": "San Francisco, CA", "party_size": 3}').figures.parameter_selection).toBe(true);
    expect(ask('Action: FindRestaurants\nAction Input: {"city": "Oakland", "party_size": 3}').figures).toMatchObject({ tool_selection: true, parameter_selection: false });
    expect(ask('Action: FindRestaurants\nAction Input: {"city": "San Francisco"}').figures.parameter_selection).toBe(false);
    expect(ask('Action: FindRestaurants\nAction Input: {"city": "San Francisco", "party_size": 3, "extra": 1}').figures.parameter_selection).toBe(false);
    expect(ask('Action: ReserveRestaurant\nAction Input: {"city": "San Francisco", "party_size": 3}').figures.tool_selection).toBe(false);
    // A call to a tool nobody listed is just a wrong tool.
    expect(ask('Action: NoSuchTool\nAction Input: {}')).toMatchObject({ figures: { tool_selection: false }, note: 'called NoSuchTool instead of FindRestaurants' });
    // Malformed: no Action, an unreadable input, no output at all: no call, never a crash.
    expect(ask('Thought: I would call FindRestaurants.')).toMatchObject({ figures: { tool_selection: false }, note: 'no Action' });
    expect(ask('Action: FindRestaurants\nAction Input: {city: San Francisco')).toMatchObject({ figures: { tool_selection: false }, note: expect.stringContaining('no readable Action Input') });
    expect(ask('Action: FindRestaurants')).toMatchObject({ figures: { tool_selection: false } });
    expect(ask(null)).toMatchObject({ figures: { tool_selection: false }, note: 'no output' });
    // Four answers, two with the right tool, one of them with the right parameters.
    const report = mtuScorer.score([
      { item: gold, output: 'Action: FindRestaurants\nAction Input: {"city": "San Francisco", "party_size": 3}' },
      { item: item('s2', 'S-S', { FindRestaurants: { city: 'Paris' } }), output: 'Action: FindRestaurants\nAction Input: {"city": "Rome"}' },
      { item: item('s3', 'S-S', { FindRestaurants: { city: 'Paris' } }), output: 'Action: ReserveRestaurant\nAction Input: {"city": "Paris"}' },
      { item: item('s4', 'S-S', { FindRestaurants: { city: 'Paris' } }), output: 'no format at all' },
    ]);
    expect(report.metrics).toMatchObject({ tool_selection_accuracy: 0.5, parameter_selection_accuracy: 0.25, success_rate: 0.25 });
  });

  it('single tool without a gold call: no Action is right, `{"": {}}` and `{}` alike', () => {
    for (const answer of [{ '': {} }, {}]) {
      const gold = item('n', 'S-S', answer);
      expect(scoreOne(gold, 'Thought: Which city do you mean?').details[0].figures).toMatchObject({ tool_selection: true, parameter_selection: true });
      expect(scoreOne(gold, 'Thought: x\nAction: A\nAction Input: {}').details[0].figures.tool_selection).toBe(false);
      expect(scoreOne(gold, 'Action: None\nAction Input: {}').details[0].figures.tool_selection).toBe(true);
    }
  });

  it('multi tool: tool number and tool order by the paper, worked by hand', () => {
    const gold = item('m', 'S-M', { A: { x: '1' }, B: { y: 'b' }, C: {} });
    const calls = (...names: [string, string][]) => names.map(([n, args]) => `Action: ${n}\nAction Input: ${args}`).join('\n');
    const figures = (output: string) => scoreOne(gold, output).details[0].figures;
    expect(figures(calls(['A', '{"x": "1"}'], ['B', '{"y": "b"}'], ['C', '{}']))).toMatchObject({ tool_number: 1, tool_order: 1, success: true });
    // Pred [A, B]: TN = 2/3; the run A,B starts Pred at 0, t = 1: TO = 2/3.
    const missing = figures(calls(['A', '{"x": "1"}'], ['B', '{"y": "b"}']));
    expect(missing.tool_number).toBeCloseTo(2 / 3, 12);
    expect(missing.tool_order).toBeCloseTo(2 / 3, 12);
    // Pred [C, A, B]: TN = 1; the longest run A,B starts Pred at 1: TO = cos(π/6) · 2/3.
    const shuffled = figures(calls(['C', '{}'], ['A', '{"x": "1"}'], ['B', '{"y": "b"}']));
    expect(shuffled.tool_number).toBe(1);
    expect(shuffled.tool_order).toBeCloseTo(Math.cos(Math.PI / 6) * (2 / 3), 12);
    expect(shuffled.success).toBe(false);
    // B with a wrong value counts as another tool: Pred {A, B'} against {A, B, C}: TN = 1/4, TO = 1/3.
    const wrong = figures(calls(['A', '{"x": "one"}'], ['B', '{"y": "z"}']));
    expect(wrong.tool_number).toBeCloseTo(1 / 4, 12);
    expect(wrong.tool_order).toBeCloseTo(1 / 3, 12);
    // An extra tool the gold does not call widens the union (the paper's |Pred ∪ GT|).
    expect(figures(calls(['A', '{"x": "1"}'], ['B', '{"y": "b"}'], ['C', '{}'], ['FindRestaurants', '{}'])).tool_number).toBeCloseTo(3 / 4, 12);
    expect(figures('Thought: nothing to do')).toMatchObject({ tool_number: 0, tool_order: 0 });
    expect(toolOrderAccuracy([], [])).toBe(1);
    expect(scoreOne(item('e', 'M-M', {}), 'Thought: none').details[0].figures).toMatchObject({ tool_number: 1, tool_order: 1 });
  });

  it('multi turn: success rate, averaged and soft averaged turn success and task process rate over a dialogue', () => {
    const turns = [true, false, true, true];
    const outputs = turns.map((ok, turn) => {
      const it = item(`d_${turn}`, 'M-S', { A: { x: 'v' } }, turn, 'd');
      return { item: it, output: ok ? 'Action: A\nAction Input: {"x": "v"}' : 'Action: B\nAction Input: {"x": "v"}' };
    });
    // Given out of order: turns are ordered by their index, not by their place in the list.
    const report = mtuScorer.score([outputs[2], outputs[0], outputs[3], outputs[1]]);
    expect(report.metrics.success_rate).toBe(0);
    expect(report.metrics.averaged_turn_success_rate).toBe(0.75);
    expect(report.metrics.soft_averaged_turn_success_rate).toBeCloseTo((1 + 0 + (1 - Math.exp(-1)) + (1 - Math.exp(-2))) / 4, 12);
    expect(report.metrics.task_process_rate).toBe(0.25);
    expect(report.metrics.turn_success_rate).toBe(0.75);
  });

  it('the noisy oracle injects each mistake at its rate, and the scores follow what it injected', () => {
    const items = referenceItems();
    const answers = items.map((it) => ({ it, ...noisyAnswer(mtuScorer, it, 7) }));
    // Each corruption is drawn for 10% of the items: within four standard deviations of n·p.
    const n = items.length;
    for (const [corruption, p] of Object.entries(NOISE_RATES)) {
      const drawn = answers.filter((a) => a.drawn === corruption).length;
      expect(Math.abs(drawn - n * p)).toBeLessThan(4 * Math.sqrt(n * p * (1 - p)));
    }
    const report = mtuScorer.score(answers.map((a) => ({ item: a.it, output: a.output })));
    // Single-tool items lose tool selection exactly where a wrong tool or an extra first call was applied.
    const single = answers.filter((a) => a.it.category === 'S-S');
    const wrongTool = single.filter((a) => a.applied && (a.drawn === 'wrong-tool' || a.drawn === 'extra-call')).length;
    expect(report.byCategory['S-S'].tool_selection_accuracy).toBeCloseTo(1 - wrongTool / single.length, 12);
    // … and parameter selection wherever any mistake was applied.
    const anyMistake = single.filter((a) => a.applied).length;
    expect(report.byCategory['S-S'].parameter_selection_accuracy).toBeCloseTo(1 - anyMistake / single.length, 12);
    expect(anyMistake).toBeGreaterThan(0);
    // Every item with an applied mistake fails its turn; every other item succeeds.
    const failed = new Set(report.details.filter((d) => !d.figures.success).map((d) => d.id));
    expect(failed).toEqual(new Set(answers.filter((a) => a.applied).map((a) => a.it.id)));
  });
});
