import type { GenerateResult, LlmGateway } from './types.ts';

/**
 * The same gateway, with `observe` told of every generation result (the runner counts transport
 * failures and batch deferrals per record this way). Everything else is the gateway's own.
 */
export function observeResults(llm: LlmGateway, observe: (result: GenerateResult<unknown>, ...args: Parameters<LlmGateway['generate']>) => void): LlmGateway {
  return Object.assign(Object.create(llm) as LlmGateway, {
    generate: async (...args: Parameters<LlmGateway['generate']>) => {
      const result = await llm.generate(...args);
      observe(result, ...args);
      return result;
    },
  });
}
