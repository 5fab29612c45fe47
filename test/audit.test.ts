import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { main } from '../bin/cli.ts';
import { OfflineGateway } from '../core/llm/offline.ts';
import { definePipeline } from '../core/pipeline.ts';
import { Sample, type Call, type Json, type ToolSpec } from '../core/records.ts';
import { runPipeline } from '../core/run.ts';
import { sourceStage } from '../core/stage.ts';
import { DatasetStore } from '../core/store.ts';
import { commonExporters } from '../stages/export/index.ts';
import { readDatasetCard } from './helpers/dataset-card.ts';
import { versionSamples, versionRejects } from './helpers/version.ts';

/**
 * The audit of a version with one planted fault of each kind (every one found, nothing else), the
 * publish gate in a real run (a planted bad record rejected with its reason, counted in the
 * manifest), and `toolkiln datasets audit --json`.
 */

const PROJECT = new URL('..', import.meta.url).pathname;

const tool = (name: string, properties: Record<string, Record<string, Json>> = {}, required: string[] = []): ToolSpec => ({
  name,
  description: `${name} tool`,
  parameters: { type: 'object', properties: properties as ToolSpec['parameters']['properties'], required },
  returns: { type: 'object', properties: {}, required: [] },
});
const book = tool('BookRoom', { room: { type: 'string', enum: ['single', 'double'] }, check_in: { type: 'string', format: 'date' }, check_out: { type: 'string', format: 'date' } }, ['room']);
const forecast = tool('Forecast', { city: { type: 'string' } }, ['city']);

function sample(id: string, calls: Call[], tools: ToolSpec[] = [book, forecast]): Sample {
  return Sample.parse({ id, benchmark: 'planted', category: 'c', split: 'test', tools, dialogue: [{ role: 'user', content: `request ${id}` }], expected: { calls }, meta: { source: { dataset: 'planted', id: `row ${id}` } } });
}
const call = (tool: string, args: Record<string, Json>): Call => ({ id: 'call_1', tool, arguments: args });

/** One sample per fault kind (by the check that must find it), and a clean one. */
const PLANTED: Record<string, Sample> = {
  'range-order': sample('late-checkout', [call('BookRoom', { room: 'single', check_in: '2024-05-09', check_out: '2024-05-02' })]),
  'argument-schema': sample('bad-enum', [call('BookRoom', { room: 'suite' })]),
  'tool-exists': sample('no-such-tool', [call('Translate', { text: 'hi' })]),
  'tool-names-unique': sample('offered-twice', [], [book, forecast, forecast]),
  'sample-id-unique': sample('clean', [call('Forecast', { city: 'Oslo' })]),
};
const CLEAN = sample('clean', [call('Forecast', { city: 'Bergen' })]);

function home(): string {
  return mkdtempSync(join(tmpdir(), 'tk-audit-'));
}

async function cli(at: string, ...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (t) => out.push(t), err: (t) => err.push(t), home: at, cwd: at, env: {} });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** A version written without the gate (as one published before it, or edited by hand), holding the planted faults. */
function publishPlanted(at: string): void {
  new DatasetStore(at).publish({
    name: 'planted',
    samples: [CLEAN, ...Object.values(PLANTED)],
    // The library also holds one name twice, case aside (a tool no sample offers).
    tools: [book, forecast, tool('Lookup'), tool('LOOKUP')],
    rejects: [],
    manifest: { pipeline: 'planted', config: {}, fingerprint: 'planted', parent: null, stages: [], usage: { total: usage, byStage: {}, byModel: {} }, models: [], prompts: {}, sources: {}, stats: {} },
  });
}
const usage = { requests: 0, cached: 0, promptTokens: 0, completionTokens: 0, costUsd: null };

interface AuditJson {
  audited: string;
  samples: number;
  checks: { check: string; findings: number; samples: number; first: string[]; examples: { sampleId: string; where: string; problem: string; source?: string }[] }[];
}

describe('datasets audit', () => {
  it('finds every planted fault, one of each kind, and nothing else (--json)', async () => {
    const at = home();
    publishPlanted(at);
    const result = await cli(at, 'datasets', 'audit', 'planted@v1', '--json');
    expect(result.code).toBe(0);
    const doc = JSON.parse(result.out) as AuditJson;
    expect(doc).toMatchObject({ audited: 'planted@v1', samples: 6 });
    const found = Object.fromEntries(doc.checks.map((c) => [c.check, c]));
    expect(Object.keys(found)).toEqual(['sample-id-unique', 'tool-names-unique', 'tool-exists', 'argument-schema', 'range-order']);
    for (const [check, planted] of Object.entries(PLANTED)) expect(found[check].first, check).toEqual([planted.id]);
    expect(found['range-order'].examples[0]).toEqual({ check: 'range-order', sampleId: 'late-checkout', where: 'expected.calls[0] BookRoom', problem: 'check_in "2024-05-09" is after check_out "2024-05-02"', source: 'row late-checkout' });
    expect(found['argument-schema'].examples[0].problem).toBe('room: must be one of ["single","double"]');
    expect(found['tool-exists'].examples[0].where).toBe('expected.calls[0] Translate');
    // The library's Lookup / LOOKUP, and the list offering Forecast twice.
    expect(found['tool-names-unique'].examples.map((e) => e.problem)).toEqual(['"Lookup", "LOOKUP" are one name, case aside', 'the candidate list offers "Forecast" twice']);
    expect(doc.checks.map((c) => [c.check, c.findings])).toEqual([
      ['sample-id-unique', 1],
      ['tool-names-unique', 2],
      ['tool-exists', 1],
      ['argument-schema', 1],
      ['range-order', 1],
    ]);
  });

  it('prints a table of counts per check with the first offending ids', async () => {
    const at = home();
    publishPlanted(at);
    const result = await cli(at, 'datasets', 'audit', 'planted');
    expect(result.code).toBe(0);
    expect(result.out).toContain('planted@v1: 6 samples audited');
    expect(result.out).toMatch(/range-order\s+\d+\s+1\s+1\s+late-checkout/);
    expect(result.out).toContain('range-order: late-checkout (row late-checkout) expected.calls[0] BookRoom: check_in "2024-05-09" is after check_out "2024-05-02"');
  });

  it('refuses an unknown released set and --dir without --released, in one line', async () => {
    const at = home();
    const unknown = await cli(at, 'datasets', 'audit', '--released', 'nope', '--json');
    expect(unknown.code).toBe(2);
    expect(JSON.parse(unknown.out).error).toMatch(/^--released nope: not a released benchmark toolkiln reads; choose one of .*acebench/);
    expect((await cli(at, 'datasets', 'audit', 'x@v1', '--dir', 'y')).err).toContain('--dir goes with --released');
  });
});

