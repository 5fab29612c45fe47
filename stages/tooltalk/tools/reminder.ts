import { PyException, hex, keyError, pyStr, strptime } from '../python.ts';
import { copyJson, lookup, ownTable, userOf, type Args, type JsonObject, type SimTool, type ToolContext } from '../tool.ts';

// ToolTalk's Reminder suite (src/tooltalk/apis/reminder.py).

const PLUGIN = 'Reminder';

/** `database[username][reminder_id]`: a user without reminders is a KeyError, as in ToolTalk. */
function reminderOf(ctx: ToolContext, sessionToken: Args[string], reminderId: Args[string]): { reminders: Map<string, JsonObject>; reminder: JsonObject } {
  const username = userOf(ctx, sessionToken).username as string;
  const reminders = ctx.databases.Reminder.get(username);
  if (!reminders) throw keyError(username);
  const reminder = lookup(reminders, reminderId);
  if (!reminder) throw new PyException(`Reminder ${pyStr(reminderId)} not found in database`);
  return { reminders, reminder };
}

export const AddReminder: SimTool = {
  name: 'AddReminder',
  plugin: PLUGIN,
  description: 'Add a reminder.',
  parameters: {
    task: { type: 'string', description: 'The task to be reminded of.', required: true },
    due_date: { type: 'string', description: 'Optional date the task is due, in the format of %Y-%m-%d %H:%M:%S.', required: false },
  },
  output: { reminder_id: { type: 'string', description: 'reminder_id on success' } },
  isAction: true,
  requiresAuth: true,
  call(ctx, { session_token, task, due_date }: Args) {
    const username = userOf(ctx, session_token).username as string;
    const reminders = ownTable(ctx.databases.Reminder, username);
    if (due_date !== null) {
      try {
        strptime(due_date, '%Y-%m-%d %H:%M:%S');
      } catch (error) {
        if (error instanceof PyException && error.pyType === 'ValueError') throw new PyException(`Invalid due_date: ${pyStr(due_date)}`);
        throw error;
      }
    }
    const reminderId = `${hex(ctx.random.randint(0, 0xff), 2)}-${hex(ctx.random.randint(0, 0xffff), 4)}`;
    reminders.set(reminderId, { reminder_id: reminderId, task, due_date, status: 'pending' });
    return { reminder_id: reminderId };
  },
};

export const CompleteReminder: SimTool = {
  name: 'CompleteReminder',
  plugin: PLUGIN,
  description: 'Complete a reminder.',
  parameters: { reminder_id: { type: 'string', description: 'The reminder_id of the reminder to be deleted.', required: true } },
  output: { status: { type: 'string', description: 'success or failure' } },
  isAction: true,
  requiresAuth: true,
  call(ctx, { session_token, reminder_id }: Args) {
    const { reminder } = reminderOf(ctx, session_token, reminder_id);
    if (reminder.status === 'complete') throw new PyException(`Reminder ${pyStr(reminder_id)} already completed`);
    reminder.status = 'complete';
    return { status: 'success' };
  },
};

export const DeleteReminder: SimTool = {
  name: 'DeleteReminder',
  plugin: PLUGIN,
  description: 'Delete a reminder.',
  parameters: { reminder_id: { type: 'string', description: 'The reminder_id of the reminder to be deleted.', required: true } },
  output: { status: { type: 'string', description: 'success or failure' } },
  isAction: true,
  requiresAuth: true,
  call(ctx, { session_token, reminder_id }: Args) {
    const { reminders } = reminderOf(ctx, session_token, reminder_id);
    reminders.delete(reminder_id as string);
    return { status: 'success' };
  },
};

export const GetReminders: SimTool = {
  name: 'GetReminders',
  plugin: PLUGIN,
  description: 'Get a list of reminders.',
  parameters: {},
  output: {
    reminders: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          reminder_id: { type: 'string', description: 'reminder_id on success' },
          task: { type: 'string', description: 'The task to be reminded of.' },
          due_date: { type: 'string', description: 'Optional date the task is due, in the format of %Y-%m-%d %H:%M:%S.' },
          status: { type: 'string', enum: ['pending', 'completed'], description: "The status of the reminder, either 'pending' or 'completed'." },
        },
      },
      description: 'List of reminders for user.',
    },
  },
  isAction: false,
  requiresAuth: true,
  call(ctx, { session_token }: Args) {
    const username = userOf(ctx, session_token).username as string;
    return { reminders: [...(ctx.databases.Reminder.get(username)?.values() ?? [])].map(copyJson) };
  },
};

export const REMINDER_TOOLS: readonly SimTool[] = [AddReminder, GetReminders, DeleteReminder, CompleteReminder];
