import { pythonRepr } from '../../core/python-json.ts';

/**
 * The prompts MetaTool's runner sends (`thought_prompt`, `action_prompt` of its task files), built
 * as its prompt builder (src/prompt/prompt_construction.py) builds them from its templates
 * (src/prompt/prompt_template/, MIT licence): the query and the numbered tool list put into the
 * template text, which keeps the template files' surrounding quotes.
 */

const TOOL_REASONS = [
  'A. Solving issues with real-time or external data, databases or APIs',
  'B. Handling specialized inputs/outputs',
  "C. Enhancing domain tasks beyond LLM's capabilities",
  'D. User customization, personalization and interaction',
].join('\n');

const THOUGHT_SINGLE = `You are an intelligent agent, and you need to constantly be aware of your own limitations. I will provide you with a user's query, and you should assess, based on your own capabilities, whether you need to use external tools to better address the user's query. Typically, there are four reasons why you might need to use external tools:
[Reasons Begin]
{tool_reason}
[Reasons End]
Here is the user's query:
[User Query Begins]
{user_query}
[User Query Ends]
Based on the above query, if you think it's necessary to use external tools, please respond with "yes"; otherwise, respond with "no." Additionally, you should provide a brief explanation for your answer.`;

const ACTION_HEAD = `"You are a helpful AI assistant. Your current task is to choose the appropriate tool to solve the user's query based on their question. I will provide you with the user's question and information about the tools.`;
const ACTION_TAIL = `User's Query:
[User's Query Start]
{user_query}
[User's Query End].
List of Tools with Names and Descriptions:
[List of Tools with Names and Descriptions Start]
{tool_list}
[List of Tools with Names and Descriptions End]"`;
const ACTION_SINGLE = `${ACTION_HEAD}
If there is a tool in the list that is applicable to this query, please return the name of the tool (you can only choose one tool). If there isn't, please return 'None.' Additionally, you will need to support your answer with a brief explanation.
${ACTION_TAIL}`;
const ACTION_MULTI = `${ACTION_HEAD}
If there is a tool in the list that is applicable to this query, please return the name of the tool (you can choose two tools at most). If there isn't, please return 'None.' Additionally, you will need to support your answer with a brief explanation.
${ACTION_TAIL}`;

/** Python's `str.replace`: every occurrence, the replacement taken literally. */
const fill = (template: string, key: string, value: string) => template.split(`{${key}}`).join(value);

/** `construct_thought_prompt`: does the query need a tool? */
export function thoughtPrompt(query: string): string {
  return fill(fill(THOUGHT_SINGLE, 'user_query', query), 'tool_reason', TOOL_REASONS);
}

/** `construct_single_prompt`: which of the listed tools (one, or up to two for the multi-tool task)? */
export function actionPrompt(query: string, toolList: string, multi = false): string {
  return fill(fill(multi ? ACTION_MULTI : ACTION_SINGLE, 'user_query', query), 'tool_list', toolList);
}

/**
 * `get_tool_description`: a merged tool's description as `big_tool_des.json` holds it, else the
 * Python list of the user-facing descriptions of the plugins of that name in `plugin_info.json`.
 */
export function toolDescription(tool: string, merged: ReadonlyMap<string, string>, pluginDescriptions: ReadonlyMap<string, string[]>): string {
  return merged.get(tool) ?? pythonRepr(pluginDescriptions.get(tool) ?? []);
}

/** `get_tool_list_des`: `1. tool name: X, tool description: Y\n` for each tool. */
export function toolListText(tools: readonly string[], describe: (tool: string) => string): string {
  return tools.map((tool, i) => `${i + 1}. tool name: ${tool}, tool description: ${describe(tool)}\n`).join('');
}
