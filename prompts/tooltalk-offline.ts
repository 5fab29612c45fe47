import type { Json } from '../core/records.ts';
import type { Rng } from '../core/rng.ts';

/**
 * The offline (template) author of ToolTalk conversations: from the scenario's tools and the
 * database records the prompt shows (the user's alarms, events, emails, messages, reminders, other
 * users, the weather on file), it writes user and assistant turns whose calls succeed when the
 * simulators run them and whose arguments the user's words state (ids come from an earlier call's
 * result, or from the user in an easy conversation). Plainly template text.
 */

export interface Account {
  username: string;
  email: string;
  phone: string;
  name: string;
  password: string;
}

/** What the drafting prompt shows about the world (the offline author reads the same). */
export interface DraftWorld {
  category: 'easy' | 'tooltalk';
  requiredApi: string;
  /** The scenario's tools, in the order it uses them. */
  apis: string[];
  user: Account;
  /** The user starts logged in (metadata carries a session); false for login, sign-up and password-reset scenarios. */
  loggedIn: boolean;
  /** The user signs up: the account does not exist yet. */
  newUser: boolean;
  /** A verification code the user holds (password-reset scenarios). */
  verificationCode: string | null;
  location: string;
  timestamp: string;
  /** The user's own records, by database (id → record). */
  records: { Alarm: Record<string, Json>; Calendar: Record<string, Json>; Email: Record<string, Json>; Message: Record<string, Json>; Reminder: Record<string, Json> };
  otherUsers: { username: string; email: string }[];
  /** Cities whose weather is on file for today and the next three days. */
  weatherCities: string[];
  /** City → months of historic weather on file. */
  historic: Record<string, string[]>;
}

export interface DraftCall {
  api_name: string;
  parameters: Record<string, Json>;
  expect: 'success' | 'failure';
}
export interface DraftTurn {
  role: 'user' | 'assistant';
  text: string;
  calls: DraftCall[];
}
export interface Draft {
  turns: DraftTurn[];
  /** Records the conversation needs that the databases lack: `{ Reminder: { <username>: { <id>: record } } }`. */
  overlay: Record<string, Record<string, Record<string, Json>>>;
}

/** Tools that need no login. */
const OPEN_TOOLS = new Set(['UserLogin', 'RegisterUser', 'SendVerificationCode', 'ResetPassword', 'CurrentWeather', 'ForecastWeather', 'HistoricWeather']);
const LOGGED_OUT_TOOLS = new Set(['UserLogin', 'RegisterUser']);
const FINAL_TOOLS = new Set(['LogoutUser', 'DeleteAccount']);
const TOPICS = ['budget review', 'team lunch', 'dentist visit', 'project kickoff', 'book club', 'yoga class', 'quarterly planning', 'garden party'];
const TASKS = ['pay the electricity bill', 'call the plumber', 'buy groceries', 'renew the passport', 'water the plants', 'book the flights'];
const WORDS = ['sunny', 'purple', 'river', 'falcon', 'maple', 'orbit', 'lantern', 'cedar'];

interface State {
  loggedIn: boolean;
  password: string;
  overlay: Draft['overlay'];
}

interface Step {
  user: string;
  calls: DraftCall[];
  reply: string;
}

function call(api_name: string, parameters: Record<string, Json>): DraftCall {
  return { api_name, parameters, expect: 'success' };
}

/** "18:30:00" → "6:30 PM". */
export function clock12(time: string): string {
  const [h, m] = time.split(':').map(Number);
  return `${((h + 11) % 12) + 1}:${String(m).padStart(2, '0')} ${h < 12 ? 'AM' : 'PM'}`;
}

function dayAfter(timestamp: string, days: number): string {
  const date = new Date(`${timestamp.slice(0, 10)}T00:00:00Z`);
  date.setUTCDate(date.getUTCDate() + days);
  return date.toISOString().slice(0, 10);
}

function pad(n: number): string {
  return String(n).padStart(2, '0');
}

function hexId(rng: Rng, lengths: number[]): string {
  return lengths.map((n) => Array.from({ length: n }, () => '0123456789abcdef'[rng.int(0, 15)]).join('')).join('-');
}

