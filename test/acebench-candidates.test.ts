import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { cosine, lexicalEmbedder } from '../core/embed/index.ts';
import { readJsonl } from '../core/jsonl.ts';
import { OfflineGateway } from '../core/llm/offline.ts';
import { definePipeline } from '../core/pipeline.ts';
import { runStages } from '../core/runner.ts';
import { applyScanStage, isReject, standaloneContext, applySourceStage } from '../core/stage.ts';
import { checkApisStage } from '../stages/acebench/api-check.ts';
import { ApiRecord } from '../stages/acebench/api-pool.ts';
import { synthesiseApisStage } from '../stages/acebench/api-synthesis.ts';
import { contextTreeStage } from '../stages/acebench/api-tree.ts';
import { CandidateSet, RELEASED_INSTANCES, candidateCounts, candidatesStage, poolApi } from '../stages/acebench/candidates.ts';
import { ACE_CATEGORIES, aceFileName, functionAtomKinds, type AtomKind } from '../stages/acebench/record.ts';

const projectDir = new URL('..', import.meta.url).pathname;
const resolvePath = (path: string) => (path.startsWith('/') ? path : join(projectDir, path));
const TREE = { fieldsFile: '../shared/data/sources/nestools/fields.json', sealFieldsFile: '../shared/data/sources/seal-tools/field.jsonl', domains: 10, subdomainsPerDomain: 3, functionalitiesPerSubdomain: 3 };
const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'acebench-candidates-'));
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
const contextOf = (seed = 11) => standaloneContext({ llm: new OfflineGateway(seed), seed, runDir: tempDir(), resolvePath });

/** A checked offline pool, built stage by stage in memory. */
async function offlinePool(seed = 11): Promise<ApiRecord[]> {
  const ctx = contextOf(seed);
  const leaves = (await applySourceStage(contextTreeStage(TREE), ctx)).out;
  const synth = synthesiseApisStage();
  const drafts: ApiRecord[] = [];
  for (const leaf of leaves) {
    const result = await synth.run(leaf, { ...ctx, key: leaf.id });
    if (isReject(result)) throw new Error(result.detail);
    drafts.push(...(result as ApiRecord[]));
  }
  return (await applyScanStage(checkApisStage(), drafts, ctx)).out;
}

