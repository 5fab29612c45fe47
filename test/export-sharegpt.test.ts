import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { readJsonl } from '../core/jsonl.ts';
import { Sample, type ToolSpec } from '../core/records.ts';
import { DatasetStore } from '../core/store.ts';
import { exportShareGpt, sampleToShareGpt, type ShareGptRow } from '../stages/export/sharegpt.ts';
import { shareGptRowProblems } from '../stages/export/sharegpt-validate.ts';
import { sampleToTrl, type TrlRow } from '../stages/export/trl.ts';
import { defaultRun } from './helpers/default-run.ts';
import { hasPeer, peerFiles } from './helpers/peer-code.ts';
import { pythonHasDatasets } from './helpers/python.ts';
import { draftManifest } from './fixtures/core/samples.ts';

const tmp = () => mkdtempSync(join(tmpdir(), 'tk-sharegpt-'));

const tool = (name: string, properties: Record<string, object>): ToolSpec =>
  ({ name, description: `${name} tool`, parameters: { type: 'object', properties, required: [] }, returns: { type: 'object', properties: {}, required: [] } }) as ToolSpec;
const TOOLS = [tool('GetFlight', { from: { type: 'string' } }), tool('GetFare', { from: { type: 'string' } })];

const sample = Sample.parse({
  id: 's-1',
  benchmark: 'demo',
  category: 'S-M',
  split: 'train',
  tools: TOOLS,
  dialogue: [
    { role: 'user', content: 'Flights and fares from a?' },
    {
      role: 'assistant',
      content: '',
      thought: 'Both at once.',
      calls: [
        { id: 'c0', tool: 'GetFlight', arguments: { from: 'a' } },
        { id: 'c1', tool: 'GetFare', arguments: { from: 'a' } },
      ],
      observations: { c0: { id: 'F1' }, c1: { fare: 20 } },
      response: 'F1, for 20.',
    },
    { role: 'user', content: 'And from b?' },
  ],
  expected: { turns: { '3': [{ id: 'c2', tool: 'GetFlight', arguments: { from: 'b' } }] } },
  meta: {},
});

describe('sharegpt rows', () => {
  it('map user, calls (a list when parallel), their results (one observation) and replies to human, function_call, observation and gpt', () => {
    const { row, thoughtsLeftOut } = sampleToShareGpt(sample);
    expect(row).toEqual({
      id: 's-1',
      category: 'S-M',
      conversations: [
        { from: 'human', value: 'Flights and fares from a?' },
        { from: 'function_call', value: '[{"name":"GetFlight","arguments":{"from":"a"}},{"name":"GetFare","arguments":{"from":"a"}}]' },
        { from: 'observation', value: '[{"id":"F1"},{"fare":20}]' },
        { from: 'gpt', value: 'F1, for 20.' },
        { from: 'human', value: 'And from b?' },
        { from: 'function_call', value: '{"name":"GetFlight","arguments":{"from":"b"}}' },
      ],
      tools: JSON.stringify(sampleToTrl(sample).tools),
    });
    expect(thoughtsLeftOut).toBe(1);
    expect(shareGptRowProblems(row)).toEqual([]);
  });

  it("are checked against LLaMA-Factory's rules: alternating positions, an even count, JSON calls answered by observations, tools as JSON text", () => {
    const good = sampleToShareGpt(sample).row;
    const at = (conversations: ShareGptRow['conversations'], tools = good.tools) => shareGptRowProblems({ ...good, conversations, tools });
    const [human, call, observation, gpt] = good.conversations;
    expect(at([human, human, gpt, gpt])).toEqual([
      'conversations[1].from is "human" where gpt or function_call must stand (LLaMA-Factory skips the row: "Invalid role tag")',
      'conversations[2].from is "gpt" where human or observation must stand (LLaMA-Factory skips the row: "Invalid role tag")',
    ]);
    expect(at([human, gpt, human])).toEqual(['3 messages after the system one: LLaMA-Factory wants an even count, ending with what is learnt ("Invalid message count")']);
    expect(shareGptRowProblems({ ...good, conversations: [{ from: 'system', value: 'Be brief.' }, human, gpt] })).toEqual([]);
    expect(at([human, { from: 'function_call', value: 'I call GetFlight' }])).toEqual(['conversations[1].value is not JSON of a call or a list of calls ("Invalid JSON format in function message")']);
    expect(at([human, { from: 'function_call', value: '{"name":"GetFlight"}' }])).toEqual(['conversations[1].value call 0 has no "name" and "arguments"']);
    expect(at([human, call, human, gpt])).toEqual(['conversations[1]: a function_call that does not end the row is followed by its observation']);
    expect(at([human, call, observation, gpt], 'GetFlight, GetFare')).toEqual(['tools is not JSON text of a list of functions ("Invalid JSON format in tool description")']);
    expect(at([human, gpt], '[{"name":"f"}]')).toEqual(['tools[0] (f) has no parameters.properties object']);
    expect(shareGptRowProblems({ conversations: [] })).toEqual(['conversations must be a non-empty list']);
  });
});

