import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ArgumentValidator } from '../core/json-schema.ts';
import { describeFinding, SampleInvariants } from '../core/invariants.ts';
import { OfflineGateway } from '../core/llm/offline.ts';
import type { GenerateOptions, GenerateResult } from '../core/llm/types.ts';
import type { PromptFile } from '../core/prompt.ts';
import { isReject, standaloneContext } from '../core/stage.ts';
import { simulateCallsStage } from '../stages/simulate-calls.ts';
import { observationsIntoTurns, writeImportedDialoguesStage, type DialogueRequest } from '../stages/mtu/imported.ts';
import { ToolLibrary } from '../stages/mtu/library.ts';
import { Rng } from '../core/rng.ts';
import { runPipeline } from '../core/run.ts';
import { objectForSchema, valueForSchema } from '../core/schema-values.ts';
import { rangeProblems } from '../core/value-ranges.ts';
import type { Json, Sample, ToolSpec } from '../core/records.ts';
import { DatasetStore } from '../core/store.ts';
import { pipelines } from '../pipelines/index.ts';
import { hasPeer, peerFiles, pythonHas } from './helpers/peer-code.ts';
import { toolkilnProcess } from './helpers/toolkiln-process.ts';
import { versionRejects, versionSamples } from './helpers/version.ts';

/**
 * MTU over an imported tool library: dialogues of the four settings synthesised for the tools,
 * every call within its tool's schema, every sample's observations executed on a live server or
 * simulated within the tool's result schema (and saying which), the native export scored 100 by
 * the gold answers.
 */

const PROJECT = new URL('..', import.meta.url).pathname;
const SERVERS = '../shared/data/sources/mcp/servers';
const NOTES = { kind: 'mcp-stdio', name: 'notes', command: process.execPath, args: ['docs/examples/tools/notes-server.mjs'] };
const SETTINGS = ['S-S', 'S-M', 'M-S', 'M-M'];

async function run(config: unknown) {
  const home = mkdtempSync(join(tmpdir(), 'mtu-import-'));
  const result = await runPipeline({ pipeline: pipelines.mtu, configOverrides: config, llm: new OfflineGateway(42), home, projectDir: PROJECT, cwd: PROJECT, allowEmpty: true, progress: { quiet: true } });
  const store = new DatasetStore(home);
  return { home, ref: result.ref!, manifest: result.manifest!, samples: versionSamples(store, result.ref!), tools: store.tools(result.ref!), rejects: versionRejects(store, result.ref!) };
}

const modeOf = (sample: Sample) => (sample.meta.execution as { mode?: string } | undefined)?.mode;

/** Every call of every sample has its observation in its turn, and it fits the tool's result schema. */
function observationProblems(samples: Sample[], library: ToolSpec[]): string[] {
  const validator = new ArgumentValidator();
  const byName = new Map(library.map((t) => [t.name, t]));
  return samples.flatMap((sample) =>
    sample.dialogue.flatMap((turn, i) =>
      (turn.calls ?? []).flatMap((call) => {
        const observation = turn.observations?.[call.id];
        if (observation === undefined) return [`${sample.id} turn ${i} ${call.tool}: no observation`];
        const tool = byName.get(call.tool);
        const problems = tool ? validator.validate(tool.returns, observation) : [];
        return problems.map((p) => `${sample.id} turn ${i} ${call.tool}: ${p.path} ${p.message}`);
      }),
    ),
  );
}

function invariantFindings(samples: Sample[], library: ToolSpec[]): string[] {
  const invariants = new SampleInvariants(library, { offeredOutsideLibrary: (s) => Object.keys((s.meta.mtu as { renamed?: object } | undefined)?.renamed ?? {}) });
  return samples.flatMap((s) => invariants.check(s).map(describeFinding));
}

