import { spawnSync } from 'node:child_process';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { OfflineGateway } from '../core/llm/offline.ts';
import type { Sample } from '../core/records.ts';
import { Rng } from '../core/rng.ts';
import { standaloneContext } from '../core/stage.ts';
import conversationPrompt from '../prompts/tooltalk-conversation.ts';
import { runPipeline } from '../core/run.ts';
import { DatasetStore } from '../core/store.ts';
import { getPipeline } from '../pipelines/index.ts';
import { toolTalkMetaOf, sampleToConversation } from '../stages/tooltalk/conversation.ts';
import { readDatabasesReport } from '../stages/tooltalk/database-report.ts';
import { DEFAULT_DATABASES_DIR, loadDatabases, type DatabasesJson } from '../stages/tooltalk/databases.ts';
import { executeConversationStage, executeDraft, type ExecutedConversation } from '../stages/tooltalk/execute.ts';
import { type DraftedConversation, draftConversationStage, worldFor } from '../stages/tooltalk/draft.ts';
import { exportToolTalk } from '../stages/tooltalk/export.ts';
import { scenarioProblem, type Scenario } from '../stages/tooltalk/scenarios.ts';
import { createWorld } from '../stages/tooltalk/world.ts';
import { tempDirs } from './helpers/files.ts';
import { samplesInMemory } from '../core/sample-source.ts';
import { versionSamples, versionRejects } from './helpers/version.ts';

const tmp = tempDirs('tk-tooltalk-');
const bin = new URL('../bin/toolkiln.js', import.meta.url).pathname;

async function runOffline(home: string, config: Record<string, unknown>) {
  return runPipeline({ pipeline: getPipeline('tooltalk'), configOverrides: config, llm: new OfflineGateway(42), home, projectDir: process.cwd(), progress: { quiet: true } });
}

