import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { OfflineGateway } from '../core/llm/offline.ts';
import { runPipeline } from '../core/run.ts';
import { pipelines } from '../pipelines/index.ts';
import { CopyOnReadMap, DEFAULT_DATABASES_DIR, copyDatabases, databasesToJson, loadDatabases, parseDatabase } from '../stages/tooltalk/databases.ts';
import { createWorld } from '../stages/tooltalk/world.ts';
import type { JsonObject } from '../stages/tooltalk/tool.ts';

const PROJECT = new URL('..', import.meta.url).pathname;
const RELEASED = join(PROJECT, '../shared/data/reference/tooltalk');
const dir = mkdtempSync(join(tmpdir(), 'tk-tooltalk-inputs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('ToolTalk inputs', () => {
  it('an import folder holding a copied conversation file is refused naming both files, not imported twice', async () => {
    const importDir = join(dir, 'conversations');
    cpSync(join(RELEASED, 'easy'), join(importDir, 'easy'), { recursive: true });
    const file = readdirSync(join(importDir, 'easy')).sort()[0];
    cpSync(join(importDir, 'easy', file), join(importDir, 'copy-of-change-password.json'));
    const run = runPipeline({ pipeline: pipelines.tooltalk, configOverrides: { importDir, referenceDir: '' }, llm: new OfflineGateway(42), home: join(dir, 'home'), projectDir: PROJECT, cwd: PROJECT, progress: { quiet: true } });
    await expect(run).rejects.toThrow(`${join(importDir, 'easy', file)}: conversation_id`);
    await expect(run).rejects.toThrow(`was already imported from ${join(importDir, 'copy-of-change-password.json')}; remove the copy`);
  }, 120_000);

  it('database fields of the wrong type are refused naming database, owner, record and key', () => {
    const email = JSON.parse(readFileSync(join(PROJECT, DEFAULT_DATABASES_DIR, 'Email.json'), 'utf8'));
    const [owner, records] = Object.entries(email).find(([, r]) => Object.keys(r as object).length) as [string, Record<string, JsonObject>];
    const [id, record] = Object.entries(records)[0];
    const withBad = (key: string, value: unknown) => ({ ...email, [owner]: { ...records, [id]: { ...record, [key]: value } } });
    expect(() => parseDatabase('Email', withBad('sender', 42), 'Email.json')).toThrow(`Email.json: "${owner}" › "${id}": key "sender" holds 42; it must be a string`);
    expect(() => parseDatabase('Email', withBad('receivers', 'bob@example.com'), 'Email.json')).toThrow(/key "receivers" holds "bob@example.com"; it must be a list of strings/);
    const calendar = { alice: { e1: { event_id: 'e1', name: 'Standup', event_type: 'meeting', start_time: '2023-09-11 10:00:00', end_time: '2023-09-11 10:30:00', attendees: [1, 2] } } };
    expect(() => parseDatabase('Calendar', calendar, 'Calendar.json')).toThrow(/"alice" › "e1": key "attendees" holds \[1,2\]; it must be a list of strings \(or null\)/);
    const reminder = { alice: { r1: { reminder_id: 'r1', task: 'Pay rent', status: 'pending', due_date: 'tomorrow' } } };
    expect(() => parseDatabase('Reminder', reminder, 'Reminder.json')).toThrow(/key "due_date" holds "tomorrow"; write a date-time as YYYY-MM-DD HH:MM:SS \(or null\)/);
    const account = { bob: { username: 'bob', password: 1234, email: 'b@x.com', phone: '1', name: 'Bob', session_token: null } };
    expect(() => parseDatabase('Account', account, 'Account.json')).toThrow(/account "bob": key "password" holds 1234; it must be a string/);
    // The released databases pass.
    expect(() => loadDatabases(join(PROJECT, DEFAULT_DATABASES_DIR))).not.toThrow();
  });

  it('a world made per conversation copies only the records it reaches, and its changes reach nothing else', () => {
    // Records whose fields count the reads a copy makes (structuredClone reads every property).
    let reads = 0;
    const counted = (record: JsonObject): JsonObject =>
      Object.defineProperties({}, Object.fromEntries(Object.entries(record).map(([key, value]) => [key, { enumerable: true, get: () => (reads++, value) }])));
    const loaded = loadDatabases(join(PROJECT, DEFAULT_DATABASES_DIR));
    const base = { ...loaded, Email: new Map(loaded.Email) };
    const template = [...[...loaded.Email.values()].find((rows) => rows.size)!.values()][0];
    for (let owner = 0; owner < 2_000; owner++) base.Email.set(`user${owner}`, new Map([[`m${owner}`, counted({ ...template, email_id: `m${owner}` })]]));
    const before = JSON.stringify(databasesToJson(loaded));

    reads = 0;
    const world = createWorld({ databases: base });
    world.reset({ timestamp: '2023-09-11 13:20:00', user: { username: 'justinkool', session_token: '98a5a87a-7714-b404' } });
    const sent = world.execute({ api_name: 'AddReminder', parameters: { task: 'Call mom' } });
    expect(sent.exception).toBeNull();
    // 2,000 other owners' records were not copied (a full copy read each of their six fields).
    expect(reads).toBe(0);
    // The change stays in this world: not in the loaded databases, not in a second world.
    expect(JSON.stringify(databasesToJson(loaded))).toBe(before);
    const other = createWorld({ databases: loaded });
    other.reset({ timestamp: '2023-09-11 13:20:00' });
    expect(JSON.stringify(other.snapshot())).toBe(before);
    expect(Object.keys(world.snapshot().Reminder.justinkool as object)).toHaveLength(Object.keys(JSON.parse(before).Reminder.justinkool).length + 1);
  });

  it('a copy-on-read map keeps the order, copies an entry once, and leaves its base alone', () => {
    const base = new Map([['a', { n: 1 }], ['b', { n: 2 }], ['c', { n: 3 }]]);
    let copies = 0;
    const copy = new CopyOnReadMap(base, (value) => (copies++, { ...value }));
    expect(copies).toBe(0);
    copy.get('b')!.n = 20;
    copy.get('b');
    expect(copies).toBe(1);
    copy.delete('a');
    copy.set('d', { n: 4 });
    expect([...copy]).toEqual([['b', { n: 20 }], ['c', { n: 3 }], ['d', { n: 4 }]]);
    expect([...copy.keys()]).toEqual(['b', 'c', 'd']);
    expect(copy.size).toBe(3);
    expect(Object.fromEntries(copy)).toEqual({ b: { n: 20 }, c: { n: 3 }, d: { n: 4 } });
    expect([...base]).toEqual([['a', { n: 1 }], ['b', { n: 2 }], ['c', { n: 3 }]]);
    // A copy of a copy is a copy of its current state.
    const databases = loadDatabases(join(PROJECT, DEFAULT_DATABASES_DIR));
    const first = copyDatabases(databases);
    first.Alarm.get('ahhchiu')!.clear();
    expect(copyDatabases(first).Alarm.get('ahhchiu')!.size).toBe(0);
    expect(databases.Alarm.get('ahhchiu')!.size).toBeGreaterThan(0);
  });
});
