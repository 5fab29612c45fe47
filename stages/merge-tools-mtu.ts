import { z } from 'zod';
import { clusterSpace, VectorSpace } from '../core/cluster/index.ts';
import { createEmbedder, EmbedderConfig, joinViews, lexicalEmbedder } from '../core/embed/index.ts';
import { UserError } from '../core/errors.ts';
import { Sample, type Call, type Check, type ToolSpec } from '../core/records.ts';
import { scanStage, type LineageEntry, type ScanStage } from '../core/stage.ts';
import { toolQuestionId, toolsChanged, type ToolDecision, type ToolEvidence, type ToolQuestion } from '../core/tool-review.ts';
import { eachCall, mapCalls, noteChanges, replaceTools, ToolUsage } from './tool-merge.ts';

/**
 * MTU-Bench tool clustering (paper §3 "Tool Clustering", Appendix B "Redundancy Elimination"):
 * synthesized tools are redundant (search_movie / find_movie; share_location / send_location_info).
 * Tool names are embedded together with their parameter names, clustered with a fixed distance
 * threshold, and every cluster is standardised to its representative — the medoid — whose name
 * and parameter names replace the members' in every tool list and every call. Members whose
 * required parameters do not line up with the representative's are not merged: the cluster goes
 * to review (tag `review:merge-conflict`, a failed soft check) on every sample that uses it: a
 * tool-level question, answered once in the tool sheet (`toolkiln review export`), whose decisions
 * come back as `decisions` (merge these tools into one, keep them apart, rename) on the next run.
 */

/** Tool-level decisions (from a tool sheet); each tool may appear in one decision only. */
export const MtuToolDecisions = z
  .object({
    /** These tools become one named `into` (the cluster's checks are a person's to overrule). */
    merge: z.array(z.object({ tools: z.array(z.string().min(1)).min(2), into: z.string().min(1) }).strict()).default([]),
    /** These tools stay as they are and are no longer flagged, whatever the clustering says. */
    keepApart: z.array(z.array(z.string().min(1)).min(1)).default([]),
    /** A tool kept apart under a new name. */
    rename: z.array(z.object({ tool: z.string().min(1), into: z.string().min(1) }).strict()).default([]),
  })
  .strict();
export type MtuToolDecisions = z.infer<typeof MtuToolDecisions>;

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
    /** Decisions of a tool review; absent: every merge is the clustering's. */
    decisions: MtuToolDecisions.optional(),
  })
  .strict();
export type MergeToolsMtuConfig = z.input<typeof MergeToolsMtuConfig>;

export const MERGE_CONFLICT_TAG = 'review:merge-conflict';
const NAME = 'merge-tools-mtu';
/** The check a conflict fails on every sample using its tools (a tool-level question). */
export const MTU_MERGE_CHECK = NAME;
const VERSION = 4;

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
  /** What a reviewer sees of each tool (tool sheet). */
  evidence?: ToolEvidence[];
}

/** A decision applied, as the report lists it. */
export interface AppliedDecision {
  decision: 'merge' | 'keep-apart' | 'rename';
  tools: string[];
  into?: string;
}

export interface MtuMergePlan {
  toolsBefore: number;
  toolsAfter: number;
  /** toolsBefore / toolsAfter (the paper reports about 20:1). */
  reductionRatio: number;
  mappings: ToolMapping[];
  conflicts: MergeConflict[];
  decided: AppliedDecision[];
  /** Names the decisions mention that this run's library lacks (a `--limit` run, a misspelling). */
  unknownTools: string[];
  /** Representative name → its spec after merging (its own parameters plus the members' extra optional ones). */
  merged: Map<string, ToolSpec>;
}

// ---------------------------------------------------------------- sample rewriting

/** Every tool name a sample offers or calls. */
function toolsUsedBy(sample: Sample): Set<string> {
  const names = new Set(sample.tools.map((t) => t.name));
  eachCall(sample, (call) => names.add(call.tool));
  return names;
}

// ---------------------------------------------------------------- planning