describe('ToolTalk recipe, offline', () => {
  it('publishes conversations whose every ground-truth call, re-executed from the initial databases plus its overlay, gives the stored result', async () => {
    const home = tmp();
    await runOffline(home, { conversations: 12, plugins: ['Alarm', 'Calendar', 'Reminder', 'Weather', 'AccountTools'] });
    const store = new DatasetStore(home);
    const ref = store.resolve('tooltalk@v1');
    const samples = versionSamples(store, ref);
    // One per tool: the publish gate rejects none (CreateEvent's enum sits on event_type, where ToolTalk's code checks it).
    expect(samples.filter((s) => s.category === 'easy')).toHaveLength(28);
    expect(versionRejects(store, ref).filter((r) => r.stage === 'invariants')).toEqual([]);
    expect(samples.filter((s) => s.category === 'tooltalk').length).toBeGreaterThanOrEqual(10);
    const initial = readDatabasesReport(ref.dir)!;
    expect(initial).not.toBeNull();
    const databases = loadDatabases(DEFAULT_DATABASES_DIR);
    let calls = 0;
    let overlays = 0;
    for (const sample of samples) {
      const conversation = sampleToConversation(sample);
      const meta = toolTalkMetaOf(sample);
      if (Object.keys(meta.overlay).length) overlays++;
      const world = createWorld({ databases, overlay: meta.overlay as DatabasesJson });
      world.reset({ timestamp: conversation.metadata.timestamp, user: conversation.user as never });
      const made = conversation.conversation.flatMap((turn) => turn.apis ?? []);
      expect(made.length, sample.id).toBeGreaterThanOrEqual(sample.category === 'easy' ? 1 : 3);
      for (const api of made) {
        const { session_token: _token, ...parameters } = api.request.parameters;
        expect(world.execute({ api_name: api.request.api_name, parameters }), `${sample.id} ${api.request.api_name}`).toEqual({ response: api.response, exception: api.exception });
        calls++;
      }
      expect(sample.meta.tags).toEqual(expect.arrayContaining(['review:check-grounding', 'review:check-plausibility']));
      expect(conversation.metadata.location).toBeTruthy();
      expect(conversation.apis_used).toContain(sample.category === 'easy' ? meta.file.split('/')[1].replace('-easy.json', '') : conversation.apis_used[0]);
    }
    expect(calls).toBeGreaterThan(50);
    expect(overlays).toBeGreaterThan(0);
    const manifest = store.manifest(ref);
    // The statistics stage counts what the stages made, before the publish gate rejected some.
    const gated = versionRejects(store, ref).filter((r) => r.stage === 'invariants').length;
    expect(manifest.stats.tooltalk).toMatchObject({ version: { conversations: samples.length + gated }, released: { conversations: 78 } });
    expect(readFileSync(join(ref.dir, 'reports', 'tooltalk-statistics.md'), 'utf8')).toContain('| calls per conversation |');

    // Exported files and merged databases: every conversation's overlay records are in the databases.
    const out = tmp();
    const files = await exportToolTalk(samplesInMemory(samples), [], out, ref);
    expect(files.filter((f) => f.endsWith('.json') && !f.includes('/databases/'))).toHaveLength(samples.length);
    const reminders = JSON.parse(readFileSync(join(out, 'databases', 'Reminder.json'), 'utf8'));
    for (const sample of samples) {
      for (const [owner, rows] of Object.entries((toolTalkMetaOf(sample).overlay as any).Reminder ?? {})) for (const id of Object.keys(rows as object)) expect(reminders[owner][id]).toBeTruthy();
    }
  }, 60_000);

  it('imports the released files and exports them back byte for byte through `toolkiln export`', async () => {
    const home = tmp();
    await runOffline(home, { importDir: '../shared/data/reference/tooltalk' });
    const result = spawnSync(process.execPath, [bin, 'export', 'tooltalk@v1', '--format', 'tooltalk', '--out', join(home, 'out')], { cwd: process.cwd(), encoding: 'utf8', env: { ...process.env, TOOLKILN_HOME: home } });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    for (const file of ['easy/AddAlarm-easy.json', 'tooltalk/Email-Messages-Reminder-SendMessage-2.json', 'tooltalk/Email-Reminder-Weather-CompleteReminder-2.json']) {
      expect(readFileSync(join(home, 'out', file), 'utf8')).toBe(readFileSync(join('../shared/data/reference/tooltalk', file), 'utf8'));
    }
  }, 60_000);

  it('stops with one line naming the database file and key, exit 2, publishing nothing', () => {
    const home = tmp();
    const dir = join(home, 'db');
    cpSync(DEFAULT_DATABASES_DIR, dir, { recursive: true });
    const env = { ...process.env, TOOLKILN_HOME: home, OPENAI_API_KEY: '', OPENAI_BASE_URL: '' };
    const reminder = JSON.parse(readFileSync(join(dir, 'Reminder.json'), 'utf8'));
    delete reminder.justinkool[Object.keys(reminder.justinkool)[0]].task;
    writeFileSync(join(dir, 'Reminder.json'), JSON.stringify(reminder));
    writeFileSync(join(home, 'c.json'), JSON.stringify({ databasesDir: dir, conversations: 2 }));
    const missing = spawnSync(process.execPath, [bin, 'run', 'tooltalk', '--config', join(home, 'c.json'), '--quiet'], { cwd: process.cwd(), encoding: 'utf8', env });
    expect(missing.status).toBe(2);
    // The run's id line comes first; the error is one line, no stack trace.
    expect(missing.stderr.trim().split('\n').filter((line) => line.startsWith('toolkiln:'))).toHaveLength(1);
    expect(missing.stderr).not.toMatch(/\n\s+at /);
    expect(missing.stderr).toMatch(/Reminder\.json: "justinkool" › "[^"]+": missing key "task"/);
    writeFileSync(join(dir, 'Alarm.json'), '{"ahhchiu": ');
    const invalid = spawnSync(process.execPath, [bin, 'run', 'tooltalk', '--config', join(home, 'c.json'), '--quiet'], { cwd: process.cwd(), encoding: 'utf8', env });
    expect(invalid.status).toBe(2);
    expect(invalid.stderr.trim().split('\n').filter((line) => line.startsWith('toolkiln:'))).toHaveLength(1);
    expect(invalid.stderr).toMatch(/Alarm\.json: not valid JSON/);
    expect(new DatasetStore(home).names()).toEqual([]);
  }, 60_000);
});

