import { z } from 'zod';
import { UnusableAnswer } from '../core/llm/structured.ts';
import { definePrompt } from '../core/prompt.ts';
import type { Rng } from '../core/rng.ts';
import { opening } from './answer-text.ts';
import { taskFromChain } from './nestools-offline.ts';
import { renderProgram, type SampledChain } from './nestools-render-program.ts';

/** Where the offline renderer gets a chain: a tool library with linked return fields and parameters. */
export interface OfflineChainSource {
  sample(field: string, rng: Rng): SampledChain;
}

export interface GenerateVars extends Record<string, unknown> {
  domain: string;
  /** The rotated in-context examples, formatted. */
  examples: string;
  /** Only the offline renderer reads this; it is not part of the prompt text. */
  chains: OfflineChainSource;
}

/**
 * What main() may hold and how a chain nests (Table 4's rules 2–6): shared by the prompt that asks
 * for new tools and the one that chains given tools.
 */
export const CHAIN_RULES = `2. main() holds only call statements that unpack every return value into variables numbered across the whole program, like "data0, data1 = func0(...)" and "data2, data3, data4 = func1(...)". Unpack exactly as many variables as the function's Returns section lists. Add no other Python code to main().
3. The most important point: results of earlier calls are arguments of later ones, so data0, data1, ... feed the parameters of subsequent calls. A value passed on this way must mean the same in both functions and have the same type; the parameter names and descriptions may differ a little.
4. Fill every required parameter with a concrete value, in order, without its name. Optional parameters may be left out; when you fill one, write "parameter_name=value".
5. Do not use Python's built-in functions or operations in main(): no len(), list(), print(), no indexing or slicing (data0[0]), no attributes (data0.key), no arithmetic, loops or conditions.
6. Below the calls, write the task as a comment in main(): what a user would ask for, in natural language, describing the whole calling process and mentioning every value passed to the calls.
`;

/** NesTools Table 4: tool stubs and a nested call chain as Python code, for one domain. */
/** How every NesTools generation prompt is answered: a whole program as text, read by programAnswer; offline, a program drawn from the domain. */
export const PROGRAM_ANSWER = {
  schema: z.object({ answer: z.string().min(1) }),
  parseText: (text: string) => programAnswer(text),
  temperature: 0.95,
  maxTokens: 2500,
  offline: (vars: GenerateVars, rng: Rng) => offlineProgram(vars, rng),
};

export default definePrompt<GenerateVars, { answer: string }>({
  id: 'nestools/generate',
  template: `Write a few realistic Python functions for the domain below, and a main() that calls them as a chain.

1. Each function is a stub: a signature with type annotations, a docstring, and "..." as its body. The docstring starts with one line describing the function, then the sections "required parameters:", "optional parameters:" (leave it out when there are none) and "Returns:", one line per item written as "name (type): description". Optional parameters default to None in the signature.
${CHAIN_RULES}7. The functions should relate to the domain but need not belong to it strictly.

Here are some examples.

{{examples}}

It's your turn to generate.

Domain: {{domain}}
Answer:`,
  ...PROGRAM_ANSWER,
});

/**
 * The answer is Python in a code block, not JSON: the parser cuts the code out of it. An answer
 * without a single function is talk (a refusal, a preamble cut off), sent back once.
 */
export function programAnswer(text: string): { answer: string } {
  if (!/^\s*def\s+\w+\s*\(/m.test(text)) throw new UnusableAnswer('chatter', `the answer holds no Python function ("${opening(text)}")`);
  return { answer: text };
}

/** The offline answer: a chain sampled over the tool library, rendered as the program a model would write. */
export function offlineProgram(vars: GenerateVars, rng: Rng): { answer: string } {
  const chain = vars.chains.sample(vars.domain, rng);
  const task = taskFromChain(chain.tools, chain.calls, rng);
  return { answer: `Here is the program.\n\n${renderProgram({ ...chain, task }, { fenced: true, domain: vars.domain })}` };
}
