import { z } from 'zod';
import { clusterSpace, VectorSpace } from '../core/cluster/index.ts';
import { createEmbedder, EmbedderConfig, joinViews, lexicalEmbedder } from '../core/embed/index.ts';
import { hashOf } from '../core/hash.ts';
import { Sample, type Call, type Check, type ToolSpec } from '../core/records.ts';
import type { ScanStage } from '../core/stage.ts';

/**
 * MTU-Bench tool clustering (paper §3 "Tool Clustering", Appendix B "Redundancy Elimination"):
 * synthesized tools are redundant (search_movie / find_movie; share_location / send_location_info).
 * Tool names are embedded together with their parameter names, clustered with a fixed distance
 * threshold, and every cluster is standardised to its representative — the medoid — whose name
 * and parameter names replace the members' in every tool list and every call. Members whose
 * required parameters do not line up with the representative's are not merged: the cluster goes
 * to review (tag `review:merge-conflict`, a failed soft check) on every sample that uses it.
 */

export const MergeToolsMtuConfig = z
  .object({
    embedder: EmbedderConfig.default({ kind: 'lexical' }),
    linkage: z.enum(['single', 'complete', 'average']).default('average'),
    /** Cosine distance at or below which tools join one cluster. */
    threshold: z.number().min(0).max(2).default(0.25),
    /** Share of the tool name in the similarity; the rest is the parameter names (default 0.75). */
    nameWeight: z.number().min(0).max(1).default(0.75),
    /** Cosine distance (lexical) at or below which two parameter names count as the same parameter. */
    parameterThreshold: z.number().min(0).max(2).default(0.35),
  })
  .strict();
export type MergeToolsMtuConfig = z.input<typeof MergeToolsMtuConfig>;

export const MERGE_CONFLICT_TAG = 'review:merge-conflict';
const NAME = 'merge-tools-mtu';
const VERSION = 2;

/** One tool folded into its representative. */
export interface ToolMapping {
  from: string;
  to: string;
  /** Member parameter → representative parameter (names that change only). */
  parameters: Record<string, string>;
  /** Cosine distance of the member to the representative. */
  distance: number;
}

export interface MergeConflict {
  tools: string[];
  representative: string;
  reason: string;
}

export interface MtuMergePlan {
  toolsBefore: number;
  toolsAfter: number;
  /** toolsBefore / toolsAfter (the paper reports about 20:1). */
  reductionRatio: number;
  mappings: ToolMapping[];
  conflicts: MergeConflict[];
  /** Representative name → its spec after merging (its own parameters plus the members' extra optional ones). */
  merged: Map<string, ToolSpec>;
}

// ---------------------------------------------------------------- sample rewriting

/** Applies `rewrite` to every call of a sample: dialogue turns, expected calls, expected calls per turn. */
export function mapCalls(sample: Sample, rewrite: (call: Call) => Call): Sample {
  const expected = { ...sample.expected };
  if (expected.calls) expected.calls = expected.calls.map(rewrite);
  if (expected.turns) expected.turns = Object.fromEntries(Object.entries(expected.turns).map(([turn, calls]) => [turn, calls.map(rewrite)]));
  return { ...sample, dialogue: sample.dialogue.map((turn) => (turn.calls ? { ...turn, calls: turn.calls.map(rewrite) } : turn)), expected };
}

/** Every tool name a sample offers or calls. */
export function toolsUsedBy(sample: Sample): Set<string> {
  const names = new Set(sample.tools.map((t) => t.name));
  mapCalls(sample, (call) => (names.add(call.tool), call));
  return names;
}

/** Replaces tools in a sample's candidate list (several old tools may become one), keeping first positions. */
export function replaceTools(tools: readonly ToolSpec[], replacement: (tool: ToolSpec) => ToolSpec[]): ToolSpec[] {
  const seen = new Set<string>();
  const out: ToolSpec[] = [];
  for (const tool of tools) {
    for (const next of replacement(tool)) {
      if (seen.has(next.name)) continue;
      seen.add(next.name);
      out.push(next);
    }
  }
  return out;
}