describe('candidate sets', () => {
  let pool: ApiRecord[];
  let sets: CandidateSet[];
  const byName = new Map<string, ApiRecord>();
  beforeAll(async () => {
    pool = await offlinePool();
    for (const api of pool) byName.set(`${api.language}:${api.name}`, api);
    sets = (await applyScanStage(candidatesStage({ scale: 0.2 }), pool, contextOf())).out.map((s) => CandidateSet.parse(s));
  });

  it('the released counts table matches the released files', () => {
    for (const language of ['en', 'zh']) {
      for (const category of ACE_CATEGORIES) {
        const ids = readFileSync(resolvePath(`../shared/data/reference/acebench/data_${language}/${aceFileName(category)}`), 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((line) => (JSON.parse(line) as { id: string }).id.replace(/^(normal_multi_turn_user_\w+?_\d+)_\d+$/, '$1'));
        expect(new Set(ids).size, `${language} ${category}`).toBe(RELEASED_INSTANCES[category]);
      }
    }
    expect(candidateCounts(0.2).normal_single_turn_single_function).toBe(20);
    expect(candidateCounts(0.2).agent_multi_turn).toBe(0);
    expect(candidateCounts(1, { normal_atom_bool: 3 }).normal_atom_bool).toBe(3);
  });

  it('makes the configured number of sets per category and language, each with 3–6 functions', () => {
    const counts = candidateCounts(0.2);
    for (const language of ['en', 'zh'] as const) {
      for (const category of ACE_CATEGORIES) expect(sets.filter((s) => s.language === language && s.category === category).length, `${language} ${category}`).toBe(counts[category]);
    }
    for (const set of sets) {
      expect(set.functions.length).toBeGreaterThanOrEqual(3);
      expect(set.functions.length).toBeLessThanOrEqual(6);
      expect(new Set(set.functions.map((f) => f.name)).size).toBe(set.functions.length);
      const shown = set.functions.map((f) => f.name);
      for (const target of set.targets) {
        expect(byName.has(`${set.language}:${target}`)).toBe(true);
        if (set.category === 'special_irrelevant') expect(shown).not.toContain(target);
        else expect(shown).toContain(target);
      }
      expect(set.path).toEqual(byName.get(`${set.language}:${set.targets[0]}`)!.path);
    }
    // Shuffled: the target is not always first.
    const singles = sets.filter((s) => s.category === 'normal_single_turn_single_function');
    expect(new Set(singles.map((s) => s.functions.findIndex((f) => f.name === s.targets[0]))).size).toBeGreaterThan(2);
  });

  it('gives atom categories targets whose parameters offer that kind', () => {
    for (const set of sets.filter((s) => s.category.startsWith('normal_atom_'))) {
      const target = set.functions.find((f) => f.name === set.targets[0])!;
      expect(functionAtomKinds(target).has(set.category.slice('normal_atom_'.length) as AtomKind), `${set.id} ${target.name}`).toBe(true);
    }
  });

  it('similar sets hold APIs nearer the target than random sets do', async () => {
    const english = pool.filter((a) => a.language === 'en');
    const vectors = await lexicalEmbedder().embed(english.map((a) => `${a.name} ${a.function.description}`));
    const index = new Map(english.map((a, i) => [a.name, i]));
    const meanSimilarity = (strategy: string) => {
      const chosen = sets.filter((s) => s.strategy === strategy && s.language === 'en' && s.category !== 'special_irrelevant');
      let total = 0;
      let n = 0;
      for (const set of chosen) {
        for (const other of set.functions.filter((f) => f.name !== set.targets[0])) {
          total += cosine(vectors[index.get(set.targets[0])!], vectors[index.get(other.name)!]);
          n++;
        }
      }
      return total / n;
    };
    expect(sets.some((s) => s.category === 'normal_similar_api' && s.strategy === 'similar')).toBe(true);
    expect(meanSimilarity('similar')).toBeGreaterThan(meanSimilarity('random') + 0.1);
  });

  it('graph sets link consecutive targets by a result field or a shared parameter', () => {
    const graphSets = sets.filter((s) => s.strategy === 'graph');
    expect(graphSets.length).toBeGreaterThan(0);
    expect(graphSets.some((s) => s.links!.some((l) => l.via === 'return'))).toBe(true);
    for (const set of graphSets) {
      expect(set.targets.length).toBeGreaterThanOrEqual(2);
      expect(set.links).toHaveLength(set.targets.length - 1);
      set.links!.forEach((link, i) => {
        expect([link.from, link.to]).toEqual([set.targets[i], set.targets[i + 1]]);
        const from = poolApi(byName.get(`${set.language}:${link.from}`)!);
        const to = poolApi(byName.get(`${set.language}:${link.to}`)!);
        const toKey = [...to.params].find(([, name]) => name === link.field)?.[0];
        expect(toKey, `${set.id}: ${link.to} takes ${link.field}`).toBeDefined();
        expect(link.via === 'return' ? from.results.has(toKey!) : from.params.has(toKey!), `${set.id}: ${link.from} ${link.via} ${link.field}`).toBe(true);
      });
    }
  });

  it('is deterministic for a seed', async () => {
    const again = (await applyScanStage(candidatesStage({ scale: 0.2 }), pool, contextOf())).out;
    expect(again).toEqual(sets);
    const other = (await applyScanStage(candidatesStage({ scale: 0.2 }), pool, contextOf(12))).out;
    expect(other).not.toEqual(sets);
  });

  it('refuses sizes outside 1 ≤ min ≤ max', () => {
    expect(() => candidatesStage({ minFunctions: 5, maxFunctions: 4 })).toThrow(/minFunctions 5 and maxFunctions 4/);
  });
});

describe('a small offline pool through the runner', () => {
  it('grows the tree, synthesises and checks APIs, and samples candidate sets, accounting for every record', async () => {
    const Config = z.object({});
    const pipeline = definePipeline({
      name: 'acebench-apis-test',
      benchmark: 'acebench',
      description: 'test',
      configSchema: Config,
      sourceFiles: () => [],
      stages: () => [contextTreeStage({ ...TREE, domains: 4 }), synthesiseApisStage(), checkApisStage(), candidatesStage({ scale: 0.05 })],
      exports: {},
    });
    const runDir = tempDir();
    const result = await runStages({ pipeline, config: {}, seed: 5, llm: new OfflineGateway(5), runDir, resolvePath, progress: { quiet: true } });
    expect(result.stats.map((s) => s.stage)).toEqual(['context-tree', 'synthesise-apis', 'check-apis', 'sample-candidates']);
    for (const stage of result.stats) expect(stage.in + stage.fanned, stage.stage).toBe(stage.out + stage.rejected);
    expect(result.stats[0].out).toBe(4 * 3 * 3);
    expect(result.stats[1].out).toBe(4 * 3 * 3 * 2 * 2);
    const sets = readJsonl<unknown>(join(runDir, 'stages', '04-sample-candidates', 'out.jsonl')).map((s) => CandidateSet.parse(s));
    expect(sets.length).toBe(2 * Object.values(candidateCounts(0.05)).reduce((a, b) => a + b, 0));
    expect(new Set(sets.map((s) => s.strategy))).toEqual(new Set(['random', 'similar', 'graph']));
    expect(result.reports['acebench.tree']).toMatchObject({ domains: 4, functionalities: 36 });
  }, 60_000);
});
