import { PyException, hex, pyStr, strptime } from '../python.ts';
import { copyJson, lookup, ownTable, userOf, type Args, type JsonObject, type SimTool } from '../tool.ts';

// ToolTalk's Alarm suite (src/tooltalk/apis/alarm.py).

const PLUGIN = 'Alarm';
const TIME = '%H:%M:%S';

export const AddAlarm: SimTool = {
  name: 'AddAlarm',
  plugin: PLUGIN,
  description: 'Adds an alarm for a set time.',
  parameters: { time: { type: 'string', description: 'The time for alarm. Format: %H:%M:%S', required: true } },
  output: { alarm_id: { type: 'string', description: 'Alarm ID. Format: xxxx-xxxx.' } },
  isAction: true,
  requiresAuth: true,
  call(ctx, { session_token, time }: Args) {
    strptime(time, TIME);
    const username = userOf(ctx, session_token).username as string;
    const alarms = ownTable(ctx.databases.Alarm, username);
    const alarmId = `${hex(ctx.random.randint(0, 0xffff), 4)}-${hex(ctx.random.randint(0, 0xffff), 4)}`;
    alarms.set(alarmId, { alarm_id: alarmId, time });
    return { alarm_id: alarmId };
  },
};

export const DeleteAlarm: SimTool = {
  name: 'DeleteAlarm',
  plugin: PLUGIN,
  description: 'Deletes an alarm given an alarm_id.',
  parameters: { alarm_id: { type: 'string', description: 'Alarm ID. Format: xxxx-xxxx.', required: true } },
  output: { status: { type: 'string', description: 'success or failed' } },
  isAction: true,
  requiresAuth: true,
  call(ctx, { session_token, alarm_id }: Args) {
    const username = userOf(ctx, session_token).username as string;
    const alarms = ctx.databases.Alarm.get(username);
    if (!alarms || !lookup(alarms, alarm_id)) throw new PyException(`Alarm ${pyStr(alarm_id)} not found.`);
    alarms.delete(alarm_id as string);
    return { status: 'success' };
  },
};

export const FindAlarms: SimTool = {
  name: 'FindAlarms',
  plugin: PLUGIN,
  description: 'Finds alarms the user has set.',
  parameters: {
    start_range: { type: 'string', description: 'Optional starting time range to find alarms. Format: %H:%M:%S', required: false },
    end_range: { type: 'string', description: 'Optional ending time range to find alarms. Format: %H:%M:%S', required: false },
  },
  output: {
    alarms: {
      type: 'array',
      item: {
        type: 'object',
        properties: {
          alarm_id: { type: 'string', description: 'Alarm ID. Format: xxxx-xxxx.' },
          time: { type: 'string', description: 'The time of alarm clock. Format: %H:%M:%S.' },
        },
      },
      description: 'list of alarms in the given time range.',
    },
  },
  isAction: false,
  requiresAuth: true,
  call(ctx, { session_token, start_range, end_range }: Args) {
    const username = userOf(ctx, session_token).username as string;
    const alarms = ctx.databases.Alarm.get(username);
    if (!alarms) return { alarms: [] };
    const start = start_range === null ? null : strptime(start_range, TIME).ms;
    const end = end_range === null ? null : strptime(end_range, TIME).ms;
    if (start !== null && end !== null && start > end) throw new PyException('Start range must be earlier than end range.');
    const found: JsonObject[] = [];
    for (const alarm of alarms.values()) {
      const time = strptime(alarm.time, TIME).ms;
      if (start !== null && time < start) continue;
      if (end !== null && time > end) continue;
      found.push(copyJson(alarm));
    }
    return { alarms: found };
  },
};

export const ALARM_TOOLS: readonly SimTool[] = [AddAlarm, DeleteAlarm, FindAlarms];
