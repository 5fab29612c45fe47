import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { definePipeline, type PipelineDefinition } from '../../core/pipeline.ts';
import { definePrompt } from '../../core/prompt.ts';
import { Sample, sampleId } from '../../core/records.ts';
import { promptStep, sourceStage } from '../../core/stage.ts';
import { exportCanonical } from '../../stages/export/canonical.ts';

export const Line = z.object({ id: z.string(), text: z.string() });
export type Line = z.infer<typeof Line>;

/** The sample a line and the model's echo of it make. */
export function echoSample(line: Line, echo: string): Sample {
  return {
    id: sampleId('echo', line),
    benchmark: 'echo',
    category: 'echo',
    split: 'test',
    tools: [],
    dialogue: [{ role: 'user' as const, content: line.text }, { role: 'assistant' as const, content: echo }],
    expected: { labels: [echo] },
    meta: { lineage: [], checks: [], tags: [] },
  };
}

/** Answered by the local endpoint's default responder (`{"echo": <user message>}`) or offline. */
export const echoPrompt = definePrompt({
  id: 'test/echo',
  template: '{{text}}',
  schema: z.object({ echo: z.string() }),
  offline: (vars: { text: string }) => ({ echo: vars.text }),
});

export interface EchoPipelineOptions {
  /** Called with each line's text before it is asked; what it throws ends the `ask` stage there (as a killed process would stop). */
  beforeAsk?: (text: string) => void;
}

/**
 * A recipe with one LLM step, for measuring and testing the runner: each line of a source file is
 * asked of the model and becomes a sample holding the answer; a failed answer is rejected with the
 * gateway's reason.
 */
export function echoPipelineWith(options: EchoPipelineOptions = {}): PipelineDefinition<{ file: string }> {
  return definePipeline<{ file: string }>({
    name: 'echo',
    benchmark: 'echo',
    description: 'test pipeline: one LLM request per source line',
    configSchema: z.object({ file: z.string() }),
    sourceFiles: (config) => [config.file],
    stages: (config) => [
      sourceStage({
        name: 'read-lines',
        version: 1,
        output: Line,
        load: (ctx) => readFileSync(ctx.resolvePath(config.file), 'utf8').split('\n').filter(Boolean).map((text, n) => ({ id: `line-${n}`, text })),
      }),
      promptStep({
        name: 'ask',
        version: 1,
        input: Line,
        output: Sample,
        prompt: echoPrompt,
        variables: (line) => {
          options.beforeAsk?.(line.text);
          return { text: line.text };
        },
        result: (answer, line) => echoSample(line, answer.value.echo),
      }),
    ],
    exports: { canonical: exportCanonical },
  });
}

export const echoPipeline = echoPipelineWith();
