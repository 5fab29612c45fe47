import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway } from '../core/llm/index.ts';
import { OfflineGateway } from '../core/llm/offline.ts';
import type { LlmGateway } from '../core/llm/types.ts';
import { readJsonl } from '../core/jsonl.ts';
import { Sample } from '../core/records.ts';
import { pathResolver } from '../core/run.ts';
import { runStages } from '../core/runner.ts';
import { NesToolsConfig, nestoolsPipeline, recheckNesTools } from '../pipelines/nestools.ts';
import { EXAMPLE_POOL } from '../prompts/nestools-example-pool.ts';
import generatePrompt from '../prompts/nestools-generate.ts';
import { checkGeneratedStage } from '../stages/nestools/check-generated.ts';
import { checkProgram } from '../stages/nestools/check-program.ts';
import { generateChainsStage } from '../stages/nestools/generate-chains.ts';
import { checkNesToolsRecord } from '../stages/nestools/check-records.ts';
import { programToChain } from '../stages/nestools/convert.ts';
import { exportNesTools } from '../stages/nestools/import-export.ts';
import { parseProgram } from '../stages/nestools/parse-program.ts';
import { valueMentions } from '../stages/nestools/query-values.ts';
import { Rng } from '../core/rng.ts';
import { standaloneContext } from '../core/stage.ts';
import { loadDomainFields, sampleDomains } from '../stages/sources/nestools.ts';
import { startOpenAiServer, type OpenAiTestServer, type RecordedRequest } from './helpers/openai-server.ts';
import { samplesInMemory } from '../core/sample-source.ts';

const projectDir = new URL('..', import.meta.url).pathname;
const WINE = readFileSync(new URL('./fixtures/nestools/wine-chain.py', import.meta.url), 'utf8');
const dirs: string[] = [];

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'nestools-'));
  dirs.push(dir);
  return dir;
}

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** The run's samples and rejects, read back whole (a small run). */
async function run(llm: LlmGateway, overrides: Partial<NesToolsConfig>) {
  const result = await runStages({
    pipeline: nestoolsPipeline,
    config: NesToolsConfig.parse(overrides),
    seed: 7,
    llm,
    runDir: tempDir(),
    resolvePath: pathResolver(projectDir, projectDir),
    progress: { quiet: true },
  });
  return { ...result, samples: [...result.samples()], rejects: [...result.rejects()] };
}

describe('nestools pipeline, offline', () => {
  let first: Awaited<ReturnType<typeof run>>;
  beforeAll(async () => {
    first = await run(new OfflineGateway(7), { count: 24 });
  }, 60_000);

  it('accounts for every input at every stage', () => {
    for (const stage of first.stats) expect(stage.in + stage.fanned, stage.stage).toBe(stage.out + stage.rejected);
    expect(first.stats[0]).toMatchObject({ stage: 'load-domains', out: 24 });
    expect(first.stats.map((s) => s.stage)).toEqual(['load-domains', 'generate-chains', 'check-program', 'normalise-query', 'refine-query', 'tag-for-review', 'dedupe', 'statistics']);
    expect(first.samples.length + first.rejects.length).toBe(24);
    for (const reject of first.rejects) expect(reject.reason).toMatch(/^[a-z_]+$/);
  });

  it('emits samples whose program, chain and task agree', () => {
    expect(first.samples.length).toBeGreaterThanOrEqual(20);
    for (const sample of first.samples) {
      expect(Sample.safeParse(sample).success).toBe(true);
      // The stored program parses back to the sample's chain (the offline path used the real parser).
      const program = parseProgram(sample.meta.program as string);
      const check = checkProgram(program);
      expect(check.ok).toBe(true);
      expect(programToChain(program, check).calls).toEqual(sample.expected.calls);
      // Normalisation left no value out of the task.
      expect(valueMentions(sample.dialogue[0].content, sample.expected.calls!).filter((m) => m.presence === 'missing')).toEqual([]);
      expect(sample.meta.tags.some((tag) => tag.startsWith('structure:'))).toBe(true);
      expect(recheckNesTools(sample, sample.tools).filter((c) => !c.pass && !c.soft)).toEqual([]);
    }
    expect(first.samples.some((s) => s.category === 'nested')).toBe(true);
    expect(first.samples.some((s) => s.meta.lineage.some((l) => l.stage === 'normalise-query'))).toBe(true);
  });

  it('exports NesTools records that pass the checker', async () => {
    const dir = tempDir();
    const [file] = await exportNesTools(samplesInMemory(first.samples), [], dir);
    const records = readJsonl(file);
    expect(records).toHaveLength(first.samples.length);
    expect(records.map((record) => checkNesToolsRecord(record, { strict: true })).filter((r) => !r.ok)).toEqual([]);
  });

  it('reports statistics beside the released set', () => {
    const stats = first.reports['nestools.statistics'] as Record<string, { samples: number; nestedSamples: number }>;
    expect(stats.generated.samples).toBe(first.samples.length);
    expect(stats.reference).toMatchObject({ samples: 1000, nestedSamples: 830 });
  });

  it('gives the same samples for the same seed', async () => {
    const again = await run(new OfflineGateway(7), { count: 24, referenceFile: '' });
    expect(JSON.stringify(again.samples)).toBe(JSON.stringify(first.samples));
    expect(again.reports['nestools.statistics']).not.toHaveProperty('reference');
  }, 60_000);

  it('removes conjunctions when asked, keeping the original task', async () => {
    const variant = await run(new OfflineGateway(7), { count: 6, removeConjunctions: true, referenceFile: '' });
    expect(variant.stats.map((s) => s.stage)).toContain('remove-conjunctions');
    for (const sample of variant.samples) {
      const original = (sample.meta as { taskWithConjunctions?: string }).taskWithConjunctions;
      expect(original).toBeTruthy();
      expect(sample.dialogue[0].content).not.toMatch(/^(Please|First|Then|Finally)\b/);
    }
  }, 60_000);
});