describe('sharegpt export', () => {
  it('writes a file per split and the dataset_info.json entries that map its columns and tags', async () => {
    const store = new DatasetStore(tmp());
    const { ref } = store.publish({ name: 'demo', samples: [sample, { ...sample, id: 's-2', split: 'task-awareness' }], tools: TOOLS, rejects: [], manifest: draftManifest('fp') });
    const out = tmp();
    const notices: string[] = [];
    const files = await exportShareGpt(store.sampleSource(ref), store.tools(ref), out, ref, { notice: (line) => notices.push(line) });
    expect(files.map((f) => f.slice(out.length + 1))).toEqual(['task_awareness.jsonl', 'train.jsonl', 'dataset_info.json']);
    const tags = { role_tag: 'from', content_tag: 'value', user_tag: 'human', assistant_tag: 'gpt', observation_tag: 'observation', function_tag: 'function_call' };
    const columns = { messages: 'conversations', tools: 'tools' };
    expect(JSON.parse(readFileSync(join(out, 'dataset_info.json'), 'utf8'))).toEqual({
      'demo-v1-task_awareness': { file_name: 'task_awareness.jsonl', formatting: 'sharegpt', columns, tags },
      'demo-v1-train': { file_name: 'train.jsonl', formatting: 'sharegpt', columns, tags },
    });
    expect(readJsonl(join(out, 'train.jsonl'))).toEqual([sampleToShareGpt(sample).row]);
    expect(notices).toEqual(["sharegpt: 2 thought(s) left out (a function_call value is JSON only; a reply is the turn's text)"]);
  });

  it('refuses a sample LLaMA-Factory would skip, naming it and what is wrong', async () => {
    const store = new DatasetStore(tmp());
    const twoUsers = { ...sample, id: 's-3', dialogue: [{ role: 'user' as const, content: 'Hi' }, { role: 'user' as const, content: 'Hello?' }, { role: 'assistant' as const, content: 'Hello.' }], expected: {} };
    const { ref } = store.publish({ name: 'bad', samples: [twoUsers], tools: [], rejects: [], manifest: draftManifest('fp') });
    await expect(exportShareGpt(store.sampleSource(ref), [], tmp(), ref)).rejects.toThrow('sample s-3 (split train) is not a row LLaMA-Factory takes: conversations[1].from is "human" where gpt or function_call must stand');
  });

  const llamaFactory = peerFiles('hiyouga/LLaMA-Factory', ['src/llamafactory/data']);
  it.skipIf(!pythonHasDatasets || !llamaFactory)("LLaMA-Factory's own parser, loader call and SharegptDatasetConverter take every row and skip a broken one (skipped without python3 with datasets or a LLaMA-Factory checkout)", () => {
    const out = tmp();
    writeFileSync(join(out, 'rows.jsonl'), [sampleToShareGpt(sample).row, { ...sampleToShareGpt(sample).row, conversations: [{ from: 'human', value: 'a' }, { from: 'human', value: 'b' }] }].map((r) => JSON.stringify(r)).join('\n') + '\n');
    writeFileSync(join(out, 'dataset_info.json'), JSON.stringify({ demo: { file_name: 'rows.jsonl', formatting: 'sharegpt', columns: { messages: 'conversations', tools: 'tools' } } }));
    expect(runLlamaFactory(out, ['qwen'])).toEqual({ 'rows.jsonl': { rows: 2, converted: 1, skipped: 1, function_calls: 2, formatter_failures: { qwen: {} } } });
  }, 300_000);
});