/** A record a call deletes is gone for the rest of the conversation. */
function forget(world: DraftWorld, database: keyof DraftWorld['records'], id: Json): void {
  delete world.records[database][String(id)];
}

function recordsOf(world: DraftWorld, database: keyof DraftWorld['records']): Record<string, Json>[] {
  return Object.values(world.records[database]) as Record<string, Json>[];
}

/** A record the user needs but lacks goes into the overlay (and into the world's view of the user's records). */
function ensureRecord(world: DraftWorld, state: State, database: keyof DraftWorld['records'], make: () => Record<string, Json>, fits: (r: Record<string, Json>) => boolean): Record<string, Json> {
  const found = recordsOf(world, database).find(fits);
  if (found) return found;
  const record = make();
  const id = String(record[Object.keys(record)[0]]);
  ((state.overlay[database] ??= {})[world.user.username] ??= {})[id] = record;
  world.records[database][id] = record;
  return record;
}

/** A keyword of a text the search tools will find: its longest word. */
function keywordOf(text: string): string {
  return text.split(/[^A-Za-z]+/).filter((w) => w.length > 3).sort((a, b) => b.length - a.length || (a < b ? -1 : 1))[0] ?? text.split(/\s+/)[0];
}

type Maker = (world: DraftWorld, state: State, rng: Rng) => Step | null;

