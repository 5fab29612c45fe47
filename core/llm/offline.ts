import { UserError } from '../errors.ts';
import { Rng } from '../rng.ts';
import { formatZodError } from '../records.ts';
import { parseRecord } from '../validate.ts';
import type { PromptFile } from '../prompt.ts';
import { emptyUsage, type EmbedOptions, type GenerateOptions, type GenerateResult, type LlmGateway, type UsageReport } from './types.ts';

/**
 * No network: each prompt's own seeded template renderer answers. Its output is template text,
 * meant for running pipelines end to end, not for training.
 */
export class OfflineGateway implements LlmGateway {
  readonly backend = 'offline' as const;
  readonly model = 'offline-template';
  readonly dryRun = false;
  private report: UsageReport = { total: emptyUsage(), byStage: {}, byModel: {} };

  constructor(private readonly seed: number) {}

  async generate<V extends Record<string, unknown>, O>(prompt: PromptFile<V, O>, vars: V, options: GenerateOptions): Promise<GenerateResult<O>> {
    const rng = Rng.derive(this.seed, prompt.id, options.key);
    // The renderer's answer is checked without zod's deep copy when it is valid as it is (zod decides otherwise).
    const parsed = parseRecord(prompt.schema, prompt.offline(vars, rng));
    this.count(options.stage);
    if (!parsed.success) {
      return { ok: false, reason: 'offline_schema_error', detail: `${prompt.id}: offline renderer broke its own schema: ${formatZodError(parsed.error)}` };
    }
    return { ok: true, value: parsed.data, model: this.model, cached: false };
  }

  async embed(_texts: string[], options: EmbedOptions): Promise<number[][]> {
    throw new UserError(
      `stage ${options.stage} asked for embeddings${options.model ? ` (${options.model})` : ''}, but the offline backend has no embedding model: use the lexical embedder (the default), or an endpoint (--llm openai with OPENAI_BASE_URL / OPENAI_API_KEY)`,
    );
  }

  private count(stage: string): void {
    this.report.total.requests++;
    (this.report.byStage[stage] ??= emptyUsage()).requests++;
    (this.report.byModel[this.model] ??= emptyUsage()).requests++;
  }

  usage(): UsageReport {
    return structuredClone(this.report);
  }

  async close(): Promise<void> {}
}
