import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../bin/cli.ts';
import { createGateway } from '../core/llm/index.ts';
import { OfflineGateway } from '../core/llm/offline.ts';
import { runPipeline } from '../core/run.ts';
import { samplesInMemory } from '../core/sample-source.ts';
import { DatasetStore } from '../core/store.ts';
import { evaluate } from '../eval/run.ts';
import { getPipeline } from '../pipelines/index.ts';
import { importConversationFile } from '../stages/tooltalk/import.ts';
import { createToolTalkScorer, tooltalkScorer } from '../stages/tooltalk/score.ts';
import { tempDirs } from './helpers/files.ts';
import { startOpenAiServer, type OpenAiTestServer, type RecordedRequest } from './helpers/openai-server.ts';

const RELEASED = '../shared/data/reference/tooltalk';
const tmp = tempDirs('tk-eval-tooltalk-loop-');
const PERFECT = { precision: 1, recall: 1, action_precision: 1, incorrect_action_rate: 0, success_rate: 1 };

// AccountTools-Alarm-Calendar-AddAlarm-0: assistant turns 1 (no call), 3 (RegisterUser), 5 (CreateEvent, AddAlarm).
const HARD = 'tooltalk/AccountTools-Alarm-Calendar-AddAlarm-0.json';
const REGISTER = { api_name: 'RegisterUser', parameters: { username: 'hestler', password: 'Meizuch4uu', email: 'j.hester@gahoo.com', phone: '708-340-0190', name: 'Julian Hester' } };
const WRONG_EVENT = { api_name: 'CreateEvent', parameters: { name: 'Client Meeting', event_type: 'meeting', start_time: '2023-09-12 10:00:00', end_time: '2023-09-12 11:00:00', attendees: ['alice59'] } };
const ALARM = { api_name: 'AddAlarm', parameters: { time: '07:30:00' } };

type Message = { role: string; content: string };
const messagesOf = (request: RecordedRequest) => request.body.messages as Message[];

/** The turn a request belongs to (its last user message that is not an observation) and the model steps taken in it. */
function turnOf(request: RecordedRequest): { said: string; step: number } {
  const messages = messagesOf(request);
  const at = messages.length - 1 - [...messages].reverse().findIndex((m) => m.role === 'user' && !m.content.startsWith('Observation:'));
  return { said: messages[at].content, step: messages.slice(at).filter((m) => m.role === 'assistant').length };
}