describe('values drawn from a JSON Schema', () => {
  it('meets unions zod and OpenAPI write, formats, patterns, bounds, and keeps ranges in order', () => {
    const options = { today: '2024-05-01' };
    for (let seed = 0; seed < 40; seed++) {
      const rng = new Rng(seed);
      // zod writes an optional enum as anyOf [{not: {}}, …]: the `not` branch can never be met.
      expect(['low', 'medium', 'high']).toContain(valueForSchema({ anyOf: [{ not: {} }, { type: 'string', enum: ['low', 'medium', 'high'] }] }, 'effort', rng, options));
      const address = valueForSchema({ type: 'string', anyOf: [{ type: 'string', format: 'ipv4' }, { type: 'string', pattern: '^\\d+\\.\\d+\\.\\d+\\.\\d+/\\d+$' }, { type: 'string', format: 'ipv6' }] }, 'server_addr', rng, options) as string;
      expect(address).toMatch(/^(\d+\.\d+\.\d+\.\d+|[0-9a-f:]+)$/);
      const args = objectForSchema({ type: 'object', properties: { startDate: { type: 'string', description: 'first day' }, endDate: { type: 'string', description: 'last day' }, count: { type: 'integer', minimum: 2, maximum: 4 }, code: { type: 'string', pattern: '^[A-Z]{3}-\\d{2}$' } }, required: ['startDate', 'endDate', 'count', 'code'] }, rng, options);
      expect(rangeProblems(args as Record<string, Json>, { overnight: false }).problems).toEqual([]);
      expect(args.count).toBeGreaterThanOrEqual(2);
      expect(args.count).toBeLessThanOrEqual(4);
      expect(args.code).toMatch(/^[A-Z]{3}-\d{2}$/);
    }
  });
});

/** A gateway whose result simulation answers `results`; other prompts as offline. */
class ScriptedResults extends OfflineGateway {
  constructor(private readonly results: unknown) {
    super(42);
  }
  override async generate<V extends Record<string, unknown>, O>(prompt: PromptFile<V, O>, vars: V, options: GenerateOptions): Promise<GenerateResult<O>> {
    if (prompt.id !== 'tools/simulate-results') return super.generate(prompt, vars, options);
    return { ok: true, value: { results: this.results } as O, model: 'scripted', cached: false };
  }
}

describe('simulate-calls: observations where no server answers', () => {
  const counter: ToolSpec = {
    name: 'count_words',
    description: 'Count words.',
    parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    returns: { type: 'object', properties: { words: { type: 'integer' } }, required: ['words'] },
  };
  const call = { id: 'call_0', tool: 'count_words', arguments: { text: 'a b c' } };
  const sample: Sample = {
    id: 'mtu-x',
    benchmark: 'mtu',
    category: 'S-S',
    split: 'train',
    tools: [counter],
    dialogue: [
      { role: 'user', content: 'Count the words of "a b c".' },
      { role: 'assistant', content: '', calls: [call] },
    ],
    expected: { calls: [call], turns: { '1': [call] } },
    meta: { source: { dataset: 'test' }, lineage: [], checks: [], tags: [] },
  };
  const simulate = async (results: unknown, input = sample) => {
    const stage = simulateCallsStage({ today: '2024-05-01', place: observationsIntoTurns });
    const ctx = standaloneContext({ llm: new ScriptedResults(results), runDir: mkdtempSync(join(tmpdir(), 'simulate-')), stage });
    return stage.run(input, ctx);
  };

  it('a result within the schema becomes the turn\'s observation (undeclared fields dropped), the sample marked simulated by the model', async () => {
    const out = (await simulate([{ call_id: 'call_0', result: { words: 3, note: 'extra' } }])) as Sample;
    expect(isReject(out)).toBe(false);
    expect(out.dialogue[1].observations).toEqual({ call_0: { words: 3 } });
    expect(out.meta.execution).toEqual({ mode: 'simulated', model: 'scripted' });
    expect(out.meta.observations).toBeUndefined();
  });

  it('a result the schema refuses, or none, rejects the sample with the reason', async () => {
    const wrong = await simulate([{ call_id: 'call_0', result: { words: 'three' } }]);
    expect(wrong).toMatchObject({ reject: true, reason: 'simulated_result_invalid' });
    expect((wrong as { detail: string }).detail).toMatch(/call_0 \(count_words\): words/);
    expect(await simulate([])).toMatchObject({ reject: true, reason: 'simulated_result_invalid' });
  });

  it('an executed sample keeps its real results: moved into its turns, nothing asked', async () => {
    const executed: Sample = { ...sample, meta: { ...sample.meta, execution: { mode: 'executed', servers: ['words'], cached: false }, observations: { call_0: { words: 3 } } } };
    const out = (await simulate('not asked', executed)) as Sample;
    expect(out.dialogue[1].observations).toEqual({ call_0: { words: 3 } });
    expect(out.meta.execution).toMatchObject({ mode: 'executed' });
    expect(out.meta.observations).toBeUndefined();
  });
});