describe('nestools lineage', () => {
  it('keeps the lineage entry of the answer a program came from, and puts it on the sample with the check stage\'s own', async () => {
    const llm = new OfflineGateway(42);
    const ctx = { ...standaloneContext({ llm, runDir: tempDir(), resolvePath: pathResolver(projectDir, projectDir) }), key: '0:Wine' };
    const config = NesToolsConfig.parse({});
    const generate = generateChainsStage({ sealToolsFile: config.sealToolsFile, examplesPerRequest: config.examplesPerRequest, temperature: config.temperature });
    const made = (await generate.run({ index: 0, domain: 'Wine' }, ctx)) as { lineage: unknown };
    expect(made.lineage).toEqual({ stage: generate.name, version: generate.version, prompt: generatePrompt.id, promptHash: generatePrompt.hash, model: llm.model });
    // Whatever version the generating stage was at, not a number the check stage assumes.
    const answered = { stage: 'generate-chains', version: 5, prompt: generatePrompt.id, promptHash: 'a1b2c3', model: 'some-model' };
    const check = checkGeneratedStage({ strict: false, requireNested: false, split: 'test' });
    const sample = (await check.run({ index: 0, domain: 'Wine', answer: WINE, lineage: answered, examples: [] }, ctx)) as Sample;
    expect(sample.meta.lineage).toEqual([answered, { stage: check.name, version: check.version }]);
  });
});

describe('nestools pipeline, importing a file', () => {
  it('checks, tags and accounts for every record of a NesTools file', async () => {
    const result = await run(new OfflineGateway(7), { importFile: join(projectDir, 'test/fixtures/nestools/records.jsonl'), referenceFile: '' });
    expect(result.stats.map((s) => s.stage)).toEqual(['import-nestools', 'tag-for-review', 'dedupe', 'statistics']);
    expect(result.samples.map((s) => s.meta.source?.id)).toEqual(['1']);
    expect(result.samples[0].meta.tags).toContain('review:nested-params');
    expect(result.rejects.map((r) => r.reason)).toEqual(['bad_reference', 'invalid_json']);
  });

  it('imports Seal-Tools records with their tools from the library', async () => {
    const file = join(tempDir(), 'seal.jsonl');
    const lines = readFileSync(join(projectDir, '../shared/data/reference/seal-tools/dev.jsonl'), 'utf8').split('\n').slice(195, 205).join('\n');
    writeFileSync(file, `${lines}\n{"id": "x", "query": "q", "calling": [{"api": "noSuchTool", "parameters": {}, "responses": []}]}\n`);
    const result = await run(new OfflineGateway(7), { importFile: file, importFormat: 'seal-tools', referenceFile: '' });
    expect(result.samples).toHaveLength(10);
    expect(result.samples.every((s) => s.benchmark === 'seal-tools' && s.tools.length > 0)).toBe(true);
    expect(result.rejects.map((r) => r.reason)).toEqual(['not_importable']);
  });
});

