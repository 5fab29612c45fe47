import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createGateway, type LlmGateway } from '../core/llm/index.ts';
import { AnswerError, parseAnswer } from '../core/llm/structured.ts';
import type { PromptFile } from '../core/prompt.ts';
import { runPipeline } from '../core/run.ts';
import { standaloneContext } from '../core/stage.ts';
import { DatasetStore } from '../core/store.ts';
import { toolePipeline } from '../pipelines/toole.ts';
import { readRewrittenTask } from '../prompts/nestools-rewrite-text.ts';
import detailsPrompt from '../prompts/toole-details.ts';
import directPrompt from '../prompts/toole-direct.ts';
import { checkProgram } from '../stages/nestools/check-program.ts';
import { parseProgram } from '../stages/nestools/parse-program.ts';
import { detailsHandler } from '../stages/toole/details.ts';
import { directHandler } from '../stages/toole/direct.ts';
import { emotionalHandler } from '../stages/toole/emotional.ts';
import { jobStage } from '../stages/toole/jobs.ts';
import { jobItem, type TooleItem } from '../stages/toole/records.ts';
import { startOpenAiServer, type OpenAiTestServer, type RecordedRequest } from './helpers/openai-server.ts';
import { versionSamples, versionRejects } from './helpers/version.ts';

/**
 * Model chatter is never data: garbage, refusals in words and cut-off answers, fed to every
 * prompt's reader and through the real gateway, end in a repair and then a reject with a reason.
 */

const GARBAGE = [
  'Sure! Here is what you asked: {not json',
  '{"queries": ["Find me a hotel in Rome", "Book a',
  '<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>',
  '```json\n{"answer": \n```',
  'Sure! I would be happy to help with that.',
  '',
  '  \n ',
];
const REFUSALS = [
  'I cannot help with that request.',
  "I'm sorry, but I can't assist with that.",
  'Sorry, I am unable to help with this.',
  'As an AI language model, I cannot generate these messages.',
];
/** Answers cut off before anything usable (a cut inside an item is the gateway's `truncated`). */
const TRUNCATED = ['Sure! Here are ten examples of what users might say:', 'Sure! Here are ten examples of what users might say:\n\n1.', 'Certainly', '{"description": "A tool that'];
const FAULTS = [...GARBAGE, ...REFUSALS, ...TRUNCATED];
const UNUSABLE = ['empty_answer', 'invalid_json', 'schema_invalid', 'no_list', 'chatter'];

const PROMPTS_DIR = fileURLToPath(new URL('../prompts/', import.meta.url));

/** Every prompt file's prompts (default and named exports). */
async function allPrompts(): Promise<PromptFile<any, any>[]> {
  const found = new Map<string, PromptFile<any, any>>();
  for (const file of readdirSync(PROMPTS_DIR).filter((f) => f.endsWith('.ts')).sort()) {
    const module = (await import(pathToFileURL(join(PROMPTS_DIR, file)).href)) as Record<string, unknown>;
    for (const value of Object.values(module)) {
      const prompt = value as PromptFile<any, any>;
      if (prompt && typeof prompt === 'object' && typeof prompt.id === 'string' && typeof prompt.render === 'function' && prompt.schema) found.set(prompt.id, prompt);
    }
  }
  return [...found.values()];
}

/** The reason reading `text` with `prompt` fails for, or the value it yields (a fault if it does). */
function read(prompt: PromptFile<any, any>, text: string): { reason: string } | { value: unknown } {
  try {
    return { value: parseAnswer(prompt, text) };
  } catch (error) {
    if (error instanceof AnswerError) return { reason: error.reason };
    throw error;
  }
}

const LIST_PROMPTS = ['toole/direct', 'toole/emotional', 'toole/keywords', 'toole/keyword-queries', 'toole/multi-tool'];
const TEXT_PROMPTS = ['toole/details', 'nestools/normalise-query', 'nestools/refine-query', 'nestools/remove-conjunctions', 'nestools/generate'];