/** A gateway whose dialogue writer answers a wrong call first (and on every retry while `stubborn`), then as offline; it keeps what it was asked. */
class WrongFirst extends OfflineGateway {
  readonly asked: { key: string; feedback: string }[] = [];
  constructor(private readonly stubborn = false) {
    super(42);
  }
  override async generate<V extends Record<string, unknown>, O>(prompt: PromptFile<V, O>, vars: V, options: GenerateOptions): Promise<GenerateResult<O>> {
    if (prompt.id !== 'mtu/imported-dialogue') return super.generate(prompt, vars, options);
    this.asked.push({ key: options.key, feedback: String(vars.feedback) });
    if (this.asked.length > 1 && !this.stubborn) return super.generate(prompt, vars, options);
    return { ok: true, value: { rounds: [{ user: 'Set the mode to turbo.', assistant: '', calls: [{ tool: 'set_mode', arguments: { mode: 'turbo' } }] }] } as O, model: 'scripted', cached: false };
  }
}

describe('write-imported-dialogues: calls within the schema', () => {
  const tool: ToolSpec = {
    name: 'set_mode',
    description: 'Set the device mode.',
    parameters: { type: 'object', properties: { mode: { type: 'string', enum: ['eco', 'normal'], description: 'the mode' } }, required: ['mode'] },
    returns: { type: 'object', properties: { result: { type: 'string' } }, required: ['result'] },
    plugin: 'device',
  };
  const request: DialogueRequest = { id: 'r1', setting: 'S-S', tools: [{ name: 'set_mode', plugin: 'device' }], rounds: [{ calls: [0] }], links: [], sourceSplit: 'train', services: ['device'], domains: ['device'] };
  const write = async (llm: WrongFirst) => {
    const runDir = mkdtempSync(join(tmpdir(), 'write-'));
    ToolLibrary.of([tool]).save(runDir);
    const stage = writeImportedDialoguesStage({ today: '2024-05-01' });
    return stage.run(request, standaloneContext({ llm, runDir, stage, key: request.id }));
  };

  it('a call outside its schema is asked for again with the complaint, and the second answer taken', async () => {
    const llm = new WrongFirst();
    const out = (await write(llm)) as Sample;
    expect(isReject(out)).toBe(false);
    expect(['eco', 'normal']).toContain(out.expected.calls![0].arguments.mode);
    expect(llm.asked.map((a) => a.key)).toEqual(['r1', 'r1/retry-1']);
    expect(llm.asked[1].feedback).toMatch(/invalid_call.*mode/);
  });

  it('a call still outside its schema after the retry rejects the request with the schema\'s complaint', async () => {
    const out = await write(new WrongFirst(true));
    expect(out).toMatchObject({ reject: true, reason: 'invalid_call' });
    expect((out as { detail: string }).detail).toMatch(/argument-schema at dialogue\[1\]\.calls\[0\] set_mode: mode/);
  });
});

