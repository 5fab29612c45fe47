import { isJsonObject } from '../../core/records.ts';
import { z } from 'zod';
import { cosine, createEmbedder, type EmbedderConfig } from '../../core/embed/index.ts';
import { UserError } from '../../core/errors.ts';
import { jsonTypeOf } from '../../core/json-schema.ts';
import type { Json } from '../../core/records.ts';
import type { Rng } from '../../core/rng.ts';
import { scanStage, type ScanStage, type StageContext } from '../../core/stage.ts';
import { ApiRecord } from './api-pool.ts';
import { TreePath } from './api-tree.ts';
import { ACE_CATEGORIES, ACE_LANGUAGES, AceFunctionSchema, atomKindOfCategory, functionAtomKinds, propertiesOf, type AceCategory, type AceFunction, type AceLanguage, type AtomKind } from './record.ts';

/**
 * ACEBench §3.1.1 (2): the three to six candidate functions of each instance, drawn from the API
 * pool. Most sets are random; `normal_similar_api` sets hold the APIs nearest the target (by
 * embedding of name and description); multi-turn and parallel sets are sampled over the pool's
 * link graph (an API whose result field another takes as a parameter, or two APIs sharing a
 * distinctive parameter), so the gold calls can feed each other. Atom categories pick targets
 * whose parameters offer their kind; `special_irrelevant` removes the target (and the other APIs
 * of its functionality, which could answer as well) from the candidates.
 */

export const CANDIDATE_STRATEGIES = ['random', 'similar', 'graph'] as const;

export const CandidateLink = z.object({
  from: z.string(),
  to: z.string(),
  /** `return`: a result field of `from` is a parameter of `to`; `parameter`: both take it. */
  via: z.enum(['return', 'parameter']),
  field: z.string(),
});
export type CandidateLink = z.infer<typeof CandidateLink>;

export const CandidateSet = z.object({
  id: z.string(),
  category: z.enum(ACE_CATEGORIES),
  language: z.enum(ACE_LANGUAGES),
  strategy: z.enum(CANDIDATE_STRATEGIES),
  /** The APIs the gold calls use, in call order. */
  targets: z.array(z.string()).min(1),
  /** The candidates shown, shuffled: targets included, except for `special_irrelevant`. */
  functions: z.array(AceFunctionSchema).min(1),
  /** The first target's place in the context tree. */
  path: TreePath,
  /** Graph sets: how consecutive targets are linked. */
  links: z.array(CandidateLink).optional(),
});
export type CandidateSet = z.infer<typeof CandidateSet>;

/**
 * Instances per category in each language of the released ACEBench (multi-turn categories count
 * conversations, not their per-turn lines); test/acebench-candidates.test.ts checks this against
 * the files. Agent categories are built by experts over their own classes, not from the pool.
 */
export const RELEASED_INSTANCES: Record<AceCategory, number> = {
  normal_single_turn_single_function: 100,
  normal_single_turn_parallel_function: 100,
  normal_multi_turn_user_adjust: 50,
  normal_multi_turn_user_switch: 50,
  normal_similar_api: 50,
  normal_preference: 50,
  normal_atom_bool: 50,
  normal_atom_enum: 50,
  normal_atom_list: 50,
  normal_atom_number: 50,
  normal_atom_object_short: 50,
  normal_atom_object_deep: 50,
  special_incomplete: 50,
  special_error_param: 50,
  special_irrelevant: 50,
  agent_multi_step: 20,
  agent_multi_turn: 30,
};
const POOL_CATEGORIES = ACE_CATEGORIES.filter((c) => !c.startsWith('agent_'));

