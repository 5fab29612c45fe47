import { Sample, type ToolSpec } from '../../core/records.ts';
import { promptStep, type MapStage } from '../../core/stage.ts';
import refinePrompt from '../../prompts/nestools-refine.ts';
import { taskOf } from './import-export.ts';
import { describeValues, lostValues, promptChain } from './normalise-query.ts';
import { withChecks, withLineage, withMeta, withTags } from '../../core/sample-edits.ts';
import { withTask } from './sample-meta.ts';

/**
 * §3.2 query refinement (Table 7): the LLM rewrites the task so that no API name appears, every
 * non-reference value stays inferable and the text follows the chain. A rewrite that brings back an
 * API name or loses a value is not taken: the task stays as it was and the sample is tagged.
 */

/** Tool names written in the task (whole words, any case). */
export function apiNamesIn(task: string, tools: ToolSpec[]): string[] {
  const lower = task.toLowerCase();
  return tools
    .map((tool) => tool.name)
    .filter((name) => {
      const at = lower.indexOf(name.toLowerCase());
      if (at === -1) return false;
      const before = lower[at - 1] ?? ' ';
      const after = lower[at + name.length] ?? ' ';
      return !/[a-z0-9_]/.test(before) && !/[a-z0-9_]/.test(after);
    });
}

export function refineQueryStage(): MapStage<Sample, Sample> {
  return promptStep({
    name: 'refine-query',
    version: 1,
    input: Sample,
    output: Sample,
    prompt: refinePrompt,
    variables: (sample) => ({ ...promptChain(sample), task: taskOf(sample), toolNames: sample.tools.map((t) => t.name) }),
    result: (answer, sample) => {
      const rewritten = answer.value.task;
      const candidate = withLineage(withTask(sample, rewritten), answer.lineage);
      const leaked = apiNamesIn(rewritten, sample.tools);
      const lost = lostValues(sample, candidate);
      const problems = [
        ...(leaked.length ? [`names the API ${leaked.join(', ')}`] : []),
        ...(lost.length ? [`drops ${describeValues(lost)}`] : []),
      ];
      if (!problems.length) return withChecks(candidate, [{ name: 'nestools/refinement', pass: true }]);
      const kept = withMeta(sample, { rejectedRefinement: rewritten });
      return withTags(withChecks(kept, [{ name: 'nestools/refinement', pass: false, soft: true, reason: `rewrite not taken: it ${problems.join(' and ')}` }]), ['review:refinement-not-taken']);
    },
  });
}
