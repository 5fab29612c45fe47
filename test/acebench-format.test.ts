import { mkdirSync, readFileSync, readdirSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { OfflineGateway } from '../core/llm/offline.ts';
import { definePipeline } from '../core/pipeline.ts';
import { runPipeline } from '../core/run.ts';
import { DatasetStore } from '../core/store.ts';
import { pythonJson, parseJsonKeepingFloats } from '../core/python-json.ts';
import { Sample } from '../core/records.ts';
import { compareIds, exportAceBench } from '../stages/acebench/export.ts';
import { AceExpected, aceMetaOf, aceRecordLines, aceRecordToSample, NO_ANSWER_CHECK, sampleToAceRecord } from '../stages/acebench/format.ts';
import { importAceFolder, importStage, readAceFolder } from '../stages/acebench/import.ts';
import { statisticsStage } from '../stages/acebench/statistics.ts';
import { RELEASED_ACEBENCH } from '../pipelines/acebench.ts';
import { ACE_CATEGORIES, ACE_LANGUAGES } from '../stages/acebench/record.ts';
import { tempDirs, userErrorOf } from './helpers/files.ts';
import { samplesInMemory } from '../core/sample-source.ts';

const RELEASED = '../shared/data/reference/acebench';
const tmp = tempDirs('tk-acebench-format-');

/** Every released file, relative to the release folder. */
function releasedFiles(): string[] {
  return ACE_LANGUAGES.flatMap((language) => ['', 'possible_answer/'].flatMap((sub) => readdirSync(join(RELEASED, `data_${language}`, sub)).filter((f) => f.endsWith('.json')).map((f) => `data_${language}/${sub}${f}`)));
}

const released = [...importAceFolder(RELEASED)];
const byId = (language: string, id: string) => released.find((s) => aceMetaOf(s).language === language && aceMetaOf(s).id === id)!;

describe('ACEBench released format', () => {
  it('import → canonical samples → export gives all 17 categories × 2 languages back byte for byte', async () => {
    const files = releasedFiles();
    expect(files).toHaveLength(ACE_CATEGORIES.length * ACE_LANGUAGES.length * 2);
    expect(released).toHaveLength(2040);
    for (const sample of released) expect(Sample.safeParse(sample).success, sample.id).toBe(true);
    expect(new Set(released.map((s) => s.id)).size).toBe(released.length);
    const out = tmp();
    const written = await exportAceBench(samplesInMemory(released), [], out);
    expect(written).toHaveLength(files.length);
    for (const file of files) expect(readFileSync(join(out, file), 'utf8') === readFileSync(join(RELEASED, file), 'utf8'), file).toBe(true);
    // Only the five hand-edited answer lines (spacing json.dumps never writes) are kept as they are.
    const kept = released.filter((s) => Object.keys(aceMetaOf(s).lines).length).map((s) => `${aceMetaOf(s).language} ${aceMetaOf(s).id} ${Object.keys(aceMetaOf(s).lines)}`);
    expect(kept.sort()).toEqual(['en normal_atom_enum_9 answer', 'en normal_atom_number_17 answer', 'en normal_atom_object_short_42 answer', 'en special_error_param_2 answer', 'en special_error_param_6 answer']);
  }, 120_000);

  it('fails the comparison when a sample changes: the changed line differs, the others stay', async () => {
    const changed = released.map((s) => structuredClone(s));
    const target = changed.find((s) => aceMetaOf(s).language === 'en' && aceMetaOf(s).id === 'normal_single_turn_single_function_3')!;
    const call = target.expected.calls![0];
    const [name] = Object.keys(call.arguments);
    call.arguments[name] = 'planted';
    // A kept line whose content changed is written afresh, not as kept.
    const keptSample = changed.find((s) => aceMetaOf(s).language === 'en' && aceMetaOf(s).id === 'special_error_param_6')!;
    keptSample.expected.wrongValues = { device_id: ['ABC124'] };
    const out = tmp();
    await exportAceBench(samplesInMemory(changed.filter((s) => s.category === 'normal_single_turn_single_function' || s.category === 'special_error_param')), [], out);
    const file = 'data_en/possible_answer/data_normal_single_turn_single_function.json';
    const ours = readFileSync(join(out, file), 'utf8').split('\n');
    const theirs = readFileSync(join(RELEASED, file), 'utf8').split('\n');
    expect(ours.filter((line, i) => line !== theirs[i])).toEqual([expect.stringContaining('"planted"')]);
    expect(ours.findIndex((line, i) => line !== theirs[i])).toBe(3);
    const errors = readFileSync(join(out, 'data_en/possible_answer/data_special_error_param.json'), 'utf8').split('\n');
    expect(errors[6]).toBe('{"id": "special_error_param_6", "ground_truth": {"device_id": ["ABC124"]}}');
    expect(readFileSync(join(out, 'data_en/data_special_error_param.json'), 'utf8')).toBe(readFileSync(join(RELEASED, 'data_en/data_special_error_param.json'), 'utf8'));
  }, 120_000);

  it('maps each kind of category onto the canonical fields', () => {
    const parallel = byId('en', 'normal_single_turn_parallel_function_0');
    expect(parallel.id).toMatch(/^acebench-[0-9a-f]{16}$/);
    expect(parallel).toMatchObject({ benchmark: 'acebench', category: 'normal_single_turn_parallel_function', split: 'test' });
    expect(parallel.expected.calls!.map((c) => c.tool)).toEqual(['MediaDesignOptimizer_createVisualContent', 'fashion_week_trend_analyzer']);
    // `Tool_1`, `Tool_2`: two calls of one tool, as ACEBench's checker reads the keys.
    const repeated = byId('zh', 'normal_single_turn_parallel_function_0');
    expect(repeated.expected.calls!.map((c) => c.tool)).toEqual(Array(repeated.expected.calls!.length).fill('route_optimization_tool'));
    expect(aceMetaOf(repeated).callKeys[0][0]).toBe('route_optimization_tool_1');

    const adjust = byId('en', 'normal_multi_turn_user_adjust_0_1');
    expect(adjust.dialogue.map((t) => t.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'assistant', 'user', 'assistant', 'user']);
    expect(adjust.dialogue.at(-1)!.content).toBe('We have 5000 views and 300 shares so far.');
    expect(adjust.expected.calls).toEqual([{ id: 'call_1', tool: 'branding_evaluateMediaEngagement', arguments: { pressReleaseId: '12345', metrics: [{ type: 'views', value: 5000 }, { type: 'shares', value: 300 }] } }]);

    const alternatives = byId('en', 'normal_atom_object_short_42');
    expect(alternatives.expected.calls).toHaveLength(4);
    expect(AceExpected.parse(alternatives.expected).alternatives).toHaveLength(1);

    expect(byId('en', 'special_incomplete_0').expected).toEqual({ calls: [], missing: { RealEstateManager_manageProperty: ['propertyDetails', 'rentalManagement', 'maintenanceScheduling'] } });
    expect(byId('en', 'special_error_param_0').expected).toEqual({ calls: [], wrongValues: { plan_id: ['1234WrongID'] } });
    expect(byId('zh', 'special_irrelevant_0').expected).toEqual({ calls: [], refusal: 'Due to the limitations of the function, I cannot solve this problem.' });

    const agent = byId('en', 'agent_multi_step_0');
    expect(aceMetaOf(agent).questionKind).toBe('instruction');
    expect(agent.dialogue).toEqual([{ role: 'user', content: agent.dialogue[0].content }]);
    expect(agent.dialogue[0].content).toMatch(/^I am Eve\. I need to order/);
    const expected = AceExpected.parse(agent.expected);
    expect(expected.milestones).toHaveLength(1);
    expect(expected.milestones![0][0]).toBe("[login_food_platform(username='Eve', password='password123')]");
    expect(expected.finalState!.map((state) => Object.keys(state)[0])).toEqual(['BaseApi', 'FoodPlatform', 'ReminderAPI']);
    expect(aceMetaOf(agent).floats.answer).toContain('/ground_truth/1/FoodPlatform/users/Eve/balance');
    expect(aceRecordLines(agent).answer).toContain('"balance": 412.0');
    expect(AceExpected.parse(released.find((s) => s.category === 'agent_multi_step' && aceMetaOf(s).mileStoneNested)!.expected).milestones!.length).toBeGreaterThan(1);

    // Canonical tools: Python type names read as JSON Schema's; `arguments` as parameters.
    const agentTool = agent.tools.find((t) => t.name === 'delete_message')!;
    expect(agentTool.parameters).toMatchObject({ type: 'object', properties: { message_id: { type: 'integer' } }, required: ['message_id'] });
    expect((aceMetaOf(agent).function as { name: string; parameters: { type: string } }[]).find((f) => f.name === 'delete_message')!.parameters.type).toBe('dict');
    const atom = byId('en', 'normal_atom_bool_0');
    expect(atom.tools.every((tool) => tool.parameters.type === 'object' && Object.keys(tool.parameters.properties).length > 0)).toBe(true);
    expect(JSON.stringify(released.flatMap((s) => s.tools))).not.toMatch(/"type":"(dict|list|bool)"/);

    // The record comes back whole from the sample.
    const [first] = readAceFolder(RELEASED);
    expect(sampleToAceRecord(aceRecordToSample(first.record, first.text))).toEqual(first.record);
  });

  it('keeps a record whose answer is missing, flagged for review, and exports it with no answer line', async () => {
    const dir = tmp();
    mkdirSync(join(dir, 'data_en', 'possible_answer'), { recursive: true });
    const dataLines = readFileSync(join(RELEASED, 'data_en/data_normal_atom_bool.json'), 'utf8').split('\n').slice(0, 3);
    const answerLines = readFileSync(join(RELEASED, 'data_en/possible_answer/data_normal_atom_bool.json'), 'utf8').split('\n').slice(0, 3);
    writeFileSync(join(dir, 'data_en/data_normal_atom_bool.json'), dataLines.join('\n') + '\n');
    writeFileSync(join(dir, 'data_en/possible_answer/data_normal_atom_bool.json'), [answerLines[0], answerLines[2]].join('\n') + '\n');
    const samples = [...importAceFolder(dir)];
    expect(samples).toHaveLength(3);
    expect(samples[1].meta.checks).toEqual([expect.objectContaining({ name: NO_ANSWER_CHECK, pass: false, soft: true, reason: expect.stringContaining('normal_atom_bool_1') })]);
    expect(samples[1].expected).toEqual({});
    expect(samples[0].meta.checks).toEqual([]);
    const out = tmp();
    await exportAceBench(samplesInMemory(samples.reverse()), [], out);
    expect(readFileSync(join(out, 'data_en/data_normal_atom_bool.json'), 'utf8')).toBe(dataLines.join('\n') + '\n');
    expect(readFileSync(join(out, 'data_en/possible_answer/data_normal_atom_bool.json'), 'utf8')).toBe([answerLines[0], answerLines[2]].join('\n') + '\n');
  });

  it('names the file, line and fault of a bad folder', () => {
    const make = (files: Record<string, string>) => {
      const dir = tmp();
      for (const [file, text] of Object.entries(files)) {
        mkdirSync(join(dir, file, '..'), { recursive: true });
        writeFileSync(join(dir, file), text);
      }
      return dir;
    };
    const good = readFileSync(join(RELEASED, 'data_en/data_special_irrelevant.json'), 'utf8').split('\n')[0];
    const answer = readFileSync(join(RELEASED, 'data_en/possible_answer/data_special_irrelevant.json'), 'utf8').split('\n')[0];
    const run = (dir: string) => userErrorOf(() => [...importAceFolder(dir)]);
    expect(run(make({ 'x.txt': '' }))).toMatch(/no data_en\/ or data_zh\/ folder/);
    expect(run(make({ 'data_en/data_special_irrelevant.json': `${good}\n{"id": 1\n` }))).toMatch(/data_en\/data_special_irrelevant\.json:2:\d+: not valid JSON .*fix that line/);
    expect(run(make({ 'data_en/data_special_irrelevant.json': `${good}\n{"id": "special_irrelevant_9", "question": "user: hi"}\n` }))).toMatch(
      /data_special_irrelevant\.json:2: not an ACEBench record \(id, question, function\): function: .*; fix that line/,
    );
    expect(run(make({ 'data_en/data_special_irrelevant.json': `${good}\n${good}\n` }))).toMatch(/data_special_irrelevant\.json:2: id special_irrelevant_0 appears twice/);
    expect(run(make({ 'data_en/data_special_irrelevant.json': `${good}\n`, 'data_en/possible_answer/data_special_irrelevant.json': `${answer}\n{"id": "special_irrelevant_7", "ground_truth": "x"}\n` }))).toMatch(
      /possible_answer\/data_special_irrelevant\.json:2: answer for id special_irrelevant_7 has no record in .*data_special_irrelevant\.json/,
    );
    expect(run(make({ 'data_en/data_normal_atom_colour.json': `${good}\n` }))).toMatch(/data_normal_atom_colour\.json: "normal_atom_colour" is not an ACEBench category/);
    expect(run(make({ 'data_en/data_special_irrelevant.json': `${good}\n`, 'data_en/possible_answer/data_special_irrelevant.json': '{"id": "special_irrelevant_0", "ground_truth": {"a": 1}}\n' }))).toMatch(
      /data_special_irrelevant\.json:1 \(answer .*possible_answer\/data_special_irrelevant\.json:1\): .*ground_truth must be the refusal sentence/,
    );
  });

  it('orders ids with their numbers compared as numbers, as the release does', () => {
    const ids = ['normal_multi_turn_user_adjust_10_0', 'normal_multi_turn_user_adjust_2_1', 'normal_multi_turn_user_adjust_2_0', 'normal_multi_turn_user_adjust_1_12', 'normal_multi_turn_user_adjust_1_2'];
    expect([...ids].sort(compareIds)).toEqual(['normal_multi_turn_user_adjust_1_2', 'normal_multi_turn_user_adjust_1_12', 'normal_multi_turn_user_adjust_2_0', 'normal_multi_turn_user_adjust_2_1', 'normal_multi_turn_user_adjust_10_0']);
    for (const category of ['normal_multi_turn_user_adjust', 'agent_multi_turn']) {
      const inFile = released.filter((s) => s.category === category && aceMetaOf(s).language === 'en').map((s) => aceMetaOf(s).id);
      expect([...inFile].sort(compareIds)).toEqual(inFile);
      expect([...inFile].sort()).not.toEqual(inFile);
    }
  });

  it('writes JSON as json.dumps does and reads back which whole numbers were floats', () => {
    const text = '{"a": [1, 2.0, {"b/c": 3.50, "d": -0.0}], "e": "é", "f": 1e2}';
    const { value, floatPaths } = parseJsonKeepingFloats(text);
    expect(floatPaths).toEqual(['/a/1', '/a/2/d', '/f']);
    expect(pythonJson(value, { ensureAscii: false, floatPaths: new Set(floatPaths) })).toBe('{"a": [1, 2.0, {"b/c": 3.5, "d": -0.0}], "e": "é", "f": 100.0}');
    expect(pythonJson(value)).toBe('{"a": [1, 2, {"b/c": 3.5, "d": 0}], "e": "\\u00e9", "f": 100}');
    expect(pythonJson([1e16, 0.00001, 1.5e-7, 123.25, 1e22] as never, { floatPaths: new Set(['/0', '/1', '/2', '/3']) })).toBe('[1e+16, 1e-05, 1.5e-07, 123.25, 10000000000000000000000]');
  });

  it('writes no answer file when no record of the category has an answer', async () => {
    const sample = structuredClone(byId('zh', 'special_irrelevant_3'));
    sample.meta.acebench = { ...aceMetaOf(sample), answerKeys: null };
    const out = tmp();
    const written = await exportAceBench(samplesInMemory([sample]), [], out);
    expect(written).toEqual([join(out, 'data_zh/data_special_irrelevant.json')]);
    expect(existsSync(join(out, 'data_zh/possible_answer'))).toBe(false);
  });
});

/** The import recipe as the lead will wire it: import, statistics beside the release, the acebench exporter. */
const Config = z.object({ importDir: z.string().default(RELEASED), referenceDir: z.string().default(RELEASED) });
const pipeline = definePipeline<z.infer<typeof Config>>({
  name: 'acebench-import',
  benchmark: 'acebench',
  description: 'released ACEBench files imported, counted and exported',
  configSchema: Config,
  sourceFiles: (config) => [config.importDir, config.referenceDir],
  stages: (config) => [importStage({ importDir: config.importDir }), statisticsStage({ released: { set: RELEASED_ACEBENCH, path: config.referenceDir, setting: 'referenceDir' } })],
  exports: { acebench: exportAceBench },
  // An import publishes the release as it is: what breaks the shared invariants is counted, not rejected.
  invariants: { gate: () => 'record' },
});

describe('ACEBench import through the runner', () => {
  it('publishes the release as canonical samples with its statistics, and exports it back byte for byte', async () => {
    const home = tmp();
    const result = await runPipeline({ pipeline, llm: new OfflineGateway(42), home, projectDir: process.cwd(), progress: { quiet: true } });
    expect(result.status).toBe('published');
    expect(result.stats.map((s) => [s.stage, s.in, s.out, s.rejected])).toEqual([
      ['import-acebench', 0, 2040, 0],
      ['statistics', 2040, 2040, 0],
    ]);
    const store = new DatasetStore(home);
    const manifest = store.manifest(result.ref!);
    expect(manifest.counts.byCategory.normal_multi_turn_user_adjust).toBe(239);
    const stats = manifest.stats.acebench as { version: { records: number; candidates: { max: number } }; released: { records: number } };
    expect(stats.version.records).toBe(2040);
    expect(stats.released).toEqual(stats.version);
    expect(readFileSync(join(result.ref!.dir, 'reports', 'acebench-statistics.md'), 'utf8')).toContain('| normal_multi_turn_user_adjust | 123 | 123 | 116 | 116 |');

    const out = tmp();
    const written = await pipeline.exports.acebench(store.sampleSource(result.ref!), store.tools(result.ref!), out, result.ref!);
    expect(written).toHaveLength(68);
    for (const language of ['en', 'zh']) {
      for (const sub of ['', 'possible_answer']) {
        for (const file of readdirSync(join(RELEASED, `data_${language}`, sub)).filter((f) => f.endsWith('.json'))) {
          const path = join(`data_${language}`, sub, file);
          expect(readFileSync(join(out, path), 'utf8') === readFileSync(join(RELEASED, path), 'utf8'), path).toBe(true);
        }
      }
    }
  }, 180_000);
});
