import { z } from 'zod';
import { definePrompt } from '../core/prompt.ts';
import { contentWords, taskPhrase } from './toole-offline.ts';

/** ToolE overlap resolution (Appendix A.1): a name and a description for tools merged into one. */
export interface MergedDescriptionVars extends Record<string, unknown> {
  /** The member tools, one "- name: description" line each. */
  members: string;
  /** A name the decision already gives (empty: propose one). */
  name: string;
}

export const MergedDescription = z.object({ name: z.string().min(1).max(60), description: z.string().min(1) });
export type MergedDescription = z.infer<typeof MergedDescription>;

export default definePrompt<MergedDescriptionVars, MergedDescription>({
  id: 'toole/merged-description',
  template: `Several tools of an AI assistant do overlapping things, so they are being merged into a single tool. Their descriptions:
{{members}}

Write the description of the merged tool for its users: one or two sentences that cover what all of these tools do, in the style of the originals, without naming any of them. Also give the merged tool a short name in CamelCase ending in "Tool" (for example WeatherTool). If this name is given, use it: "{{name}}".

Answer with JSON: {"name": "<name>", "description": "<description>"}`,
  schema: MergedDescription,
  temperature: 0.3,
  offline: (vars) => {
    const lines = vars.members.split('\n').filter((l) => l.startsWith('- '));
    const phrases = [...new Set(lines.map((l) => taskPhrase(l.slice(l.indexOf(':') + 1))))].slice(0, 3);
    const topic = contentWords(lines.map((l) => l.slice(l.indexOf(':') + 1)).join(' '))[0] ?? 'general';
    const name = vars.name || `${topic[0].toUpperCase()}${topic.slice(1).replace(/[^A-Za-z0-9]/g, '')}Tool`;
    return { name, description: `One tool to ${phrases.join('; or ')}.` };
  },
});
