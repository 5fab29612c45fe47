import type { SimTool } from '../tool.ts';
import { ACCOUNT_TOOLS } from './account.ts';
import { ALARM_TOOLS } from './alarm.ts';
import { CALENDAR_TOOLS } from './calendar.ts';
import { EMAIL_TOOLS } from './email.ts';
import { MESSAGE_TOOLS } from './message.ts';
import { REMINDER_TOOLS } from './reminder.ts';
import { WEATHER_TOOLS } from './weather.ts';

/** The 28 simulated tools, suite by suite in ToolTalk's order. */
export const TOOLTALK_TOOLS: readonly SimTool[] = [...ACCOUNT_TOOLS, ...ALARM_TOOLS, ...CALENDAR_TOOLS, ...EMAIL_TOOLS, ...MESSAGE_TOOLS, ...REMINDER_TOOLS, ...WEATHER_TOOLS];

export const TOOLS_BY_NAME: ReadonlyMap<string, SimTool> = new Map(TOOLTALK_TOOLS.map((tool) => [tool.name, tool]));
