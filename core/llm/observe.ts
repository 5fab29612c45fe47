import type { GenerateResult, LlmGateway } from './types.ts';

/**
 * The same gateway, with `observe` told of every generation result (the runner counts transport
 * failures and batch deferrals per record this way). Everything else is the gateway's own.
 */
export function observeResults(llm: LlmGateway, observe: (result: GenerateResult<unknown>, ...args: Parameters<LlmGateway['generate']>) => void): LlmGateway {
  const observed = Object.create(llm) as LlmGateway;
  // The three arguments named, not gathered and spread again: a record's every request passes through here.
  observed.generate = async (prompt, vars, options) => {
    const result = await llm.generate(prompt, vars, options);
    observe(result, prompt as unknown as Parameters<LlmGateway['generate']>[0], vars, options);
    return result;
  };
  return observed;
}