/** Records a stage's changes on a sample: its lineage entry, failed soft checks, and `tag` when there are any. */
export function noteChanges(sample: Sample, entry: Sample['meta']['lineage'][number], checks: Check[], tag: string): Sample {
  const flagged = flagForReview(sample, checks, tag);
  return { ...flagged, meta: { ...flagged.meta, lineage: [...flagged.meta.lineage, entry] } };
}

/** Adds failed soft checks to a sample, and `tag` when there are any: the review queue picks both up. */
export function flagForReview(sample: Sample, checks: Check[], tag: string): Sample {
  if (!checks.length) return sample;
  const tags = sample.meta.tags.includes(tag) ? sample.meta.tags : [...sample.meta.tags, tag];
  return { ...sample, meta: { ...sample.meta, tags, checks: [...sample.meta.checks, ...checks] } };
}

// ---------------------------------------------------------------- planning

function parameterText(tool: ToolSpec): string {
  const names = Object.keys(tool.parameters.properties);
  return names.length ? names.join(' ') : '(no parameters)';
}

/**
 * Matches a member's parameters to the representative's, one to one: equal names first, then the
 * closest names (lexical cosine distance ≤ threshold), closest pairs first.
 */
async function matchParameters(member: ToolSpec, representative: ToolSpec, threshold: number): Promise<Map<string, string>> {
  const own = Object.keys(member.parameters.properties);
  const target = Object.keys(representative.parameters.properties);
  const match = new Map<string, string>();
  for (const name of own) if (target.includes(name)) match.set(name, name);
  const restOwn = own.filter((n) => !match.has(n));
  const restTarget = target.filter((n) => ![...match.values()].includes(n));
  if (!restOwn.length || !restTarget.length) return match;
  // Parameter names are nouns: `title` is no action.
  const vectors = await lexicalEmbedder({ identifierActions: false }).embed([...restOwn, ...restTarget]);
  const space = VectorSpace.from(vectors, 'cosine', 'parameter names');
  const pairs: [number, number, number][] = [];
  restOwn.forEach((_, i) => restTarget.forEach((__, j) => pairs.push([space.pair(i, restOwn.length + j), i, j])));
  pairs.sort((a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2]);
  const usedTarget = new Set<number>();
  for (const [distance, i, j] of pairs) {
    if (distance > threshold) break;
    if (match.has(restOwn[i]) || usedTarget.has(j)) continue;
    match.set(restOwn[i], restTarget[j]);
    usedTarget.add(j);
  }
  return match;
}

/** Why a member cannot be folded into the representative, or null. */
function requiredMismatch(member: ToolSpec, representative: ToolSpec, match: Map<string, string>): string | null {
  const mapped = new Set(member.parameters.required.map((p) => match.get(p) ?? `${p} (no counterpart)`));
  const wanted = new Set(representative.parameters.required);
  const missing = [...wanted].filter((p) => !mapped.has(p));
  const extra = [...mapped].filter((p) => !wanted.has(p));
  if (!missing.length && !extra.length) return null;
  const parts = [];
  if (extra.length) parts.push(`${member.name} requires ${extra.join(', ')}`);
  if (missing.length) parts.push(`${representative.name} requires ${missing.join(', ')} which ${member.name} lacks`);
  return parts.join('; ');
}

/** The representative's spec widened with the members' parameters it has no counterpart for (as optional). */
function mergedSpec(representative: ToolSpec, members: { tool: ToolSpec; match: Map<string, string> }[]): ToolSpec {
  const properties = { ...representative.parameters.properties };
  for (const { tool, match } of members) {
    for (const [name, schema] of Object.entries(tool.parameters.properties)) if (!match.has(name) && !(name in properties)) properties[name] = schema;
  }
  return { ...representative, parameters: { ...representative.parameters, properties } };
}

/**
 * Clusters the tool library and decides every merge. `usage` (calls per tool) breaks medoid ties
 * toward the tool used most.
 */
/** Unordered pair key of two tool names. */
function pairKey(a: string, b: string): string {
  return a < b ? `${a}\u0000${b}` : `${b}\u0000${a}`;
}

