import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ArgumentValidator } from '../core/json-schema.ts';
import { createGateway, type LlmGateway } from '../core/llm/index.ts';
import type { Json } from '../core/records.ts';
import { isReject, standaloneContext, type MapStage } from '../core/stage.ts';
import { multiTurnDialogueStage } from '../stages/acebench/dialogue-multi-turn.ts';
import { AceDialogueRecord, CandidateSet, callsText, parametersOf, pythonRepr, timeLine } from '../stages/acebench/dialogue-records.ts';
import { SINGLE_CATEGORIES, singleDialogueStage } from '../stages/acebench/dialogue-single.ts';
import { IRRELEVANT_ANSWER, atomKindsOf, type AceCategory, type AceFunction } from '../stages/acebench/record.ts';
import { useTestEndpoint } from './helpers/openai-server.ts';

const REFERENCE = new URL('../../shared/data/reference/acebench/', import.meta.url);

interface Released {
  data: { id: string; question: string; function: AceFunction[] } & Record<string, Json>;
  answer: { id: string; ground_truth: Json };
}

function releasedAt(lang: 'en' | 'zh', category: string, i: number): Released {
  const line = (dir: string) => JSON.parse(readFileSync(new URL(`data_${lang}/${dir}data_${category}.json`, REFERENCE), 'utf8').split('\n')[i]);
  return { data: line(''), answer: line('possible_answer/') };
}

function releasedFirst(lang: 'en' | 'zh', category: string): Released {
  return releasedAt(lang, category, 0);
}

/**
 * The first released record of an atom category whose gold function has a top-level parameter of
 * the kind (the release files some records under a kind by a nested parameter: object_deep's first
 * record fills an object of lists, which `atomKindsOf` calls object_short).
 */
function releasedOfKind(lang: 'en' | 'zh', category: string): Released {
  const kind = category.slice('normal_atom_'.length);
  for (let i = 0; ; i++) {
    const record = releasedAt(lang, category, i);
    const gt = record.answer.ground_truth;
    if (Array.isArray(gt)) continue;
    const fn = record.data.function.find((f) => f.name === Object.keys(gt as object)[0]);
    if (fn && Object.values(parametersOf(fn).properties).some((p) => atomKindsOf(p).has(kind as never))) return record;
  }
}

/** A candidate set like the sampler's, made of a released record's functions and gold function names. */
function candidateSet(lang: 'en' | 'zh', category: AceCategory, n = 3): CandidateSet {
  const { data, answer } = category.startsWith('normal_atom_') ? releasedOfKind(lang, category) : releasedFirst(lang, category);
  const names = new Set(data.function.map((fn) => fn.name));
  const gt = answer.ground_truth as Record<string, Json>;
  let targets = Object.keys(gt).map((key) => (names.has(key) ? key : key.replace(/_\d+$/, '')));
  if (category === 'special_error_param') targets = [data.function.find((fn) => Object.keys(gt).every((p) => p in parametersOf(fn).properties))!.name];
  let functions = data.function;
  if (category === 'special_irrelevant') {
    // The release's first irrelevant record is the first single-function question without its target.
    targets = Object.keys(releasedFirst(lang, 'normal_single_turn_single_function').answer.ground_truth as object);
    functions = data.function;
  }
  return CandidateSet.parse({ id: `set-${n}`, category, language: lang, strategy: 'random', targets, functions, path: { domain: 'd', subdomain: 's', functionality: 'f' } });
}

function typeShape(value: Json): string {
  if (Array.isArray(value)) return 'array';
  return value === null ? 'null' : typeof value;
}

const offline = createGateway({ backend: 'offline', seed: 7 });
const runDir = mkdtempSync(join(tmpdir(), 'acebench-dialogue-'));

async function runStage(stage: MapStage<CandidateSet, AceDialogueRecord>, set: CandidateSet, llm: LlmGateway = offline) {
  const ctx = standaloneContext({ llm, runDir, seed: 7, key: set.id });
  return stage.run(set, { ...ctx, rng: (...keys) => ctx.rng(set.id, ...keys) });
}

