import type { Linkage } from '../../core/cluster/index.ts';
import { createEmbedder, type EmbedderConfig } from '../../core/embed/index.ts';
import { Sample, type Check, type ToolSpec } from '../../core/records.ts';
import { isReject, PASS, promptStep, reject, type MapStage, type ScanStage } from '../../core/stage.ts';
import reassignPrompt from '../../prompts/toole-reassign-query.ts';
import { embedTools, overlapPlot } from '../merge-tools-metatool-proposals.ts';
import { DECOMPOSE_UNASSIGNED_TAG } from '../merge-tools-metatool.ts';
import { goldCalls } from './samples.ts';
import { queryText } from './records.ts';

/**
 * ToolE's parts of overlap resolution (paper Appendix A.1–A.2) around the shared MetaTool merging
 * stage (stages/merge-tools-metatool.ts, which proposes merges, applies the decisions, writes the
 * merged descriptions and records the silhouette before and after):
 *  - the 2-D plots of the tool descriptions before and after (the paper's Figure 9);
 *  - an LLM classifier for the queries of a decomposed tool that no decision assigned: it picks
 *    one of the tools that took over, and its answer goes to review. After it every query carries
 *    exactly one label.
 */

export const LLM_REASSIGNED_TAG = 'review:llm-reassigned';

interface PlotState<S> {
  merge: S;
  /** The tool library received and the one produced (each tool's first definition). */
  before: Map<string, ToolSpec>;
  after: Map<string, ToolSpec>;
}

/** Adds each tool of the sample not yet in the library (the first definition wins). */
function addTools(library: Map<string, ToolSpec>, sample: Sample): void {
  for (const tool of sample.tools) if (!library.has(tool.name)) library.set(tool.name, tool);
}

/**
 * Wraps the merging stage: after it runs, plots the tool library it received and the one it
 * produced (points coloured by their clusters at `clusters`), into the run folder's `toole/`.
 */
export function withOverlapPlots<S>(merge: ScanStage<Sample, Sample, S>, options: { embedder: EmbedderConfig; linkage: Linkage; clusters: number }): ScanStage<Sample, Sample, PlotState<S>> {
  return {
    ...merge,
    begin: undefined,
    dispose: merge.dispose && ((state) => merge.dispose!(state.merge)),
    collect: async (samples, ctx) => {
      const before = new Map<string, ToolSpec>();
      // The library received is gathered as the merging stage collects.
      const seen = (function* () {
        for (const sample of samples) {
          addTools(before, sample);
          yield sample;
        }
      })();
      return { merge: (await merge.collect?.(seen, ctx)) as S, before, after: new Map() };
    },
    run: async (sample, ctx) => {
      const out = await merge.run(sample, { ...ctx, state: ctx.state.merge });
      for (const produced of Array.isArray(out) ? out : [out]) if (!isReject(produced)) addTools(ctx.state.after, produced);
      return out;
    },
    finish: async (state, ctx) => {
      await merge.finish?.(state.merge, ctx);
      const before = [...state.before.values()];
      const after = [...state.after.values()];
      if (before.length < 2 || after.length < 2) return;
      const embedder = createEmbedder(options.embedder, { gateway: ctx.llm, stage: merge.name, resolvePath: ctx.resolvePath });
      const files = { before: 'toole/overlap-before.html', after: 'toole/overlap-after.html' };
      for (const [which, tools] of [['before', before], ['after', after]] as const) {
        const html = overlapPlot(await embedTools(embedder, tools), tools.map((t) => t.name), {
          title: `ToolE tool descriptions ${which} overlap resolution (${tools.length} tools)`,
          clusters: options.clusters,
          linkage: options.linkage,
          seed: ctx.seed,
        });
        // Published with the version under reports/.
        ctx.attach(files[which], html);
      }
      ctx.report('toole.overlapPlots', { ...files, toolsBefore: before.length, toolsAfter: after.length });
    },
  };
}

/**
 * The LLM classifier for queries of a decomposed tool no decision assigned (tagged
 * `review:decompose-unassigned` by the merging stage, their candidate tools being the targets). The
 * chosen label replaces the old one; the sample is tagged and carries a failing soft check, so it
 * goes to review. An answer naming no candidate, or a failed request, rejects the sample.
 */
export function reassignStage(): MapStage<Sample, Sample> {
  return promptStep({
    name: 'toole-reassign',
    version: 1,
    input: Sample,
    output: Sample,
    prompt: reassignPrompt,
    // Only the queries no decision assigned are asked about; the others pass unchanged.
    variables: (sample) =>
      sample.meta.tags.includes(DECOMPOSE_UNASSIGNED_TAG) ? { query: queryText(sample), choices: sample.tools.map((c) => `- ${c.name}: ${c.description}`).join('\n') } : PASS,
    result: (answer, sample) => {
      const choices = sample.tools;
      const said = answer.value.tool.trim();
      const label = choices.find((c) => c.name === said) ?? choices.find((c) => c.name.toLowerCase() === said.toLowerCase());
      if (!label) return reject('reassign_unknown_label', `the classifier answered "${said}", not one of ${choices.map((c) => c.name).join(', ')}`);
      const previous = sample.expected.labels?.[0] ?? '';
      const calls = goldCalls([label.name]);
      const check: Check = { name: 'llm_reassigned', pass: false, soft: true, reason: `label ${label.name} chosen by an LLM classifier among ${choices.map((c) => c.name).join(', ')} after ${previous} was decomposed; confirm it` };
      return {
        ...sample,
        tools: [label],
        dialogue: sample.dialogue.map((turn) => (turn.role === 'assistant' && turn.calls ? { ...turn, calls } : turn)),
        expected: { ...sample.expected, labels: [label.name], calls },
        meta: {
          ...sample.meta,
          // The merging stage's "unassigned" check and tag are settled by this answer.
          checks: [...sample.meta.checks.filter((c) => !(c.name === 'merge-tools-metatool' && c.pass === false && c.reason?.includes(previous))), check],
          tags: [...sample.meta.tags.filter((t) => t !== DECOMPOSE_UNASSIGNED_TAG), LLM_REASSIGNED_TAG],
          lineage: [...sample.meta.lineage, answer.lineage],
        },
      };
    },
  });
}