interface ItemLine {
  id: string;
  output: string;
  figures: Record<string, number | boolean>;
  note?: string;
  interaction?: { steps: number; note?: string; transcript: { role: string; call?: { api_name: string }; ok?: boolean; result?: { response: unknown; exception: string | null }; text?: string | null }[] };
}
const itemLines = (dir: string) =>
  readFileSync(join(dir, 'items.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as ItemLine);

describe('ToolTalk with the model in the loop', () => {
  it("the oracle in the loop scores 1.0 on the recipe's offline version, every call executed with its result in items.jsonl; the noisy oracle falls", async () => {
    const home = tmp();
    await runPipeline({ pipeline: getPipeline('tooltalk'), configOverrides: { conversations: 4, plugins: ['Alarm', 'Calendar', 'Reminder', 'Weather', 'AccountTools'] }, llm: new OfflineGateway(42), home, projectDir: process.cwd(), progress: { quiet: true } });
    const store = new DatasetStore(home);
    const ref = store.resolve('tooltalk@v1');
    const outDir = tmp();
    const result = await evaluate({ scorer: tooltalkScorer, samples: store.sampleSource(ref), version: ref, model: { kind: 'oracle' }, outDir });
    expect(result.report.metrics).toEqual(PERFECT);
    expect(result.interaction).toMatchObject({ mode: 'model in the loop', items: result.report.items, capped: 0 });
    const lines = itemLines(outDir);
    const calls = lines.flatMap((line) => line.interaction!.transcript.filter((entry) => entry.role === 'call'));
    expect(calls.length).toBeGreaterThan(4);
    // Each executed call is recorded with its outcome; the oracle's calls all succeed as in the ground truth, or fail as it does.
    for (const line of lines) expect(JSON.parse(line.output).length).toBe(line.figures.groundTruths);
    expect(calls.every((call) => call.result && 'response' in call.result && 'exception' in call.result)).toBe(true);
    // Every turn ends with the model's reply in text.
    expect(lines.every((line) => line.interaction!.transcript.at(-1)!.role === 'model')).toBe(true);
    expect(JSON.parse(readFileSync(join(outDir, 'report.json'), 'utf8')).interaction.mode).toBe('model in the loop');

    const noisy = await evaluate({ scorer: tooltalkScorer, samples: store.sampleSource(ref), version: ref, model: { kind: 'noisy-oracle', seed: 42 }, outDir: tmp() });
    const applied = Object.values(noisy.noise!.applied).reduce((a, b) => a + b, 0);
    expect(applied).toBeGreaterThan(0);
    expect(noisy.report.metrics.success_rate).toBeLessThan(1);
    expect(noisy.report.metrics.recall).toBeLessThan(1);

    // The command line runs the noisy oracle in the loop too, and says how the items were answered.
    const out: string[] = [];
    const code = await main(['eval', 'tooltalk@v1', '--model', 'noisy-oracle', '--seed', '42'], { out: (t) => out.push(t), err: () => {}, home, cwd: home, env: {} });
    expect(code).toBe(0);
    expect(out.join('\n')).toContain(`model in the loop: ${result.report.items} item(s)`);
  }, 300_000);

  it('a predictions file is scored on gold replay, and the report says so', async () => {
    const sample = importConversationFile(RELEASED, HARD);
    const file = join(tmp(), 'answers.jsonl');
    const items = tooltalkScorer.items(sample);
    writeFileSync(file, items.map((item) => JSON.stringify({ id: item.id, output: tooltalkScorer.oracle(item) })).join('\n') + '\n');
    const result = await evaluate({ scorer: tooltalkScorer, samples: samplesInMemory([sample]), model: { kind: 'predictions', path: file, shown: 'answers.jsonl' }, outDir: tmp() });
    expect(result.report.metrics).toEqual(PERFECT);
    expect(result.interaction).toMatchObject({ mode: 'gold replay', items: 0, note: expect.stringContaining('gold replay') });
  });

  describe('a model behind the gateway', () => {
    let server: OpenAiTestServer;
    beforeAll(async () => {
      server = await startOpenAiServer();
    });
    afterAll(() => server.close());
    const gateway = (cacheDir?: string) =>
      createGateway({ backend: 'openai', ...(cacheDir ? { cacheDir } : { noCache: true }), model: 'test-model', maxRetries: 0, maxRepairs: 0, env: { OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: 'sk-test' } });

    it('runs each call, feeds its result back, and scores one wrong action as ToolTalk does (hand-computed); a re-run replays every step from the cache', async () => {
      server.reset();
      // Turn 1: a question back. Turn 3: RegisterUser, then a reply. Turn 5: a CreateEvent at the wrong time, AddAlarm, then a reply.
      server.setResponder('chat', (request) => {
        const { said, step } = turnOf(request);
        const script = said.startsWith('My name is Julian')
          ? [JSON.stringify(REGISTER), 'Your account is made.']
          : said.startsWith('Thanks, the event is')
            ? [JSON.stringify(WRONG_EVENT), JSON.stringify(ALARM), 'Done: the meeting and the alarm are set.']
            : ['What are the details?'];
        return { content: script[step] ?? 'Done.' };
      });
      const sample = importConversationFile(RELEASED, HARD);
      const cacheDir = tmp();
      const llm = gateway(cacheDir);
      const outDir = tmp();
      const result = await evaluate({ scorer: tooltalkScorer, samples: samplesInMemory([sample]), model: { kind: 'llm', llm }, outDir });
      await llm.close();
      expect(server.count('chat')).toBe(1 + 2 + 3);

      // The request after the wrong CreateEvent holds its execution result (the event it made), before AddAlarm is asked for.
      const afterWrong = server.requests.find((r) => turnOf(r).said.startsWith('Thanks, the event is') && turnOf(r).step === 1)!;
      const last = messagesOf(afterWrong).at(-1)!;
      expect(messagesOf(afterWrong).at(-2)).toEqual({ role: 'assistant', content: JSON.stringify(WRONG_EVENT) });
      expect(last.role).toBe('user');
      const observed = JSON.parse(last.content.replace(/^Observation: /, ''));
      expect(observed).toEqual({ response: { event_id: expect.any(String) }, exception: null });
      // Earlier turns' gold calls are shown with their released results.
      expect(messagesOf(afterWrong).some((m) => m.role === 'assistant' && m.content.includes('"RegisterUser"'))).toBe(true);
      expect(String(messagesOf(afterWrong)[0].content)).toContain('"api_name"');

      // By hand: 3 predictions (RegisterUser ✓, CreateEvent ✗ but it succeeded: an incorrect action, AddAlarm ✓),
      // 3 ground truths, 2 matches, 3 actions of which 1 incorrect; the conversation fails.
      expect(result.report.metrics).toEqual({ precision: 2 / 3, recall: 2 / 3, action_precision: 2 / 3, incorrect_action_rate: 1 / 3, success_rate: 0 });
      const lines = itemLines(outDir);
      expect(lines.map((l) => l.figures.incorrectActions)).toEqual([0, 0, 1]);
      const turn5 = lines[2].interaction!.transcript;
      expect(turn5.map((e) => e.role)).toEqual(['model', 'call', 'model', 'call', 'model']);
      expect(turn5[1]).toMatchObject({ call: { api_name: 'CreateEvent' }, ok: true, result: { exception: null } });

      // A re-run asks nothing: each step's request is the cached one.
      const again = gateway(cacheDir);
      const replayed = await evaluate({ scorer: tooltalkScorer, samples: samplesInMemory([sample]), model: { kind: 'llm', llm: again }, outDir: tmp() });
      expect(again.usage().total.cached).toBe(6);
      await again.close();
      expect(server.count('chat')).toBe(6);
      expect(replayed.report.metrics).toEqual(result.report.metrics);
    });

    it('a model that keeps calling hits the cap of calls per turn; the calls it made are scored as ToolTalk scores them (hand-computed)', async () => {
      server.reset();
      server.setResponder('chat', () => ({ content: JSON.stringify(ALARM) }));
      const scorer = createToolTalkScorer({ maxCallsPerTurn: 3 });
      const sample = importConversationFile(RELEASED, HARD);
      const llm = gateway();
      const outDir = tmp();
      const result = await evaluate({ scorer, samples: samplesInMemory([sample]), model: { kind: 'llm', llm }, outDir });
      await llm.close();
      // Three calls a turn, then the turn ends without asking again.
      expect(server.count('chat')).toBe(9);
      expect(result.interaction).toMatchObject({ items: 3, steps: 9, capped: 3 });
      // Turns 1 and 3: nobody is logged in, so the six AddAlarm calls fail (no incorrect action, no match).
      // Turn 5 (logged in by the gold RegisterUser): the first AddAlarm matches the gold one, the two
      // after it succeed unmatched — incorrect actions. 9 predictions, 1 match, 3 ground truths, 9 actions.
      expect(result.report.metrics).toEqual({ precision: 1 / 9, recall: 1 / 3, action_precision: 1 / 9, incorrect_action_rate: 2 / 9, success_rate: 0 });
      const lines = itemLines(outDir);
      expect(lines.map((l) => l.figures.incorrectActions)).toEqual([0, 0, 2]);
      expect(lines.every((l) => l.interaction!.note?.includes('cap of 3 calls'))).toBe(true);
    });
  });
});