async function single(set: CandidateSet, datedShare = 1): Promise<AceDialogueRecord> {
  const out = await runStage(singleDialogueStage({ datedShare }), set);
  if (isReject(out)) throw new Error(`${set.category}: ${out.reason}: ${out.detail}`);
  return AceDialogueRecord.parse(out);
}

const validator = new ArgumentValidator();

describe('single-turn generation (offline)', () => {
  for (const category of SINGLE_CATEGORIES) {
    it(`${category}: the released record's shape (keys in order, question form, time line, answer structure)`, async () => {
      const released = releasedFirst('en', category);
      const record = await single(candidateSet('en', category));
      expect(Object.keys(record.data)).toEqual(Object.keys(released.data));
      expect(Object.keys(record.answer)).toEqual(Object.keys(released.answer));
      expect(record.data.id).toBe(`${category}_3`);
      expect(record.answer.id).toBe(record.data.id);
      expect(record.data.question.startsWith('user: ')).toBe(true);
      expect(record.data.question.endsWith('\n')).toBe(released.data.question.endsWith('\n'));
      expect(record.data.question.slice(0, -1)).not.toContain('\n');
      const gt = record.answer.ground_truth;
      const releasedGt = released.answer.ground_truth;
      expect(typeShape(gt)).toBe(typeShape(releasedGt));
      if (category === 'special_irrelevant') expect(gt).toBe(IRRELEVANT_ANSWER);
      else {
        const valueShapes = (g: Json) => [...new Set(Object.values(g as Record<string, Json>).map(typeShape))];
        expect(valueShapes(gt)).toEqual(valueShapes(releasedGt));
      }
      if (category === 'normal_preference') {
        expect(record.data.profile).toMatch(/^\{'basic_features': \{.*\}, 'user_history': \{'shopping': \[.*\]\}\}\. $/);
        expect(released.data.profile).toMatch(/^\{'basic_features': \{.*\}, 'user_history': \{'shopping': \[.*\]\}\}\. $/);
      } else {
        const form = category === 'normal_similar_api' ? /^Today is [A-Z][a-z]+day, [A-Z][a-z]+ \d{2}, \d{4}\.$/ : /^The current time is [A-Z][a-z]+ \d{2}, \d{4}, [A-Z][a-z]+day。$/;
        expect(record.data.time).toMatch(form);
      }
    });
  }

  it('writes an empty time line when the record is not dated, as about half the release does', async () => {
    const record = await single(candidateSet('en', 'normal_single_turn_single_function'), 0);
    expect(record.data.time).toBe('');
  });

  it('parallel: at least two calls, a repeated function keyed Func_1, Func_2', async () => {
    const set = candidateSet('en', 'normal_single_turn_parallel_function');
    const record = await single(set);
    expect(Object.keys(record.answer.ground_truth as object).length).toBeGreaterThanOrEqual(2);
    const twice = await single({ ...set, targets: [set.targets[0], set.targets[0]] });
    expect(Object.keys(twice.answer.ground_truth as object)).toEqual([`${set.targets[0]}_1`, `${set.targets[0]}_2`]);
  });

  it('preference: a gold value comes from the profile and not from the question', async () => {
    const record = await single(candidateSet('en', 'normal_preference'));
    const args = Object.values(record.answer.ground_truth as Record<string, Record<string, Json>>)[0];
    const fromProfile = Object.values(args).filter((v) => (typeof v === 'string' || typeof v === 'number') && String(record.data.profile).includes(String(v)) && !record.data.question.includes(String(v)));
    expect(fromProfile.length).toBeGreaterThan(0);
  });

  for (const kind of ['bool', 'enum', 'list', 'number', 'object_short', 'object_deep'] as const) {
    it(`atom ${kind}: the gold call fills a parameter of that kind, valid against the schema`, async () => {
      const category = `normal_atom_${kind}` as AceCategory;
      const set = candidateSet('en', category);
      const record = await single(set);
      const [[name, args]] = Object.entries(record.answer.ground_truth as Record<string, Record<string, Json>>);
      const fn = set.functions.find((f) => f.name === name)!;
      expect(Object.keys(args).some((p) => atomKindsOf(parametersOf(fn).properties[p]).has(kind))).toBe(true);
      expect(validator.validate(fn.parameters, args)).toEqual([]);
    });
  }

  it('incomplete: the answer names required parameters whose values the question leaves out', async () => {
    const set = candidateSet('en', 'special_incomplete');
    const record = await single(set);
    const [[name, missing]] = Object.entries(record.answer.ground_truth as Record<string, string[]>);
    const required = parametersOf(set.functions.find((f) => f.name === name)!).required;
    expect(missing.length).toBeGreaterThan(0);
    for (const param of missing) {
      expect(required).toContain(param);
      expect(record.data.question).not.toContain(param.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase());
    }
  });

  it('error_param: the listed value breaks its schema (the validator finds it) and the rest of the call is valid', async () => {
    const set = candidateSet('en', 'special_error_param');
    const out = await runStage(singleDialogueStage({ datedShare: 0 }), set);
    const record = AceDialogueRecord.parse(out);
    const [[param, values]] = Object.entries(record.answer.ground_truth as Record<string, Json[]>);
    const fn = set.functions.find((f) => f.name === set.targets[0])!;
    const schema = parametersOf(fn).properties[param];
    expect(validator.validate({ type: 'object', properties: { [param]: schema } }, { [param]: values[0] }).length).toBeGreaterThan(0);
    expect(record.data.question).toContain(String(values[0]));
  });

  it('irrelevant: rejects a set that offers its target, and writes the fixed sentence when none does', async () => {
    const set = candidateSet('en', 'special_irrelevant');
    expect(set.functions.map((f) => f.name)).not.toContain(set.targets[0]);
    expect((await single(set)).answer.ground_truth).toBe(IRRELEVANT_ANSWER);
    const offered = { ...set, targets: [set.functions[0].name] };
    expect(await runStage(singleDialogueStage(), offered)).toMatchObject({ reject: true, reason: 'target_offered' });
  });

  it('rejects a set it cannot make, with the reason: no trailing number, a missing target, a multi-turn category', async () => {
    const set = candidateSet('en', 'normal_single_turn_single_function');
    expect(await runStage(singleDialogueStage(), { ...set, id: 'set' })).toMatchObject({ reject: true, reason: 'no_index' });
    expect(await runStage(singleDialogueStage(), { ...set, targets: ['Nope'] })).toMatchObject({ reject: true, reason: 'target_missing' });
    expect(await runStage(singleDialogueStage(), { ...set, category: 'normal_multi_turn_user_switch' })).toMatchObject({ reject: true, reason: 'wrong_category' });
  });

  it('zh: Chinese questions and date line, names and enum values as the API defines them', async () => {
    const set = candidateSet('zh', 'normal_single_turn_single_function');
    const record = await single(set);
    expect(record.data.question).toMatch(/[\u4e00-\u9fff]/);
    expect(record.data.time).toMatch(/^今天是\d{4}年\d{2}月\d{2}日，星期[日一二三四五六]。$/);
    expect(record.data.question).toContain(set.targets[0]);
    const similar = await single(candidateSet('zh', 'normal_similar_api'));
    expect(similar.data.time).toMatch(/^今天是\d{4}-\d{2}-\d{2} 星期[日一二三四五六]。$/);
    const preference = await single(candidateSet('zh', 'normal_preference'));
    expect(preference.data.profile).toMatch(/'购物': \[.*\}\}。$/);
  });
});

