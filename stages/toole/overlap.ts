import { join } from 'node:path';
import type { Linkage } from '../../core/cluster/index.ts';
import { createEmbedder, type EmbedderConfig } from '../../core/embed/index.ts';
import { writeFileAtomic } from '../../core/jsonl.ts';
import type { Check } from '../../core/records.ts';
import type { BatchStage, RejectReason, StageContext } from '../../core/stage.ts';
import mergedDescriptionPrompt from '../../prompts/toole-merged-description.ts';
import reassignPrompt from '../../prompts/toole-reassign-query.ts';
import { generate, type JobHandler } from './jobs.ts';
import { planOverlap, proposalsAsDecisions, readDecisionsFile, type PlannedMerge, type Target } from './overlap-decisions.ts';
import { embedTools, overlapPlot, proposeMerges, silhouetteCurve } from './overlap-proposals.ts';
import { TooleItem, briefOf, jobItem, toolItem, withTag, type QueryItem, type TooleQuery, type TooleTool } from './records.ts';

/**
 * Overlap resolution (paper §2.2.1 "Overlapped issue", Appendix A.1–A.2): tools whose functions
 * overlap are merged into one tool with a new name and an LLM-written description; a tool serving
 * several groups is decomposed, its queries going to the tools that took over its functions (by
 * the curator's assignment, or by an LLM classifier whose answers are flagged for review). After
 * it every query carries exactly one label. The silhouette coefficient of the description
 * embedding before and after, at several cluster counts, goes to the manifest; 2-D plots of both
 * and the merge proposals (as an editable decisions file) go to the run folder.
 */
export interface OverlapOptions {
  embedder: EmbedderConfig;
  linkage: Linkage;
  /** Cosine distance at or below which tools are proposed for merging. */
  threshold: number;
  /** A decisions file (see overlap-decisions.ts); absent: only proposals. */
  decisions?: string;
  /** What happens to proposals no decision covers. */
  undecided: 'merge' | 'keep';
  /** Cluster counts at which the silhouette is compared. */
  silhouetteClusters: number[];
  /** Cluster count the plots are coloured by (the paper's Figure 9 uses 30). */
  plotClusters: number;
}

export const MERGE_PROPOSAL_TAG = 'review:merge-proposal';
export const MERGED_DESCRIPTION_TAG = 'review:merged-description';
export const LLM_REASSIGNED_TAG = 'review:llm-reassigned';
const STAGE = { name: 'toole-overlap', version: 1 };

function memberLines(tools: TooleTool[]): string {
  return tools.map((t) => `- ${t.name}: ${t.description}`).join('\n');
}

/** A tool name as ToolE writes them: letters, digits, `&`, `_` and `-`; no spaces. */
export function cleanToolName(name: string): string {
  return name.replace(/\s+(\w)/g, (_, c: string) => c.toUpperCase()).replace(/[^A-Za-z0-9&_-]/g, '');
}

/** Names and describes one merged tool, through the LLM unless the decision gives both. */
async function mergedTool(merge: PlannedMerge, members: TooleTool[], ctx: StageContext): Promise<TooleTool> {
  const key = `merge:${merge.members.slice().sort().join('+')}`;
  let name = merge.into;
  let description = merge.description;
  const checks: Check[] = [];
  const tags: string[] = merge.source === 'proposal' ? [MERGE_PROPOSAL_TAG] : [];
  let lineage: Record<string, string> = {};
  if (!name || !description) {
    const answer = await generate({ ...ctx, key }, STAGE, mergedDescriptionPrompt, { members: memberLines(members), name: name ?? '' });
    if (answer.ok) {
      name ??= cleanToolName(answer.value.name);
      description ??= answer.value.description.trim();
      lineage = { prompt: mergedDescriptionPrompt.id, promptHash: mergedDescriptionPrompt.hash, model: answer.lineage.model ?? '' };
    } else {
      // Keep the merge; a person writes the description.
      checks.push({ name: 'merged_description', pass: false, soft: true, reason: `the description request failed (${answer.rejection.reason}): members' descriptions joined instead` });
      tags.push(MERGED_DESCRIPTION_TAG);
    }
  }
  name = name || cleanToolName(`${members[0].name}Tool`);
  description = description || members.map((m) => m.description).join(' / ');
  return {
    name,
    nameForHuman: name,
    description,
    descriptionForModel: description,
    members: [...new Set(members.flatMap((m) => m.members))],
    origin: 'merged',
    provenance: { source: 'toole-merge', id: name, mergedFrom: members.map((m) => m.name), decidedBy: merge.source, ...lineage },
    checks,
    tags,
  };
}

