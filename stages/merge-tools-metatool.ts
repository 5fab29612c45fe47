import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { z } from 'zod';
import { medoid, VectorSpace } from '../core/cluster/index.ts';
import { createEmbedder, EmbedderConfig, type Embedder } from '../core/embed/index.ts';
import { UserError, messageOf } from '../core/errors.ts';
import { writeFileAtomic } from '../core/jsonl.ts';
import { Sample, formatZodError, type Check, type ToolSpec } from '../core/records.ts';
import { scanStage, type LineageEntry, type ScanStage, type StageContext } from '../core/stage.ts';
import { toolQuestionId, toolsChanged, type ToolDecision, type ToolEvidence, type ToolQuestion } from '../core/tool-review.ts';
import mergeDescriptionPrompt from '../prompts/metatool-merge-description.ts';
import { OverlapDecisions, planOverlap, proposalsAsDecisions, readDecisionsFile, type OverlapPlan, type Target } from './merge-tools-metatool-decisions.ts';
import { proposeMerges, silhouetteCurve, type MergeProposal, type SilhouetteCurve } from './merge-tools-metatool-proposals.ts';
import { flagForReview, goldTools, mapCalls, noteChanges, replaceTools, ToolUsage } from './tool-merge.ts';
import { readSourceText } from '../core/source-files.ts';

/**
 * MetaTool-style tool merging (paper §2.2.1 "Overlapped issue", Appendix A.1–A.2) on canonical
 * samples: tool descriptions are embedded and clustered; each cluster of two or more tools is a
 * merge proposal (written to the run folder as an editable decisions file). Decisions — merge,
 * decompose, keep — come from a decisions file (JSON as the proposals file, or CSV); proposals no
 * decision covers are merged or kept as `undecided` says. Merged tools get an LLM-written
 * description unless the decision gives one. Queries are relabelled (expected.labels, expected
 * calls and candidate tools); a decomposed tool's queries go where the decision assigns them (by
 * sample id or query text) — or to review when it has several targets and no assignment.
 * The silhouette coefficient of the description embedding before and after, at the same cluster
 * counts, goes to the manifest. Proposals nobody decided are tool-level questions: the report lists
 * them (`undecided`) for the tool sheet, whose decisions come back inline as `decisions`.
 */

export const MergeToolsMetatoolConfig = z
  .object({
    embedder: EmbedderConfig.default({ kind: 'lexical' }),
    linkage: z.enum(['single', 'complete', 'average']).default('average'),
    /** Cosine distance at or below which tools are proposed for merging. */
    threshold: z.number().min(0).max(2).default(0.3),
    /** Decisions file (.json or .csv), or the decisions themselves (a tool review's); absent: proposals only (and `undecided`). */
    decisions: z.union([z.string(), OverlapDecisions]).optional(),
    /** What happens to proposals no decision covers. */
    undecided: z.enum(['merge', 'keep']).default('keep'),
    /** Ask the LLM for merged descriptions the decisions do not give (else: the members' joined). */
    describe: z.boolean().default(true),
    /** Cluster counts at which the silhouette is compared before and after. */
    silhouetteClusters: z.array(z.number().int().min(2)).default([5, 10, 20, 30]),
  })
  .strict();
export type MergeToolsMetatoolConfig = z.input<typeof MergeToolsMetatoolConfig>;

export const DECOMPOSE_UNASSIGNED_TAG = 'review:decompose-unassigned';
/** Samples relabelled by a merge nobody decided (a proposal taken by `undecided: merge`). */
export const AUTO_MERGE_TAG = 'review:auto-merge';
const NAME = 'merge-tools-metatool';
/** The check such a sample fails (a tool-level question). */
export const AUTO_MERGE_CHECK = `${NAME}:auto`;
const VERSION = 4;

// ---------------------------------------------------------------- decisions from CSV

const CsvRow = z.object({
  decision: z.enum(['merge', 'decompose', 'keep']),
  tool: z.string().min(1),
  into: z.string().default(''),
  query: z.string().default(''),
  description: z.string().default(''),
});

/**
 * A decisions sheet, one row per line: `decision,tool,into,query,description`.
 *   merge,<member>,<merged name>,,<description?>    (rows with the same merged name form one merge)
 *   decompose,<tool>,<target>,<query id or text?>,   (a row per target or per assigned query)
 *   keep,<tool>,,,
 */