/** Sets to make per category and language: the released counts × `scale` (agent categories 0), overridden by `counts`. */
export function candidateCounts(scale: number, counts: Partial<Record<AceCategory, number>> = {}): Record<AceCategory, number> {
  if (!Number.isFinite(scale) || scale < 0) throw new UserError(`candidates: scale ${scale} must be a number ≥ 0 (1 = as many instances as released)`);
  return Object.fromEntries(ACE_CATEGORIES.map((c) => [c, counts[c] ?? (POOL_CATEGORIES.includes(c) ? Math.round(RELEASED_INSTANCES[c] * scale) : 0)])) as Record<AceCategory, number>;
}

export function strategyOf(category: AceCategory): (typeof CANDIDATE_STRATEGIES)[number] {
  if (category === 'normal_similar_api') return 'similar';
  if (category === 'normal_single_turn_parallel_function' || category.startsWith('normal_multi_turn_')) return 'graph';
  return 'random';
}

export interface CandidatesOptions {
  /** × the released instance counts (default 1). */
  scale?: number;
  /** Sets per category and language, instead of the scaled released count. */
  counts?: Partial<Record<AceCategory, number>>;
  languages?: AceLanguage[];
  minFunctions?: number;
  maxFunctions?: number;
  embedder?: EmbedderConfig;
  /** A parameter name taken by more than this share of a language's pool is too common to link APIs (default 0.05). */
  maxLinkShare?: number;
}

// ------------------------------------------------------------------ the pool, compactly

interface PoolApi {
  name: string;
  path: TreePath;
  function: AceFunction;
  kinds: Set<AtomKind>;
  required: number;
  /** Top-level parameter and result field keys: normalised name + type. */
  params: Map<string, string>;
  results: Map<string, string>;
}

/** `bookingId`, `booking_id` → `booking_id:string` (with the field's name as written kept for messages). */
function fieldKeys(schema: Json | undefined): Map<string, string> {
  const keys = new Map<string, string>();
  for (const [name, property] of Object.entries(propertiesOf(schema))) {
    const type = isJsonObject(property) ? (jsonTypeOf(property.type) ?? 'any') : 'any';
    const normalised = name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase().replace(/[^a-z0-9]+/g, '_');
    keys.set(`${normalised}:${type}`, name);
  }
  return keys;
}

export function poolApi(api: ApiRecord): PoolApi {
  const required = (api.function.parameters as { required?: unknown }).required;
  return {
    name: api.name,
    path: api.path,
    function: api.function,
    kinds: functionAtomKinds(api.function),
    required: Array.isArray(required) ? required.length : 0,
    params: fieldKeys(api.function.parameters),
    results: fieldKeys(api.returns),
  };
}

/**
 * Links between APIs of one pool: `to` takes a result field of `from` (`return`), or both take a
 * parameter few APIs take (`parameter`; names such as `notes` or `max_results` that many APIs
 * share link nothing).
 */
export function linkGraph(apis: readonly PoolApi[], maxLinkShare = 0.05): Map<number, { to: number; via: 'return' | 'parameter'; key: string }[]> {
  const takers = new Map<string, number[]>();
  apis.forEach((api, i) => {
    for (const key of api.params.keys()) takers.set(key, [...(takers.get(key) ?? []), i]);
  });
  const limit = Math.max(4, Math.ceil(maxLinkShare * apis.length));
  const edges = new Map<number, { to: number; via: 'return' | 'parameter'; key: string }[]>();
  const add = (from: number, to: number, via: 'return' | 'parameter', key: string) => {
    if (from === to || apis[from].name === apis[to].name) return;
    const list = edges.get(from) ?? [];
    if (!list.some((e) => e.to === to && e.via === via)) list.push({ to, via, key });
    edges.set(from, list);
  };
  apis.forEach((api, i) => {
    for (const key of api.results.keys()) for (const j of takers.get(key) ?? []) if ((takers.get(key)?.length ?? 0) <= limit) add(i, j, 'return', key);
  });
  for (const [key, list] of takers) {
    if (list.length > limit) continue;
    for (const i of list) for (const j of list) add(i, j, 'parameter', key);
  }
  return edges;
}

// ------------------------------------------------------------------ sampling

