import { resolve } from 'node:path';
import { UserError } from '../core/errors.ts';
import { BACKENDS, createGateway, type BatchOptions, type GatewayOptions } from '../core/llm/index.ts';
import type { LlmGateway } from '../core/llm/types.ts';
import type { Values } from './command.ts';
import { choiceFlag, intFlag, stringFlag } from './flags.ts';

/** The `--llm` backend and its limits, from flags and the environment; `sharedPermit` makes rpm / tpm hold across processes (`--redis`). */
export function gatewayFromFlags(values: Values, env: NodeJS.ProcessEnv, home: string, seed: number, log: (message: string) => void, cwd = process.cwd(), sharedPermit?: GatewayOptions['sharedPermit']): LlmGateway {
  const batchResults = stringFlag(values, 'batch-results');
  return createGateway({
    backend: choiceFlag(values, 'llm', BACKENDS),
    model: stringFlag(values, 'model'),
    seed,
    home,
    env,
    noCache: values['no-cache'] === true,
    dryRun: values['dry-run'] === true,
    concurrency: intFlag(values, 'concurrency', { min: 1, max: 4096 }),
    rpm: intFlag(values, 'rpm', { min: 1 }),
    tpm: intFlag(values, 'tpm', { min: 1 }),
    maxRetries: intFlag(values, 'max-retries', { min: 0, max: 100 }),
    priceTable: stringFlag(values, 'price-table'),
    // Replaying a dataset must reproduce it exactly: a cache miss stops the run instead of rejecting a record.
    replayMiss: 'throw',
    batch: batchFromFlags(values, cwd),
    batchResults: batchResults === undefined ? undefined : resolve(cwd, batchResults),
    log,
    sharedPermit,
  });
}

/** `--batch` (the provider's Batch API) or `--batch-file <out.jsonl>` (a file for `vllm run-batch`). */
function batchFromFlags(values: Values, cwd: string): BatchOptions | undefined {
  const file = stringFlag(values, 'batch-file');
  if (file !== undefined && values.batch === true) throw new UserError('--batch sends requests to the provider and --batch-file writes them to a file: pick one');
  if (file !== undefined) return { mode: 'file', file: resolve(cwd, file) };
  return values.batch === true ? { mode: 'openai' } : undefined;
}
