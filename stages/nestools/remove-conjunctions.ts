import { Sample } from '../../core/records.ts';
import { promptStep, type MapStage } from '../../core/stage.ts';
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
  return promptStep({
    name: 'remove-conjunctions',
    version: 1,
    input: Sample,
    output: Sample,
    prompt: removeConjunctionsPrompt,
    variables: (sample) => ({ task: taskOf(sample) }),
    result: (answer, sample) => {
      const candidate = withMeta(withTask(sample, answer.value.task), { taskWithConjunctions: taskOf(sample), variant: 'without-conjunctions' });
      const lost = lostValues(sample, candidate);
      if (lost.length) {
        const reason = `rewrite not taken: it drops ${describeValues(lost)}`;
        return withTags(withChecks(sample, [{ name: 'nestools/remove-conjunctions', pass: false, soft: true, reason }]), ['review:conjunctions-kept']);
      }
      return withChecks(withLineage(candidate, answer.lineage), [{ name: 'nestools/remove-conjunctions', pass: true }]);
    },
  });
}