const MAKERS: Record<string, Maker> = {
  UserLogin: (w, s) => (s.loggedIn ? null : (s.loggedIn = true, { user: `Please log me in. My username is ${w.user.username} and my password is ${s.password}.`, calls: [call('UserLogin', { username: w.user.username, password: s.password })], reply: 'You are logged in.' })),
  RegisterUser: (w, s) => {
    if (s.loggedIn || !w.newUser) return null;
    s.loggedIn = true;
    const u = w.user;
    return {
      user: `I'd like to open an account. Username ${u.username}, password ${u.password}, email ${u.email}, name ${u.name}, phone ${u.phone}.`,
      calls: [call('RegisterUser', { username: u.username, password: u.password, email: u.email, name: u.name, phone: u.phone })],
      reply: 'Your account is ready and you are logged in.',
    };
  },
  SendVerificationCode: (w) => (w.newUser ? null : { user: `I forgot my password. My username is ${w.user.username} and my email is ${w.user.email}.`, calls: [call('SendVerificationCode', { username: w.user.username, email: w.user.email })], reply: 'I sent a verification code to your email.' }),
  ResetPassword: (w, s, rng) => {
    if (!w.verificationCode || w.newUser) return null;
    const next = `${rng.pick(WORDS)}-${rng.int(100, 999)}`;
    s.password = next;
    return { user: `I received the verification code ${w.verificationCode}. Please reset the password of ${w.user.username} to ${next}.`, calls: [call('ResetPassword', { username: w.user.username, verification_code: w.verificationCode, new_password: next })], reply: 'Your password has been reset.' };
  },
  GetAccountInformation: () => ({ user: 'Can you show me my account details?', calls: [call('GetAccountInformation', {})], reply: 'Here are your account details.' }),
  LogoutUser: (_w, s) => (s.loggedIn = false, { user: "That's all for now, please log me out.", calls: [call('LogoutUser', {})], reply: 'You are logged out.' }),
  DeleteAccount: (_w, s) => (s.loggedIn = false, { user: `Please delete my account. My password is ${s.password}.`, calls: [call('DeleteAccount', { password: s.password })], reply: 'Your account has been deleted.' }),
  ChangePassword: (_w, s, rng) => {
    const next = `${rng.pick(WORDS)}${rng.int(1000, 9999)}!`;
    const step = { user: `Please change my password from ${s.password} to ${next}.`, calls: [call('ChangePassword', { old_password: s.password, new_password: next })], reply: 'Your password has been changed.' };
    s.password = next;
    return step;
  },
  QueryUser: (w, _s, rng) => {
    if (!w.otherUsers.length) return null;
    const other = rng.pick(w.otherUsers);
    return { user: `Can you look up the user ${other.username}?`, calls: [call('QueryUser', { username: other.username })], reply: `Here is what I found about ${other.username}.` };
  },
  UpdateAccountInformation: (_w, s, rng) => {
    const phone = `${rng.int(200, 999)}-${rng.int(200, 999)}-${rng.int(1000, 9999)}`;
    return { user: `Please change my phone number to ${phone}. My password is ${s.password}.`, calls: [call('UpdateAccountInformation', { password: s.password, new_phone_number: phone })], reply: 'Your phone number has been updated.' };
  },
  AddAlarm: (_w, _s, rng) => {
    const time = `${pad(rng.int(5, 21))}:${rng.pick(['00', '15', '30', '45'])}:00`;
    return { user: `Set an alarm for ${clock12(time)}.`, calls: [call('AddAlarm', { time })], reply: `Your alarm for ${clock12(time)} is set.` };
  },
  FindAlarms: () => ({ user: 'Which alarms do I have between 6:00 AM and 10:00 AM?', calls: [call('FindAlarms', { start_range: '06:00:00', end_range: '10:00:00' })], reply: 'Here are your morning alarms.' }),
  DeleteAlarm: (w, s, rng) => {
    const alarm = ensureRecord(w, s, 'Alarm', () => ({ alarm_id: hexId(rng, [4, 4]), time: `${pad(rng.int(5, 9))}:00:00` }), () => true);
    forget(w, 'Alarm', alarm.alarm_id);
    if (w.category === 'easy') return { user: `Please delete my alarm with id ${alarm.alarm_id}.`, calls: [call('DeleteAlarm', { alarm_id: alarm.alarm_id })], reply: 'The alarm is deleted.' };
    return { user: `Please delete my ${clock12(String(alarm.time))} alarm.`, calls: [call('FindAlarms', {}), call('DeleteAlarm', { alarm_id: alarm.alarm_id })], reply: `Your ${clock12(String(alarm.time))} alarm is deleted.` };
  },
  CreateEvent: (w, _s, rng) => {
    const date = dayAfter(w.timestamp, 2);
    const name = rng.pick(TOPICS);
    const hour = rng.int(9, 16);
    const other = w.otherUsers.length ? rng.pick(w.otherUsers) : null;
    const parameters: Record<string, Json> = { name, event_type: other ? 'meeting' : 'event', start_time: `${date} ${pad(hour)}:00:00`, end_time: `${date} ${pad(hour + 1)}:00:00` };
    if (other) parameters.attendees = [other.username];
    const withWhom = other ? ` with ${other.username}` : '';
    return { user: `Please put a ${parameters.event_type} called "${name}"${withWhom} on my calendar on ${date} from ${clock12(`${hour}:00`)} to ${clock12(`${hour + 1}:00`)}.`, calls: [call('CreateEvent', parameters)], reply: `"${name}" is on your calendar.` };
  },
  QueryCalendar: (w, _s, rng) => {
    const events = recordsOf(w, 'Calendar');
    const date = events.length ? String(rng.pick(events).start_time).slice(0, 10) : w.timestamp.slice(0, 10);
    return { user: `What is on my calendar on ${date}?`, calls: [call('QueryCalendar', { start_time: `${date} 00:00:00`, end_time: `${date} 23:59:59` })], reply: `Here is your calendar for ${date}.` };
  },
  DeleteEvent: (w, s, rng) => eventChange(w, s, rng, 'DeleteEvent', {}, 'cancel'),
  ModifyEvent: (w, s, rng) => {
    const place = `Room ${rng.int(100, 999)}`;
    return eventChange(w, s, rng, 'ModifyEvent', { new_location: place }, `move to ${place}`);
  },
  SendEmail: (w, _s, rng) => {
    if (!w.otherUsers.length) return null;
    const other = rng.pick(w.otherUsers);
    const topic = rng.pick(TOPICS);
    const body = `Hi, can we talk about the ${topic} this week?`;
    return { user: `Email ${other.email} with the subject "${topic}" and the text "${body}"`, calls: [call('SendEmail', { to: [other.email], subject: topic, body })], reply: 'Your email is sent.' };
  },
  SearchInbox: (w, _s, rng) => {
    const emails = recordsOf(w, 'Email');
    const word = emails.length ? keywordOf(String(rng.pick(emails).subject)) : rng.pick(TOPICS).split(' ')[0];
    return { user: `Find the emails in my inbox about "${word}".`, calls: [call('SearchInbox', { query: word })], reply: `These emails mention "${word}".` };
  },
  SendMessage: (w, _s, rng) => {
    if (!w.otherUsers.length) return null;
    const other = rng.pick(w.otherUsers);
    const message = `Are we still on for the ${rng.pick(TOPICS)}?`;
    return { user: `Send ${other.username} the message "${message}"`, calls: [call('SendMessage', { receiver: other.username, message })], reply: 'Your message is sent.' };
  },
  SearchMessages: (w, _s, rng) => {
    const messages = recordsOf(w, 'Message');
    const word = messages.length ? keywordOf(String(rng.pick(messages).message)) : rng.pick(TOPICS).split(' ')[0];
    return { user: `Find my messages about "${word}".`, calls: [call('SearchMessages', { query: word })], reply: `These messages mention "${word}".` };
  },
  AddReminder: (w, _s, rng) => {
    const task = rng.pick(TASKS);
    const date = dayAfter(w.timestamp, 3);
    return { user: `Remind me to ${task} by ${date} at 5:00 PM.`, calls: [call('AddReminder', { task, due_date: `${date} 17:00:00` })], reply: 'The reminder is set.' };
  },
  GetReminders: () => ({ user: 'What are my reminders?', calls: [call('GetReminders', {})], reply: 'Here are your reminders.' }),
  CompleteReminder: (w, s, rng) => reminderChange(w, s, rng, 'CompleteReminder', 'as done'),
  DeleteReminder: (w, s, rng) => reminderChange(w, s, rng, 'DeleteReminder', 'from my list'),
  CurrentWeather: (w) => (w.weatherCities.length ? { user: `What is the weather in ${w.weatherCities[0]} today?`, calls: [call('CurrentWeather', { location: w.weatherCities[0] })], reply: `Here is today's weather in ${w.weatherCities[0]}.` } : null),
  ForecastWeather: (w) => (w.weatherCities.length ? { user: `What is the forecast for ${w.weatherCities[0]}?`, calls: [call('ForecastWeather', { location: w.weatherCities[0] })], reply: `Here is the forecast for ${w.weatherCities[0]}.` } : null),
  HistoricWeather: (w, _s, rng) => {
    const cities = Object.keys(w.historic);
    if (!cities.length) return null;
    const city = rng.pick(cities);
    const month = rng.pick(w.historic[city]);
    return { user: `What is the weather usually like in ${city} in ${month}?`, calls: [call('HistoricWeather', { location: city, month })], reply: `Here is the usual weather in ${city} in ${month}.` };
  },
};

