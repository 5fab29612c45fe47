import { OfflineGateway } from '../core/llm/offline.ts';
import type { LlmGateway } from '../core/llm/types.ts';
import { UserError } from '../core/errors.ts';
import type { Values } from './command.ts';
import { choiceFlag } from './flags.ts';

/** The `--llm` backend and its options, from flags and the environment. */
export async function gatewayFromFlags(values: Values, env: NodeJS.ProcessEnv, _home: string, seed: number): Promise<LlmGateway> {
  const backend = choiceFlag(values, 'llm', ['offline', 'openai', 'replay'] as const) ?? (env.OPENAI_API_KEY || env.OPENAI_BASE_URL ? 'openai' : 'offline');
  if (backend === 'offline') return new OfflineGateway(seed);
  throw new UserError(`--llm ${backend} is not available in this build`);
}