interface LanguagePool {
  apis: PoolApi[];
  vectors: Float32Array[];
  edges: Map<number, { to: number; via: 'return' | 'parameter'; key: string }[]>;
}

/** Which APIs may be the (first) target of a category's instance. */
function eligible(category: AceCategory, api: PoolApi, pool: LanguagePool, index: number): boolean {
  const atom = atomKindOfCategory(category);
  if (atom) return api.kinds.has(atom);
  if (category === 'special_incomplete' || category === 'special_error_param') return api.required > 0;
  if (strategyOf(category) === 'graph') return (pool.edges.get(index)?.length ?? 0) > 0;
  return true;
}

interface Draft {
  strategy: CandidateSet['strategy'];
  targets: number[];
  links?: CandidateLink[];
  /** Candidates besides the targets, chosen by the strategy (filled up at random). */
  chosen: number[];
}

function draftSet(category: AceCategory, target: number, pool: LanguagePool, size: number, rng: Rng): Draft {
  const strategy = strategyOf(category);
  if (strategy === 'similar') {
    const ranked = pool.apis
      .map((api, i) => ({ i, similarity: i === target || api.name === pool.apis[target].name ? -Infinity : cosine(pool.vectors[target], pool.vectors[i]) }))
      .sort((a, b) => b.similarity - a.similarity || a.i - b.i);
    return { strategy, targets: [target], chosen: ranked.slice(0, size - 1).map((r) => r.i) };
  }
  if (strategy === 'graph') {
    // A chain over the links, result-to-parameter links first: two targets, three for parallel calls when the chain goes on.
    const chain = [target];
    const links: CandidateLink[] = [];
    const want = category === 'normal_single_turn_parallel_function' ? rng.int(2, 3) : 2;
    while (chain.length < want) {
      const out = (pool.edges.get(chain.at(-1)!) ?? []).filter((e) => !chain.includes(e.to));
      const returns = out.filter((e) => e.via === 'return');
      if (!out.length) break;
      const edge = rng.pick(returns.length ? returns : out);
      links.push({ from: pool.apis[chain.at(-1)!].name, to: pool.apis[edge.to].name, via: edge.via, field: pool.apis[edge.to].params.get(edge.key) ?? edge.key });
      chain.push(edge.to);
    }
    return { strategy, targets: chain, links, chosen: [] };
  }
  return { strategy, targets: [target], chosen: [] };
}

function makeSets(category: AceCategory, language: AceLanguage, count: number, pool: LanguagePool, options: Required<Pick<CandidatesOptions, 'minFunctions' | 'maxFunctions'>>, rng: Rng): CandidateSet[] {
  const targetsOk = pool.apis.map((api, i) => i).filter((i) => eligible(category, pool.apis[i], pool, i));
  const out: CandidateSet[] = [];
  if (!targetsOk.length || pool.apis.length < options.minFunctions) return out;
  // Targets go round the eligible APIs in a fresh order each time, so each is used about equally.
  let order: number[] = [];
  for (let n = 0; n < count; n++) {
    if (!order.length) order = rng.shuffle(targetsOk);
    const drawn = rng.int(options.minFunctions, options.maxFunctions);
    const draft = draftSet(category, order.pop()!, pool, drawn, rng);
    const size = Math.max(drawn, draft.targets.length);
    const irrelevant = category === 'special_irrelevant';
    const first = pool.apis[draft.targets[0]];
    const excluded = (i: number) =>
      draft.targets.includes(i) || pool.apis[i].name === first.name || (irrelevant && pool.apis[i].path.functionality === first.path.functionality && pool.apis[i].path.subdomain === first.path.subdomain);
    const chosen = draft.chosen.filter((i) => !excluded(i));
    const rest = rng.shuffle(pool.apis.map((_, i) => i).filter((i) => !excluded(i) && !chosen.includes(i)));
    const shown = irrelevant ? [] : [...draft.targets];
    for (const i of [...chosen, ...rest]) if (shown.length < size && !shown.some((j) => pool.apis[j].name === pool.apis[i].name)) shown.push(i);
    if (shown.length < options.minFunctions) continue;
    out.push({
      id: `${language}_${category}_${out.length}`,
      category,
      language,
      strategy: draft.strategy,
      targets: draft.targets.map((i) => pool.apis[i].name),
      functions: rng.shuffle(shown).map((i) => pool.apis[i].function),
      path: first.path,
      ...(draft.links ? { links: draft.links } : {}),
    });
  }
  return out;
}

