import { z } from 'zod';
import { LineageEntry, type Json } from '../../core/records.ts';
import type { Rng } from '../../core/rng.ts';
import { promptStep, type MapStage, type StageContext } from '../../core/stage.ts';
import conversationPrompt, { DraftAnswer } from '../../prompts/tooltalk-conversation.ts';
import type { Account, DraftWorld } from '../../prompts/tooltalk-offline.ts';
import { loadDatabases } from './databases.ts';
import { Scenario, apiDocs, scenarioKey, toolsOfPlugins } from './scenarios.ts';
import type { Databases, JsonObject } from './tool.ts';

/**
 * ToolTalk §2.2, conversations: for a sampled scenario toolkiln picks the user (one whose records
 * the scenario's tools can work on), the place and the time (a city with weather on file for today
 * and the next three days), and shows the LLM those facts and the user's records; the LLM writes the
 * turns and the intended calls. The next stage executes them.
 */

export const DraftedConversation = z.object({
  scenario: Scenario,
  world: z.custom<DraftWorld>((value) => !!value && typeof value === 'object'),
  /** The session token of a user who starts logged in (the conversation's user block carries it). */
  sessionToken: z.string().nullable(),
  draft: DraftAnswer,
  /** The answer's lineage entry (this stage at its version, the prompt, the model): the execute stage puts it on the sample. */
  lineage: LineageEntry,
});
export type DraftedConversation = z.infer<typeof DraftedConversation>;

/** Which of the user's databases each tool works on. */
const NEEDS: Record<string, keyof DraftWorld['records']> = {
  FindAlarms: 'Alarm',
  DeleteAlarm: 'Alarm',
  QueryCalendar: 'Calendar',
  DeleteEvent: 'Calendar',
  ModifyEvent: 'Calendar',
  SearchInbox: 'Email',
  SearchMessages: 'Message',
  GetReminders: 'Reminder',
  CompleteReminder: 'Reminder',
  DeleteReminder: 'Reminder',
};
const LOGGED_OUT_START = ['UserLogin', 'RegisterUser', 'SendVerificationCode', 'ResetPassword'];
const OWN_DATABASES = ['Alarm', 'Calendar', 'Email', 'Message', 'Reminder'] as const;
const FIRST_NAMES = ['Nora', 'Omar', 'Priya', 'Lukas', 'Mei', 'Tomas'];
const LAST_NAMES = ['Lindqvist', 'Okafor', 'Reyes', 'Haddad', 'Novak', 'Tanaka'];

function titleCase(text: string): string {
  return text.replace(/\b\w/g, (c) => c.toUpperCase());
}

function hex(rng: Rng, length: number): string {
  return Array.from({ length }, () => '0123456789abcdef'[rng.int(0, 15)]).join('');
}

