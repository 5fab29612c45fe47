import { definePrompt } from '../core/prompt.ts';
import { CHAIN_RULES, PROGRAM_ANSWER, type GenerateVars } from './nestools-generate.ts';

export interface GenerateOverToolsVars extends GenerateVars {
  /** The domain's imported tools as Python stubs, copied into the answer. */
  stubs: string;
}

/**
 * NesTools generation over an imported tool library: the tools are given (real MCP, OpenAPI or
 * function-list tools written as stubs) and the model writes only the nested chain over them.
 */
export default definePrompt<GenerateOverToolsVars, { answer: string }>({
  id: 'nestools/generate-over-tools',
  template: `Here are Python stubs of real tools of the domain below. Copy the stubs you use, unchanged, and write a main() that calls some of them (two to five calls) as a chain.

1. Use only these functions, with their parameters as declared; do not write new ones.
${CHAIN_RULES}7. Choose the calls so that a result of one really is what a later one needs; when no two tools fit together, chain them without nesting.

Here are some examples of the answer's form.

{{examples}}

The tools:

{{stubs}}

Domain: {{domain}}
Answer:`,
  ...PROGRAM_ANSWER,
});
