import { cpSync, mkdtempSync, rmSync, writeFileSync, readFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { UserError } from '../core/errors.ts';
import { ToolSpec } from '../core/records.ts';
import { DEFAULT_DATABASES_DIR, TOOLTALK_TOOLS, createWorld, loadDatabases, toolTalkSpecs, type ToolTalkWorld } from '../stages/tooltalk/index.ts';

const databases = loadDatabases(DEFAULT_DATABASES_DIR);
const NOW = '2023-09-11 13:20:00';

function world(options: { user?: Parameters<ToolTalkWorld['reset']>[0]['user']; overlay?: Parameters<typeof createWorld>[0]['overlay'] } = {}): ToolTalkWorld {
  const w = createWorld({ databases, overlay: options.overlay });
  w.reset({ timestamp: NOW, user: options.user });
  return w;
}
const justin = { username: 'justinkool', session_token: '98a5a87a-7714-b404' };

describe('ToolTalk tool documentation', () => {
  it('has the 28 tools of the 7 suites, each a valid ToolSpec without the executor-supplied session token', () => {
    const specs = toolTalkSpecs();
    expect(specs).toHaveLength(28);
    expect(new Set(specs.map((s) => s.plugin))).toEqual(new Set(['AccountTools', 'Alarm', 'Calendar', 'Email', 'Messages', 'Reminder', 'Weather']));
    for (const spec of specs) {
      expect(ToolSpec.parse(spec)).toEqual(spec);
      expect(spec.parameters.properties).not.toHaveProperty('session_token');
    }
    const sendEmail = specs.find((s) => s.name === 'SendEmail')!;
    expect(sendEmail.parameters.required).toEqual(['to', 'subject', 'body']);
    expect(sendEmail.parameters.properties.to).toMatchObject({ type: 'array', items: { type: 'string' } });
    expect(sendEmail.isAction).toBe(true);
    expect(specs.filter((s) => s.isAction).map((s) => s.name).sort()).toEqual(
      ['AddAlarm', 'AddReminder', 'ChangePassword', 'CompleteReminder', 'CreateEvent', 'DeleteAccount', 'DeleteAlarm', 'DeleteEvent', 'DeleteReminder', 'LogoutUser', 'ModifyEvent', 'RegisterUser', 'ResetPassword', 'SendEmail', 'SendMessage', 'SendVerificationCode', 'UpdateAccountInformation', 'UserLogin'].sort(),
    );
    expect(TOOLTALK_TOOLS.find((t) => t.name === 'SearchInbox')!.defaults).toEqual({ match_type: 'any' });
  });
});

describe('ToolTalk world: session', () => {
  it('RegisterUser draws the first Random(489) token; one user at a time; logout clears the session', () => {
    const w = world();
    expect(w.execute({ api_name: 'GetReminders', parameters: {} })).toEqual({ response: null, exception: 'User is not logged in' });
    const registered = w.execute({ api_name: 'RegisterUser', parameters: { username: 'newbie', password: 'pw', email: 'new@bie.com', name: 'New Bie' } });
    expect(registered).toEqual({ response: { session_token: 'e149636f-d9ca-0792', user: { username: 'newbie', email: 'new@bie.com', phone: null, name: 'New Bie' } }, exception: null });
    expect(w.sessionToken).toBe('e149636f-d9ca-0792');
    expect(w.execute({ api_name: 'UserLogin', parameters: { username: 'justinkool', password: 'justforkicks123' } })).toEqual({
      response: null,
      exception: 'Only one user can be logged in at a time. Current user is newbie.',
    });
    expect(w.execute({ api_name: 'LogoutUser', parameters: {} })).toEqual({ response: { status: 'success' }, exception: null });
    expect(w.sessionToken).toBeNull();
    // UserLogin has its own generator: its first token is the same first draw.
    expect(w.execute({ api_name: 'UserLogin', parameters: { username: 'justinkool', password: 'justforkicks123' } }).response).toEqual({ session_token: 'e149636f-d9ca-0792' });
    expect(w.execute({ api_name: 'GetAccountInformation', parameters: {} }).response).toEqual({
      user: { username: 'justinkool', email: 'justintime@fmail.com', phone: '123-456-7890', name: 'Justin Kool' },
    });
  });

  it('the world supplies its own session token, whatever the call carries', () => {
    const w = world({ user: justin });
    const result = w.execute({ api_name: 'AddReminder', parameters: { session_token: 'forged', task: 'Call mom' } });
    expect(result).toEqual({ response: { reminder_id: '5b-dd80' }, exception: null });
  });

  it('reset restores the initial databases and restarts every generator', () => {
    const w = world({ user: justin });
    expect(w.execute({ api_name: 'AddReminder', parameters: { task: 'a' } }).response).toEqual({ reminder_id: '5b-dd80' });
    expect(w.execute({ api_name: 'AddReminder', parameters: { task: 'b' } }).response).toEqual({ reminder_id: '20-d9ca' });
    expect(w.execute({ api_name: 'AddAlarm', parameters: { time: '07:00:00' } }).response).toEqual({ alarm_id: '5bff-dd80' });
    w.reset({ timestamp: NOW, user: justin });
    const reminders = w.execute({ api_name: 'GetReminders', parameters: {} }).response!.reminders as { task: string }[];
    expect(reminders.map((r) => r.task)).not.toContain('a');
    expect(w.execute({ api_name: 'AddReminder', parameters: { task: 'c' } }).response).toEqual({ reminder_id: '5b-dd80' });
  });

  it('a verification code in the conversation user lets ResetPassword succeed; a wrong one fails in ToolTalk words', () => {
    const w = world({ user: { username: 'justinkool', verification_code: '123456' } });
    expect(w.execute({ api_name: 'ResetPassword', parameters: { username: 'justinkool', verification_code: '000000', new_password: 'x' } }).exception).toBe('The verification code is incorrect.');
    expect(w.execute({ api_name: 'ResetPassword', parameters: { username: 'justinkool', verification_code: '123456', new_password: 'x' } }).response).toEqual({ status: 'success' });
  });
});

describe('ToolTalk world: failures in the released shape and wording', () => {
  const w = world({ user: justin });
  it.each([
    ['AddAlarm', { time: '25:00' }, "time data '25:00' does not match format '%H:%M:%S'"],
    ['AddAlarm', { time: '07:00:00 am' }, 'unconverted data remains:  am'],
    ['AddReminder', { task: 't', due_date: 'tomorrow' }, 'Invalid due_date: tomorrow'],
    ['AddReminder', { task: 't', due_date: 5 }, 'strptime() argument 1 must be str, not int'],
    ['CreateEvent', { name: 'Walk', event_type: 'event', start_time: '2023-09-10 10:00:00', end_time: '2023-09-10 11:00:00' }, 'Start time and end time must be in the future.'],
    ['CreateEvent', { name: 'Sync', event_type: 'meeting', start_time: '2023-09-12 10:00:00', end_time: '2023-09-12 11:00:00' }, 'Meeting must have attendees.'],
    ['CreateEvent', { name: 'X', event_type: 'party', start_time: '2023-09-12 10:00:00', end_time: '2023-09-12 11:00:00' }, 'Event type party not supported.'],
    ['DeleteAlarm', { alarm_id: 'ffff-ffff' }, 'Alarm ffff-ffff not found.'],
    ['SendEmail', { to: ['not-an-address'], subject: 's', body: 'b' }, 'not-an-address is not a valid email address.'],
    ['SendMessage', { receiver: 'mstein', message: '' }, 'Message cannot be empty.'],
    ['SearchMessages', {}, 'At least one of query, sender, start_date, end_date must be provided.'],
    ['SearchMessages', { query: 'x', match_type: 'some' }, 'match_type must be either "any" or "all".'],
    ['HistoricWeather', { location: ' Atlantis ', month: 'May' }, 'Location atlantis not found in database'],
    ['ChangePassword', { old_password: 'nope', new_password: 'x' }, 'The old password is incorrect.'],
    ['AddAlarm', { time: '07:00:00', snooze: true }, "AddAlarm.call() got an unexpected keyword argument 'snooze'"],
    ['CreateEvent', { name: 'x' }, "CreateEvent.call() missing 3 required positional arguments: 'event_type', 'start_time', and 'end_time'"],
    ['ResetPassword', { username: 'justinkool' }, "ResetPassword.call() missing 2 required positional arguments: 'verification_code' and 'new_password'"],
    ['NoSuchTool', {}, 'API NoSuchTool not found'],
  ])('%s %j → %s', (api_name, parameters, exception) => {
    expect(w.execute({ api_name, parameters })).toEqual({ response: null, exception });
  });

  it('unparsed parameters, and a weather date the database lacks (Python KeyError of a date)', () => {
    expect(w.execute({ api_name: 'SendMessage', parameters: null })).toEqual({ response: null, exception: 'Failed to parse API call' });
    const late = createWorld({ databases });
    late.reset({ timestamp: '2030-01-01 00:00:00' });
    expect(late.execute({ api_name: 'CurrentWeather', parameters: { location: 'London' } })).toEqual({ response: null, exception: 'datetime.date(2030, 1, 1)' });
  });

  it('validateCall gives the signature message without running the tool', () => {
    const fresh = world({ user: justin });
    expect(fresh.validateCall({ api_name: 'SendEmail', parameters: { to: ['a@b.c'], subject: 's' } })).toBe("SendEmail.call() missing 1 required positional argument: 'body'");
    expect(fresh.validateCall({ api_name: 'SendEmail', parameters: { to: ['a@b.c'], subject: 's', body: 'b' } })).toBeNull();
    expect(fresh.execute({ api_name: 'SendEmail', parameters: { to: ['a@b.c'], subject: 's', body: 'b' } }).response).toEqual({ email_id: '5b-dd80-9f8a27ab' }); // CPython: Random(489) → randint(0,0xff), randint(0,0xffff), randint(0,0xffffffff)
  });
});

describe('ToolTalk world: state', () => {
  it('ModifyEvent changes what QueryCalendar returns; the clock decides what is in the future', () => {
    const w = world({ user: justin });
    const created = w.execute({ api_name: 'CreateEvent', parameters: { name: 'Walk', event_type: 'event', start_time: '2023-09-11 13:20:00', end_time: '2023-09-11 14:20:00' } });
    expect(created).toEqual({ response: { event_id: 'e149636f-d9ca' }, exception: null });
    expect(w.execute({ api_name: 'ModifyEvent', parameters: { event_id: 'e149636f-d9ca', new_attendees: ['mstein'] } }).response).toEqual({ status: 'success' });
    const events = w.execute({ api_name: 'QueryCalendar', parameters: { start_time: '2023-09-11 13:00:00', end_time: '2023-09-11 13:30:00' } }).response!.events as Record<string, unknown>[];
    expect(events.find((e) => e.event_id === 'e149636f-d9ca')).toEqual({
      event_id: 'e149636f-d9ca',
      name: 'Walk',
      event_type: 'event',
      description: null,
      start_time: '2023-09-11 13:20:00',
      end_time: '2023-09-11 14:20:00',
      location: null,
      attendees: ['mstein', 'justinkool'],
    });
  });

  it('an overlay adds records for every conversation; fork leaves the original untouched', () => {
    const w = world({ user: justin, overlay: { Reminder: { justinkool: { 'aa-0001': { reminder_id: 'aa-0001', task: 'Water plants', due_date: null, status: 'pending' } } } } });
    const tasks = () => (w.execute({ api_name: 'GetReminders', parameters: {} }).response!.reminders as { task: string }[]).map((r) => r.task);
    expect(tasks()).toContain('Water plants');
    const trial = w.fork();
    expect(trial.execute({ api_name: 'DeleteReminder', parameters: { reminder_id: 'aa-0001' } }).response).toEqual({ status: 'success' });
    expect(tasks()).toContain('Water plants');
    w.reset({ timestamp: NOW, user: justin });
    expect(tasks()).toContain('Water plants');
  });

  it('a bad overlay or timestamp is a UserError naming it', () => {
    expect(() => createWorld({ databases, overlay: { Alarm: { justinkool: { x: { alarm_id: 'x' } } } } })).toThrow('overlay Alarm: "justinkool" › "x": missing key "time"');
    expect(() => createWorld({ databases }).reset({ timestamp: '11/09/2023' })).toThrow(UserError);
  });
});

describe('ToolTalk databases', () => {
  const dir = mkdtempSync(join(tmpdir(), 'toolkiln-tooltalk-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function copyWith(name: string, text: string): string {
    const target = join(dir, `${name}-${Math.random().toString(36).slice(2)}`);
    cpSync(DEFAULT_DATABASES_DIR, target, { recursive: true });
    chmodSync(target, 0o755);
    const file = join(target, `${name}.json`);
    chmodSync(file, 0o644);
    writeFileSync(file, text);
    return target;
  }

  it('invalid JSON names the file', () => {
    const target = copyWith('Alarm', '{ not json');
    expect(() => loadDatabases(target)).toThrow(new RegExp(`${join(target, 'Alarm.json').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: not valid JSON`));
  });

  it('a record without a key its tools read names the file, the record and the key', () => {
    const calendar = JSON.parse(readFileSync(join(DEFAULT_DATABASES_DIR, 'Calendar.json'), 'utf8'));
    delete calendar.justinkool['5480d946-2381'].start_time;
    const target = copyWith('Calendar', JSON.stringify(calendar));
    expect(() => loadDatabases(target)).toThrow(`${join(target, 'Calendar.json')}: "justinkool" › "5480d946-2381": missing key "start_time"`);
  });

  it('a bad date, an account without session_token and a missing file are UserErrors', () => {
    const email = JSON.parse(readFileSync(join(DEFAULT_DATABASES_DIR, 'Email.json'), 'utf8'));
    const [owner] = Object.entries(email).find(([, records]) => Object.keys(records as object).length > 0)!;
    const [id] = Object.keys(email[owner]);
    email[owner][id].date = '2023-13-01 00:00:00';
    expect(() => loadDatabases(copyWith('Email', JSON.stringify(email)))).toThrow(`"${owner}" › "${id}": key "date" holds "2023-13-01 00:00:00"`);
    const account = JSON.parse(readFileSync(join(DEFAULT_DATABASES_DIR, 'Account.json'), 'utf8'));
    delete account.mstein.session_token;
    expect(() => loadDatabases(copyWith('Account', JSON.stringify(account)))).toThrow('account "mstein": missing key "session_token"');
    expect(() => loadDatabases(join(dir, 'nowhere'))).toThrow(UserError);
  });
});