describe('nestools pipeline through an OpenAI-compatible endpoint', () => {
  let server: OpenAiTestServer;
  const chat = (request: RecordedRequest) => (request.body.messages as { role: string; content: string }[]).map((m) => m.content).join('\n');

  beforeAll(async () => {
    server = await startOpenAiServer({
      chat: (request) => {
        const text = chat(request);
        if (text.includes("It's your turn to generate.\n\nDomain:")) {
          const domain = text.slice(text.lastIndexOf('Domain: ') + 8).split('\n')[0];
          // One domain gets a program that reads an index; the others a sound program whose task omits "red".
          const program = domain === ANSWERS.brokenDomain ? WINE.replace('get_product_origin(data0)', 'get_product_origin(data0[0])') : WINE.replace('Which red wine', 'Which wine');
          return { content: `Domain: ${domain}\nAnswer:\n\`\`\`python\n${program}\`\`\`\nThis chain feeds the wine into both later calls.` };
        }
        if (text.includes('Values missing from the task:\n')) return { content: 'Rewritten task: Which red wine sold best in California on October 8th, 2023? Where does it come from, and how much left there that day?' };
        if (text.includes('You rewrite tasks well')) return { content: 'Call get_product_origin on the best red wine of California on 8 October 2023 and count its exports that day.' };
        return { status: 400, error: { message: 'unexpected prompt' } };
      },
    });
  });
  afterAll(async () => server.close());

  const ANSWERS = { brokenDomain: '' };

  it('generates, checks, normalises and refines with the real client', async () => {
    const llm = createGateway({ backend: 'openai', model: 'test-model', env: { OPENAI_API_KEY: 'test-key', OPENAI_BASE_URL: server.baseURL }, home: tempDir(), noCache: true, retryBaseMs: 1 });
    // The seed fixes which domains are drawn; the second one gets the broken answer.
    const fields = loadDomainFields(join(projectDir, '../shared/data/sources/nestools/fields.json'));
    ANSWERS.brokenDomain = sampleDomains(fields, 3, Rng.derive(7, 'nestools-domains'))[1].domain;
    const result = await run(llm, { count: 3, examplesPerRequest: 2, referenceFile: '' });
    await llm.close();

    const generation = server.requests.filter((r) => chat(r).includes("It's your turn to generate.\n\nDomain:"));
    expect(generation).toHaveLength(3);
    expect(generation.every((r) => r.body.temperature === 0.95)).toBe(true);
    // Examples rotate: the first two requests show different pool examples.
    const shown = generation.map((r) => EXAMPLE_POOL.filter((e) => chat(r).includes(`Domain: ${e.domain}\n`)).map((e) => e.domain));
    expect(shown[0]).toHaveLength(2);
    expect(shown[0]).not.toEqual(shown[1]);

    expect(result.rejects.map((r) => [r.stage, r.reason])).toEqual([
      ['check-program', 'subscript_or_attribute'],
      ['dedupe', 'duplicate'],
    ]);
    expect(result.samples).toHaveLength(1); // the two sound answers are the same program: one is a duplicate
    const [sample] = result.samples;
    expect(sample.dialogue[0].content).toBe('Which red wine sold best in California on October 8th, 2023? Where does it come from, and how much left there that day?');
    expect(sample.meta.tags).toContain('review:refinement-not-taken');
    expect(sample.meta.tags).toContain('review:nested-params');
    // The refinement named an API, so it was not taken and left no lineage entry.
    expect(sample.meta.lineage.map((l) => l.stage)).toEqual(['generate-chains', 'check-program', 'normalise-query']);
  }, 60_000);
});