function eventChange(w: DraftWorld, s: State, rng: Rng, api: string, change: Record<string, Json>, what: string): Step {
  const future = `${dayAfter(w.timestamp, 4)} 15:00:00`;
  const event = ensureRecord(
    w,
    s,
    'Calendar',
    () => ({ event_id: hexId(rng, [8, 4]), name: rng.pick(TOPICS), event_type: 'event', start_time: future, end_time: `${future.slice(0, 11)}16:00:00`, location: 'Town Hall', description: 'Planned ahead.', attendees: [w.user.username] }),
    () => true,
  );
  if (api === 'DeleteEvent') forget(w, 'Calendar', event.event_id);
  const date = String(event.start_time).slice(0, 10);
  const parameters = { event_id: event.event_id, ...change };
  if (w.category === 'easy') return { user: `Please ${what === 'cancel' ? 'delete' : what} the event with id ${event.event_id}.`, calls: [call(api, parameters)], reply: 'Done.' };
  return {
    user: `Please ${what === 'cancel' ? 'cancel' : what} "${event.name}" on ${date}.`,
    calls: [call('QueryCalendar', { start_time: `${date} 00:00:00`, end_time: `${date} 23:59:59` }), call(api, parameters)],
    reply: `"${event.name}" is updated.`,
  };
}