describe('ToolTalk scenario filters', () => {
  const base = { plugins: ['Alarm', 'Calendar', 'Reminder'], requiredApi: 'AddAlarm', description: 'The user plans a week.' };
  it('accepts a scenario with the required tool, 5 calls and 3 APIs', () => {
    expect(scenarioProblem({ ...base, calls: ['QueryCalendar', 'AddAlarm', 'AddReminder', 'AddAlarm', 'GetReminders'] })).toBeNull();
  });
  it('rejects each bad scenario with its reason', () => {
    expect(scenarioProblem({ ...base, calls: ['QueryCalendar', 'AddReminder', 'GetReminders', 'CreateEvent', 'DeleteEvent'] })?.reason).toBe('missing_required_tool');
    expect(scenarioProblem({ ...base, calls: ['AddAlarm', 'SendEmail', 'AddReminder', 'AddAlarm', 'GetReminders'] })).toMatchObject({ reason: 'unknown_tool', detail: expect.stringContaining('SendEmail') });
    expect(scenarioProblem({ ...base, description: 'They also BookHotel for the trip.', calls: ['QueryCalendar', 'AddAlarm', 'AddReminder', 'AddAlarm', 'GetReminders'] })).toMatchObject({ reason: 'unknown_tool', detail: expect.stringContaining('BookHotel') });
    expect(scenarioProblem({ ...base, calls: ['AddAlarm', 'FindAlarms', 'AddAlarm', 'FindAlarms', 'AddAlarm'] })?.reason).toBe('too_few_apis');
    expect(scenarioProblem({ ...base, calls: ['AddAlarm', 'FindAlarms', 'GetReminders'] })?.reason).toBe('too_few_calls');
  });
});

