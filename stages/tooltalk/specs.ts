import { ToolSpec, type PropertySchema } from '../../core/records.ts';
import type { SimTool } from './tool.ts';
import { TOOLTALK_TOOLS } from './tools/index.ts';

/** The repository file each suite's tools come from (provenance). */
const SOURCE_FILES: Record<string, string> = {
  AccountTools: 'src/tooltalk/apis/account.py',
  Alarm: 'src/tooltalk/apis/alarm.py',
  Calendar: 'src/tooltalk/apis/calendar.py',
  Email: 'src/tooltalk/apis/email.py',
  Messages: 'src/tooltalk/apis/message.py',
  Reminder: 'src/tooltalk/apis/reminder.py',
  Weather: 'src/tooltalk/apis/weather.py',
};

/**
 * A simulated tool's documentation as a toolkiln ToolSpec: parameters as a JSON-Schema object
 * (the session token is the executor's and is not a parameter), returns from the documented output.
 */
export function toolSpecOf(tool: SimTool): ToolSpec {
  const properties: Record<string, PropertySchema> = {};
  for (const [name, { required: _required, ...doc }] of Object.entries(tool.parameters)) properties[name] = doc;
  return ToolSpec.parse({
    name: tool.name,
    description: tool.description,
    parameters: { type: 'object', properties, required: Object.keys(tool.parameters).filter((name) => tool.parameters[name].required) },
    returns: { type: 'object', properties: tool.output, required: [] },
    plugin: tool.plugin,
    isAction: tool.isAction,
    provenance: { source: 'tooltalk', file: SOURCE_FILES[tool.plugin] },
  });
}

/** The 28 ToolTalk tools as ToolSpec records. */
export function toolTalkSpecs(): ToolSpec[] {
  return TOOLTALK_TOOLS.map(toolSpecOf);
}
