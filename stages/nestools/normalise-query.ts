import { Sample } from '../../core/records.ts';
import { mapStage, reject, type MapStage } from '../../core/stage.ts';
import normalisePrompt from '../../prompts/nestools-normalise.ts';
import { toNesToolsRecord, taskOf } from './import-export.ts';
import { valueMentions, type ValueMention } from './query-values.ts';
import { withChecks, withLineage } from '../../core/sample-edits.ts';
import { withTask } from './sample-meta.ts';

/**
 * §3.2 query normalisation (Table 6): find the literal argument values the task does not state
 * (compared normalised: case, numbers, dates), ask the LLM to work them in, and check again. A task
 * still missing values after the last attempt is rejected with the values it lacks.
 */

export interface NormaliseOptions {
  maxAttempts: number;
}

export function missingValues(sample: Sample): ValueMention[] {
  return valueMentions(taskOf(sample), sample.expected.calls ?? []).filter((m) => m.presence === 'missing');
}

/** Values `after` lacks that `before` stated (a rewrite must not lose any). */
export function lostValues(before: Sample, after: Sample): ValueMention[] {
  const already = missingValues(before);
  return missingValues(after).filter((m) => !already.some((x) => x.callId === m.callId && x.param === m.param));
}

/** `param "value", …` for messages. */
export function describeValues(values: ValueMention[]): string {
  return values.map((m) => `${m.param} ${JSON.stringify(m.value)}`).join(', ');
}

function listMissing(missing: ValueMention[]): string {
  return missing.map((m) => `${m.param}: ${JSON.stringify(m.value)}`).join('\n');
}

/** The chain as the NesTools prompts show it: `api` entries and calls with API_call_k placeholders. */
export function promptChain(sample: Sample): { apis: string; calls: string } {
  const record = toNesToolsRecord(sample, 0);
  return { apis: JSON.stringify(record.api), calls: JSON.stringify(record.call) };
}

export function normaliseQueryStage(options: NormaliseOptions): MapStage<Sample, Sample> {
  return mapStage({
    name: 'normalise-query',
    version: 1,
    input: Sample,
    output: Sample,
    prompts: [normalisePrompt],
    run: async (sample, ctx) => {
      let current = sample;
      let missing = missingValues(current);
      for (let attempt = 1; missing.length && attempt <= options.maxAttempts; attempt++) {
        // Keyed per attempt: each rewrite is a request (and a cache entry) of its own.
        const answer = await ctx.ask(
          normalisePrompt,
          { ...promptChain(current), task: taskOf(current), missing: listMissing(missing), missingValues: missing.map((m) => ({ param: m.param, value: m.value })) },
          { key: `${ctx.key}#${attempt}` },
        );
        current = withLineage(withTask(current, answer.value.task), answer.lineage);
        missing = missingValues(current);
      }
      if (missing.length) return reject('values_missing', `after ${options.maxAttempts} rewrite(s) the task still lacks ${listMissing(missing).replace(/\n/g, '; ')}`);
      return withChecks(current, [{ name: 'nestools/values-in-task', pass: true }]);
    },
  });
}