/** The name a tool was created with, before it was renamed apart from another plugin's tool of that name. */
function createdName(tool: ToolSpec): string {
  const original = tool.provenance?.originalName;
  return typeof original === 'string' ? original : tool.name;
}

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
  // Most turns call one tool or none: only lists of two calls or more are looked into.
  const add = (calls: readonly Call[] | undefined) => {
    if (!calls || calls.length < 2) return;
    const names = [...new Set(calls.map((c) => c.tool))];
    for (let i = 0; i < names.length; i++) for (let j = i + 1; j < names.length; j++) pairs.add(pairKey(names[i], names[j]));
  };
  for (const turn of sample.dialogue) add(turn.calls);
  add(sample.expected.calls);
  const turns = sample.expected.turns;
  if (turns) for (const turn of Object.keys(turns)) add(turns[turn]);
}

export async function planMtuMerge(
  tools: ToolSpec[],
  usage: Map<string, number>,
  config: z.output<typeof MergeToolsMtuConfig>,
  deps: { gateway?: unknown; resolvePath?: (p: string) => string; seed?: number; coCalled?: Set<string> },
): Promise<MtuMergePlan> {
  const plan: MtuMergePlan = { toolsBefore: tools.length, toolsAfter: tools.length, reductionRatio: 1, mappings: [], conflicts: [], decided: [], unknownTools: [], merged: new Map() };
  const decisions = checkDecisions(config.decisions, tools, plan.unknownTools);
  if (tools.length < 2) return plan;
  const embedderDeps = { gateway: deps.gateway, stage: NAME, resolvePath: deps.resolvePath };
  const embedder = createEmbedder(config.embedder, embedderDeps);
  // Parameter names are nouns: the lexical embedder must not read their first word as an action.
  const parameterEmbedder = config.embedder.kind === 'lexical' ? createEmbedder({ ...config.embedder, identifierActions: false }, embedderDeps) : embedder;
  // A name distinguished from another plugin's (`FindRestaurants2`) is compared by the name it was created with.
  const [names, parameters] = [await embedder.embed(tools.map(createdName)), await parameterEmbedder.embed(tools.map(parameterText))];
  const space = VectorSpace.from(joinViews([names, parameters], [config.nameWeight, 1 - config.nameWeight]), 'cosine', `${NAME}: tool embeddings`);
  const clustering = clusterSpace(space, { threshold: config.threshold, linkage: config.linkage, seed: deps.seed, source: NAME });

  let after = 0;
  for (const cluster of clustering.clusters) {
    // Decided tools leave their clusters: a person's decision replaces the clustering's.
    const members = cluster.filter((i) => !decisions.names.has(tools[i].name));
    if (members.length <= 1) {
      after += members.length;
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
    // Tools renamed apart from one name (SGD's FindRestaurants of two services) are different APIs of their sources: a person decides.
    const byCreatedName = new Map<string, ToolSpec[]>();
    for (const i of members) byCreatedName.set(createdName(tools[i]).toLowerCase(), [...(byCreatedName.get(createdName(tools[i]).toLowerCase()) ?? []), tools[i]]);
    for (const variants of byCreatedName.values()) {
      if (variants.length > 1) problems.push(`${variants.map((t) => t.name).join(' and ')} are ${createdName(variants[0])} of different sources (${variants.map((t) => t.plugin ?? t.provenance?.source).join(', ')})`);
    }
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
  after += await applyDecided(plan, decisions.known, tools, space, config.parameterThreshold);
  plan.toolsAfter = after;
  plan.reductionRatio = Math.round((tools.length / after) * 100) / 100;
  return plan;
}

interface CheckedDecisions {
  /** The decisions with unknown names left out. */
  known: MtuToolDecisions;
  /** Every tool a decision names. */
  names: Set<string>;
}

/**
 * The decisions against this run's tools: names it lacks are left out (and listed); a tool in two
 * decisions, or a new name that another tool already has, is an error naming the entries.
 */
function checkDecisions(decisions: MtuToolDecisions | undefined, tools: ToolSpec[], unknown: string[]): CheckedDecisions {
  const known = new Set(tools.map((t) => t.name));
  const where = new Map<string, string>();
  const take = (name: string, entry: string) => {
    if (where.has(name)) throw new UserError(`clustering.decisions: ${name} is in ${where.get(name)} and ${entry}; a tool takes one decision`);
    where.set(name, entry);
    if (!known.has(name) && !unknown.includes(name)) unknown.push(name);
    return known.has(name);
  };
  const newNames = new Map<string, string>();
  const checkNew = (into: string, own: string[], entry: string) => {
    if (known.has(into) && !own.includes(into)) throw new UserError(`clustering.decisions: ${entry} names its tool "${into}", the name of another tool; choose a new name`);
    if (newNames.has(into)) throw new UserError(`clustering.decisions: ${entry} and ${newNames.get(into)} both name a tool "${into}"`);
    newNames.set(into, entry);
  };
  const out: MtuToolDecisions = { merge: [], keepApart: [], rename: [] };
  decisions?.merge.forEach((m, i) => {
    const tools = m.tools.filter((name) => take(name, `merge[${i}]`));
    checkNew(m.into, m.tools, `merge[${i}]`);
    if (tools.length) out.merge.push({ tools, into: m.into });
  });
  decisions?.keepApart.forEach((group, i) => {
    const tools = group.filter((name) => take(name, `keepApart[${i}]`));
    if (tools.length) out.keepApart.push(tools);
  });
  decisions?.rename.forEach((r, i) => {
    checkNew(r.into, [r.tool], `rename[${i}]`);
    if (take(r.tool, `rename[${i}]`)) out.rename.push(r);
  });
  unknown.sort();
  return { known: out, names: new Set(where.keys()) };
}

/** Adds the decided merges and renames to the plan; returns how many tools the decided ones become. */
async function applyDecided(plan: MtuMergePlan, decisions: MtuToolDecisions, tools: ToolSpec[], space: VectorSpace, parameterThreshold: number): Promise<number> {
  const indexOf = new Map(tools.map((t, i) => [t.name, i]));
  let after = 0;
  for (const merge of decisions.merge) {
    const members = merge.tools.map((name) => indexOf.get(name)!);
    // The member already named so lends its spec; otherwise the most central member.
    const sums = members.map((i) => members.reduce((sum, j) => sum + space.pair(i, j), 0));
    const central = members[sums.indexOf(Math.min(...sums))];
    const rep = tools[members.find((i) => tools[i].name === merge.into) ?? central];
    const folded: { tool: ToolSpec; match: Map<string, string> }[] = [];
    for (const i of members) {
      if (tools[i] === rep) continue;
      const match = await matchParameters(tools[i], rep, parameterThreshold);
      folded.push({ tool: tools[i], match });
      const renamed = Object.fromEntries([...match].filter(([from, to]) => from !== to));
      plan.mappings.push({ from: tools[i].name, to: merge.into, parameters: renamed, distance: Math.round(space.pair(i, indexOf.get(rep.name)!) * 10000) / 10000 });
    }
    if (rep.name !== merge.into) plan.mappings.push({ from: rep.name, to: merge.into, parameters: {}, distance: 0 });
    plan.merged.set(merge.into, { ...mergedSpec(rep, folded), name: merge.into });
    plan.decided.push({ decision: 'merge', tools: merge.tools, into: merge.into });
    after++;
  }
  for (const group of decisions.keepApart) {
    plan.decided.push({ decision: 'keep-apart', tools: group });
    after += group.length;
  }
  for (const { tool, into } of decisions.rename) {
    plan.mappings.push({ from: tool, to: into, parameters: {}, distance: 0 });
    plan.merged.set(into, { ...tools[indexOf.get(tool)!], name: into });
    plan.decided.push({ decision: 'rename', tools: [tool], into });
    after++;
  }
  return after;
}

// ---------------------------------------------------------------- tool review

const CONFLICT_KIND = 'merge-conflict';

/** The tool-level questions of an MTU version: one per conflict its merge stage reported. */
export function mtuToolQuestions(report: { conflicts?: MergeConflict[] } | undefined): ToolQuestion[] {
  return (report?.conflicts ?? []).map((c) => ({
    id: toolQuestionId(CONFLICT_KIND, c.tools),
    kind: CONFLICT_KIND,
    tools: c.evidence ?? c.tools.map((name) => ({ name, description: '', samples: 0, examples: [] })),
    proposal: `${c.tools.join(', ')} cluster together (representative ${c.representative}) but cannot be merged blindly: ${c.reason}`,
    suggestedName: c.representative,
    decisions: ['merge', 'keep-apart', 'rename'],
  }));
}

/** `decisions` with a tool review's added (a renamed question's other tools are kept apart). */
export function withMtuDecisions(decisions: MtuToolDecisions | undefined, added: ToolDecision[]): MtuToolDecisions {
  const out: MtuToolDecisions = { merge: [...(decisions?.merge ?? [])], keepApart: [...(decisions?.keepApart ?? [])], rename: [...(decisions?.rename ?? [])] };
  for (const d of added) {
    if (d.decision === 'decompose') throw new UserError(`question ${d.question}: MTU tools cannot be decomposed (merge, keep apart or rename them)`);
    if (d.decision === 'merge') out.merge.push({ tools: d.members, into: d.into });
    if (d.decision === 'rename') out.rename.push(...d.renames.map((r) => ({ tool: r.from, into: r.to })));
    const changed = toolsChanged(d);
    const rest = d.tools.filter((t) => !changed.includes(t));
    if (rest.length) out.keepApart.push(rest);
  }
  return out;
}

// ---------------------------------------------------------------- the stage

/** Rewrites one sample by the plan: tools renamed and de-duplicated, calls renamed with their arguments; `entry` is the merge stage's lineage entry. */
export function applyMtuMerge(sample: Sample, plan: MtuMergePlan, mappingOf: Map<string, ToolMapping>, conflictOf: Map<string, MergeConflict>, entry: LineageEntry): Sample {
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
  const checks: Check[] = conflicts.map((c) => ({ name: NAME, pass: false, soft: true, reason: `tools ${c.tools.join(', ')} cluster together but cannot be merged blindly (${c.reason}); decide it once in the tool sheet (review export)` }));
  return noteChanges(out, entry, checks, MERGE_CONFLICT_TAG);
}

interface MergeState {
  plan: MtuMergePlan;
  mappingOf: Map<string, ToolMapping>;
  conflictOf: Map<string, MergeConflict>;
}

export function mergeToolsMtuStage(options: MergeToolsMtuConfig = {}): ScanStage<Sample, Sample, MergeState> {
  const config = MergeToolsMtuConfig.parse(options);
  return scanStage<Sample, Sample, MergeState>({
    name: NAME,
    version: VERSION,
    input: Sample,
    output: Sample,
    collect: async (samples, ctx) => {
      // The library: every tool name (unique since unify-tool-specs), first spec seen; usage counts calls.
      const library = new Map<string, ToolSpec>();
      const usage = new Map<string, number>();
      const coCalled = new Set<string>();
      const toolUsage = new ToolUsage();
      for (const sample of samples) {
        toolUsage.add(sample);
        for (const tool of sample.tools) if (!library.has(tool.name)) library.set(tool.name, tool);
        eachCall(sample, (call) => usage.set(call.tool, (usage.get(call.tool) ?? 0) + 1));
        addCoCalledPairs(sample, coCalled);
      }
      const plan = await planMtuMerge([...library.values()], usage, config, { gateway: ctx.llm, resolvePath: ctx.resolvePath, seed: ctx.seed, coCalled });
      for (const conflict of plan.conflicts) conflict.evidence = conflict.tools.map((name) => toolUsage.evidence(name, library.get(name)!.description));
      if (plan.unknownTools.length) ctx.log(`decisions name tools this run lacks (left out): ${plan.unknownTools.join(', ')}`);
      ctx.report('toolMerge', {
        method: 'mtu',
        threshold: config.threshold,
        linkage: config.linkage,
        toolsBefore: plan.toolsBefore,
        toolsAfter: plan.toolsAfter,
        reductionRatio: plan.reductionRatio,
        mappings: plan.mappings,
        conflicts: plan.conflicts,
        ...(config.decisions ? { decided: plan.decided, unknownTools: plan.unknownTools } : {}),
      });
      ctx.log(`${plan.toolsBefore} tools → ${plan.toolsAfter} (${plan.reductionRatio}:1), ${plan.conflicts.length} clusters sent to review`);
      return {
        plan,
        mappingOf: new Map(plan.mappings.map((m) => [m.from, m])),
        conflictOf: new Map(plan.conflicts.flatMap((c) => c.tools.map((name) => [name, c] as const))),
      };
    },
    run: (sample, ctx) => applyMtuMerge(sample, ctx.state.plan, ctx.state.mappingOf, ctx.state.conflictOf, ctx.lineage()),
  });
}