describe('released text forms', () => {
  it('prints calls, date lines and profiles as the release does', () => {
    expect(callsText([{ name: 'f', arguments: { a: 'x', b: { k: [1, 2] }, c: true, d: '感觉神经' } }])).toBe('[f(a="x", b={"k": [1, 2]}, c=true, d="感觉神经")]');
    expect(timeLine('normal_multi_turn_user_adjust', 'en', '2025-07-21')).toBe('Today is 2025-07-21, Monday.');
    expect(timeLine('normal_atom_bool', 'en', '2022-03-05')).toBe('The current time is March 05, 2022, Saturday。');
    expect(pythonRepr({ a: "What is your mother's name?", b: [true, null, 2] })).toBe(`{'a': "What is your mother's name?", 'b': [True, None, 2]}`);
  });

  it('the released multi-turn questions print their calls in that form', () => {
    const { data } = JSON.parse(JSON.stringify({ data: JSON.parse(readFileSync(new URL('data_en/data_normal_multi_turn_user_switch.json', REFERENCE), 'utf8').split('\n')[1]) }));
    expect(data.question).toContain(callsText([{ name: 'TravelMusicRecommender_getPlaylist', arguments: { activity: 'Hiking', environment: { location: 'Rocky Mountain National Park', features: ['Forest'] }, timeOfDay: 'Morning' } }]));
    expect(data.time).toBe(timeLine('normal_multi_turn_user_switch', 'en', '2020-08-11'));
  });
});

