import { describe, expect, it } from 'vitest';
import { OfflineGateway } from '../core/llm/offline.ts';
import { DEFAULT_SEED, pathResolver } from '../core/run.ts';
import { runStages } from '../core/runner.ts';
import { standaloneContext, applySourceStage } from '../core/stage.ts';
import { NesToolsConfig, nestoolsPipeline } from '../pipelines/nestools.ts';
import { GeneratedProgram, generateChainsStage } from '../stages/nestools/generate-chains.ts';
import { DomainRequest, loadDomainsStage } from '../stages/sources/nestools.ts';
import { tempDirs } from './helpers/files.ts';

/**
 * The offline NesTools recipe beyond the 906 domains it once managed: with the CLI's default seed,
 * request 906 drew a fan-in consumer whose first edge had no partner edge and stopped the run.
 */

const projectDir = new URL('..', import.meta.url).pathname;
const resolvePath = pathResolver(projectDir, projectDir);
const tempDir = tempDirs('nestools-scale-');

describe('nestools offline at scale', () => {
  it('generates a program or a reason for each of 5,000 domain requests', async () => {
    const config = NesToolsConfig.parse({ count: 5000 });
    const ctx = standaloneContext({ seed: DEFAULT_SEED, llm: new OfflineGateway(DEFAULT_SEED), runDir: tempDir(), resolvePath });
    const load = loadDomainsStage({ fieldsFile: config.fieldsFile, count: config.count });
    const requests = (await applySourceStage(load, ctx)).out as DomainRequest[];
    expect(requests).toHaveLength(5000);

    const generate = generateChainsStage({ sealToolsFile: config.sealToolsFile, examplesPerRequest: config.examplesPerRequest, temperature: config.temperature });
    let programs = 0;
    for (const request of requests) {
      const key = generate.keyOf!(request);
      const result = await generate.run(request, { ...ctx, key, rng: (...keys) => ctx.rng(generate.name, key, ...keys) });
      if ('reject' in result) expect(result.reason, `${key}: ${result.detail}`).toMatch(/^[a-z_]+$/);
      else {
        expect(GeneratedProgram.parse(result)).toMatchObject({ index: request.index, domain: request.domain });
        programs++;
      }
    }
    expect(programs).toBeGreaterThan(4900);
  }, 180_000);

  it('runs the whole recipe past 907 domains, every domain in the output or the rejects', async () => {
    const result = await runStages({
      pipeline: nestoolsPipeline,
      config: NesToolsConfig.parse({ count: 950 }),
      seed: DEFAULT_SEED,
      llm: new OfflineGateway(DEFAULT_SEED),
      runDir: tempDir(),
      resolvePath,
      progress: { quiet: true },
    });
    for (const stage of result.stats) expect(stage.in + stage.fanned, stage.stage).toBe(stage.out + stage.rejected);
    const samples = [...result.samples()];
    const rejects = [...result.rejects()];
    expect(samples.length + rejects.length).toBe(950);
    for (const reject of rejects) expect(reject.reason).toMatch(/^[a-z_]+$/);
    expect(samples.length).toBeGreaterThan(900);
  }, 180_000);
});