/** Adds the pairs of tools some turn of `sample` calls together: evidence that they are different actions, whatever their names. */
export function addCoCalledPairs(sample: Sample, pairs: Set<string>): void {
  const groups = [...sample.dialogue.map((turn) => turn.calls ?? []), sample.expected.calls ?? [], ...Object.values(sample.expected.turns ?? {})];
  for (const calls of groups) {
    const names = [...new Set(calls.map((c) => c.tool))];
    for (let i = 0; i < names.length; i++) for (let j = i + 1; j < names.length; j++) pairs.add(pairKey(names[i], names[j]));
  }
}

export async function planMtuMerge(
  tools: ToolSpec[],
  usage: Map<string, number>,
  config: z.output<typeof MergeToolsMtuConfig>,
  deps: { gateway?: unknown; resolvePath?: (p: string) => string; seed?: number; coCalled?: Set<string>; ambiguous?: Set<string> },
): Promise<MtuMergePlan> {
  const plan: MtuMergePlan = { toolsBefore: tools.length, toolsAfter: tools.length, reductionRatio: 1, mappings: [], conflicts: [], merged: new Map() };
  if (tools.length < 2) return plan;
  const embedderDeps = { gateway: deps.gateway, stage: NAME, resolvePath: deps.resolvePath };
  const embedder = createEmbedder(config.embedder, embedderDeps);
  // Parameter names are nouns: the lexical embedder must not read their first word as an action.
  const parameterEmbedder = config.embedder.kind === 'lexical' ? createEmbedder({ ...config.embedder, identifierActions: false }, embedderDeps) : embedder;
  const [names, parameters] = [await embedder.embed(tools.map((t) => t.name)), await parameterEmbedder.embed(tools.map(parameterText))];
  const space = VectorSpace.from(joinViews([names, parameters], [config.nameWeight, 1 - config.nameWeight]), 'cosine', `${NAME}: tool embeddings`);
  const clustering = clusterSpace(space, { threshold: config.threshold, linkage: config.linkage, seed: deps.seed, source: NAME });

  let after = 0;
  for (const members of clustering.clusters) {
    if (members.length === 1) {
      after++;
      continue;
    }
    // The medoid (least summed distance to the others); among equally central members the most used, then the first.
    const sums = members.map((i) => members.reduce((sum, j) => sum + space.pair(i, j), 0));
    const least = Math.min(...sums);
    const representative = members.filter((_, k) => sums[k] <= least + 1e-12).sort((a, b) => (usage.get(tools[b].name) ?? 0) - (usage.get(tools[a].name) ?? 0) || a - b)[0];
    const rep = tools[representative];
    const folded: { tool: ToolSpec; match: Map<string, string>; distance: number }[] = [];
    const problems: string[] = [];
    for (const i of members) {
      if (i === representative) continue;
      const match = await matchParameters(tools[i], rep, config.parameterThreshold);
      const problem = requiredMismatch(tools[i], rep, match);
      if (problem) problems.push(problem);
      folded.push({ tool: tools[i], match, distance: space.pair(i, representative) });
    }
    const memberNames = members.map((i) => tools[i].name);
    // One name for different tools (SGD's FindRestaurants of two services): renaming by name would swap specs.
    for (const name of memberNames) if (deps.ambiguous?.has(name)) problems.push(`${name} names different tools in different sources`);
    for (let a = 0; a < memberNames.length; a++) {
      for (let b = a + 1; b < memberNames.length; b++) {
        if (deps.coCalled?.has(pairKey(memberNames[a], memberNames[b]))) problems.push(`${memberNames[a]} and ${memberNames[b]} are called together in one turn`);
      }
    }
    if (problems.length) {
      plan.conflicts.push({ tools: memberNames, representative: rep.name, reason: problems.join('; ') });
      after += members.length;
      continue;
    }
    after++;
    plan.merged.set(rep.name, mergedSpec(rep, folded));
    for (const { tool, match, distance } of folded) {
      const renamed = Object.fromEntries([...match].filter(([from, to]) => from !== to));
      plan.mappings.push({ from: tool.name, to: rep.name, parameters: renamed, distance: Math.round(distance * 10000) / 10000 });
    }
  }
  plan.toolsAfter = after;
  plan.reductionRatio = Math.round((tools.length / after) * 100) / 100;
  return plan;
}

