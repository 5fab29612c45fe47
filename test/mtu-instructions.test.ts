import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UserError } from '../core/errors.ts';
import { samplesInMemory } from '../core/sample-source.ts';
import { DEFAULT_INSTRUCTIONS } from '../prompts/mtu-instructions.ts';
import { exportMtu } from '../stages/mtu/export.ts';
import { INSTRUCTIONS_REPORT, loadInstructionTemplates } from '../stages/mtu/instructions.ts';
import { call, handSample, round, tool } from './fixtures/mtu/samples.ts';

const weather = tool('GetWeather', { city: {} }, ['city'], ['temperature']);
const sample = handSample('s', [weather], [round('Weather in Rome?', [call('call_0', 'GetWeather', { city: 'Rome' })])]);

describe('instruction templates of the MTU export', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tk-mtu-instructions-'));
  const file = (name: string, text: string) => (writeFileSync(join(dir, name), text), join(dir, name));

  it('replace the settings a config file names, with {today} filled in, and keep the default wording for the others', async () => {
    const templates = loadInstructionTemplates(file('mine.json', JSON.stringify({ 'S-S': 'Answer with a call. Today: {today}.' })));
    expect(templates['M-S']).toBe(DEFAULT_INSTRUCTIONS['M-S']);
    const version = join(dir, 'v1');
    mkdirSync(join(version, 'reports'), { recursive: true });
    writeFileSync(join(version, 'reports', INSTRUCTIONS_REPORT), JSON.stringify(templates));
    const out = join(dir, 'export');
    await exportMtu(samplesInMemory([sample]), [], out, { dir: version });
    const [record] = readFileSync(join(out, 'S-S_eval.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(record.question.startsWith('\nAnswer with a call. Today: Friday, March 1, 2019.\nThe following is a list of APIs')).toBe(true);
  });

  it('refuse a file that is missing, not an object, names an unknown setting or holds an empty text, naming the file', () => {
    expect(() => loadInstructionTemplates(join(dir, 'absent.json'))).toThrow(UserError);
    expect(() => loadInstructionTemplates(file('list.json', '[]'))).toThrow(/list\.json: the MTU instruction templates must be a JSON object/);
    expect(() => loadInstructionTemplates(file('key.json', '{"X-Y": "hi"}'))).toThrow(/key\.json: "X-Y" is not an MTU setting/);
    expect(() => loadInstructionTemplates(file('empty.json', '{"S-S": " "}'))).toThrow(/empty\.json: the "S-S" template must be a non-empty string/);
  });
});