describe('multi-turn generation (offline, user / assistant / tool agents)', () => {
  it('normal_multi_turn_user_adjust: a sampled set (distinct targets) first adjusts its first call, then goes on', async () => {
    const base = candidateSet('en', 'normal_multi_turn_user_adjust', 13);
    const [first, second] = base.functions;
    const out = await runStage(multiTurnDialogueStage({ datedShare: 1 }), { ...base, targets: [first.name, second.name] });
    if (isReject(out)) throw new Error(`${out.reason}: ${out.detail}`);
    const records = out as AceDialogueRecord[];
    expect(records.map((r) => Object.keys(r.answer.ground_truth as object)[0])).toEqual([first.name, first.name, second.name]);
    const [made, adjusted] = records.map((r) => (r.answer.ground_truth as Record<string, Record<string, Json>>)[first.name]);
    expect(adjusted).not.toEqual(made);
  });

  for (const category of ['normal_multi_turn_user_adjust', 'normal_multi_turn_user_switch'] as const) {
    it(`${category}: one record per prefix ending before an assistant call, ids _<k>_<j>`, async () => {
      const base = candidateSet('en', category, 12);
      const functions = base.functions;
      const targets = category === 'normal_multi_turn_user_adjust' ? [functions[0].name, functions[0].name, functions[1].name] : [functions[0].name, functions[1].name];
      const set = { ...base, targets };
      const out = await runStage(multiTurnDialogueStage({ datedShare: 1 }), set);
      if (isReject(out)) throw new Error(`${out.reason}: ${out.detail}`);
      const records = (out as AceDialogueRecord[]).map((r) => AceDialogueRecord.parse(r));
      const released = releasedFirst('en', category);
      expect(records.map((r) => r.data.id)).toEqual(targets.map((_, j) => `${category}_12_${j}`));
      records.forEach((record, j) => {
        expect(Object.keys(record.data)).toEqual(Object.keys(released.data));
        expect(record.data.time).toMatch(/^Today is \d{4}-\d{2}-\d{2}, [A-Z][a-z]+day\.$/);
        expect(Object.keys(record.answer.ground_truth as object)).toEqual([targets[j]]);
        const fn = functions.find((f) => f.name === targets[j])!;
        expect(validator.validate(fn.parameters, (record.answer.ground_truth as Record<string, Json>)[targets[j]])).toEqual([]);
        const lines = record.data.question.trimEnd().split('\n');
        expect(lines.at(-1)).toMatch(/^user: /);
        expect(lines.every((line) => /^(user|system): /.test(line))).toBe(true);
        if (j > 0) {
          const previous = records[j - 1];
          const call = callsText(Object.entries(previous.answer.ground_truth as Record<string, Record<string, Json>>).map(([name, args]) => ({ name, arguments: args })));
          expect(record.data.question.startsWith(previous.data.question)).toBe(true);
          // The previous call, then the tool's result, then the user's next turn.
          expect(record.data.question.slice(previous.data.question.length)).toMatch(new RegExp(`^system: ${call.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\nsystem: .+\nuser: `));
        }
      });
      // The assistant asked for a withheld value before the first call: user / system / user.
      expect(records[0].data.question).toMatch(/^user: .+\nsystem: .+\nuser: .+\n$/);
      if (category === 'normal_multi_turn_user_adjust') {
        const [first, second] = records.map((r) => Object.values(r.answer.ground_truth as Record<string, Json>)[0]);
        expect(second).not.toEqual(first);
      }
    });
  }

  it('zh: the dialogue is Chinese, with English role prefixes and a Chinese date line', async () => {
    const base = candidateSet('zh', 'normal_multi_turn_user_switch', 4);
    const out = (await runStage(multiTurnDialogueStage({ datedShare: 1 }), { ...base, targets: [base.functions[0].name, base.functions[1].name] })) as AceDialogueRecord[];
    expect(out).toHaveLength(2);
    expect(out[1].data.question).toMatch(/^user: [^\n]*[\u4e00-\u9fff]/);
    expect(out[1].data.time).toMatch(/^今天是\d{4}年\d{2}月\d{2}日，星期.。$/);
  });
});