describe('ToolTalk drafts are executed and checked', () => {
  const databases = loadDatabases(DEFAULT_DATABASES_DIR);
  const scenario: Scenario = { id: 'Alarm-Calendar-Reminder-AddAlarm-0', category: 'tooltalk', plugins: ['Alarm', 'Calendar', 'Reminder'], requiredApi: 'AddAlarm', description: 'x', calls: ['AddAlarm', 'GetReminders', 'FindAlarms'] };
  const { world, sessionToken } = worldFor(scenario, databases, Rng.derive(1, 'test'));
  const drafted = (calls: { api_name: string; parameters: Record<string, unknown>; expect?: 'success' | 'failure' }[], text = 'Set an alarm for 6:30 AM and show my reminders and alarms.'): DraftedConversation => ({
    scenario,
    world,
    sessionToken,
    lineage: { stage: 'draft-conversation', version: 1, model: 'test' },
    draft: { overlay: {}, turns: [{ role: 'user', text, calls: [] }, { role: 'assistant', text: 'Done.', calls: calls.map((c) => ({ expect: 'success', ...c })) as never }, { role: 'user', text: 'Thanks.', calls: [] }] },
  });
  const good = [{ api_name: 'AddAlarm', parameters: { time: '06:30:00' } }, { api_name: 'GetReminders', parameters: {} }, { api_name: 'FindAlarms', parameters: {} }];

  it('writes the real responses of a good draft', () => {
    const result = executeDraft(drafted(good), databases) as ExecutedConversation;
    expect(result.conversation.conversation[1].apis?.map((a) => a.exception)).toEqual([null, null, null]);
    expect(result.conversation.conversation[1].apis?.[0].response).toEqual({ alarm_id: expect.stringMatching(/^\w{4}-\w{4}$/) });
  });

  it('rejects an unknown tool, a missing or unexpected argument and a wrong type with the simulator message', () => {
    expect(executeDraft(drafted([{ api_name: 'BookHotel', parameters: {} }, ...good]), databases)).toEqual({ reason: 'unknown_tool', detail: 'turn 1 call 1 BookHotel: API BookHotel not found' });
    expect(executeDraft(drafted([{ api_name: 'AddAlarm', parameters: {} }, ...good]), databases)).toEqual({ reason: 'bad_arguments', detail: "turn 1 call 1 AddAlarm: AddAlarm.call() missing 1 required positional argument: 'time'" });
    expect(executeDraft(drafted([{ api_name: 'AddAlarm', parameters: { time: '06:30:00', when: 'now' } }, ...good]), databases)).toEqual({ reason: 'bad_arguments', detail: "turn 1 call 1 AddAlarm: AddAlarm.call() got an unexpected keyword argument 'when'" });
    const wrong = executeDraft(drafted([{ api_name: 'AddAlarm', parameters: { time: 630 } }, ...good], 'Set an alarm for 630.'), databases);
    expect(wrong).toMatchObject({ reason: 'wrong_type', detail: expect.stringContaining('time must be string, got int 630; the simulator says: ') });
    expect((wrong as { detail: string }).detail).not.toContain('nothing (it accepted');
  });

  it('keeps the lineage entry of the answer a draft came from, and puts it on the sample with the execute stage\'s own', async () => {
    const llm = new OfflineGateway(42);
    const ctx = { ...standaloneContext({ llm, runDir: tmp() }), key: scenario.id };
    const draft = draftConversationStage({ databasesDir: DEFAULT_DATABASES_DIR });
    const made = (await draft.run(scenario, ctx)) as DraftedConversation;
    expect(made.lineage).toEqual({ stage: draft.name, version: draft.version, prompt: conversationPrompt.id, promptHash: conversationPrompt.hash, model: llm.model });
    // Whatever version the drafting stage was at, not a number the execute stage assumes.
    const answered = { stage: 'draft-conversation', version: 7, prompt: conversationPrompt.id, promptHash: 'a1b2c3', model: 'some-model' };
    const execute = executeConversationStage({ databasesDir: DEFAULT_DATABASES_DIR });
    const sample = (await execute.run({ ...drafted(good), lineage: answered }, ctx)) as Sample;
    expect(sample.meta.lineage).toEqual([answered, { stage: execute.name, version: execute.version }]);
  });

  it('rejects a call that fails, an ungrounded argument, too few calls, and an overlay that rewrites the databases', () => {
    expect(executeDraft(drafted([{ api_name: 'DeleteAlarm', parameters: { alarm_id: 'ffff-ffff' } }, ...good], 'Delete alarm ffff-ffff, set one for 6:30 AM.'), databases)).toMatchObject({ reason: 'call_failed', detail: expect.stringContaining('Alarm ffff-ffff not found') });
    expect(executeDraft(drafted([{ api_name: 'AddAlarm', parameters: { time: '07:15:00' } }, ...good.slice(1)]), databases)).toMatchObject({ reason: 'ungrounded_argument', detail: expect.stringContaining('time="07:15:00"') });
    expect(executeDraft(drafted(good.slice(0, 2)), databases)).toMatchObject({ reason: 'too_few_calls' });
    const existing = [...databases.Reminder.get('justinkool')!.keys()][0];
    const rewriting = { ...drafted(good), draft: { ...drafted(good).draft, overlay: { Reminder: { justinkool: { [existing]: { reminder_id: existing, task: 'x', status: 'pending' } } } } } };
    expect(executeDraft(rewriting as DraftedConversation, databases)).toMatchObject({ reason: 'overlay_rewrites_database' });
  });
});

export type { Sample };
