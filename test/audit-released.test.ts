import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { auditReleased } from '../bin/commands/audit.ts';
import { main } from '../bin/cli.ts';
import type { AuditReport } from '../core/audit.ts';

/**
 * The audit of each released benchmark in ../shared/data/reference/, read as samples by the recipe
 * that knows it: findings and samples per check as found (several checked by hand: ACEBench's 19
 * schema-breaking gold calls also by an independent jsonschema check below, ToolTalk's 38 replay
 * differences and ACEBench's 18 agent tasks as listed in docs/tooltalk.md and docs/acebench.md, MTU-Eval's
 * repeated ids and MetaTool's 51 repeated rows counted in the files, Seal-Tools' dev-easy-5 asking
 * for a stay from 2013 to 2006).
 */

const PROJECT = new URL('..', import.meta.url).pathname;

function counts(report: AuditReport): Record<string, [findings: number, samples: number]> {
  return Object.fromEntries(report.checks.map((c) => [c.check, [c.findings, c.samples]]));
}

/** The first finding of a check: its sample's id in the release, where and what. */
function first(report: AuditReport, check: string): string {
  const example = report.checks.find((c) => c.check === check)!.examples[0];
  return `${example.source ?? example.sampleId} | ${example.where}: ${example.problem}`;
}

describe('audit of the released benchmarks', () => {
  it('ACEBench: 19 of 2,024 gold calls break their schema, 18 of 100 agent tasks do not reach their ground_truth', () => {
    const { report } = auditReleased('acebench', { cwd: PROJECT });
    expect(report.samples).toBe(2040);
    expect(report.checks.find((c) => c.check === 'argument-schema')!.checked).toBe(2024);
    expect(counts(report)).toEqual({
      'sample-id-unique': [0, 0],
      'tool-names-unique': [167, 122],
      'tool-exists': [0, 0],
      'argument-schema': [19, 18],
      'range-order': [1, 1],
      'acebench/agent-replay': [18, 18],
    });
    expect(first(report, 'range-order')).toBe(
      'normal_single_turn_parallel_function_80 in data_en/data_normal_single_turn_parallel_function.json | expected.calls[1] MobileUIManager_applyTheme: schedule: startTime "18:00" is after endTime "08:00" (a range past midnight needs the text to say it runs overnight)',
    );
  }, 600_000);

  it('MTU-Eval: repeated ids, names shared by tools of other parameters, calls to tools not offered, values not stated', () => {
    const { report } = auditReleased('mtu-bench', { cwd: PROJECT });
    expect(report.samples).toBe(1009);
    expect(counts(report)).toEqual({
      'sample-id-unique': [43, 43],
      'tool-names-unique': [1137, 561],
      'tool-exists': [114, 107],
      'argument-schema': [138, 103],
      'range-order': [0, 0],
      'mtu/span': [446, 285],
    });
    expect(first(report, 'tool-exists')).toBe('S-S_17 in S-S_eval.jsonl | expected.calls[0] qqq: calls "qqq", which the sample\'s candidate list does not offer');
  }, 600_000);

  it('MetaTool: 51 rows of all_clean_data.csv repeat an earlier row', () => {
    const { report } = auditReleased('metatool', { cwd: PROJECT });
    expect(report.samples).toBe(20614 + 497 + 9);
    expect(counts(report)).toEqual({ 'sample-id-unique': [51, 51], 'tool-names-unique': [0, 0], 'tool-exists': [0, 0], 'argument-schema': [0, 0], 'range-order': [0, 0] });
  }, 600_000);

  it('NesTools: tools that share a name with other parameters, chains no Python program holds', () => {
    const { report } = auditReleased('nestools', { cwd: PROJECT });
    expect(counts(report)).toEqual({ 'sample-id-unique': [0, 0], 'tool-names-unique': [237, 194], 'tool-exists': [0, 0], 'argument-schema': [0, 0], 'range-order': [0, 0], 'nestools/program': [4, 4] });
    expect(first(report, 'nestools/program')).toBe('833 in test_data.jsonl | expected.calls: cannot be written as a program: tool calculate_yield: "yield" is not a Python identifier, so it cannot be written as a stub');
  }, 600_000);

  it('Seal-Tools: values of the wrong type, ranges out of order, one record that cannot be read', () => {
    const { report } = auditReleased('seal-tools', { cwd: PROJECT });
    expect(report.samples).toBe(2053);
    expect(counts(report)).toEqual({
      'sample-id-unique': [0, 0],
      'tool-names-unique': [0, 0],
      'tool-exists': [0, 0],
      'argument-schema': [121, 121],
      'range-order': [5, 5],
      'nestools/program': [18, 18],
      'record-readable': [1, 1],
    });
    expect(first(report, 'range-order')).toBe('dev-easy-5 in dev.jsonl | expected.calls[0] getAvailableRooms: check_in_date "2013-11-25" is after check_out_date "2006-01-07"');
  }, 600_000);

  it('ToolTalk (through the CLI): 38 of 266 gold calls replay differently; every call fits its schema (the CreateEvent enum on event_type)', async () => {
    const out: string[] = [];
    const code = await main(['datasets', 'audit', '--released', 'tooltalk', '--json'], { out: (t) => out.push(t), err: () => {}, home: PROJECT, cwd: PROJECT, env: {} });
    expect(code).toBe(0);
    const report = JSON.parse(out.join('\n')) as AuditReport & { audited: string };
    expect(report.audited).toMatch(/^released tooltalk \(.*reference\/tooltalk\)$/);
    expect(report.samples).toBe(78);
    expect(counts(report)).toEqual({ 'sample-id-unique': [0, 0], 'tool-names-unique': [0, 0], 'tool-exists': [0, 0], 'argument-schema': [0, 0], 'range-order': [0, 0], 'tooltalk/replay': [38, 32] });
    expect(report.checks.find((c) => c.check === 'tooltalk/replay')!.checked).toBe(266);
  }, 600_000);
});

const python = spawnSync('python3', ['-c', 'import jsonschema'], { encoding: 'utf8' });
describe.skipIf(python.status !== 0)('ACEBench gold calls against their schemas with Python jsonschema (skipped without python3 and jsonschema)', () => {
  it('finds the same 19 of 2,024', () => {
    const run = spawnSync('python3', [new URL('fixtures/audit/acebench_schema_check.py', import.meta.url).pathname, new URL('../../shared/data/reference/acebench', import.meta.url).pathname], { encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout.split('\n')[0]).toBe('2024 gold calls, 19 break their schema');
  }, 120_000);
});