describe('the publish gate', () => {
  const faulty = sample('late-checkout', [call('BookRoom', { room: 'single', check_in: '2024-05-09', check_out: '2024-05-02' })]);
  const good = sample('fine', [call('BookRoom', { room: 'double', check_in: '2024-05-02', check_out: '2024-05-09' })]);
  const pipelineWith = (gate?: 'reject' | 'record') =>
    definePipeline({
      name: 'gated',
      benchmark: 'planted',
      description: 'two samples, one breaking an invariant',
      configSchema: z.object({}),
      sourceFiles: () => [],
      stages: () => [sourceStage({ name: 'make', version: 1, output: Sample, load: () => [good, faulty] })],
      exports: {},
      ...(gate ? { invariants: { gate: () => gate } } : {}),
    });

  it('rejects a sample that breaks an invariant, with its reason in rejects.jsonl, and counts it per check in the manifest', async () => {
    const at = home();
    const result = await runPipeline({ pipeline: pipelineWith(), llm: new OfflineGateway(42), home: at, projectDir: PROJECT, progress: { quiet: true } });
    const store = new DatasetStore(at);
    expect(versionSamples(store, result.ref!).map((s) => s.id)).toEqual(['fine']);
    expect(versionRejects(store, result.ref!)).toEqual([
      {
        stage: 'invariants',
        reason: 'range_order',
        detail: 'range-order at expected.calls[0] BookRoom: check_in "2024-05-09" is after check_out "2024-05-02"',
        recordId: 'late-checkout',
        record: faulty,
      },
    ]);
    const audit = result.manifest!.stats.audit as { gate: string; samples: number; rejected: number; checks: Record<string, { findings: number; samples: number; first: string[] }> };
    expect(audit).toMatchObject({ gate: 'reject', samples: 2, rejected: 1 });
    expect(audit.checks['range-order']).toMatchObject({ findings: 1, samples: 1, first: ['late-checkout'] });
    expect(audit.checks['argument-schema']).toMatchObject({ findings: 0, samples: 0 });
    expect(result.manifest!.counts).toMatchObject({ samples: 1, rejects: 1 });
    // What was published passes the audit.
    const audited = JSON.parse((await cli(at, 'datasets', 'audit', 'gated@v1', '--json')).out) as AuditJson;
    expect(audited.checks.every((c) => c.findings === 0)).toBe(true);
    // The run log says what the gate did.
    const logged: string[] = [];
    await runPipeline({ pipeline: pipelineWith(), llm: new OfflineGateway(42), home: at, projectDir: PROJECT, progress: { quiet: true }, force: true, log: (m) => logged.push(m) });
    expect(logged).toContain('invariants: 2 samples checked, 1 rejected (samples per check: range-order 1)');
  });

  it('keeps and counts it when the recipe records instead (an import of a released set)', async () => {
    const at = home();
    const result = await runPipeline({ pipeline: pipelineWith('record'), llm: new OfflineGateway(42), home: at, projectDir: PROJECT, progress: { quiet: true } });
    const store = new DatasetStore(at);
    expect(versionSamples(store, result.ref!).map((s) => s.id)).toEqual(['fine', 'late-checkout']);
    expect(versionRejects(store, result.ref!)).toEqual([]);
    expect(result.manifest!.stats.audit).toMatchObject({ gate: 'record', rejected: 0, checks: { 'range-order': { findings: 1, samples: 1 } } });
    expect(readFileSync(join(result.ref!.dir, 'manifest.json'), 'utf8')).toContain('"range-order"');
  });

  it("shows what it found in the Hugging Face dataset card's Checks table", async () => {
    const at = home();
    const result = await runPipeline({ pipeline: pipelineWith(), llm: new OfflineGateway(42), home: at, projectDir: PROJECT, progress: { quiet: true } });
    const store = new DatasetStore(at);
    const out = join(at, 'hf');
    await commonExporters.hf(store.sampleSource(result.ref!), store.tools(result.ref!), out, result.ref!);
    const { body } = readDatasetCard(join(out, 'README.md'));
    const checks = body.slice(body.indexOf('## Checks'), body.indexOf('## Sources'));
    expect(checks).toContain('A sample that breaks one was not published (1 of 2; each is in `rejects.jsonl` with its findings).');
    expect(checks).toContain('| check | checked | findings | samples |');
    expect(checks).toContain('| `range-order` | 2 | 1 | 1 |');
    expect(checks).toContain('| `sample-id-unique` | 2 | 0 | 0 |');
  });
});
