import type { Json } from '../../../core/records.ts';
import { PyException, hex, pyStr, pyTruthy, pyTypeName, strptime } from '../python.ts';
import { copyJson, lookup, ownTable, userOf, type Args, type JsonObject, type SimTool } from '../tool.ts';

// ToolTalk's Calendar suite (src/tooltalk/apis/calendar.py).

const PLUGIN = 'Calendar';
const DATETIME = '%Y-%m-%d %H:%M:%S';
const EVENT_TYPES: Json[] = ['meeting', 'event'];

/** `attendees + [username]` unless the user is already among them (`in` on a list). */
function withOwner(attendees: Json, username: string): Json {
  if (typeof attendees === 'string') {
    if (attendees.includes(username)) return attendees;
    throw new PyException('can only concatenate str (not "list") to str');
  }
  if (!Array.isArray(attendees)) {
    if (attendees === null || typeof attendees !== 'object') throw new PyException(`argument of type '${pyTypeName(attendees)}' is not iterable`);
    if (username in attendees) return attendees;
    throw new PyException("unsupported operand type(s) for +: 'dict' and 'list'");
  }
  return attendees.includes(username) ? attendees : [...attendees, username];
}

/** Both times parse, start <= end, neither before now. */
function checkRange(now: number, startTime: Json, endTime: Json): void {
  const start = strptime(startTime, DATETIME).ms;
  const end = strptime(endTime, DATETIME).ms;
  if (start > end) throw new PyException('Start time must be before end time.');
  if (start < now || end < now) throw new PyException('Start time and end time must be in the future.');
}

function eventOf(table: Map<string, Map<string, JsonObject>>, username: string, eventId: Json): JsonObject {
  const event = table.get(username) && lookup(table.get(username)!, eventId);
  if (!event) throw new PyException(`Event ${pyStr(eventId)} not found.`);
  return event;
}

export const CreateEvent: SimTool = {
  name: 'CreateEvent',
  plugin: PLUGIN,
  description: "Adds events to a user's calendar.",
  parameters: {
    // ToolTalk's own documentation puts this enum on `name`, where no released conversation keeps it
    // (names are "Justin:Alicia", "Dinner"…): it belongs to event_type, as the code checks. Moved, so
    // every CreateEvent call is valid against the schema the model is shown.
    name: { type: 'string', description: 'The name of the event.', required: true },
    event_type: { type: 'string', enum: ['meeting', 'event'], description: "The type of the event, either 'meeting' or 'event'.", required: true },
    description: { type: 'string', description: 'The description of the event, no more than 1024 characters.', required: false },
    start_time: { type: 'string', description: 'The start time of the event, in the pattern of %Y-%m-%d %H:%M:%S', required: true },
    end_time: { type: 'string', description: 'The end time of the event, in the pattern of %Y-%m-%d %H:%M:%S.', required: true },
    location: { type: 'string', description: 'Optional, the location where the event is to be held.', required: false },
    attendees: { type: 'array', items: { type: 'string' }, description: 'The attendees as an array of usernames. Required if event type is meeting.', required: false },
  },
  output: { event_id: { type: 'string', description: 'event id on success. None on failure.' } },
  isAction: true,
  requiresAuth: true,
  call(ctx, { session_token, name, event_type, start_time, end_time, description, location, attendees }: Args) {
    if (!EVENT_TYPES.includes(event_type)) throw new PyException(`Event type ${pyStr(event_type)} not supported.`);
    if (event_type === 'meeting' && !pyTruthy(attendees)) throw new PyException('Meeting must have attendees.');
    const username = userOf(ctx, session_token).username as string;
    checkRange(ctx.now.ms, start_time, end_time);
    const allAttendees = attendees === null ? null : withOwner(attendees, username);
    const eventId = `${hex(ctx.random.randint(0, 0xffffffff), 8)}-${hex(ctx.random.randint(0, 0xffff), 4)}`;
    ownTable(ctx.databases.Calendar, username).set(eventId, {
      event_id: eventId,
      name,
      event_type,
      description,
      start_time,
      end_time,
      location,
      attendees: allAttendees,
    });
    return { event_id: eventId };
  },
};

