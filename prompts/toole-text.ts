/** Pieces of prompt text ToolE's generation prompts share (their wording is part of each prompt's hash). */

/** What every single-tool prompt is told about the tool: both of its descriptions (Appendix A.5). */
export interface ToolVars extends Record<string, unknown> {
  name: string;
  nameForHuman: string;
  humanDescription: string;
  modelDescription: string;
}

export const TOOL_INTRO = `An AI assistant can call the tool below to serve its users better.

Description for users: {{humanDescription}}

Description for the assistant: {{modelDescription}}`;

/** The answer format the query-writing prompts ask for (the paper's "1. User: [Your Answer]"). */
export const USER_LIST_FORMAT = `Answer as a numbered list, one message per item:
1. User: <message>
2. User: <message>
...`;
