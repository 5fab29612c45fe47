import { BACKENDS, createGateway } from '../core/llm/index.ts';
import type { LlmGateway } from '../core/llm/types.ts';
import type { Values } from './command.ts';
import { choiceFlag, intFlag, stringFlag } from './flags.ts';

/** The `--llm` backend and its limits, from flags and the environment. */
export function gatewayFromFlags(values: Values, env: NodeJS.ProcessEnv, home: string, seed: number, log: (message: string) => void): LlmGateway {
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
    log,
  });
}
