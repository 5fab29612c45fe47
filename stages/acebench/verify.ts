import { ArgumentValidator } from '../../core/json-schema.ts';
import { Sample, type Check } from '../../core/records.ts';
import { withChecks, withLineage } from '../../core/sample-edits.ts';
import { mapStage, reject, type LineageEntry, type MapStage } from '../../core/stage.ts';
import judgePrompt, { type JudgeAnswer } from '../../prompts/acebench-judge.ts';
import { sampleToAceRecord } from './format.ts';
import { ruleChecks } from './rule-checks.ts';

/**
 * ACEBench §3.1.2, multi-stage verification. First the rules: a record whose definitions or gold
 * answer are unusable is rejected with the check's reason; one that only fails a soft rule
 * (grounding, the atom kind, the profile, a range that ends before it starts) keeps its failed check
 * and goes to review. Then a vote of
 * k LLM judges: a majority against sends the record to review, with every vote in its checks.
 */

export function ruleCheckStage(): MapStage<Sample, Sample> {
  const validator = new ArgumentValidator();
  return mapStage({
    name: 'check-rules',
    version: 2,
    input: Sample,
    output: Sample,
    run: async (sample, ctx) => {
      const checks = ruleChecks(sampleToAceRecord(sample), { validator });
      const hard = checks.find((check) => !check.pass && !check.soft);
      if (hard) return reject(hard.name.replace('acebench/', 'rule:'), hard.reason);
      return withLineage(withChecks(sample, checks), ctx.lineage());
    },
  });
}

export interface JudgeOptions {
  /** How many judges vote; the record fails the vote only when more than half are against (a tie passes). */
  judges: number;
}

export function judgeStage(options: JudgeOptions): MapStage<Sample, Sample> {
  const { judges } = options;
  return mapStage({
    name: 'judge',
    version: 1,
    input: Sample,
    output: Sample,
    prompts: [judgePrompt],
    run: async (sample, ctx) => {
      const record = sampleToAceRecord(sample);
      const vars = {
        category: record.category,
        question: record.data.question,
        functions: JSON.stringify(record.data.function),
        answer: JSON.stringify(record.answer?.ground_truth ?? null),
        context: [record.data.time, record.data.profile].filter((part) => typeof part === 'string' && part).join('\n'),
        ruleProblems: sample.meta.checks.filter((check) => !check.pass).map((check) => `${check.name}: ${check.reason ?? ''}`).join('; '),
      };
      const votes: JudgeAnswer[] = [];
      let lineage: LineageEntry = ctx.lineage();
      for (let i = 0; i < judges; i++) {
        // Each judge is its own request (its own key), so the answers are independent samples. A
        // judge that cannot answer rejects the record with its reason, as every LLM stage does (the
        // runner stops on an unreachable endpoint and asks again for a batched request).
        const result = await ctx.tryAsk(judgePrompt, vars, { key: `${ctx.key}#judge-${i + 1}` });
        if (!result.ok) return reject(result.reason, `judge ${i + 1}: ${result.detail}`);
        votes.push(result.value);
        lineage = result.lineage;
      }
      return withLineage(withChecks(sample, [judgeCheck(votes, judges)]), lineage);
    },
  });
}

/** The vote as one soft check: it fails when more than half of the judges say fail. */
export function judgeCheck(votes: JudgeAnswer[], judges: number): Check {
  const against = votes.filter((vote) => vote.verdict === 'fail').length;
  const pass = against <= judges / 2;
  const tally = `${against} of ${judges} judges fail it (prompt ${judgePrompt.id}@${judgePrompt.hash})`;
  const reasons = votes.map((vote, i) => `judge ${i + 1}: ${vote.verdict} — ${vote.reason}`).join(' | ');
  return { name: 'acebench/judges', pass, soft: true, reason: `${tally}: ${reasons}` };
}
