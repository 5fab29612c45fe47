import { Sample } from '../../core/records.ts';
import { reject, type MapStage } from '../../core/stage.ts';
import removeConjunctionsPrompt from '../../prompts/nestools-remove-conjunctions.ts';
import { taskOf } from './import-export.ts';
import { describeValues, lostValues } from './normalise-query.ts';
import { withChecks, withLineage, withMeta, withTags } from '../../core/sample-edits.ts';
import { withTask } from './sample-meta.ts';

/**
 * Appendix B.3, optional: the robustness variant whose tasks lack sequencing words ("Please",
 * "then", "After that"). The original task is kept in `meta.taskWithConjunctions`; a rewrite that
 * loses a value is not taken (the sample is tagged instead).
 */
export function removeConjunctionsStage(): MapStage<Sample, Sample> {
  const version = 1;
  const name = 'remove-conjunctions';
  return {
    kind: 'map',
    name,
    version,
    input: Sample,
    output: Sample,
    prompts: [removeConjunctionsPrompt],
    run: async (sample, ctx) => {
      const before = taskOf(sample);
      const result = await ctx.llm.generate(removeConjunctionsPrompt, { task: before }, { stage: name, key: ctx.key });
      if (!result.ok) return reject(result.reason, result.detail);
      const candidate = withMeta(withTask(sample, result.value.task), { taskWithConjunctions: before, variant: 'without-conjunctions' });
      const lost = lostValues(sample, candidate);
      if (lost.length) {
        const reason = `rewrite not taken: it drops ${describeValues(lost)}`;
        return withTags(withChecks(sample, [{ name: 'nestools/remove-conjunctions', pass: false, soft: true, reason }]), ['review:conjunctions-kept']);
      }
      return withChecks(withLineage(candidate, { stage: name, version, prompt: removeConjunctionsPrompt.id, promptHash: removeConjunctionsPrompt.hash, model: result.model }), [
        { name: 'nestools/remove-conjunctions', pass: true },
      ]);
    },
  };
}