describe("every recipe's answer readers", () => {
  let prompts: PromptFile<any, any>[];
  beforeAll(async () => {
    prompts = await allPrompts();
  });

  it('cover the prompts of mtu, toole and nestools', () => {
    const ids = prompts.map((p) => p.id);
    for (const recipe of ['mtu/', 'toole/', 'nestools/', 'metatool/']) expect(ids.some((id) => id.startsWith(recipe)), recipe).toBe(true);
    for (const id of [...LIST_PROMPTS, ...TEXT_PROMPTS, 'mtu/thought', 'mtu/compose', 'toole/reassign-query', 'metatool/merge-description']) expect(ids).toContain(id);
  });

  it('turn no garbage, refusal or cut-off answer into data', () => {
    const leaked: string[] = [];
    for (const prompt of prompts) {
      for (const text of FAULTS) {
        const outcome = read(prompt, text);
        if ('value' in outcome) {
          // The NesTools program answer is read by the check stage: there it must fail.
          if (prompt.id === 'nestools/generate' && !programPasses((outcome.value as { answer: string }).answer)) continue;
          leaked.push(`${prompt.id} ← ${JSON.stringify(text)}: ${JSON.stringify(outcome.value)}`);
        } else if (!UNUSABLE.includes(outcome.reason)) leaked.push(`${prompt.id} ← ${JSON.stringify(text)}: unexpected reason ${outcome.reason}`);
      }
    }
    expect(leaked).toEqual([]);
  });

  it('call an answer without a list no_list, and talk instead of a text chatter', () => {
    for (const id of LIST_PROMPTS) {
      const prompt = prompts.find((p) => p.id === id)!;
      for (const text of ['Sure! Here is what you asked: {not json', 'I cannot help with that request.', ...REFUSALS, ...TRUNCATED]) expect(read(prompt, text), `${id} ← ${text}`).toEqual({ reason: 'no_list' });
      expect(read(prompt, ''), id).toEqual({ reason: 'empty_answer' });
    }
    for (const id of TEXT_PROMPTS) {
      const prompt = prompts.find((p) => p.id === id)!;
      for (const text of ['Sure! Here is what you asked: {not json', ...REFUSALS, 'Sure! Here are ten examples of what users might say:']) expect(read(prompt, text), `${id} ← ${text}`).toEqual({ reason: 'chatter' });
    }
  });

  it('still read real answers, preambles dropped, and leave user wording alone', () => {
    const details = (text: string) => read(detailsPrompt, text);
    expect(details('Sure! Here is the rewritten message: "Find a hotel in Lima for 3 nights from 4 May."')).toEqual({ value: { query: 'Find a hotel in Lima for 3 nights from 4 May.' } });
    expect(details("Here's the rewritten message:\n\nI can't help but wonder whether it will rain in Oslo on Saturday.")).toEqual({ value: { query: "I can't help but wonder whether it will rain in Oslo on Saturday." } });
    expect(details('Here is my budget: $500. Find me a hotel in Lima for 3 nights.')).toEqual({ value: { query: 'Here is my budget: $500. Find me a hotel in Lima for 3 nights.' } });
    expect(details("I can't help my son with algebra; find a tutor near Leeds for Tuesdays.")).toHaveProperty('value');
    expect(readRewrittenTask('Sure! Here is the rewritten task:\n```\nBook a table for 4 at Nopa at 7 pm.\n```')).toBe('Book a table for 4 at Nopa at 7 pm.');
    expect(readRewrittenTask('Rewritten task: "Order 2 pizzas to 5 Main St."')).toBe('Order 2 pizzas to 5 Main St.');
    expect(read(directPrompt, 'Sure! Here are two:\n1. User: Plan a trip to Kyoto.\n2. User: Book a ryokan.')).toEqual({ value: { queries: ['Plan a trip to Kyoto.', 'Book a ryokan.'] } });
  });
});

/** Whether a NesTools answer would pass the program check (and so become a sample). */
function programPasses(answer: string): boolean {
  try {
    return checkProgram(parseProgram(answer), { strict: false }).ok;
  } catch {
    return false;
  }
}

// ------------------------------------------------------------------ through the gateway

let server: OpenAiTestServer;
const homes: string[] = [];
const gateways: LlmGateway[] = [];
beforeAll(async () => {
  server = await startOpenAiServer();
});
afterAll(async () => {
  await server.close();
});
afterEach(async () => {
  for (const gateway of gateways.splice(0)) await gateway.close();
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
  server.reset();
});

