import { z } from 'zod';
import { definePrompt } from '../core/prompt.ts';

/** MetaTool overlap resolution (Appendix A.1 step 2): one description for tools merged into one. */
export interface MergeDescriptionVars extends Record<string, unknown> {
  /** The merged tool's name. */
  name: string;
  /** The member tools, one "- name: description" line each. */
  members: string;
}

export const MergeDescription = z.object({ description: z.string().min(1) });
export type MergeDescription = z.infer<typeof MergeDescription>;

export default definePrompt<MergeDescriptionVars, MergeDescription>({
  id: 'metatool/merge-description',
  template: `These tools do overlapping things and are being merged into one tool named "{{name}}". Their descriptions:
{{members}}

Write the merged tool's description: one or two sentences covering everything these tools do, in the style of the originals, without naming any of them.

Answer with JSON: {"description": "<description>"}`,
  schema: MergeDescription,
  temperature: 0.3,
  // Offline: the members' descriptions joined, plainly template text.
  offline: (vars) => ({
    description: `Merged tool: ${vars.members
      .split('\n')
      .filter((line) => line.startsWith('- '))
      .map((line) => line.slice(line.indexOf(':') + 1).trim().replace(/\.$/, ''))
      .filter(Boolean)
      .join('; ') || vars.name}.`,
  }),
});