/** LLaMA-Factory's data code (test/helpers/llamafactory_check.py) over an export folder: per file, rows converted and skipped, and formatter failures per tool format. */
function runLlamaFactory(folder: string, toolFormats: string[]): Record<string, { rows: number; converted: number; skipped: number; function_calls: number; formatter_failures: Record<string, Record<string, number>> }> {
  const src = join(peerFiles('hiyouga/LLaMA-Factory', ['src/llamafactory/data', 'src/llamafactory/extras'])!, 'src');
  const script = new URL('./helpers/llamafactory_check.py', import.meta.url).pathname;
  const run = spawnSync('python3', [script, src, folder, ...toolFormats], { encoding: 'utf8', maxBuffer: 1 << 28 });
  if (run.status !== 0) throw new Error(`llamafactory_check.py failed: ${run.stderr.slice(-2000)}`);
  return (JSON.parse(run.stdout) as { datasets: ReturnType<typeof runLlamaFactory> }).datasets;
}

/**
 * Each recipe's default offline version exported with `--format sharegpt`: every row is one
 * LLaMA-Factory takes (its rules in stages/export/sharegpt-validate.ts), carries the row's calls and
 * results as the trl export does, and, where Python and a checkout are here, LLaMA-Factory's own code
 * converts every one.
 */
for (const name of ['mtu', 'toole', 'nestools', 'tooltalk', 'acebench']) {
  describe(`${name}: every sharegpt row of the default version is one LLaMA-Factory takes`, () => {
    const run = defaultRun(name);
    let folder: string;
    let trlFolder: string;
    beforeAll(async () => {
      folder = await run.exportAs('sharegpt');
      trlFolder = await run.exportAs('trl');
    }, 900_000);

    it('every row passes the rules, and carries each trl row\'s user texts, calls, results and replies', () => {
      const info = JSON.parse(readFileSync(join(folder, 'dataset_info.json'), 'utf8')) as Record<string, { file_name: string }>;
      expect(Object.keys(info)).toHaveLength(Object.keys(run.manifest.counts.bySplit).length);
      let rows = 0;
      const problems: string[] = [];
      for (const { file_name } of Object.values(info)) {
        const trl = new Map(readJsonl<TrlRow>(join(trlFolder, 'jsonl', file_name)).map((row) => [row.id, row]));
        for (const row of readJsonl<ShareGptRow>(join(folder, file_name))) {
          rows++;
          problems.push(...shareGptRowProblems(row).map((p) => `${row.id}: ${p}`));
          const source = trl.get(row.id)!;
          const of = (from: string) => row.conversations.filter((m) => m.from === from).map((m) => JSON.parse(from === 'human' || from === 'gpt' ? JSON.stringify(m.value) : m.value) as unknown);
          // An observation answers the function_call before it: a list of results for a list of calls.
          const results = row.conversations.flatMap((m, i) => (m.from !== 'observation' ? [] : Array.isArray(JSON.parse(row.conversations[i - 1].value)) ? (JSON.parse(m.value) as unknown[]) : [JSON.parse(m.value)]));
          const carried = isDeepStrictEqual(
            { human: of('human'), gpt: of('gpt'), calls: of('function_call').flat(), results, tools: row.tools },
            {
              human: source.messages.filter((m) => m.role === 'user').map((m) => m.content),
              gpt: source.messages.filter((m) => m.role === 'assistant' && !m.tool_calls).map((m) => m.content),
              calls: source.messages.flatMap((m) => m.tool_calls ?? []).map((c) => ({ name: c.function.name, arguments: c.function.arguments })),
              results: source.messages.filter((m) => m.role === 'tool').map((m) => JSON.parse(m.content)),
              tools: JSON.stringify(source.tools),
            },
          );
          if (!carried) problems.push(`${row.id}: does not carry its trl row`);
        }
      }
      expect(problems.slice(0, 5)).toEqual([]);
      expect(rows).toBe(run.manifest.counts.samples);
    }, 300_000);

    it.skipIf(!pythonHasDatasets || !hasPeer('hiyouga/LLaMA-Factory'))("LLaMA-Factory's own code converts every row, and its qwen, llama3 and mistral tool formats read every call and tools text (skipped without python3 with datasets or a LLaMA-Factory checkout)", () => {
      const report = runLlamaFactory(folder, ['qwen', 'llama3', 'mistral']);
      const totals = Object.values(report).reduce((sum, file) => ({ rows: sum.rows + file.rows, converted: sum.converted + file.converted }), { rows: 0, converted: 0 });
      expect(totals).toEqual({ rows: run.manifest.counts.samples, converted: run.manifest.counts.samples });
      expect(Object.values(report).flatMap((file) => Object.entries(file.formatter_failures).filter(([, failures]) => Object.keys(failures).length))).toEqual([]);
    }, 900_000);
  });
}
