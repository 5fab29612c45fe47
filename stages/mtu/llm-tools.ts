import type { Call, Json, ToolSpec, Turn } from '../../core/records.ts';
import type { LineageEntry, StageContext } from '../../core/stage.ts';
import type { Situation } from '../../prompts/mtu-situation.ts';
import { mtuToolNamePrompt } from '../../prompts/mtu-tool-name.ts';
import { mtuToolParametersPrompt } from '../../prompts/mtu-tool-parameters.ts';
import type { SourceDialogue } from '../sources/dialogue.ts';
import type { CreatedTurns } from './grammar-tools.ts';
import { renderToolList } from './mtu-format.ts';
import { toolNameOfFreeText } from './names.ts';

/**
 * LLM-based tool creation (MTU-Bench §2.1) for dialogues without intent or slot annotations:
 * every assistant turn is classified into one of the five situations; only a "specific API call"
 * makes calls, whose tools (name, description, parameters) the LLM makes up. A dialogue keeps
 * one tool set, so a later turn reuses the tools an earlier one created.
 */

/** Earlier turns as the prompts show them (`User:` / `Action:` / `Assistant:` lines). */
export function historyText(turns: Turn[]): string {
  if (!turns.length) return '(none)';
  return turns.map(historyLines).join('\n');
}

/** One turn as `historyText` writes it (a history is its turns' lines joined by line breaks). */
export function historyLines(turn: Turn): string {
  if (turn.role === 'user') return `User: ${turn.content}`;
  const calls = (turn.calls ?? []).map((c) => `Action: ${c.tool}\nAction Input: ${JSON.stringify(c.arguments)}`);
  return [...calls, `Assistant: ${turn.response ?? turn.content}`].join('\n');
}

type Ctx = StageContext & { key: string };

/** The turns the LLM made of a dialogue, with the lineage entry of the answer that wrote its calls (none when no turn called a tool). */
export interface LlmCreatedTurns extends CreatedTurns {
  lineage?: LineageEntry;
}

/** Asks the stage's situation and parameter prompts turn by turn; a failed request rejects the dialogue (it throws, see `ctx.ask`). */
export async function llmDialogueTurns(dialogue: SourceDialogue, ctx: Ctx): Promise<LlmCreatedTurns> {
  const tools = new Map<string, ToolSpec>();
  const turns: Turn[] = [];
  const situations: Record<string, Situation> = {};
  let callCount = 0;
  let user: string | undefined;
  let lineage: LineageEntry | undefined;

  for (const [t, source] of dialogue.turns.entries()) {
    if (source.speaker === 'user') {
      turns.push({ role: 'user', content: source.text });
      user = source.text;
      continue;
    }
    const index = turns.length;
    if (user === undefined) {
      // An opening by the assistant (a greeting) answers nothing.
      situations[String(index)] = 'chit_chat';
      turns.push({ role: 'assistant', content: source.text });
      continue;
    }
    const history = historyText(turns.slice(0, -1));
    const named = await ctx.ask(
      mtuToolNamePrompt,
      { domains: dialogue.domains.join(', '), history, user, assistant: source.text, historyHasCalls: turns.some((x) => x.calls?.length) },
      { part: `turn-${t}/situation` },
    );
    let situation = named.value.situation;
    const calls: Call[] = [];
    let thought: string | undefined;
    if (situation === 'api_call' && named.value.apis.length) {
      const earlierUserTurns = turns.slice(0, -1).filter((x) => x.role === 'user').map((x) => x.content);
      const written = await ctx.ask(
        mtuToolParametersPrompt,
        { apis: renderToolList([...tools.values()]), history, user, assistant: source.text, proposed: named.value.apis, earlierUserTurns },
        { part: `turn-${t}/parameters` },
      );
      lineage = written.lineage;
      thought = written.value.thought;
      for (const action of written.value.actions) {
        const name = toolNameOfFreeText(action.action);
        if (!name) continue;
        const tool = tools.get(name) ?? newTool(name, action.description, dialogue);
        for (const parameter of Object.keys(action.action_input)) tool.parameters.properties[parameter] ??= { type: 'string' };
        tools.set(name, tool);
        calls.push({ id: `call_${callCount++}`, tool: name, arguments: action.action_input as Record<string, Json> });
      }
    }
    // A call the model could not write is a turn waiting for information.
    if (situation === 'api_call' && !calls.length) situation = named.value.apis.length ? 'information_missing' : 'chit_chat';
    situations[String(index)] = situation;
    turns.push({ role: 'assistant', content: source.text, ...(thought ? { thought } : {}), ...(calls.length ? { calls } : {}) });
  }
  return { dialogue: turns, tools: [...tools.values()], situations, ...(lineage ? { lineage } : {}) };
}

function newTool(name: string, description: string, dialogue: SourceDialogue): ToolSpec {
  return {
    name,
    description,
    parameters: { type: 'object', properties: {}, required: [] },
    returns: { type: 'object', properties: {}, required: [] },
    domain: dialogue.domains[0],
    plugin: dialogue.source,
    provenance: { source: dialogue.source, id: name, createdBy: 'llm' },
  };
}