export function readDecisionsCsv(path: string, shown = path): OverlapDecisions {
  const text = readSourceText(path, shown);
  let rows: Record<string, string>[];
  try {
    rows = parse(text, { columns: (header: string[]) => header.map((h) => h.trim().toLowerCase()), skip_empty_lines: true, trim: true });
  } catch (error) {
    throw new UserError(`${shown}: not a readable decisions CSV (${messageOf(error)}); expected columns decision,tool,into,query,description`);
  }
  const merges = new Map<string, { tools: string[]; into: string; description?: string }>();
  const decompositions = new Map<string, { tool: string; into: string[]; queries: Record<string, string> }>();
  const keep: string[] = [];
  rows.forEach((raw, i) => {
    const parsed = CsvRow.safeParse(raw);
    if (!parsed.success) throw new UserError(`${shown}: row ${i + 2}: ${formatZodError(parsed.error)} (decision is merge, decompose or keep; tool is required)`);
    const row = parsed.data;
    if (row.decision === 'keep') keep.push(row.tool);
    else if (row.decision === 'merge') {
      if (!row.into) throw new UserError(`${shown}: row ${i + 2}: a merge row needs the merged tool's name in "into" (rows with the same name form one merge)`);
      const merge = merges.get(row.into) ?? { tools: [], into: row.into };
      merge.tools.push(row.tool);
      if (row.description) merge.description = row.description;
      merges.set(row.into, merge);
    } else {
      if (!row.into) throw new UserError(`${shown}: row ${i + 2}: a decompose row needs the tool that takes the queries in "into"`);
      const entry = decompositions.get(row.tool) ?? { tool: row.tool, into: [], queries: {} };
      if (!entry.into.includes(row.into)) entry.into.push(row.into);
      if (row.query) entry.queries[row.query] = row.into;
      decompositions.set(row.tool, entry);
    }
  });
  const decisions = OverlapDecisions.safeParse({ merge: [...merges.values()], decompose: [...decompositions.values()], keep });
  if (!decisions.success) throw new UserError(`${shown}: ${formatZodError(decisions.error)}`);
  return decisions.data;
}

export function readDecisions(path: string, shown = path): OverlapDecisions {
  return path.toLowerCase().endsWith('.csv') ? readDecisionsCsv(path, shown) : readDecisionsFile(path, shown);
}

// ---------------------------------------------------------------- relabelling

/** A sample's query: its first user turn. */
function queryOf(sample: Sample): string {
  return sample.dialogue.find((turn) => turn.role === 'user')?.content ?? '';
}

interface Relabelling {
  /** Old name → the tool it becomes (merged members). */
  renamed: Map<string, ToolSpec>;
  /** Members of merges taken from proposals, not from decisions: their samples go to review. */
  unconfirmed: Set<string>;
  /** Decomposed tool → its targets and query assignments. */
  decomposed: Map<string, { targets: ToolSpec[]; queries: Record<string, number> }>;
  /** The lineage entry of a relabelled sample: this stage at its version, with the description prompt it declares. */
  lineage: LineageEntry;
}

function relabel(sample: Sample, plan: Relabelling): Sample {
  const decided = new Map<string, ToolSpec | null>(); // decomposed tool → its target for this sample (null: unassigned)
  for (const [tool, { targets, queries }] of plan.decomposed) {
    const at = queries[sample.id] ?? queries[queryOf(sample)];
    decided.set(tool, at !== undefined ? targets[at] : targets.length === 1 ? targets[0] : null);
  }
  const unassigned: string[] = [];
  const nameFor = (name: string): string => {
    const merged = plan.renamed.get(name);
    if (merged) return merged.name;
    if (!decided.has(name)) return name;
    const target = decided.get(name);
    if (target) return target.name;
    if (!unassigned.includes(name)) unassigned.push(name);
    return name;
  };
  const labels = sample.expected.labels ? [...new Set(sample.expected.labels.map(nameFor))] : undefined;
  let out = mapCalls(sample, (call) => ({ ...call, tool: nameFor(call.tool) }));
  out = {
    ...out,
    expected: labels ? { ...out.expected, labels } : out.expected,
    tools: replaceTools(out.tools, (tool) => {
      const merged = plan.renamed.get(tool.name);
      if (merged) return [merged];
      const decomposition = plan.decomposed.get(tool.name);
      if (!decomposition) return [tool];
      const target = decided.get(tool.name);
      return target ? [target] : decomposition.targets;
    }),
  };
  const changed = JSON.stringify(out) !== JSON.stringify(sample);
  if (!changed && !unassigned.length) return sample;
  const checks: Check[] = unassigned.map((tool) => ({
    name: NAME,
    pass: false,
    soft: true,
    reason: `${tool} was decomposed into ${plan.decomposed.get(tool)!.targets.map((t) => t.name).join(', ')} and no decision says which takes this query; assign it in the decisions file`,
  }));
  // Only a changed gold answer needs a person: labels and calls, not the other candidates offered.
  const autoChecks: Check[] = [...goldTools(sample)]
    .filter((name) => plan.unconfirmed.has(name))
    .map((tool) => ({ name: AUTO_MERGE_CHECK, pass: false, soft: true, reason: autoMergeReason(tool, plan) }));
  const noted = noteChanges(out, plan.lineage, checks, DECOMPOSE_UNASSIGNED_TAG);
  return flagForReview(noted, autoChecks, AUTO_MERGE_TAG);
}

