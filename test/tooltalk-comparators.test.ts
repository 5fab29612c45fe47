import { describe, expect, it } from 'vitest';
import { lexicalEmbedder } from '../core/embed/lexical.ts';
import type { Embedder } from '../core/embed/types.ts';
import type { Json } from '../core/records.ts';
import { createComparator, type CallRecord } from '../stages/tooltalk/index.ts';

function call(api_name: string, parameters: Record<string, Json>, response: Record<string, Json> | null = { status: 'success' }, exception: string | null = null): CallRecord {
  return { request: { api_name, parameters }, response, exception };
}

const comparator = createComparator({ embedder: lexicalEmbedder() });
const LATE = 'Hey, I will be 10 minutes late to the meeting.';

describe('ToolTalk comparators: action tools', () => {
  it('email recipients compare as a set, in any order', async () => {
    const truth = call('SendEmail', { to: ['a@x.com', 'b@x.com'], subject: 'Lunch', body: LATE }, { email_id: '5b-dd80-9f8a27ab' });
    const reordered = call('SendEmail', { to: ['b@x.com', 'a@x.com'], subject: 'Lunch', body: LATE }, { email_id: 'other' });
    expect(await comparator.compare(reordered, truth)).toEqual({ match: true });
    const fewer = call('SendEmail', { to: ['a@x.com'], subject: 'Lunch', body: LATE }, { email_id: 'other' });
    expect(await comparator.compare(fewer, truth)).toEqual({ match: false, reason: 'to: different set' });
  });

  it('free text passes at or above the threshold and fails below it (lexical embedder)', async () => {
    const truth = call('SendMessage', { receiver: 'mstein', message: LATE }, { message_id: 'x' });
    const close = call('SendMessage', { receiver: 'mstein', message: 'Hey, I will be ten minutes late to the meeting.' }, { message_id: 'y' });
    const loose = call('SendMessage', { receiver: 'mstein', message: 'I am running about 10 minutes late for our meeting.' }, { message_id: 'y' });
    expect(await comparator.compare(close, truth)).toEqual({ match: true }); // cosine ≈ 0.86 ≥ 0.8
    const verdict = await comparator.compare(loose, truth); // cosine ≈ 0.67 < 0.8
    expect(verdict.match).toBe(false);
    expect(verdict.reason).toMatch(/^message: similarity 0\.\d+ below 0\.8$/);
    // A configured threshold replaces the defaults.
    expect(await createComparator({ embedder: lexicalEmbedder(), threshold: 0.6 }).compare(loose, truth)).toEqual({ match: true });
    expect(await createComparator({ embedder: lexicalEmbedder(), thresholds: { 'SendMessage.message': 0.95 } }).compare(close, truth)).toMatchObject({ match: false });
  });

  it('the receiver of a message must match', async () => {
    const truth = call('SendMessage', { receiver: 'mstein', message: LATE }, { message_id: 'x' });
    expect(await comparator.compare(call('SendMessage', { receiver: 'decture', message: LATE }, { message_id: 'x' }), truth)).toEqual({ match: false, reason: 'receiver: "decture", not "mstein"' });
  });

  it('an optional argument absent from the ground truth is ignored; one present must be given', async () => {
    const truth = call('CreateEvent', { name: 'Walk', event_type: 'event', start_time: '2023-09-11 13:20:00', end_time: '2023-09-11 14:20:00' }, { event_id: 'e149636f-d9ca' });
    const extra = call('CreateEvent', { name: 'Walk', event_type: 'event', start_time: '2023-09-11 13:20:00', end_time: '2023-09-11 14:20:00', description: 'A walk', location: 'Park' }, { event_id: 'other' });
    expect(await comparator.compare(extra, truth)).toEqual({ match: true });
    const withLocation = call('CreateEvent', { ...truth.request.parameters!, location: 'Park' }, { event_id: 'x' });
    expect(await comparator.compare(truth, withLocation)).toEqual({ match: false, reason: 'argument location missing' });
    expect(await comparator.compare(call('CreateEvent', { ...truth.request.parameters!, location: null }, { event_id: 'x' }), withLocation)).toEqual({ match: false, reason: 'argument location is null' });
  });

  it('attendees compare as a set; a reminder due date compares by day', async () => {
    const truth = call('ModifyEvent', { event_id: 'e1', new_attendees: ['mstein', 'justinkool'] });
    expect(await comparator.compare(call('ModifyEvent', { event_id: 'e1', new_attendees: ['justinkool', 'mstein'] }), truth)).toEqual({ match: true });
    const reminder = call('AddReminder', { task: 'Call mom', due_date: '2023-09-12 09:00:00' }, { reminder_id: '5b-dd80' });
    expect(await comparator.compare(call('AddReminder', { task: 'Call mom', due_date: '2023-09-12 18:00:00' }, { reminder_id: 'x' }), reminder)).toEqual({ match: true });
    expect(await comparator.compare(call('AddReminder', { task: 'Call mom', due_date: '2023-09-13 09:00:00' }, { reminder_id: 'x' }), reminder)).toEqual({ match: false, reason: 'due_date: different day' });
  });

  it('a different exception, tool or session fails; other action tools need an equal response', async () => {
    const truth = call('DeleteAlarm', { session_token: 's1', alarm_id: '5bff-dd80' });
    expect((await comparator.compare(call('DeleteAlarm', { alarm_id: '5bff-dd80' }, null, 'Alarm 5bff-dd80 not found.'), truth)).match).toBe(false);
    expect((await comparator.compare(call('DeleteEvent', { event_id: '5bff-dd80' }), truth)).match).toBe(false);
    expect((await comparator.compare(call('DeleteAlarm', { session_token: 's2', alarm_id: '5bff-dd80' }), truth)).reason).toBe('made under another session');
    expect(await comparator.compare(call('DeleteAlarm', { alarm_id: '5bff-dd80' }), truth)).toEqual({ match: true }); // the executor supplies the session
  });
});

