import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { EvalItem } from '../core/eval.ts';
import type { ToolSpec } from '../core/records.ts';
import { noisyAnswer, NOISE_RATES } from '../eval/noisy-oracle.ts';
import { readCsv } from '../review/csv.ts';
import { readChoice, tooleItem, tooleScorer } from '../stages/toole/score.ts';

const REFERENCE = new URL('../../shared/data/reference/metatool/', import.meta.url).pathname;

const spec = (name: string, description = ''): ToolSpec => ({ name, description, parameters: { type: 'object', properties: {}, required: [] }, returns: { type: 'object', properties: {}, required: [] } });

/**
 * The released MetaTool data read directly as task items: each (query, tool) row of all_clean_data.csv
 * as a similar-choices item (its tool among the next four of the sorted tool list), an awareness item
 * ("yes") and a reliability item (those four without it: "None"); each scenario file's tools with two
 * of their queries; each multi-tool golden query with its pair among three others.
 */
function referenceItems(): EvalItem[] {
  const descriptions = { ...JSON.parse(readFileSync(`${REFERENCE}plugin_des.json`, 'utf8')), ...JSON.parse(readFileSync(`${REFERENCE}big_tool_des.json`, 'utf8')) } as Record<string, string>;
  const rows = readCsv(`${REFERENCE}all_clean_data.csv`).records.map((r) => ({ query: r.cells.Query, tool: r.cells.Tool }));
  const names = [...new Set(rows.map((r) => r.tool))].sort();
  const others = (tool: string, k: number) => Array.from({ length: k }, (_, i) => names[(names.indexOf(tool) + 1 + i) % names.length]);
  const items: EvalItem[] = [];
  rows.forEach((row, i) => {
    const near = others(row.tool, 4);
    items.push(tooleItem(`similar-${i}`, `row-${i}`, { task: 'similar', labels: [row.tool] }, row.query, [row.tool, ...near].sort().map((n) => spec(n, descriptions[n]))));
    items.push(tooleItem(`reliability-${i}`, `row-${i}`, { task: 'reliability', labels: [] }, row.query, near.map((n) => spec(n, descriptions[n]))));
    items.push(tooleItem(`awareness-${i}`, `row-${i}`, { task: 'awareness', labels: ['yes'] }, row.query, []));
  });
  for (const file of readdirSync(`${REFERENCE}scenario`)) {
    const scenario = file.replace(/\.json$/, '');
    const tools = (JSON.parse(readFileSync(`${REFERENCE}scenario/${file}`, 'utf8')) as { Tools: string[] }).Tools;
    for (const tool of tools) {
      rows.filter((r) => r.tool === tool).slice(0, 2).forEach((row, i) => items.push(tooleItem(`scenario-${scenario}-${tool}-${i}`, tool, { task: 'scenario', labels: [tool], scenario }, row.query, tools.map((n) => spec(n, descriptions[n])))));
    }
  }
  const golden = JSON.parse(readFileSync(`${REFERENCE}multi_tool_query_golden.json`, 'utf8')) as { query: string; tool: string[] }[];
  const big = Object.keys(JSON.parse(readFileSync(`${REFERENCE}big_tool_des.json`, 'utf8')));
  golden.forEach((row, i) => {
    const rest = big.filter((n) => !row.tool.includes(n)).slice(i % 5, (i % 5) + 3);
    items.push(tooleItem(`multi-${i}`, `multi-${i}`, { task: 'multi-tool', labels: row.tool }, row.query, [...row.tool, ...rest].map((n) => spec(n, descriptions[n]))));
  });
  return items;
}

const tools = ['WeatherTool', 'Weather', 'NewsTool', 'search', 'FinanceTool'].map((n) => spec(n));
const item = (id: string, task: 'awareness' | 'similar' | 'reliability' | 'multi-tool' | 'scenario', labels: string[]) => tooleItem(id, id, { task, labels }, 'q', task === 'awareness' ? [] : tools);