/** Why a query's tool changed without a decision: the merge in words, never "X was merged into X". */
function autoMergeReason(tool: string, plan: Relabelling): string {
  const into = plan.renamed.get(tool)!.name;
  const others = [...plan.renamed].filter(([member, merged]) => merged.name === into && member !== tool).map(([member]) => member);
  const merge = into === tool ? `${others.join(', ')} ${others.length === 1 ? 'was' : 'were'} merged into ${tool} (which keeps its name)` : `${tool} was merged${others.length ? ` with ${others.join(', ')}` : ''} into ${into}`;
  return `${merge} by a proposal nobody decided (undecided: merge); confirm it or decide it in the tool sheet (review export)`;
}

// ---------------------------------------------------------------- tool review

const PROPOSAL_KIND = 'merge-proposal';

/** A proposal no decision covered, as the report lists it for the tool sheet. */
export interface UndecidedProposal {
  tools: string[];
  similarity: number;
  /** The merged tool's name when `undecided: merge` merged it; absent when it was kept. */
  mergedInto?: string;
  /** The name a merge would take (the member closest to the others). */
  suggestedName: string;
  evidence: ToolEvidence[];
}

/** Proposals no decision covers (their members no decision names), with what `undecided` made of them. */
function undecidedProposals(proposals: MergeProposal[], decisions: OverlapDecisions | null, plan: OverlapPlan, merged: { tool: ToolSpec }[], central: (members: string[]) => string): Omit<UndecidedProposal, 'evidence'>[] {
  const decided = new Set([...(decisions?.merge ?? []).flatMap((m) => m.tools), ...(decisions?.keep ?? []), ...(decisions?.decompose ?? []).map((d) => d.tool)]);
  const out: Omit<UndecidedProposal, 'evidence'>[] = [];
  for (const proposal of proposals) {
    const tools = proposal.tools.filter((t) => !decided.has(t));
    if (tools.length < 2) continue;
    const auto = plan.merges.findIndex((m) => m.source === 'proposal' && m.members.some((member) => tools.includes(member)));
    out.push({ tools, similarity: proposal.similarity, ...(auto >= 0 ? { mergedInto: merged[auto].tool.name } : {}), suggestedName: central(tools) });
  }
  return out;
}

/** The tool-level questions of a version made by this stage: one per proposal nobody decided. */
export function metatoolToolQuestions(report: { undecided?: UndecidedProposal[] } | undefined): ToolQuestion[] {
  return (report?.undecided ?? []).map((p) => ({
    id: toolQuestionId(PROPOSAL_KIND, p.tools),
    kind: PROPOSAL_KIND,
    tools: p.evidence,
    proposal: p.mergedInto
      ? `descriptions alike (similarity ${p.similarity}): merged into ${p.mergedInto} without a decision (undecided: merge)`
      : `descriptions alike (similarity ${p.similarity}): proposed for merging, kept apart until decided (undecided: keep)`,
    suggestedName: p.mergedInto ?? p.suggestedName,
    decisions: ['merge', 'keep-apart', 'decompose', 'rename'],
  }));
}

