import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { OfflineGateway } from '../core/llm/offline.ts';
import type { Sample } from '../core/records.ts';
import { runPipeline } from '../core/run.ts';
import { isReject, standaloneContext } from '../core/stage.ts';
import { DatasetStore } from '../core/store.ts';
import { getPipeline } from '../pipelines/index.ts';
import { exportAceBench } from '../stages/acebench/export.ts';
import { aceRecordToSample, sampleToAceRecord } from '../stages/acebench/format.ts';
import { ACE_CATEGORIES, aceFileName } from '../stages/acebench/record.ts';
import { ruleChecks } from '../stages/acebench/rule-checks.ts';
import { translateStage } from '../stages/acebench/translate.ts';
import { judgeStage } from '../stages/acebench/verify.ts';
import { ArgumentValidator } from '../core/json-schema.ts';
import { tempDirs } from './helpers/files.ts';
import { useTestEndpoint } from './helpers/openai-server.ts';
import { samplesInMemory } from '../core/sample-source.ts';
import { versionSamples } from './helpers/version.ts';

const tmp = tempDirs('tk-acebench-');
const validator = new ArgumentValidator();

async function runOffline(home: string, config: Record<string, unknown>) {
  return runPipeline({ pipeline: getPipeline('acebench'), configOverrides: config, llm: new OfflineGateway(42), home, projectDir: process.cwd(), progress: { quiet: true } });
}

function filesUnder(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (sub: string) => {
    for (const entry of readdirSync(join(dir, sub), { withFileTypes: true })) {
      const path = join(sub, entry.name);
      entry.isDirectory() ? walk(path) : out.set(path, readFileSync(join(dir, path), 'utf8'));
    }
  };
  walk('');
  return out;
}

// A small run: a fifth of the released counts, a smaller tree, translated into Chinese.
const SMALL = { scale: 0.2, tree: { domains: 20 }, translate: ['zh'] };

describe('ACEBench recipe, offline', () => {
  let home: string;
  let samples: Sample[];
  beforeAll(async () => {
    home = tmp();
    await runOffline(home, SMALL);
    const store = new DatasetStore(home);
    samples = versionSamples(store, store.resolve('acebench@v1'));
  }, 300_000);

  it('publishes every released category, in both languages, each record (translations too) passing the hard rule checks', () => {
    for (const language of ['en', 'zh']) {
      const categories = new Set(samples.map(sampleToAceRecord).filter((r) => r.language === language).map((r) => r.category));
      expect([...categories].sort()).toEqual([...ACE_CATEGORIES].sort());
    }
    for (const sample of samples) {
      const names = sample.meta.checks.map((c) => c.name);
      expect(names).toContain('acebench/api-definitions');
      expect(names).toContain('acebench/judges');
      // Checked again here: the translations were made after the rule stage.
      const hard = ruleChecks(sampleToAceRecord(sample), { validator }).filter((c) => !c.pass && !c.soft);
      expect(hard.map((c) => `${sampleToAceRecord(sample).language} ${sample.category} ${c.name}: ${c.reason}`)).toEqual([]);
    }
  });

  it('translates each English dialogue record into Chinese keeping every name and answer; agent tasks are built in each language', () => {
    const byKey = new Map(samples.map(sampleToAceRecord).map((r) => [`${r.language}/${r.category}/${r.data.id}`, r]));
    let pairs = 0;
    for (const [key, zh] of byKey) {
      if (!key.startsWith('zh/') || zh.category.startsWith('agent_')) continue;
      const en = byKey.get(`en/${key.slice(3)}`)!;
      expect(en).toBeDefined();
      expect(zh.answer).toEqual(en.answer);
      expect(zh.data.function.map((fn) => fn.name)).toEqual(en.data.function.map((fn) => fn.name));
      pairs++;
    }
    expect(pairs).toBeGreaterThan(100);
    const zhAgent = [...byKey.values()].filter((r) => r.language === 'zh' && r.category.startsWith('agent_'));
    expect(zhAgent.length).toBeGreaterThan(0);
    for (const record of zhAgent) expect(record.data.question).toMatch(/[\u4e00-\u9fff]/);
  });

  it('exports the released layout, and importing the export gives the same files back', async () => {
    const first = tmp();
    await exportAceBench(samplesInMemory(samples), [], first);
    const files = filesUnder(first);
    for (const language of ['en', 'zh']) {
      for (const category of ACE_CATEGORIES) {
        expect(files.has(join(`data_${language}`, aceFileName(category)))).toBe(true);
        expect(files.has(join(`data_${language}`, 'possible_answer', aceFileName(category)))).toBe(true);
      }
    }
    const again = tmp();
    await runOffline(again, { importDir: first, referenceDir: '' });
    const store = new DatasetStore(again);
    const second = tmp();
    await exportAceBench(samplesInMemory(versionSamples(store, store.resolve('acebench@v1'))), [], second);
    expect(filesUnder(second)).toEqual(files);
  });
});