describe('MTU over imported tools', () => {
  it('an OpenAPI document and a function list (docs/examples/tools/mtu.json): dialogues of all four settings, valid calls, simulated observations within the result schemas, export scored 100 by the gold answers', async () => {
    const config = JSON.parse(readFileSync(join(PROJECT, 'docs/examples/tools/mtu.json'), 'utf8'));
    const { home, ref, manifest, samples, tools } = await run(config);
    expect(manifest.stats.toolsImport).toMatchObject({ imported: 4, refused: 0 });
    expect(manifest.stages.map((s) => s.stage).slice(0, 3)).toEqual(['load-imported-tools', 'plan-imported-dialogues', 'write-imported-dialogues']);
    expect(manifest.stages.map((s) => s.stage)).not.toContain('load-sources');
    expect(new Set(samples.map((s) => s.category))).toEqual(new Set(SETTINGS));
    expect(samples.every((s) => modeOf(s) === 'simulated')).toBe(true);
    expect(invariantFindings(samples, tools)).toEqual([]);
    expect(observationProblems(samples, tools)).toEqual([]);
    // A multi-tool dialogue where a result gives a parameter of the same name and type: bookAppointment's date → listAppointments.
    expect(samples.some((s) => (s.expected.calls ?? []).some((c) => JSON.stringify(c.arguments).includes('"$ref":"call_0.'))), 'a linked call').toBe(true);
    // The tool without result fields (a function list's) answers its text as `result`.
    expect(Object.keys(tools.find((t) => t.name === 'get_vaccination_record')!.returns.properties)).toEqual(['result']);

    const out = join(home, 'export');
    expect(toolkilnProcess(home, ['export', `${ref.name}@${ref.version}`, '--format', 'mtu', '--out', out]).code).toBe(0);
    expect(readdirSync(out).filter((f) => f.endsWith('_train.jsonl')).length).toBeGreaterThanOrEqual(3);
    const evaluated = toolkilnProcess(home, ['eval', `${ref.name}@${ref.version}`, '--model', 'oracle', '--json']);
    expect(evaluated.code, evaluated.err).toBe(0);
    const metrics = (JSON.parse(evaluated.out) as { metrics: Record<string, number> }).metrics;
    expect(Object.keys(metrics).length).toBeGreaterThan(4);
    for (const [metric, value] of Object.entries(metrics)) expect(value, metric).toBe(1);
  }, 300_000);

  it('ten TOUCAN server files: every setting made over their tools, every call valid and every sample simulated; rejects named by reason', async () => {
    const files = readdirSync(join(PROJECT, SERVERS)).sort().slice(0, 10).map((file) => `${SERVERS}/${file}`);
    const { samples, tools, rejects, manifest } = await run({ tools: { sources: files } });
    expect((manifest.stats.toolsImport as { imported: number }).imported).toBe(tools.length);
    expect(tools.length).toBeGreaterThan(20);
    expect(new Set(samples.map((s) => s.category))).toEqual(new Set(SETTINGS));
    expect(samples.every((s) => modeOf(s) === 'simulated')).toBe(true);
    expect(invariantFindings(samples, tools)).toEqual([]);
    expect(observationProblems(samples, tools)).toEqual([]);
    // Every tool is called by some dialogue.
    const called = new Set(samples.flatMap((s) => (s.expected.calls ?? []).map((c) => c.tool)));
    expect(tools.filter((t) => !called.has(t.name)).map((t) => t.name)).toEqual([]);
    for (const reject of rejects) expect(reject.reason).toMatch(/^(tool_import\/[\w-]+|invalid_call|plan_not_followed|setting_mismatch|simulated_result_invalid)$/);
  }, 300_000);

  it('a live stdio server: the calls are executed on it and their real results are the observations; failing calls rejected with the reason', async () => {
    const { samples, rejects, manifest } = await run({ tools: { sources: [NOTES], execute: { timeoutMs: 3000 } } });
    expect(manifest.stages.map((s) => s.stage)).toContain('execute-calls');
    expect(samples.length).toBeGreaterThan(0);
    expect(samples.every((s) => modeOf(s) === 'executed')).toBe(true);
    // create_note, then get_note on the id the server gave: the chain ran on the server's state.
    const chained = samples.find((s) => (s.expected.calls ?? []).some((c) => c.tool === 'get_note' && JSON.stringify(c.arguments) === '{"note_id":{"$ref":"call_0.note_id"}}'));
    expect(chained, 'a create_note → get_note dialogue').toBeDefined();
    const observations = Object.assign({}, ...chained!.dialogue.map((t) => t.observations ?? {})) as Record<string, Record<string, Json>>;
    expect(observations.call_0.note_id).toMatch(/^note-\d+$/);
    expect(observations.call_1.title).toBe(chained!.expected.calls![0].arguments.title);
    expect(chained!.meta.observations).toBeUndefined();
    const failed = rejects.filter((r) => r.stage === 'execute-calls');
    expect(new Set(failed.map((r) => r.reason))).toEqual(new Set(['tool_error', 'tool_timeout']));
  }, 300_000);

  const runnable = pythonHas(['numpy']) && hasPeer('MTU-Bench-Team/MTU-Bench');
  it.skipIf(!runnable)("MTU-Eval's own cal_score.py scores the export of an imported library 100 with the gold answers (python3 with numpy and the MTU-Bench mirror; skipped without them)", async () => {
    const config = JSON.parse(readFileSync(join(PROJECT, 'docs/examples/tools/mtu.json'), 'utf8'));
    const { home, ref } = await run({ ...config, importedDialogues: { perTool: { 'S-S': 3, 'S-M': 3, 'M-S': 3, 'M-M': 3 } } });
    const out = join(home, 'export');
    expect(toolkilnProcess(home, ['export', `${ref.name}@${ref.version}`, '--format', 'mtu', '--out', out]).code).toBe(0);
    const peer = peerFiles('MTU-Bench-Team/MTU-Bench', ['MTU-Eval'])!;
    const files = SETTINGS.map((s) => `${s}_train.jsonl`);
    const result = JSON.parse(execFileSync('python3', [join(PROJECT, 'test/helpers/mtu_cal_score.py'), join(peer, 'MTU-Eval'), '--index', join(out, 'index.jsonl'), ...files.map((f) => join(out, f))], { encoding: 'utf8' })) as { scores: Record<string, Record<string, number>>; error?: string };
    expect(result.error).toBeUndefined();
    for (const setting of SETTINGS) for (const [metric, value] of Object.entries(result.scores[setting])) expect(value, `${setting} ${metric}`).toBe(metric === 'average_score' ? 10000 : 100);
  }, 300_000);
});
