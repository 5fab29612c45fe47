import { z } from 'zod';
import { definePrompt } from '../core/prompt.ts';
import { answerText } from './answer-text.ts';
import { detail } from './toole-offline.ts';
import { cleanItem, parseNumberedList } from './toole-numbered-list.ts';

/** ToolE details generation (paper §2.2.1 (4)): a direct query rewritten with more details. */
export interface DetailsVars extends Record<string, unknown> {
  humanDescription: string;
  modelDescription: string;
  query: string;
}

export const DetailedQuery = z.object({ query: z.string().min(1) });
export type DetailedQuery = z.infer<typeof DetailedQuery>;

export default definePrompt<DetailsVars, DetailedQuery>({
  id: 'toole/details',
  template: `A user sent the message below to an AI assistant, which would answer it by calling this tool:

Description for users: {{humanDescription}}
Description for the assistant: {{modelDescription}}

Message: {{query}}

Rewrite the message so that it carries more details a real user might add: names, places, dates, amounts, preferences or constraints, as fits the tool. Keep its intent, keep it the first message of a new conversation, and do not name the tool. Answer with the rewritten message only.`,
  schema: DetailedQuery,
  // A model may still answer "1. User: …" or wrap the message in quotes.
  parseText: (text) => ({ query: answerText(text, 'rewritten message', (rest) => parseNumberedList(rest)[0] ?? cleanItem(rest)) }),
  temperature: 0.9,
  offline: (vars, rng) => {
    const base = vars.query.replace(/[.?!]+$/, '');
    const extra = [detail(rng), detail(rng)].filter((d, i, all) => all.indexOf(d) === i);
    return { query: `${base}, ${extra.join(' and ')}${/\?$/.test(vars.query) ? '?' : '.'} I'd appreciate specific suggestions.` };
  },
});