describe('MetaTool scorer', () => {
  it('scores the gold answers of the released MetaTool data 1.0 (awareness, CSR of every task, multi-tool 2/2)', () => {
    const items = referenceItems();
    expect(items.length).toBeGreaterThan(60_000);
    const report = tooleScorer.score(items.map((it) => ({ item: it, output: tooleScorer.oracle(it) })));
    expect(report.metrics).toMatchObject({ awareness_accuracy: 1, awareness_precision: 1, awareness_recall: 1, awareness_f1: 1, similar_csr: 1, scenario_csr: 1, reliability_csr: 1, 'multi-tool_csr': 1, 'multi-tool_2/2': 1, csr: 1 });
    expect(report.details.filter((d) => d.note)).toEqual([]);
    expect(Object.keys(report.byCategory)).toContain('scenario:Students');
  });

  it('awareness: accuracy, precision, recall and F1 worked by hand', () => {
    const outputs = [
      ['yes', 'Yes, a tool helps.'], // TP
      ['yes', 'yes'], // TP
      ['yes', 'No.'], // FN
      ['no', 'yes'], // FP
      ['no', 'no, I can answer this'], // TN
      ['yes', 'I am not sure.'], // unreadable: wrong
      ['no', null], // no output: wrong
    ] as const;
    const report = tooleScorer.score(outputs.map(([gold, output], i) => ({ item: item(`a${i}`, 'awareness', [gold]), output })));
    // TP 2, FP 1, FN 2 (one unreadable), TN 1: accuracy 3/7, precision 2/3, recall 2/4.
    expect(report.metrics.awareness_accuracy).toBeCloseTo(3 / 7, 12);
    expect(report.metrics.awareness_precision).toBeCloseTo(2 / 3, 12);
    expect(report.metrics.awareness_recall).toBeCloseTo(1 / 2, 12);
    expect(report.metrics.awareness_f1).toBeCloseTo((2 * (2 / 3) * (1 / 2)) / (2 / 3 + 1 / 2), 12);
    expect(report.details[5].note).toBe('neither "yes" nor "no" on the first line');
  });

  it('selection: CSR per task, None for reliability, the multi-tool partial rates', () => {
    const report = tooleScorer.score([
      { item: item('s1', 'similar', ['WeatherTool']), output: 'WeatherTool\nBecause it forecasts.' },
      { item: item('s2', 'similar', ['WeatherTool']), output: 'Weather\nclose enough' }, // a name inside another is its own tool
      { item: item('s3', 'similar', ['WeatherTool']), output: 'I would use MagicTool.' }, // a tool nobody listed: unreadable
      { item: item('s4', 'similar', ['WeatherTool']), output: 'WeatherTool, NewsTool' }, // two where one is asked
      { item: item('r1', 'reliability', []), output: 'None.\nNo listed tool fits.' },
      { item: item('r2', 'reliability', []), output: 'NewsTool' }, // sycophancy: a listed tool instead of None
      { item: item('m1', 'multi-tool', ['WeatherTool', 'NewsTool']), output: 'NewsTool, WeatherTool' }, // 2/2
      { item: item('m2', 'multi-tool', ['WeatherTool', 'NewsTool']), output: 'NewsTool' }, // 1/1
      { item: item('m3', 'multi-tool', ['WeatherTool', 'NewsTool']), output: 'NewsTool and FinanceTool' }, // 1/2
      { item: item('m4', 'multi-tool', ['WeatherTool', 'NewsTool']), output: null },
    ]);
    expect(report.metrics).toMatchObject({ similar_csr: 0.25, reliability_csr: 0.5, 'multi-tool_csr': 0.25, 'multi-tool_2/2': 0.25, 'multi-tool_1/1': 0.25, 'multi-tool_1/2': 0.25, csr: 3 / 10 });
    expect(report.details.find((d) => d.id === 's3')?.note).toBe('the first line names no listed tool and does not say None');
    expect(report.details.find((d) => d.id === 'r2')?.note).toBe('chose NewsTool, gold None');
    expect(readChoice('search\nthen WeatherTool', tools)).toEqual(['search']);
    expect(readChoice('Researching it', tools)).toBeNull(); // "search" only as a whole word
  });

  it('the noisy oracle: drawn at the stated rates; CSR falls by what was applied', () => {
    const items = referenceItems().filter((_, i) => i % 20 === 0);
    const answers = items.map((it) => ({ it, ...noisyAnswer(tooleScorer, it, 11) }));
    const n = items.length;
    for (const [corruption, p] of Object.entries(NOISE_RATES)) {
      expect(Math.abs(answers.filter((a) => a.drawn === corruption).length - n * p)).toBeLessThan(4 * Math.sqrt(n * p * (1 - p)));
    }
    // ToolE answers have no parameters: a wrong value never applies.
    expect(answers.some((a) => a.applied && a.drawn === 'wrong-value')).toBe(false);
    const report = tooleScorer.score(answers.map((a) => ({ item: a.it, output: a.output })));
    const selection = answers.filter((a) => a.it.category !== 'awareness');
    expect(report.metrics.csr).toBeCloseTo(1 - selection.filter((a) => a.applied).length / selection.length, 12);
    const awareness = answers.filter((a) => a.it.category === 'awareness');
    expect(report.metrics.awareness_accuracy).toBeCloseTo(1 - awareness.filter((a) => a.applied).length / awareness.length, 12);
  });
});