/** The real gateway (openai backend, default repairs) against the local server, in a fresh home. */
function gateway(): { llm: LlmGateway; home: string } {
  const home = mkdtempSync(join(tmpdir(), 'toolkiln-chatter-'));
  homes.push(home);
  const llm = createGateway({ backend: 'openai', model: 'test-model', home, env: { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: server.baseURL }, retryBaseMs: 5, requestTimeoutMs: 5000 });
  gateways.push(llm);
  return { llm, home };
}

function contextFor(key: string) {
  const { llm, home } = gateway();
  return standaloneContext({ llm, runDir: home, key });
}

const userText = (request: RecordedRequest) => String(request.body.messages.find((m: { role: string }) => m.role === 'user')?.content ?? '');
const isRepair = (request: RecordedRequest) => request.body.messages.some((m: { role: string }) => m.role === 'assistant');

const TOOL = { name: 'hotel_deals', nameForHuman: 'Hotel Deals', description: 'A better deal on your next hotel or motel booking.', descriptionForModel: 'Search hotel offers by city, dates and budget.' };

describe('a ToolE generation stage through the gateway', () => {
  const stage = jobStage({ name: 'toole-generate', version: 1, handlers: { direct: directHandler({ details: false }) } });
  const job = jobItem({ method: 'direct', tools: [TOOL], count: 3, round: 1 });
  const run = async () => stage.run(job, contextFor(job.id));

  it('rejects chatter as no_list after one repair round', async () => {
    server.setResponder('chat', () => ({ content: 'Sure! Here is what you asked: {not json' }));
    const result = await run();
    expect(result).toMatchObject({ reject: true, reason: 'no_list' });
    expect((result as { detail: string }).detail).toMatch(/no numbered list.*after 1 repair attempt/);
    expect(server.count('chat')).toBe(2);
    const repair = server.requests[1].body.messages;
    expect(repair.at(-2)).toEqual({ role: 'assistant', content: 'Sure! Here is what you asked: {not json' });
    expect(repair.at(-1).content).toMatch(/no numbered list/);
  });

  it('rejects a refusal in words the same way, and takes the list a repair brings', async () => {
    server.setResponder('chat', () => ({ content: 'I cannot help with that request.' }));
    expect(await run()).toMatchObject({ reject: true, reason: 'no_list' });
    server.reset();
    server.setResponder('chat', (request) => ({ content: isRepair(request) ? '1. User: Find a hotel in Lima under $90.\n2. User: Any motels near Oslo airport?' : 'I cannot help with that request.' }));
    const items = (await run()) as TooleItem[];
    expect(items.map((item) => item.kind === 'query' && item.query.text)).toEqual(['Find a hotel in Lima under $90.', 'Any motels near Oslo airport?']);
  });

  it('names the job kind in the reason of a failed request when the stage answers several kinds', async () => {
    server.setResponder('chat', () => ({ content: 'Sure! Here is what you asked: {not json' }));
    const several = jobStage({ name: 'toole-generate', version: 1, handlers: { emotional: emotionalHandler, direct: directHandler({ details: false }) } });
    expect(await several.run(job, contextFor(job.id))).toMatchObject({ reject: true, reason: 'direct:no_list', detail: expect.stringMatching(/no numbered list/) });
  });

  it('rejects an answer cut off by the token limit as truncated, never reading it', async () => {
    server.setResponder('chat', () => ({ content: '1. User: Find a hotel in Li', finishReason: 'length' }));
    expect(await run()).toMatchObject({ reject: true, reason: 'truncated' });
  });

  it('rejects a details rewrite that is talk as chatter', async () => {
    server.setResponder('chat', () => ({ content: "I'm sorry, but I can't assist with that." }));
    const details = jobStage({ name: 'toole-generate-followups', version: 1, handlers: { details: detailsHandler } });
    const base = { id: 'q:base', text: 'Find a hotel in Lima.', tool: TOOL.name, method: 'direct' as const, generatedFor: TOOL.name, checks: [], tags: [], lineage: [] };
    const item = jobItem({ method: 'details', tools: [TOOL], count: 1, round: 1, base });
    const result = await details.run(item, contextFor(item.id));
    expect(result).toMatchObject({ reject: true, reason: 'chatter' });
    expect(server.count('chat')).toBe(2);
  });
});