interface CandidatesState {
  pools: Map<AceLanguage, LanguagePool>;
}

/**
 * Scan stage over the checked API pool: `collect` keeps each API's function, path, atom kinds and
 * link keys, and embeds name and description per language; `finish` makes the candidate sets
 * (deterministic for a seed). The APIs themselves go on only inside the sets.
 */
export function candidatesStage(options: CandidatesOptions = {}): ScanStage<ApiRecord, CandidateSet, CandidatesState> {
  const minFunctions = options.minFunctions ?? 3;
  const maxFunctions = options.maxFunctions ?? 6;
  if (!(Number.isInteger(minFunctions) && minFunctions >= 1 && Number.isInteger(maxFunctions) && maxFunctions >= minFunctions)) {
    throw new UserError(`candidates: minFunctions ${minFunctions} and maxFunctions ${maxFunctions} must be whole numbers with 1 ≤ min ≤ max (ACEBench uses 3 to 6)`);
  }
  const counts = candidateCounts(options.scale ?? 1, options.counts);
  const languages = options.languages ?? [...ACE_LANGUAGES];
  return scanStage({
    name: 'sample-candidates',
    version: 1,
    fanOut: true,
    input: ApiRecord,
    output: CandidateSet,
    keyOf: (api) => `${api.language}:${api.name}`,
    collect: async (apis, ctx) => {
      const byLanguage = new Map<AceLanguage, PoolApi[]>();
      for (const api of apis) if (languages.includes(api.language)) byLanguage.set(api.language, [...(byLanguage.get(api.language) ?? []), poolApi(api)]);
      const embedder = createEmbedder(options.embedder, { gateway: ctx.llm, stage: ctx.stage.name, resolvePath: ctx.resolvePath });
      const pools = new Map<AceLanguage, LanguagePool>();
      for (const [language, list] of byLanguage) {
        const vectors = (await embedder.embed(list.map((api) => `${api.name} ${api.function.description}`))).map((v) => Float32Array.from(v));
        pools.set(language, { apis: list, vectors, edges: linkGraph(list, options.maxLinkShare) });
      }
      return { pools };
    },
    run: () => [],
    finish: (state, ctx) => sampleAll(state, counts, languages, { minFunctions, maxFunctions }, ctx),
  });
}

function sampleAll(state: CandidatesState, counts: Record<AceCategory, number>, languages: AceLanguage[], sizes: { minFunctions: number; maxFunctions: number }, ctx: StageContext): CandidateSet[] {
  const out: CandidateSet[] = [];
  const short: Record<string, number> = {};
  for (const language of languages) {
    const pool = state.pools.get(language) ?? { apis: [], vectors: [], edges: new Map() };
    for (const category of ACE_CATEGORIES) {
      if (!counts[category]) continue;
      const sets = makeSets(category, language, counts[category], pool, sizes, ctx.rng(category, language));
      if (sets.length < counts[category]) short[`${language}/${category}`] = counts[category] - sets.length;
      out.push(...sets);
    }
  }
  ctx.report('acebench.candidates', { sets: out.length, byStrategy: Object.fromEntries(CANDIDATE_STRATEGIES.map((s) => [s, out.filter((c) => c.strategy === s).length])), short });
  if (Object.keys(short).length) ctx.log(`candidates: too few fitting APIs for ${Object.entries(short).map(([k, n]) => `${k} (${n} short)`).join(', ')}`);
  return out;
}