describe('ACEBench judges behind an OpenAI-compatible endpoint', () => {
  const endpoint = useTestEndpoint();

  async function judged(verdicts: string[]) {
    let asked = 0;
    endpoint.server.setResponder('chat', () => ({ content: JSON.stringify({ verdict: verdicts[asked++ % verdicts.length], reason: `reason ${asked}` }) }));
    const sample = releasedSample();
    const ctx = standaloneContext({ llm: endpoint.llm, runDir: tmp(), seed: 1, key: sample.id });
    const out = await judgeStage({ judges: 3 }).run(sample, ctx);
    if (isReject(out)) throw new Error(`${out.reason}: ${out.detail}`);
    return { out: out as Sample, asked };
  }

  it('asks every judge, keeps each vote and reason, and a majority against fails the soft check', async () => {
    const against = await judged(['fail', 'pass', 'fail']);
    expect(against.asked).toBe(3);
    const check = against.out.meta.checks.find((c) => c.name === 'acebench/judges')!;
    expect(check).toMatchObject({ pass: false, soft: true });
    expect(check.reason).toMatch(/^2 of 3 judges fail it \(prompt acebench\/judge@\w+\): judge 1: fail — reason 1 \| judge 2: pass — reason 2 \| judge 3: fail — reason 3$/);
    const forIt = await judged(['pass', 'fail', 'pass']);
    expect(forIt.out.meta.checks.find((c) => c.name === 'acebench/judges')).toMatchObject({ pass: true });
  });

  it('rejects the record with the reason when a judge cannot answer', async () => {
    endpoint.server.setResponder('chat', () => ({ content: 'not json at all' }));
    const sample = releasedSample();
    const out = await judgeStage({ judges: 3 }).run(sample, standaloneContext({ llm: endpoint.llm, runDir: tmp(), seed: 1, key: sample.id }));
    expect(out).toMatchObject({ reject: true, reason: 'invalid_json' });
  });
});

describe('ACEBench translation behind an OpenAI-compatible endpoint', () => {
  const endpoint = useTestEndpoint();

  async function translated(edit: (text: string, i: number) => string) {
    endpoint.server.setResponder('chat', (request) => {
      const prompt = (request.body.messages as { content: string }[]).map((m) => m.content).join('\n');
      const texts = JSON.parse(prompt.slice(prompt.indexOf('Texts (a JSON list):') + 'Texts (a JSON list):'.length, prompt.lastIndexOf('Reply as JSON')).trim()) as string[];
      return { content: JSON.stringify({ texts: texts.map(edit) }) };
    });
    const sample = releasedSample();
    const out = await translateStage({ into: ['zh'] }).run(sample, standaloneContext({ llm: endpoint.llm, runDir: tmp(), seed: 1, key: sample.id }));
    if (isReject(out)) throw new Error(`${out.reason}: ${out.detail}`);
    return out as Sample[];
  }

  it('keeps a faithful translation beside the original', async () => {
    const out = await translated((text, i) => (i === 0 ? `${text}（中文）` : `中文：${text}`));
    expect(out).toHaveLength(2);
    expect(sampleToAceRecord(out[1]!).language).toBe('zh');
    expect(out[1]!.meta.checks.find((c) => c.name === 'acebench/translation-zh')).toMatchObject({ pass: true });
  });

  it('leaves out a translation that changed a stated value, and flags the original for review', async () => {
    const out = await translated((text, i) => (i === 0 ? `用户：${text.replace(/total/g, '全')}` : text));
    expect(out).toHaveLength(1);
    const check = out[0]!.meta.checks.find((c) => c.name === 'acebench/translation-zh')!;
    expect(check).toMatchObject({ pass: false, soft: true });
    expect(check.reason).toContain('"total" is no longer in the dialogue');
  });
});

function releasedSample(): Sample {
  const dir = '../shared/data/reference/acebench/data_en';
  const line = (file: string) => JSON.parse(readFileSync(file, 'utf8').split('\n')[0]!);
  return aceRecordToSample({ category: 'normal_single_turn_single_function', language: 'en', data: line(`${dir}/data_normal_single_turn_single_function.json`), answer: line(`${dir}/possible_answer/data_normal_single_turn_single_function.json`) });
}
