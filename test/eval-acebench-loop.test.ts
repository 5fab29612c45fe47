import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway } from '../core/llm/index.ts';
import { OfflineGateway } from '../core/llm/offline.ts';
import type { Sample } from '../core/records.ts';
import { runPipeline } from '../core/run.ts';
import { samplesInMemory } from '../core/sample-source.ts';
import { DatasetStore } from '../core/store.ts';
import { evaluate } from '../eval/run.ts';
import { getPipeline } from '../pipelines/index.ts';
import { aceMetaOf } from '../stages/acebench/format.ts';
import { importAceFolder } from '../stages/acebench/import.ts';
import { acebenchScorer as scorer } from '../stages/acebench/score.ts';
import { tempDirs } from './helpers/files.ts';
import { startOpenAiServer, type OpenAiTestServer, type RecordedRequest } from './helpers/openai-server.ts';

const RELEASED = '../shared/data/reference/acebench';
const tmp = tempDirs('tk-eval-acebench-loop-');

type Message = { role: string; content: string };
const messagesOf = (request: RecordedRequest) => request.body.messages as Message[];
const isUserSimulator = (request: RecordedRequest) => messagesOf(request)[0].content.startsWith('You are a user talking with an agent');

interface ItemLine {
  id: string;
  category: string;
  output: string | null;
  figures: Record<string, number | boolean>;
  interaction?: { steps: number; note?: string; transcript: { role: string; text?: string | null; call?: string; ok?: boolean; result?: unknown }[] };
}
const itemLines = (dir: string) =>
  readFileSync(join(dir, 'items.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as ItemLine);

describe('ACEBench agent tasks with the model in the loop', () => {
  let released: Sample[];
  const sampleOf = (language: string, id: string) => released.find((s) => aceMetaOf(s).language === language && aceMetaOf(s).id === id)!;
  beforeAll(() => {
    released = [...importAceFolder(RELEASED)];
  });

  it("the oracle in the loop scores 1.0 on the recipe's offline version (agent tasks run in the sandboxes, the user replayed); the noisy oracle falls", async () => {
    const home = tmp();
    await runPipeline({ pipeline: getPipeline('acebench'), configOverrides: { scale: 0.05, tree: { domains: 6 } }, llm: new OfflineGateway(42), home, projectDir: process.cwd(), progress: { quiet: true } });
    const store = new DatasetStore(home);
    const ref = store.resolve('acebench@v1');
    const outDir = tmp();
    const result = await evaluate({ scorer, samples: store.sampleSource(ref), version: ref, model: { kind: 'oracle' }, outDir });
    expect(result.report.metrics).toEqual({ normal: 1, special: 1, agent: 1, agent_process: 1, overall: 1 });
    const lines = itemLines(outDir);
    const agent = lines.filter((l) => l.category.startsWith('agent'));
    expect(new Set(agent.map((l) => l.category))).toEqual(new Set(['agent_multi_step', 'agent_multi_turn']));
    // Only the agent tasks are interactive; every other item is answered once.
    expect(result.interaction).toMatchObject({ mode: 'model in the loop', items: agent.length, capped: 0 });
    expect(lines.filter((l) => !l.category.startsWith('agent')).every((l) => l.interaction === undefined)).toBe(true);
    for (const line of agent) {
      const transcript = line.interaction!.transcript;
      expect(transcript.filter((e) => e.role === 'call').every((e) => e.ok)).toBe(true);
      // multi_turn: the stand-in user opens with the instruction and closes the dialogue.
      if (line.category === 'agent_multi_turn') {
        expect(transcript[0].role).toBe('user');
        expect(transcript.at(-1)).toEqual({ role: 'user', text: 'finish conversation' });
      } else expect(transcript.at(-1)).toEqual({ role: 'model', text: 'finish conversation' });
    }

    // Seed 7 changes a step of some agent tasks (the offline version has only a few).
    const noisyDir = tmp();
    const noisy = await evaluate({ scorer, samples: store.sampleSource(ref), version: ref, model: { kind: 'noisy-oracle', seed: 7 }, outDir: noisyDir });
    const changed = (itemLines(noisyDir) as (ItemLine & { corruption?: string })[]).filter((l) => l.category.startsWith('agent') && l.corruption && !l.corruption.includes('skipped'));
    expect(changed.length).toBeGreaterThan(0);
    expect(changed.some((l) => l.figures.valid === false)).toBe(true);
    expect(noisy.report.metrics.agent).toBeLessThan(1);
    expect(noisy.report.metrics.normal).toBeLessThan(1);
  }, 300_000);

  describe('a model behind the gateway', () => {
    let server: OpenAiTestServer;
    beforeAll(async () => {
      server = await startOpenAiServer();
    });
    afterAll(() => server.close());
    const gateway = () => createGateway({ backend: 'openai', noCache: true, model: 'test-model', maxRetries: 0, maxRepairs: 0, env: { OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: 'sk-test' } });

    it('plays the user through the gateway: the simulated user opens, the agent\'s calls run in the sandbox and their results come back, its text goes to the user, who ends it', async () => {
      server.reset();
      // en agent_multi_turn_0: Grace sends Frank a message; Wi-Fi is off and the inbox is full (delete the oldest).
      const agentSteps = ['[turn_on_wifi()]', '[get_earliest_message_id()]', '[delete_message(message_id=3)]', "[send_message(sender_name='Grace', receiver_name='Frank', message='Are you free tomorrow to have lunch with me?')]", 'I sent your message to Frank.'];
      server.setResponder('chat', (request) => {
        const messages = messagesOf(request);
        if (isUserSimulator(request)) {
          const own = messages.filter((m) => m.role === 'assistant').length;
          return { content: own === 0 ? "Hi, I'm Grace. Please send Frank the message 'Are you free tomorrow to have lunch with me?'" : 'finish conversation' };
        }
        return { content: agentSteps[messages.filter((m) => m.role === 'assistant').length] ?? 'finish conversation' };
      });
      const llm = gateway();
      const outDir = tmp();
      const result = await evaluate({ scorer, samples: samplesInMemory([sampleOf('en', 'agent_multi_turn_0')]), model: { kind: 'llm', llm }, outDir });
      expect(llm.usage().byStage['eval-user'].requests).toBe(2);
      await llm.close();

      const userRequests = server.requests.filter(isUserSimulator);
      const agentRequests = server.requests.filter((r) => !isUserSimulator(r));
      expect(userRequests).toHaveLength(2);
      expect(agentRequests).toHaveLength(5);
      // The simulated user is given the task's instruction; its opening line is what the agent sees first.
      expect(messagesOf(userRequests[0])[0].content).toContain('Instruction: Your name is Grace');
      expect(messagesOf(agentRequests[0]).at(-1)).toEqual({ role: 'user', content: expect.stringContaining("Hi, I'm Grace") });
      // The second agent request holds the execution result of its first call.
      expect(messagesOf(agentRequests[1]).at(-1)!.content).toMatch(/^execution result: .*Wi-Fi has been turned on/);
      // The agent's text went to the user, who ended the dialogue.
      expect(messagesOf(userRequests[1]).at(-1)).toEqual({ role: 'user', content: 'I sent your message to Frank.' });
      expect(result.units[0][0].figures).toEqual({ valid: true, process: 1 });
      expect(JSON.parse(itemLines(outDir)[0].output!)).toEqual(agentSteps.slice(0, 4));
    });

    it('another model plays the simulated user when one is given (userLlm, --user-model), and its requests count in the usage', async () => {
      server.reset();
      const agentSteps = ['[turn_on_wifi()]', '[get_earliest_message_id()]', '[delete_message(message_id=3)]', "[send_message(sender_name='Grace', receiver_name='Frank', message='Are you free tomorrow to have lunch with me?')]", 'I sent your message to Frank.'];
      server.setResponder('chat', (request) => {
        const messages = messagesOf(request);
        if (isUserSimulator(request)) return { content: messages.some((m) => m.role === 'assistant') ? 'finish conversation' : "Hi, I'm Grace. Please send Frank the message 'Are you free tomorrow to have lunch with me?'" };
        return { content: agentSteps[messages.filter((m) => m.role === 'assistant').length] ?? 'finish conversation' };
      });
      const llm = gateway();
      const userLlm = createGateway({ backend: 'openai', noCache: true, model: 'user-model', maxRetries: 0, maxRepairs: 0, env: { OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: 'sk-test' } });
      const result = await evaluate({ scorer, samples: samplesInMemory([sampleOf('en', 'agent_multi_turn_0')]), model: { kind: 'llm', llm, userLlm }, outDir: tmp() });
      await Promise.all([llm.close(), userLlm.close()]);
      const modelOf = (request: RecordedRequest) => request.body.model as string;
      expect(server.requests.filter(isUserSimulator).map(modelOf)).toEqual(['user-model', 'user-model']);
      expect(new Set(server.requests.filter((r) => !isUserSimulator(r)).map(modelOf))).toEqual(new Set(['test-model']));
      expect(result.usage!.byStage['eval-user'].requests).toBe(2);
      expect(result.usage!.byStage['eval'].requests).toBe(5);
      expect(result.units[0][0].figures).toEqual({ valid: true, process: 1 });
    });

    it('a model that keeps calling hits the cap of 40 messages; the state and mile_stone reached are scored as ACEBench scores them (hand-computed)', async () => {
      server.reset();
      server.setResponder('chat', () => ({ content: '[turn_on_wifi()]' }));
      const llm = gateway();
      const outDir = tmp();
      // en agent_multi_step_2: mile_stone [turn_on_wifi()], [login_food_platform(…)], [add_food_delivery_order(…)].
      const result = await evaluate({ scorer, samples: samplesInMemory([sampleOf('en', 'agent_multi_step_2')]), model: { kind: 'llm', llm }, outDir });
      await llm.close();
      // 40 messages: 20 from the agent, 20 execution results; the 20 calls all run.
      expect(server.count('chat')).toBe(20);
      expect(result.interaction).toMatchObject({ items: 1, steps: 20, capped: 1 });
      // The end state lacks the order (invalid); the first mile_stone step is found, then neither other: 1/3.
      expect(result.units[0][0].figures).toEqual({ valid: false, process: 1 / 3 });
      const [line] = itemLines(outDir);
      expect(line.interaction!.note).toContain('cap of 40 messages');
      expect(line.interaction!.transcript.filter((e) => e.role === 'call')).toHaveLength(20);
    });
  });
});