describe('the ToolE recipe against an endpoint that talks', () => {
  const CHATTER = ['Sure! Here is what you asked: {not json', 'I cannot help with that request.', "I'm sorry, but I can't assist with that.", 'Sure! Here are ten examples of what users might say:'];
  const DOOMED = 'cheap flights between any two airports'; // flight_finder's description: every answer about it is talk, repairs included

  /** Talk on every first attempt; on the repair a real answer, except about the doomed tool. */
  function responder(request: RecordedRequest) {
    const text = userText(request);
    const n = server.count('chat');
    const format = request.body.response_format?.json_schema?.name as string | undefined;
    if (format === 'toole_reassign-query') return { content: JSON.stringify({ tool: /- ([^:\n]+):/.exec(text)![1] }) };
    if (format) return { content: JSON.stringify({ description: 'Find, compare and book what a trip needs.' }) };
    if (!isRepair(request) || text.includes(DOOMED)) return { content: CHATTER[n % CHATTER.length] };
    if (text.includes('Rewrite the message')) return { content: `Sure! Here is the rewritten message: "Find a quiet place in Lima for 3 nights from ${n} May."` };
    if (text.includes('words or short phrases')) return { content: '1. city breaks\n2. prices\n3. reviews' };
    if (text.includes('For each label')) return { content: `1. city breaks: Plan a weekend in Porto number ${n}.\n2. prices: What does a week in Quito cost, case ${n}?\n3. reviews: Which places in Hanoi have the best reviews, list ${n}?` };
    if (text.includes('BOTH tools')) return { content: `1. (parallel) User: Two errands, number ${n}: one for each service in Oslo.\n2. (causal) User: Take what the first finds in Lima and use it for errand ${n}.` };
    return { content: `1. User: I need help with errand ${n} in Lisbon this weekend.\n2. User: What are my options for errand ${n} in Denver?` };
  }

  it('publishes no chatter: talk ends in repairs, then a sample or a no_list / chatter reject', async () => {
    server.setResponder('chat', responder);
    const { llm, home } = gateway();
    const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/toole/${name}`, import.meta.url));
    const projectDir = fileURLToPath(new URL('..', import.meta.url));
    const result = await runPipeline({
      pipeline: toolePipeline,
      configOverrides: {
        source: { file: fixture('plugins.json') },
        generation: { direct: { rounds: 1, perRound: 2 }, emotional: { perEmotion: 2 }, keyword: { keywords: 3 } },
        overlap: { decisions: fixture('decisions.json'), undecided: 'keep', silhouetteClusters: [2, 3], plotClusters: 3 },
        multiTool: { topTools: 3, perPair: 2 },
        tasks: { awareness: { noToolFile: fixture('no-tool.jsonl') }, similar: { perTool: 1, candidates: 3 }, reliability: { perTool: 1, candidates: 2, excludeSimilar: 1 }, multiTool: { candidates: 4, excludeSimilar: 1 }, scenario: { popularity: [3], groups: [], perTool: 1 } },
        statistics: { reference: null },
      },
      llm,
      home,
      projectDir,
      cwd: projectDir,
      progress: { quiet: true },
    });
    expect(result.status).toBe('published');
    const store = new DatasetStore(home);
    const samples = versionSamples(store, result.ref!);
    const rejects = versionRejects(store, result.ref!);
    const queries = samples.map((s) => s.dialogue.find((t) => t.role === 'user')!.content);
    expect(queries.some((q) => q.includes('errand'))).toBe(true);
    for (const q of queries) expect(q, q).not.toMatch(/not json|cannot help|can't assist|Here are ten|Sure!|Here is the rewritten/);
    // Every talk about the doomed tool ended in a reject naming why, after exactly one repair.
    const reasons = new Set(rejects.map((r) => r.reason.replace(/^[\w-]+:/, '')));
    expect(reasons).toContain('no_list');
    const doomed = server.requests.filter((r) => userText(r).includes(DOOMED) && !r.body.response_format);
    const conversations = new Map<string, number>();
    for (const r of doomed) conversations.set(userText(r), (conversations.get(userText(r)) ?? 0) + 1);
    expect(conversations.size).toBeGreaterThan(0);
    for (const [text, requests] of conversations) expect(requests, text.slice(0, 80)).toBe(2);
    for (const stage of result.stats) expect(stage.out + stage.rejected - stage.fanned, stage.stage).toBe(stage.in);
  }, 60_000);
});