/** `decisions` with a tool review's added; a question's tools no decision names are kept. */
export function withOverlapDecisions(decisions: OverlapDecisions | undefined, added: ToolDecision[]): OverlapDecisions {
  const out: OverlapDecisions = { merge: [...(decisions?.merge ?? [])], decompose: [...(decisions?.decompose ?? [])], keep: [...(decisions?.keep ?? [])] };
  for (const d of added) {
    if (d.decision === 'merge') out.merge.push({ tools: d.members, into: d.into });
    else if (d.decision === 'decompose') for (const tool of d.decomposed) out.decompose.push({ tool, into: d.into, queries: {} });
    else if (d.decision === 'rename') for (const r of d.renames) out.merge.push({ tools: [r.from], into: r.to });
    const changed = toolsChanged(d);
    out.keep.push(...d.tools.filter((t) => !changed.includes(t) && !out.keep.includes(t)));
  }
  return out;
}

// ---------------------------------------------------------------- the stage

function descriptionText(tool: ToolSpec): string {
  return tool.description.trim() || tool.name;
}

async function descriptionSpace(embedder: Embedder, tools: ToolSpec[]): Promise<VectorSpace> {
  return VectorSpace.from(await embedder.embed(tools.map(descriptionText)), 'cosine', `${NAME}: tool descriptions`);
}

/** The tool a merge makes: its name, a description (given, LLM-written or joined), the members' parameters. */
async function mergedTool(members: ToolSpec[], space: VectorSpace, indexOf: Map<string, number>, merge: OverlapPlan['merges'][number], config: z.output<typeof MergeToolsMetatoolConfig>, ctx: StageContext): Promise<{ tool: ToolSpec; describedBy: string }> {
  // Without a given name the member closest to the others names the merged tool.
  const at = members.map((m) => indexOf.get(m.name)!);
  const name = merge.into ?? members[at.indexOf(medoid(space, at))].name;
  let description = merge.description;
  let describedBy = 'decision';
  if (!description && config.describe) {
    const lines = members.map((m) => `- ${m.name}: ${m.description}`).join('\n');
    const answer = await ctx.tryAsk(mergeDescriptionPrompt, { name, members: lines }, { key: [...members.map((m) => m.name)].sort().join('+') });
    if (answer.ok) [description, describedBy] = [answer.value.description, ctx.llm.model];
    else ctx.log(`merged description for ${name} failed (${answer.reason}: ${answer.detail}); joining the members' descriptions`);
  }
  if (!description) [description, describedBy] = [members.map((m) => m.description.trim()).filter(Boolean).join(' '), 'members'];
  const properties = Object.assign({}, ...members.map((m) => m.parameters.properties));
  // A parameter is required only when every member requires it: a query written for any member still fits.
  const required = members[0].parameters.required.filter((p) => members.every((m) => m.parameters.required.includes(p)));
  // The member the merged tool is named after lends it its human name and provenance; under a new
  // name the human name is that name (another member's would name a different tool).
  const base = members.find((m) => m.name === name) ?? { ...members[0], plugin: name };
  return { tool: { ...base, name, description, parameters: { type: 'object', properties, required } }, describedBy };
}

/** What relabelling needs, decided on the tool library; null when there are fewer than two tools. */
interface MergeState {
  plan: Relabelling;
  report: Record<string, unknown>;
  relabelled: number;
}

/**
 * A whole-set step on a projection: `collect` keeps only the tool library (each tool's first
 * definition, and labels no sample offers as a tool) and decides the merges on it; `run` relabels
 * each sample.
 */
