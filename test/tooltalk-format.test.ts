import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UserError } from '../core/errors.ts';
import { conversationFiles } from '../stages/tooltalk/conversation-files.ts';
import { readDatabasesFolder } from '../stages/tooltalk/database-report.ts';
import { DEFAULT_DATABASES_DIR } from '../stages/tooltalk/databases.ts';
import { exportToolTalk, mergeOverlays } from '../stages/tooltalk/export.ts';
import { importConversationFile } from '../stages/tooltalk/import.ts';
import { pythonJson } from '../core/python-json.ts';
import { tempDirs } from './helpers/files.ts';
import { samplesInMemory } from '../core/sample-source.ts';

const RELEASED = '../shared/data/reference/tooltalk';
const tmp = tempDirs('tk-tooltalk-format-');

describe('ToolTalk released format', () => {
  it('import → export → import → export gives every released file back byte for byte', async () => {
    const files = conversationFiles(RELEASED);
    expect(files).toHaveLength(78);
    const samples = files.map((file) => importConversationFile(RELEASED, file));
    expect(samples.filter((s) => s.category === 'easy')).toHaveLength(28);
    // Session tokens are not arguments: the canonical calls fit the tools' documented parameters.
    expect(samples.flatMap((s) => s.expected.calls ?? []).some((call) => 'session_token' in call.arguments)).toBe(false);
    const out = tmp();
    await exportToolTalk(samplesInMemory(samples), [], out);
    for (const file of files) expect(readFileSync(join(out, file), 'utf8'), file).toBe(readFileSync(join(RELEASED, file), 'utf8'));
    const again = files.map((file) => importConversationFile(out, file));
    expect(again).toEqual(samples);
    // Nothing overlaid: the exported databases are the initial ones, written as ToolTalk writes them.
    for (const name of ['Account', 'HistoricWeather', 'Reminder']) {
      expect(readFileSync(join(out, 'databases', `${name}.json`), 'utf8')).toBe(readFileSync(join(DEFAULT_DATABASES_DIR, `${name}.json`), 'utf8').trimEnd());
    }
  });

  it('writes JSON as Python does: ensure_ascii escapes and floats under float keys', () => {
    expect(pythonJson({ a: 'é 🧗', b: [3, 2.5], c: {}, d: [] } as never, { indent: 4, floatKeys: new Set(['b']) })).toBe('{\n    "a": "\\u00e9 \\ud83e\\uddd7",\n    "b": [\n        3.0,\n        2.5\n    ],\n    "c": {},\n    "d": []\n}');
  });

  it('detects an overlay key two conversations claim with different records', () => {
    const [first, second] = ['easy/AddAlarm-easy.json', 'easy/AddReminder-easy.json'].map((file) => importConversationFile(RELEASED, file));
    const record = (task: string) => ({ reminder_id: 'aa-0001', task, status: 'pending' });
    const withOverlay = (sample: typeof first, task: string) => ({ ...sample, meta: { ...sample.meta, tooltalk: { ...(sample.meta as any).tooltalk, overlay: { Reminder: { justinkool: { 'aa-0001': record(task) } } } } } });
    const initial = readDatabasesFolder(DEFAULT_DATABASES_DIR);
    expect(() => mergeOverlays(initial, [withOverlay(first, 'same'), withOverlay(second, 'same')])).not.toThrow();
    expect(() => mergeOverlays(initial, [withOverlay(first, 'one'), withOverlay(second, 'other')])).toThrow(UserError);
    expect(() => mergeOverlays(initial, [withOverlay(first, 'one'), withOverlay(second, 'other')])).toThrow(/Reminder › justinkool › aa-0001 of sample .* collides with the overlay of sample/);
    const existing = Object.keys((initial.databases.Reminder as any).justinkool)[0];
    const clash = { ...first, meta: { ...first.meta, tooltalk: { ...(first.meta as any).tooltalk, overlay: { Reminder: { justinkool: { [existing]: record('x') } } } } } };
    expect(() => mergeOverlays(initial, [clash])).toThrow(/collides with the initial databases/);
  });

  it('names the file of a conversation that is not valid JSON', () => {
    const dir = tmp();
    mkdirSync(join(dir, 'easy'));
    writeFileSync(join(dir, 'easy', 'bad.json'), '{"name": ');
    expect(() => importConversationFile(dir, 'easy/bad.json')).toThrow(/easy\/bad\.json:1:\d+: not valid JSON/);
  });
});