// ---------------------------------------------------------------- the stage

/** Rewrites one sample by the plan: tools renamed and de-duplicated, calls renamed with their arguments. */
export function applyMtuMerge(sample: Sample, plan: MtuMergePlan, mappingOf: Map<string, ToolMapping>, conflictOf: Map<string, MergeConflict>): Sample {
  const used = toolsUsedBy(sample);
  const touched = [...used].some((name) => mappingOf.has(name) || plan.merged.has(name));
  const conflicts = [...new Set([...used].map((name) => conflictOf.get(name)).filter((c): c is MergeConflict => !!c))];
  if (!touched && !conflicts.length) return sample;

  let out = sample;
  if (touched) {
    out = mapCalls(out, (call) => {
      const mapping = mappingOf.get(call.tool);
      if (!mapping) return call;
      const args = Object.fromEntries(Object.entries(call.arguments).map(([name, value]) => [mapping.parameters[name] ?? name, value]));
      return { ...call, tool: mapping.to, arguments: args };
    });
    out = { ...out, tools: replaceTools(out.tools, (tool) => [plan.merged.get(mappingOf.get(tool.name)?.to ?? tool.name) ?? tool]) };
  }
  const checks: Check[] = conflicts.map((c) => ({ name: NAME, pass: false, soft: true, reason: `tools ${c.tools.join(', ')} cluster together but cannot be merged blindly (${c.reason}); merge them by hand or leave them apart` }));
  return noteChanges(out, { stage: NAME, version: VERSION }, checks, MERGE_CONFLICT_TAG);
}

interface MergeState {
  plan: MtuMergePlan;
  mappingOf: Map<string, ToolMapping>;
  conflictOf: Map<string, MergeConflict>;
}

export function mergeToolsMtuStage(options: MergeToolsMtuConfig = {}): ScanStage<Sample, Sample, MergeState> {
  const config = MergeToolsMtuConfig.parse(options);
  return {
    kind: 'scan',
    name: NAME,
    version: VERSION,
    input: Sample,
    output: Sample,
    collect: async (samples, ctx) => {
      // The library: every distinct tool name, first spec seen; usage counts calls.
      const library = new Map<string, ToolSpec>();
      const parameterHashes = new Map<string, string>();
      const ambiguous = new Set<string>();
      const usage = new Map<string, number>();
      const coCalled = new Set<string>();
      for (const sample of samples) {
        for (const tool of sample.tools) {
          const known = parameterHashes.get(tool.name);
          if (known === undefined) {
            library.set(tool.name, tool);
            parameterHashes.set(tool.name, hashOf(tool.parameters));
          } else if (!ambiguous.has(tool.name) && known !== hashOf(tool.parameters)) ambiguous.add(tool.name);
        }
        mapCalls(sample, (call) => (usage.set(call.tool, (usage.get(call.tool) ?? 0) + 1), call));
        addCoCalledPairs(sample, coCalled);
      }
      const plan = await planMtuMerge([...library.values()], usage, config, { gateway: ctx.llm, resolvePath: ctx.resolvePath, seed: ctx.seed, coCalled, ambiguous });
      ctx.report('toolMerge', {
        method: 'mtu',
        threshold: config.threshold,
        linkage: config.linkage,
        toolsBefore: plan.toolsBefore,
        toolsAfter: plan.toolsAfter,
        reductionRatio: plan.reductionRatio,
        mappings: plan.mappings,
        conflicts: plan.conflicts,
      });
      ctx.log(`${plan.toolsBefore} tools → ${plan.toolsAfter} (${plan.reductionRatio}:1), ${plan.conflicts.length} clusters sent to review`);
      return {
        plan,
        mappingOf: new Map(plan.mappings.map((m) => [m.from, m])),
        conflictOf: new Map(plan.conflicts.flatMap((c) => c.tools.map((name) => [name, c] as const))),
      };
    },
    run: (sample, { state }) => applyMtuMerge(sample, state.plan, state.mappingOf, state.conflictOf),
  };
}