export function mergeToolsMetatoolStage(options: MergeToolsMetatoolConfig = {}): ScanStage<Sample, Sample, MergeState | null> {
  const config = MergeToolsMetatoolConfig.parse(options);
  return scanStage<Sample, Sample, MergeState | null>({
    name: NAME,
    version: VERSION,
    input: Sample,
    output: Sample,
    prompts: [mergeDescriptionPrompt],
    collect: async (samples, ctx) => {
      const library = new Map<string, ToolSpec>();
      const labels = new Set<string>();
      const usage = new ToolUsage();
      for (const sample of samples) {
        usage.add(sample);
        for (const tool of sample.tools) if (!library.has(tool.name)) library.set(tool.name, tool);
        for (const label of sample.expected.labels ?? []) labels.add(label);
      }
      for (const label of labels) if (!library.has(label)) library.set(label, { name: label, description: '', parameters: { type: 'object', properties: {}, required: [] }, returns: { type: 'object', properties: {}, required: [] } });
      const tools = [...library.values()];
      const names = tools.map((t) => t.name);
      if (tools.length < 2) return null;
      const embedder = createEmbedder(config.embedder, { gateway: ctx.llm, stage: NAME, resolvePath: ctx.resolvePath });
      const before = await descriptionSpace(embedder, tools);
      const indexOf = new Map(names.map((n, i) => [n, i]));

      const proposals = proposeMerges(before, names, { linkage: config.linkage, threshold: config.threshold });
      const proposalsPath = join(ctx.runDir, NAME, 'proposals.json');
      const proposalsText = JSON.stringify(proposalsAsDecisions(proposals), null, 2) + '\n';
      writeFileAtomic(proposalsPath, proposalsText);
      // Also published with the version (reports/), where a curator edits it into a decisions file.
      ctx.attach(`${NAME}/proposals.json`, proposalsText);
      ctx.log(`${proposals.length} merge proposals written to ${proposalsPath} and the version's reports/ (edit and pass back as "decisions")`);
      const given = config.decisions;
      const decisions = typeof given === 'string' ? readDecisions(ctx.resolvePath(given), given) : (given ?? null);
      const plan = planOverlap({ decisions, proposals, tools: names, undecided: config.undecided, source: typeof given === 'string' ? given : given ? 'overlap.decisions (config)' : 'proposals' });

      // In batch mode the runner collects again once the batch these requests went to has settled.
      const merged: { tool: ToolSpec; members: string[]; describedBy: string }[] = [];
      for (const merge of plan.merges) {
        const members = merge.members.map((m) => library.get(m)!);
        merged.push({ ...(await mergedTool(members, before, indexOf, merge, config, ctx)), members: merge.members });
      }
      const renamed = new Map(merged.flatMap(({ tool, members }) => members.map((m) => [m, tool] as const)));
      const targetSpec = (target: Target): ToolSpec => ('merge' in target ? merged[target.merge].tool : library.get(target.tool)!);
      const decomposed = new Map(plan.decompositions.map((d) => [d.tool, { targets: d.into.map(targetSpec), queries: d.queries }]));
      const unconfirmed = new Set(plan.merges.filter((m) => m.source === 'proposal').flatMap((m) => m.members));
      const undecided = undecidedProposals(proposals, decisions, plan, merged, (members) => names[medoid(before, members.map((m) => indexOf.get(m)!))]).map((p) => ({
        ...p,
        evidence: p.tools.map((name) => usage.evidence(name, library.get(name)!.description)),
      }));

      // The library after: merged tools instead of their members, decomposed tools gone.
      const afterTools = [...tools.filter((t) => !renamed.has(t.name) && !decomposed.has(t.name)), ...merged.map((m) => m.tool)];
      const counts = config.silhouetteClusters;
      const silhouette: { before: SilhouetteCurve; after: SilhouetteCurve } = {
        before: silhouetteCurve(before, counts, config.linkage, ctx.seed),
        after: afterTools.length ? silhouetteCurve(await descriptionSpace(embedder, afterTools), counts, config.linkage, ctx.seed) : { tools: 0, byClusters: {} },
      };
      const report = {
        embedder: embedder.id,
        threshold: config.threshold,
        linkage: config.linkage,
        toolsBefore: tools.length,
        toolsAfter: afterTools.length,
        proposals: proposals.length,
        merges: merged.map((m) => ({ into: m.tool.name, members: m.members, description: m.tool.description, describedBy: m.describedBy })),
        decompositions: plan.decompositions.map((d) => ({ tool: d.tool, into: decomposed.get(d.tool)!.targets.map((t) => t.name), assignedQueries: Object.keys(d.queries).length })),
        unknownTools: plan.unknownTools,
        undecided,
      };
      // The entry names the prompt (no model): a sample's relabelling is not one answer's.
      const lineage = ctx.lineage(mergeDescriptionPrompt);
      return { plan: { renamed, decomposed, unconfirmed, lineage }, report: { ...report, silhouette }, relabelled: 0 };
    },
    run: (sample, ctx) => {
      const state = ctx.state;
      if (!state) return sample;
      const out = relabel(sample, state.plan);
      if (out !== sample) state.relabelled++;
      return out;
    },
    finish: (state, ctx) => {
      if (!state) return;
      const { silhouette, ...report } = state.report;
      ctx.report('toolMergeMetatool', { ...report, relabelled: state.relabelled, silhouette });
    },
  });
}