/** Gives each merged tool a name no other tool has (a clash gets `_2`, `_3`, …). */
function uniqueNames(merged: TooleTool[], taken: Set<string>): TooleTool[] {
  return merged.map((tool) => {
    let name = tool.name;
    for (let k = 2; taken.has(name); k++) name = `${tool.name}_${k}`;
    taken.add(name);
    return name === tool.name ? tool : { ...tool, name, nameForHuman: name, provenance: { ...tool.provenance, id: name } };
  });
}

function relabel(query: TooleQuery, tool: string, tag?: string): TooleQuery {
  const moved = { ...query, tool };
  return tag ? withTag(moved, tag) : moved;
}

export function overlapStage(options: OverlapOptions): BatchStage<TooleItem, TooleItem> {
  return {
    kind: 'batch',
    ...STAGE,
    cardinality: 'any',
    input: TooleItem,
    output: TooleItem,
    prompts: { [mergedDescriptionPrompt.id]: mergedDescriptionPrompt.hash },
    run: async (items, ctx) => {
      const tools = items.flatMap((item) => (item.kind === 'tool' ? [item.tool] : []));
      const byName = new Map(tools.map((t) => [t.name, t]));
      const embedder = createEmbedder(options.embedder, { gateway: ctx.llm, stage: STAGE.name, resolvePath: ctx.resolvePath });
      const before = tools.length ? await embedTools(embedder, tools) : null;
      const proposals = before ? proposeMerges(before, tools.map((t) => t.name), options) : [];
      const source = options.decisions ?? 'merge proposals';
      const decisions = options.decisions ? readDecisionsFile(ctx.resolvePath(options.decisions), options.decisions) : null;
      const plan = planOverlap({ decisions, proposals, tools: tools.map((t) => t.name), undecided: options.undecided, source });

      // Merges: members leave the library, the merged tool joins it.
      const merged = uniqueNames(
        await Promise.all(plan.merges.map((merge) => mergedTool(merge, merge.members.map((m) => byName.get(m)!), ctx))),
        new Set(tools.filter((t) => !plan.merges.some((m) => m.members.includes(t.name))).map((t) => t.name)),
      );
      const mergedInto = new Map<string, { tool: TooleTool; merge: PlannedMerge }>();
      plan.merges.forEach((merge, i) => merge.members.forEach((m) => mergedInto.set(m, { tool: merged[i], merge })));
      const nameOf = (target: Target) => ('merge' in target ? merged[target.merge].name : target.tool);

      // Decompositions: the tool leaves; its queries go to its targets, which count it among their members.
      const decomposed = new Map(plan.decompositions.map((d) => [d.tool, { ...d, targets: d.into.map(nameOf) }]));
      const extraMembers = new Map<string, string[]>();
      for (const d of decomposed.values()) for (const target of d.targets) extraMembers.set(target, [...(extraMembers.get(target) ?? []), ...byName.get(d.tool)!.members]);
      const withMembers = (tool: TooleTool): TooleTool => (extraMembers.has(tool.name) ? { ...tool, members: [...new Set([...tool.members, ...extraMembers.get(tool.name)!])] } : tool);
      const finalTools = new Map<string, TooleTool>();
      for (const tool of tools) if (!mergedInto.has(tool.name) && !decomposed.has(tool.name)) finalTools.set(tool.name, withMembers(tool));
      for (const tool of merged) finalTools.set(tool.name, withMembers(tool));

      const out: TooleItem[] = [];
      const rejects: (RejectReason & { record: unknown })[] = [];
      let reassignJobs = 0;
      let assignedByDecision = 0;
      for (const item of items) {
        if (item.kind === 'tool') {
          const into = mergedInto.get(item.tool.name);
          if (into) rejects.push({ reason: 'merged_into', detail: `merged into ${into.tool.name}`, duplicateOf: `tool:${into.tool.name}`, recordId: item.id, record: item });
          else if (decomposed.has(item.tool.name)) rejects.push({ reason: 'decomposed', detail: `queries moved to ${decomposed.get(item.tool.name)!.targets.join(', ')}`, recordId: item.id, record: item });
          else out.push(toolItem(finalTools.get(item.tool.name)!));
          continue;
        }
        if (item.kind !== 'query') {
          out.push(item);
          continue;
        }
        const query = item.query;
        const into = mergedInto.get(query.tool);
        if (into) {
          out.push({ ...item, query: relabel(query, into.tool.name, into.merge.source === 'proposal' ? MERGE_PROPOSAL_TAG : undefined) });
          continue;
        }
        const split = decomposed.get(query.tool);
        if (!split) {
          out.push(item);
          continue;
        }
        const assigned = split.queries[item.id] ?? split.queries[query.text];
        if (assigned !== undefined || split.targets.length === 1) {
          assignedByDecision++;
          out.push({ ...item, query: relabel(query, split.targets[assigned ?? 0], 'reassigned:decision') });
          continue;
        }
        reassignJobs++;
        out.push(jobItem({ method: 'reassign', tools: [briefOf(byName.get(query.tool)!)], count: 1, base: { id: item.id, ...query }, choices: split.targets.map((t) => briefOf(finalTools.get(t)!)) }));
      }
      for (const tool of merged) out.push(toolItem(finalTools.get(tool.name)!));

      // Silhouette before and after (A.2), plots of both, and the proposals as an editable decisions file.
      const after = [...finalTools.values()];
      const folder = join(ctx.runDir, 'toole');
      const report: Record<string, unknown> = {
        toolsBefore: tools.length,
        toolsAfter: after.length,
        proposals: proposals.length,
        merges: { decided: plan.merges.filter((m) => m.source === 'decision').length, fromProposals: plan.merges.filter((m) => m.source === 'proposal').length },
        mergedTools: merged.map((t) => ({ name: t.name, members: t.members.length, from: (t.provenance as { mergedFrom?: string[] }).mergedFrom })),
        decompositions: plan.decompositions.map((d) => ({ tool: d.tool, into: decomposed.get(d.tool)!.targets })),
        queriesAssignedByDecision: assignedByDecision,
        queriesToClassify: reassignJobs,
        unknownTools: plan.unknownTools,
        settings: { embedder: embedder.id, linkage: options.linkage, threshold: options.threshold, decisions: options.decisions ?? null, undecided: options.undecided },
      };
      if (before && after.length) {
        const afterSpace = await embedTools(embedder, after);
        report.silhouette = {
          before: silhouetteCurve(before, options.silhouetteClusters, options.linkage, ctx.seed),
          after: silhouetteCurve(afterSpace, options.silhouetteClusters, options.linkage, ctx.seed),
        };
        const plotOptions = { clusters: options.plotClusters, linkage: options.linkage, seed: ctx.seed };
        const files = {
          proposals: join(folder, 'merge-proposals.json'),
          plotBefore: join(folder, 'overlap-before.html'),
          plotAfter: join(folder, 'overlap-after.html'),
        };
        writeFileAtomic(files.proposals, JSON.stringify(proposalsAsDecisions(proposals), null, 2) + '\n');
        writeFileAtomic(files.plotBefore, overlapPlot(before, tools.map((t) => t.name), { ...plotOptions, title: `ToolE tool descriptions before overlap resolution (${tools.length} tools)` }));
        writeFileAtomic(files.plotAfter, overlapPlot(afterSpace, after.map((t) => t.name), { ...plotOptions, title: `ToolE tool descriptions after overlap resolution (${after.length} tools)` }));
        report.files = files;
      }
      ctx.report('toole.overlap', report);
      ctx.log(`${tools.length} tools → ${after.length}: ${plan.merges.length} merge(s), ${plan.decompositions.length} decomposition(s), ${reassignJobs} query(ies) for the classifier`);
      return { out, rejects };
    },
  };
}

