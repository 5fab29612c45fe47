/**
 * The instruction text that opens every MTU-Eval question, one template per setting. `{today}` is
 * replaced by the long date ("Friday, March 1, 2019"). This is toolkiln's own wording; a config may
 * replace any setting's template from a file (`export.instructions`, see stages/mtu/instructions.ts),
 * for instance with the released benchmark's wording, which is not shipped here.
 */

export const MTU_SETTINGS = ['S-S', 'S-M', 'M-S', 'M-M'] as const;
export type MtuSetting = (typeof MTU_SETTINGS)[number];
export type InstructionTemplates = Record<MtuSetting, string>;

export const TODAY_PLACEHOLDER = '{today}';

function defaultTemplate(setting: MtuSetting): string {
  const multiTurn = setting.startsWith('M');
  const multiTool = setting.endsWith('M');
  const rules = [
    'Give your reasoning in "Thought": what the user wants, whether an API is needed and how to call it.',
    multiTool
      ? 'When APIs can satisfy the request, give each call in this form, one after another:\nAction: the name of an API\nAction Input: its parameters as a JSON object'
      : 'When an API call can satisfy the request, give the call in this form:\nAction: the name of the API to call\nAction Input: its parameters as a JSON object',
    ...(multiTurn ? ['"Observation" in the history shows what an earlier API call returned.'] : []),
    ...(multiTool
      ? [
          'A call may need a value an earlier call returns: write that value as "previous_API_name.return_parameter_name".',
          'Several APIs may be needed; mind the order in which you call them.',
        ]
      : []),
    'When the request can be met without an API, do not call one.',
    'When a required value is missing, do not call the API; ask for it instead.',
    ...(multiTurn ? ['When the conversation already holds the answer, do not call the API again.'] : []),
    'Use API and parameter names exactly as listed; take every parameter value from the conversation and never make one up.',
    'When no listed API fits the request, do not call any.',
    `Today is ${TODAY_PLACEHOLDER}.`,
  ];
  const format = multiTool ? 'Thought: xxxx\nAction: xxxx\nAction Input: xxxx\nAction: xxxx\nAction Input: xxxx...' : 'Thought: xxxx\nAction: xxxx\nAction Input: xxxx';
  return [
    `Reply to the user${multiTurn ? ', taking the conversation so far into account' : ''}. You may call external APIs to do so. The rules for calling them and the APIs you can use follow.`,
    ...rules.map((rule, i) => `${i + 1}. ${rule}`),
    `If you call ${multiTool ? 'APIs' : 'an API'}, answer in this format:\n${format}`,
    'If you do not call an API, answer in this format:\nThought: xxxx',
  ].join('\n');
}

export const DEFAULT_INSTRUCTIONS: InstructionTemplates = Object.fromEntries(MTU_SETTINGS.map((s) => [s, defaultTemplate(s)])) as InstructionTemplates;

const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

export function longDate(isoDate: string): string {
  const d = new Date(`${isoDate}T00:00:00Z`);
  return `${WEEKDAYS[d.getUTCDay()]}, ${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()}, ${d.getUTCFullYear()}`;
}

/** A template with its `{today}` filled in. */
export function renderInstructions(template: string, today: string): string {
  return template.split(TODAY_PLACEHOLDER).join(longDate(today));
}
