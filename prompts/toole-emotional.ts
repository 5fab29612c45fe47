import { definePrompt } from '../core/prompt.ts';
import { requestQuery, withTypicalFaults } from './toole-offline.ts';
import { readList } from './toole-numbered-list.ts';
import { USER_LIST_FORMAT, type ToolVars } from './toole-text.ts';
import { QueryList } from './toole-direct.ts';

/** ToolE emotional generation (paper §2.2.1 (2), Appendix D.1): queries written in a given mood. */
export interface EmotionalVars extends ToolVars {
  emotion: string;
  count: number;
}

/** How each emotion sounds in the offline template text. */
const OPENERS: Record<string, string[]> = {
  happiness: ["I'm in such a good mood today!", 'What a lovely day!', 'Good news made my week!'],
  excitement: ["I can't wait any longer!", 'Wow, this is going to be amazing!', "I'm so thrilled about this!"],
  anger: ["I'm really fed up.", 'This is so frustrating!', "I've had enough of wasting time."],
  depression: ["I've been feeling really low lately.", 'Nothing seems to go right for me.', "I'm tired and a bit down."],
};

export default definePrompt<EmotionalVars, QueryList>({
  id: 'toole/emotional',
  template: `An AI assistant can call a tool to answer its users better; it calls the tool only when the tool improves its answer. The tool is described for its users as: {{humanDescription}}
and for the assistant as: {{modelDescription}}

Write {{count}} messages a user might send that would lead the assistant to call this tool. Each message must:
- be the first message of a new conversation, with no earlier context;
- carry information from the description;
- sound like the user is feeling {{emotion}}.
Do not name the tool.

${USER_LIST_FORMAT}`,
  schema: QueryList,
  parseText: (text) => ({ queries: readList(text) }),
  temperature: 1,
  offline: (vars, rng) => ({
    queries: Array.from({ length: vars.count }, () => {
      const opener = rng.pick(OPENERS[vars.emotion] ?? [`I'm feeling ${vars.emotion}.`]);
      return withTypicalFaults(`${opener} ${requestQuery(vars.humanDescription, rng, [vars.name, vars.nameForHuman])}`, vars, rng);
    }),
  }),
});