/**
 * The LLM classifier for queries of a decomposed tool: it picks one of the tools that took over
 * the functions. Its answer is a label, not a fact: the query is tagged and carries a failing soft
 * check so that it goes to review. An answer naming no candidate rejects the query.
 */
export const reassignHandler: JobHandler = {
  prompts: [reassignPrompt],
  run: async (job, _item, ctx, stage) => {
    const base = job.base!;
    const choices = job.choices ?? [];
    const answer = await generate(ctx, stage, reassignPrompt, { query: base.text, choices: choices.map((c) => `- ${c.name}: ${c.description}`).join('\n') });
    if (!answer.ok) return answer.rejection;
    const said = answer.value.tool.trim();
    const label = choices.find((c) => c.name === said) ?? choices.find((c) => c.name.toLowerCase() === said.toLowerCase());
    if (!label) return { reject: true, reason: 'reassign_unknown_label', detail: `the classifier answered "${said}", not one of ${choices.map((c) => c.name).join(', ')}` };
    const { id, ...query } = base;
    const check: Check = { name: 'llm_reassigned', pass: false, soft: true, reason: `label ${label.name} chosen by an LLM classifier among ${choices.map((c) => c.name).join(', ')} after ${query.tool} was decomposed; confirm it` };
    const moved: QueryItem = {
      kind: 'query',
      id,
      query: withTag({ ...query, tool: label.name, checks: [...query.checks, check], lineage: [...query.lineage, answer.lineage] }, LLM_REASSIGNED_TAG),
    };
    return [moved];
  },
};