describe('with a model behind an OpenAI-compatible endpoint', () => {
  const endpoint = useTestEndpoint();

  it('rejects a gold call that breaks its API schema, naming the API and the argument path', async () => {
    const set = candidateSet('en', 'normal_single_turn_single_function');
    const name = set.targets[0];
    const gold = { dateRange: { startDate: '2023-01-01', endDate: '2028-01-01' }, location: { latitude: 'north', longitude: 23.7 } };
    endpoint.server.setResponder('chat', () => ({ content: JSON.stringify({ question: 'When is the next eclipse in Athens?', calls: [{ name, arguments: gold }] }) }));
    const out = await runStage(singleDialogueStage(), set, endpoint.llm);
    expect(out).toMatchObject({ reject: true, reason: 'invalid_gold_call' });
    expect((out as { detail: string }).detail).toMatch(new RegExp(`^${name}: location\\.latitude: must be number`));
    // The same answer with a valid latitude is kept.
    gold.location.latitude = 37.98 as unknown as string;
    endpoint.server.setResponder('chat', () => ({ content: JSON.stringify({ question: 'When is the next eclipse in Athens?', calls: [{ name, arguments: gold }] }) }));
    expect(isReject(await runStage(singleDialogueStage(), set, endpoint.llm))).toBe(false);
  });

  it('rejects a multi-turn dialogue whose assistant calls with an invalid argument, naming the part', async () => {
    const base = candidateSet('en', 'normal_multi_turn_user_switch', 5);
    const fn = base.functions[0];
    endpoint.server.setResponder('chat', (request) => {
      const text = (request.body.messages as { content: string }[]).map((m) => m.content).join('\n');
      if (text.includes('You play the user')) return { content: JSON.stringify({ text: 'Please help me with this.' }) };
      return { content: JSON.stringify({ action: 'call', calls: [{ name: fn.name, arguments: { invented: 1 } }] }) };
    });
    const out = await runStage(multiTurnDialogueStage(), { ...base, targets: [fn.name] }, endpoint.llm);
    expect(out).toMatchObject({ reject: true, reason: 'invalid_gold_call' });
    expect((out as { detail: string }).detail).toContain(`part 0 (${fn.name}): ${fn.name}: `);
    expect((out as { detail: string }).detail).toContain('"invented" is not a parameter of this function');
  });
});