describe('ToolTalk comparators: non-action tools compare by results', () => {
  const events = (...ids: string[]) => ({ events: ids.map((event_id) => ({ event_id })) });

  it('a search matches when it returns every ground-truth record, whatever its arguments', async () => {
    const truth = call('QueryCalendar', { start_time: '2023-09-11 13:00:00', end_time: '2023-09-11 14:00:00' }, events('a', 'b'));
    expect(await comparator.compare(call('QueryCalendar', { start_time: '2023-09-11 00:00:00', end_time: '2023-09-11 23:59:59' }, events('c', 'b', 'a')), truth)).toEqual({ match: true });
    expect(await comparator.compare(call('QueryCalendar', truth.request.parameters!, events('a')), truth)).toEqual({ match: false, reason: 'events missing "b"' });
  });

  it('other queries need the same response', async () => {
    const truth = call('CurrentWeather', { location: 'London' }, { weather: { date: '2023-09-11', high: 70 } });
    expect(await comparator.compare(call('CurrentWeather', { location: 'London' }, { weather: { date: '2023-09-11', high: 70 } }), truth)).toEqual({ match: true });
    expect(await comparator.compare(call('CurrentWeather', { location: 'London' }, { weather: { date: '2023-09-11', high: 71 } }), truth)).toEqual({ match: false, reason: 'different response' });
  });
});

describe('ToolTalk comparators: embedder', () => {
  it('uses the given Embedder for differing texts only, and defaults to the lexical one', async () => {
    const seen: string[][] = [];
    const fake: Embedder = {
      id: 'fake',
      async embed(texts) {
        seen.push(texts);
        return texts.map(() => [1, 0]);
      },
    };
    const truth = call('AddReminder', { task: 'Call mom' }, { reminder_id: 'x' });
    expect(await createComparator({ embedder: fake }).compare(call('AddReminder', { task: 'Ring mother' }, { reminder_id: 'y' }), truth)).toEqual({ match: true });
    expect(await createComparator({ embedder: fake }).compare(call('AddReminder', { task: 'Call mom' }, { reminder_id: 'y' }), truth)).toEqual({ match: true });
    expect(seen).toEqual([['Ring mother', 'Call mom']]);
    expect(await createComparator().compare(call('AddReminder', { task: 'Ring mother' }, { reminder_id: 'y' }), truth)).toMatchObject({ match: false });
  });
});