/** The facts of one conversation: user, session, place, time and records (seeded per scenario). */
export function worldFor(scenario: Scenario, databases: Databases, rng: Rng): { world: DraftWorld; sessionToken: string | null } {
  const apis = [...new Set([scenario.requiredApi, ...scenario.calls])];
  const accounts = [...databases.Account.values()] as unknown as Account[];
  const recordsOf = (username: string) =>
    Object.fromEntries(OWN_DATABASES.map((name) => [name, Object.fromEntries(databases[name].get(username) ?? new Map())])) as DraftWorld['records'];
  const score = (account: Account) => apis.filter((api) => NEEDS[api] && Object.keys(recordsOf(account.username)[NEEDS[api]]).length).length;
  const best = Math.max(...accounts.map(score));
  // Signs up unless the scenario turns on an existing account (login, password reset).
  const newUser = apis.includes('RegisterUser') && !['UserLogin', 'SendVerificationCode', 'ResetPassword'].includes(scenario.requiredApi);
  let user: Account = rng.pick(accounts.filter((account) => score(account) === best));
  if (newUser) {
    const first = rng.pick(FIRST_NAMES);
    const last = rng.pick(LAST_NAMES);
    const username = `${first.toLowerCase()}${last.toLowerCase()}${rng.int(10, 99)}`;
    user = { username, email: `${username}@example.com`, phone: `${rng.int(200, 999)}-${rng.int(200, 999)}-${rng.int(1000, 9999)}`, name: `${first} ${last}`, password: `${hex(rng, 6)}Aa!` };
  }
  const loggedIn = !apis.some((api) => LOGGED_OUT_START.includes(api)) || (scenario.category === 'easy' && !LOGGED_OUT_START.includes(scenario.requiredApi));
  const verificationCode = apis.includes('ResetPassword') && !newUser ? String(rng.int(100000, 999999)) : null;

  // A city and a day with weather on file for that day and the three after it.
  const options: { city: string; day: string }[] = [];
  for (const [city, days] of databases.Weather) {
    for (const day of days.keys()) if ([1, 2, 3].every((offset) => days.has(shiftDay(day, offset)))) options.push({ city, day });
  }
  const { city, day } = rng.pick(options);
  const historic: Record<string, string[]> = {};
  for (const [place, months] of databases.HistoricWeather) historic[titleCase(place)] = [...months.keys()].map(titleCase);
  const others = accounts.filter((account) => account.username !== user.username);
  const world: DraftWorld = {
    category: scenario.category,
    requiredApi: scenario.requiredApi,
    apis: scenario.calls,
    user,
    loggedIn,
    newUser,
    verificationCode,
    location: titleCase(city),
    timestamp: `${day} ${String(rng.int(8, 11)).padStart(2, '0')}:00:00`,
    records: newUser ? { Alarm: {}, Calendar: {}, Email: {}, Message: {}, Reminder: {} } : recordsOf(user.username),
    otherUsers: rng.sample(others, Math.min(3, others.length)).map((account) => ({ username: account.username, email: account.email })),
    weatherCities: [titleCase(city)],
    historic,
  };
  return { world, sessionToken: loggedIn ? `${hex(rng, 8)}-${hex(rng, 4)}-${hex(rng, 4)}` : null };
}

function shiftDay(day: string, offset: number): string {
  const date = new Date(`${day}T00:00:00Z`);
  date.setUTCDate(date.getUTCDate() + offset);
  return date.toISOString().slice(0, 10);
}

/** The facts as the prompt shows them. */
export function factsText(world: DraftWorld): string {
  const facts: Record<string, Json> = {
    current_time: world.timestamp,
    location: world.location,
    user: world.user as unknown as JsonObject,
    logged_in: world.loggedIn,
    ...(world.newUser ? { note: 'the user has no account yet and signs up' } : {}),
    ...(world.verificationCode ? { verification_code_the_user_received: world.verificationCode } : {}),
    users_records: world.records as unknown as JsonObject,
    other_users: world.otherUsers,
    weather_on_file_for_today_and_next_3_days: world.weatherCities,
    historic_weather_on_file: world.historic,
  };
  return JSON.stringify(facts, null, 2);
}

export interface DraftOptions {
  databasesDir: string;
  temperature?: number;
}

export function draftConversationStage(options: DraftOptions): MapStage<Scenario, DraftedConversation> {
  let databases: Databases | undefined;
  // Seeded per scenario: the prompt's variables and the record made of the answer see the same facts.
  const worldOf = (scenario: Scenario, ctx: StageContext) => worldFor(scenario, (databases ??= loadDatabases(ctx.resolvePath(options.databasesDir))), ctx.rng('world'));
  return promptStep({
    name: 'draft-conversation',
    version: 2,
    input: Scenario,
    output: DraftedConversation,
    keyOf: scenarioKey,
    prompt: conversationPrompt,
    variables: (scenario, ctx) => {
      const { world } = worldOf(scenario, ctx);
      const tools = toolsOfPlugins([...new Set([...scenario.plugins, 'AccountTools'])]);
      const kind =
        scenario.category === 'easy'
          ? 'This is an easy conversation: a few short turns and exactly one API call, to the required API; the user states every value it needs, ids included.'
          : 'The assistant makes at least 3 API calls in all, spread over the conversation as the user asks for things.';
      return { kind, scenario: scenario.description, requiredApi: scenario.requiredApi, apiDocs: apiDocs(tools), facts: factsText(world), world };
    },
    options: () => ({ temperature: options.temperature }),
    result: (answer, scenario, ctx) => ({ scenario, ...worldOf(scenario, ctx), draft: answer.value, lineage: answer.lineage }),
  });
}
