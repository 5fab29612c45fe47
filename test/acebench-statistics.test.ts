import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { OfflineGateway } from '../core/llm/offline.ts';
import { applyScanStage, standaloneContext } from '../core/stage.ts';
import { importAceFolder } from '../stages/acebench/import.ts';
import { figuresOfSample, statisticsStage, summarise } from '../stages/acebench/statistics.ts';
import { RELEASED_ACEBENCH } from '../pipelines/acebench.ts';
import { tempDirs } from './helpers/files.ts';

const tmp = tempDirs('tk-acebench-statistics-');

/** Writes JSON Lines files laid out like the release. */
function writeRelease(dir: string, files: Record<string, unknown[]>): void {
  for (const [file, records] of Object.entries(files)) {
    mkdirSync(join(dir, file, '..'), { recursive: true });
    writeFileSync(join(dir, file), records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  }
}

const fn = (name: string, properties: Record<string, unknown>, key = 'parameters') => ({ name, description: `${name} does it.`, [key]: { type: 'dict', properties, required: [] } });

/**
 * Four records, figures countable by hand:
 * - atom_bool A: 3 turns; F1 offers bool, number, list and an enum string, F2 a flat object; gold F1 {flag, n}: 2 arguments, fills bool and number;
 * - atom_bool B: 1 turn; F3 offers an object holding an object (deep); gold F3 {deep}: 1 argument, fills object_deep;
 * - zh parallel: 1 turn, 3 candidates; gold G1 {a, b, c} and G2 {}: 3 and 0 arguments;
 * - agent: an instruction (no turns counted), 2 candidates, no gold calls.
 */
function fixture(): string {
  const dir = tmp();
  writeRelease(dir, {
    'data_en/data_normal_atom_bool.json': [
      {
        id: 'normal_atom_bool_0',
        question: 'user: a\nsystem: b\nuser: c\n',
        function: [
          fn('F1', { flag: { type: 'bool' }, n: { type: 'integer' }, tags: { type: 'list', items: { type: 'string' } }, mode: { type: 'string', enum: ['x', 'y'] } }, 'arguments'),
          fn('F2', { cfg: { type: 'dict', properties: { x: { type: 'string' } } } }),
        ],
        time: '',
      },
      { id: 'normal_atom_bool_1', question: 'user: d\n', function: [fn('F3', { deep: { type: 'object', properties: { inner: { type: 'object', properties: { y: { type: 'number' } } } } } })], time: '' },
    ],
    'data_en/possible_answer/data_normal_atom_bool.json': [
      { id: 'normal_atom_bool_0', ground_truth: { F1: { flag: true, n: 2 } } },
      { id: 'normal_atom_bool_1', ground_truth: { F3: { deep: { inner: { y: 1.5 } } } } },
    ],
    'data_zh/data_normal_single_turn_parallel_function.json': [
      { id: 'normal_single_turn_parallel_function_0', question: 'user: 你好\n', function: [fn('G1', { a: { type: 'string' }, b: { type: 'string' }, c: { type: 'string' } }), fn('G2', {}), fn('G3', {})], time: '' },
    ],
    'data_zh/possible_answer/data_normal_single_turn_parallel_function.json': [{ id: 'normal_single_turn_parallel_function_0', ground_truth: { G1: { a: '1', b: '2', c: '3' }, G2: {} } }],
    'data_en/data_agent_multi_step.json': [
      { id: 'agent_multi_step_0', question: 'You are Eve. Send a message.', initial_config: {}, path: [], function: [fn('send_message', { text: { type: 'string' } }), fn('turn_on_wifi', {})], involved_classes: ['MessageApi'] },
    ],
    'data_en/possible_answer/data_agent_multi_step.json': [{ id: 'agent_multi_step_0', ground_truth: [{ MessageApi: {} }], mile_stone: ['[send_message(text="hi")]'] }],
  });
  return dir;
}

const EXPECTED = {
  records: 4,
  byCategory: { normal_atom_bool: { en: 2 }, normal_single_turn_parallel_function: { zh: 1 }, agent_multi_step: { en: 1 } },
  turns: { 1: 2, 3: 1 },
  meanTurns: 1.67,
  argumentsPerCall: { 0: 1, 1: 1, 2: 1, 3: 1 },
  meanArguments: 1.5,
  candidates: { mean: 2, min: 1, max: 3, histogram: { 1: 1, 2: 2, 3: 1 } },
  atomKinds: {
    normal_atom_bool: {
      bool: { offered: 0.5, filled: 0.5 },
      enum: { offered: 0.5, filled: 0 },
      list: { offered: 0.5, filled: 0 },
      number: { offered: 0.5, filled: 0.5 },
      object_short: { offered: 0.5, filled: 0 },
      object_deep: { offered: 0.5, filled: 0.5 },
    },
  },
};

describe('ACEBench statistics', () => {
  it('counts records, turns, arguments, candidates and atom parameter kinds by hand-checkable figures', () => {
    const samples = [...importAceFolder(fixture())];
    expect(samples).toHaveLength(4);
    expect(summarise(samples.map(figuresOfSample))).toEqual(EXPECTED);
  });

  it('reports this version beside the released figures and attaches the tables', async () => {
    const dir = fixture();
    const samples = [...importAceFolder(dir)].slice(0, 2);
    const ctx = standaloneContext({ llm: new OfflineGateway(42), runDir: tmp() });
    const { out } = await applyScanStage(statisticsStage({ released: { set: RELEASED_ACEBENCH, path: dir, setting: 'referenceDir' } }), samples, ctx);
    expect(out).toEqual(samples);
    const report = ctx.reports.acebench as { version: { records: number; turns: Record<string, number> }; released: unknown };
    expect(report.released).toEqual(EXPECTED);
    expect(report.version).toMatchObject({ records: 2, turns: { 1: 1, 3: 1 } });
    const table = ctx.attachments['acebench-statistics.md'];
    expect(table).toContain('| normal_atom_bool | 2 | 2 | 0 | 0 |');
    expect(table).toContain('| **records** | 2 | 3 | 0 | 1 |');
    expect(table).toContain('| normal_atom_bool (released) | 50% / 50% | 50% / 0% | 50% / 0% | 50% / 50% | 50% / 0% | 50% / 50% |');
    expect(table).toContain('| 3 | 1 | 1 |');
  });
});