function reminderChange(w: DraftWorld, s: State, rng: Rng, api: string, what: string): Step {
  const reminder = ensureRecord(w, s, 'Reminder', () => ({ reminder_id: hexId(rng, [2, 4]), task: rng.pick(TASKS), due_date: null, status: 'pending' }), (r) => r.status !== 'complete');
  if (api === 'DeleteReminder') forget(w, 'Reminder', reminder.reminder_id);
  else w.records.Reminder[String(reminder.reminder_id)] = { ...reminder, status: 'complete' };
  if (w.category === 'easy') return { user: `Please mark the reminder with id ${reminder.reminder_id} ${what}.`, calls: [call(api, { reminder_id: reminder.reminder_id })], reply: 'Done.' };
  return { user: `Please mark my reminder "${reminder.task}" ${what}.`, calls: [call('GetReminders', {}), call(api, { reminder_id: reminder.reminder_id })], reply: 'Done.' };
}

/** The tools in the order the author uses them: sign-in first, reset before login, log-out and deletion last. */
function plan(world: DraftWorld): string[] {
  if (world.category === 'easy') return [world.requiredApi];
  const apis = [...new Set([world.requiredApi, ...world.apis])];
  const rank = (api: string) => (api === 'ResetPassword' ? 0 : api === 'SendVerificationCode' ? 1 : LOGGED_OUT_TOOLS.has(api) ? 2 : FINAL_TOOLS.has(api) ? 4 : 3);
  const ordered = apis.sort((a, b) => rank(a) - rank(b));
  // One of log-out and deletion: after either the session is gone.
  const final = ordered.filter((api) => FINAL_TOOLS.has(api));
  return final.length > 1 ? ordered.filter((api) => !FINAL_TOOLS.has(api) || api === (final.includes(world.requiredApi) ? world.requiredApi : final[0])) : ordered;
}

/** Writes a conversation for the world the prompt describes (the offline answer of tooltalk/conversation). */
export function draftConversation(world: DraftWorld, rng: Rng): Draft {
  const view: DraftWorld = { ...world, records: structuredClone(world.records) };
  const state: State = { loggedIn: world.loggedIn, password: world.user.password, overlay: {} };
  const steps: Step[] = [];
  const calls = () => steps.reduce((n, step) => n + step.calls.length, 0);
  const take = (api: string) => {
    if (!OPEN_TOOLS.has(api) && !state.loggedIn) {
      const login = MAKERS[view.newUser ? 'RegisterUser' : 'UserLogin'](view, state, rng);
      if (!login) return;
      steps.push(login);
    }
    const step = MAKERS[api]?.(view, state, rng);
    if (step) steps.push(step);
  };
  for (const api of plan(view)) take(api);
  // A conversation of the hard set makes at least three calls: add look-ups that change nothing.
  for (const filler of ['GetReminders', 'CurrentWeather', 'QueryCalendar', 'GetAccountInformation']) {
    if (view.category === 'easy' || calls() >= 3) break;
    const last = steps.at(-1)?.calls.at(-1)?.api_name;
    // Log-out and deletion stay last: the look-up goes before them, while the session lasts.
    const tail = last && FINAL_TOOLS.has(last) ? steps.pop()! : null;
    if (tail) state.loggedIn = true;
    take(filler);
    if (tail) steps.push(tail), (state.loggedIn = false);
  }
  const turns: DraftTurn[] = [];
  if (view.category === 'easy') turns.push({ role: 'user', text: 'Hi, could you help me with something?', calls: [] }, { role: 'assistant', text: 'Of course, what do you need?', calls: [] });
  for (const step of steps) turns.push({ role: 'user', text: step.user, calls: [] }, { role: 'assistant', text: step.reply, calls: step.calls });
  turns.push({ role: 'user', text: 'Thanks, that is all.', calls: [] });
  return { turns, overlay: state.overlay };
}