export const DeleteEvent: SimTool = {
  name: 'DeleteEvent',
  plugin: PLUGIN,
  description: "Deletes events from a user's calendar.",
  parameters: { event_id: { type: 'string', description: 'The id of the event to be deleted.', required: true } },
  output: { status: { type: 'string', description: 'success or failed' } },
  isAction: true,
  requiresAuth: true,
  call(ctx, { session_token, event_id }: Args) {
    const username = userOf(ctx, session_token).username as string;
    eventOf(ctx.databases.Calendar, username, event_id);
    ctx.databases.Calendar.get(username)!.delete(event_id as string);
    return { status: 'success' };
  },
};

export const ModifyEvent: SimTool = {
  name: 'ModifyEvent',
  plugin: PLUGIN,
  description: 'Allows modification of an existing event.',
  parameters: {
    event_id: { type: 'string', description: 'The id of the event to be modified.', required: true },
    new_name: { type: 'string', description: 'The new name of the event.', required: false },
    new_start_time: { type: 'string', description: 'The new start time of the event.', required: false },
    new_end_time: { type: 'string', description: 'The new end time of the event. Required if new_start_time is provided.', required: false },
    new_description: { type: 'string', description: 'The new description of the event.', required: false },
    new_location: { type: 'string', description: 'The new location of the event.', required: false },
    new_attendees: { type: 'array', items: { type: 'string' }, description: 'The new attendees of the event. Array of usernames.', required: false },
  },
  output: { status: { type: 'string', description: 'success or failed' } },
  isAction: true,
  requiresAuth: true,
  // Fields change one by one as in ToolTalk: a later failure leaves the earlier changes in place.
  call(ctx, { session_token, event_id, new_name, new_start_time, new_end_time, new_description, new_location, new_attendees }: Args) {
    const username = userOf(ctx, session_token).username as string;
    const event = eventOf(ctx.databases.Calendar, username, event_id);
    if (new_name !== null) event.name = new_name;
    if (new_start_time !== null) {
      if (new_end_time === null) throw new PyException('new_end_time must be provided if new_start_time is provided.');
      checkRange(ctx.now.ms, new_start_time, new_end_time);
      event.start_time = new_start_time;
    }
    if (new_end_time !== null) {
      if (new_start_time === null) throw new PyException('new_start_time must be provided if new_end_time is provided.');
      event.end_time = new_end_time;
    }
    if (new_description !== null) event.description = new_description;
    if (new_location !== null) event.location = new_location;
    if (new_attendees !== null) event.attendees = withOwner(new_attendees, username);
    return { status: 'success' };
  },
};

export const QueryCalendar: SimTool = {
  name: 'QueryCalendar',
  plugin: PLUGIN,
  description: 'Query for events that occur in a time range.',
  parameters: {
    start_time: { type: 'string', description: 'The start time of the meeting, in the pattern of %Y-%m-%d %H:%M:%S', required: true },
    end_time: { type: 'string', description: 'The end time of the meeting, in the pattern of %Y-%m-%d %H:%M:%S', required: true },
  },
  output: {
    events: {
      type: 'array',
      item: {
        type: 'object',
        properties: {
          event_id: { type: 'string' },
          name: { type: 'string' },
          description: { type: 'string' },
          start_time: { type: 'string' },
          end_time: { type: 'string' },
          location: { type: 'string' },
          attendees: { type: 'array', item: { type: 'string' } },
        },
      },
      description: 'list of events starting or ending in the time range',
    },
  },
  isAction: false,
  requiresAuth: true,
  call(ctx, { session_token, start_time, end_time }: Args) {
    const username = userOf(ctx, session_token).username as string;
    const events = ctx.databases.Calendar.get(username);
    if (!events) throw new PyException(`User ${username} has no events.`);
    const start = strptime(start_time, DATETIME).ms;
    const end = strptime(end_time, DATETIME).ms;
    if (start > end) throw new PyException('Start time must be before end time.');
    const found: JsonObject[] = [];
    for (const event of events.values()) {
      const eventStart = strptime(event.start_time, DATETIME).ms;
      const eventEnd = strptime(event.end_time, DATETIME).ms;
      if ((start <= eventStart && eventStart <= end) || (start <= eventEnd && eventEnd <= end) || (eventStart <= start && eventEnd >= end)) {
        found.push(copyJson(event));
      }
    }
    return { events: found };
  },
};

export const CALENDAR_TOOLS: readonly SimTool[] = [CreateEvent, DeleteEvent, ModifyEvent, QueryCalendar];
