import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { main } from '../bin/cli.ts';
import { UserError } from '../core/errors.ts';
import { eachJsonl } from '../core/jsonl.ts';
import { readReply, replyOfText } from '../eval/chat-reply.ts';
import { Predictions } from '../eval/predictions.ts';
import type { TrlMessage, TrlRow, TrlToolCall } from '../stages/export/trl.ts';
import { defaultRun } from './helpers/default-run.ts';

/**
 * A model trained on `export --format trl` answers each evaluation item a row names (its `items`
 * column: the item id, and where the gold turn starts and ends); `toolkiln eval --predictions` reads
 * what such a model writes — an assistant message with `tool_calls`, a ShareGPT `function_call`
 * turn, or generated text with Hermes, Llama 3.1 JSON or Mistral calls — and scores it by the
 * benchmark's rules. The gold turns of each recipe's default version, written so in every shape,
 * score what the oracle scores; one wrong argument or one missing call scores lower.
 */

type Shape = 'messages' | 'message' | 'sharegpt' | 'hermes' | 'llama' | 'mistral';
const SHAPES: Shape[] = ['messages', 'message', 'sharegpt', 'hermes', 'llama', 'mistral'];

function* rowsOf(folder: string): Generator<TrlRow> {
  for (const file of readdirSync(join(folder, 'jsonl')).sort()) yield* eachJsonl<TrlRow>(join(folder, 'jsonl', file));
}

const plain = (calls: TrlToolCall[]) => calls.map((c) => ({ name: c.function.name, arguments: c.function.arguments }));

/** Calls as the model writes them in generated text, in each template's notation (vLLM's Hermes template writes `{"name": "f"}, "arguments": …`). */
function generated(shape: Shape, calls: TrlToolCall[]): string {
  if (shape === 'hermes') return calls.map((c) => `<tool_call>\n{"name": "${c.function.name}"}, "arguments": ${JSON.stringify(c.function.arguments)}\n</tool_call>`).join('\n');
  if (shape === 'llama') return `<|python_tag|>${calls.map((c) => JSON.stringify({ name: c.function.name, parameters: c.function.arguments })).join('; ')}`;
  return `[TOOL_CALLS] ${JSON.stringify(calls.map((c) => ({ ...plain([c])[0], id: c.id })))}</s>`;
}

/** One assistant message of the gold turn as the shape writes it. */
function step(shape: Shape, message: TrlMessage): object {
  const calls = message.tool_calls ?? [];
  if (shape === 'messages' || shape === 'message') {
    // As an OpenAI-compatible server returns it: arguments as JSON text.
    return calls.length ? { role: 'assistant', content: message.content, tool_calls: calls.map((c) => ({ ...c, function: { name: c.function.name, arguments: JSON.stringify(c.function.arguments) } })) } : { role: 'assistant', content: message.content };
  }
  if (shape === 'sharegpt') return calls.length ? { from: 'function_call', value: JSON.stringify(plain(calls)) } : { from: 'gpt', value: message.content };
  return { role: 'assistant', content: calls.length ? generated(shape, calls) : message.content };
}

/**
 * The predictions line of an item from its row: the gold turn `messages[at:end]` in the shape. A turn
 * whose calls come in several messages (a call after the result it uses) is given whole as
 * `messages`, the results between them as the model was shown them.
 */
function predictionLine(shape: Shape, row: TrlRow, item: TrlRow['items'][number]): object {
  const turn = row.messages.slice(item.at, item.end);
  const answers = turn.filter((m) => m.role === 'assistant');
  if (shape === 'messages' || answers.filter((m) => m.tool_calls).length > 1) {
    return { id: item.id, messages: turn.map((m) => (m.role !== 'tool' ? step(shape, m) : shape === 'sharegpt' ? { from: 'observation', value: m.content } : m)) };
  }
  const answer = answers.find((m) => m.tool_calls) ?? answers[0];
  if (shape === 'message' || shape === 'sharegpt') return { id: item.id, message: step(shape, answer) };
  return { id: item.id, text: answer.tool_calls ? generated(shape, answer.tool_calls) : answer.content };
}

const RECIPES = [
  // recipe, metrics where lower is better, the metric a wrong argument lowers (none: answers carry no values), the metric a missing call lowers
  { name: 'mtu', lower: [] as string[], wrongArgument: 'turn_success_rate', missingCall: 'tool_number_accuracy' },
  { name: 'toole', lower: ['multi-tool_1/1', 'multi-tool_1/2'], wrongArgument: null, missingCall: 'multi-tool_csr' },
  { name: 'nestools', lower: [], wrongArgument: 'parameter_f1', missingCall: 'api_recall' },
  { name: 'tooltalk', lower: ['incorrect_action_rate'], wrongArgument: 'success_rate', missingCall: 'recall' },
  { name: 'acebench', lower: [], wrongArgument: 'overall', missingCall: 'overall' },
];

for (const recipe of RECIPES) {
  describe(`${recipe.name}: a model trained on the trl export, scored by eval`, () => {
    const run = defaultRun(recipe.name);
    let rows: TrlRow[];
    let scratch: string;
    beforeAll(async () => {
      rows = [...rowsOf(await run.exportAs('trl'))];
      scratch = mkdtempSync(join(tmpdir(), `tk-chat-predictions-${recipe.name}-`));
    }, 900_000);

    const evalOf = async (file: string, lines: object[]) => {
      const path = join(scratch, file);
      writeFileSync(path, lines.map((line) => `${JSON.stringify(line)}\n`).join(''));
      const out: string[] = [];
      const err: string[] = [];
      const code = await main(['eval', `${recipe.name}@v1`, '--predictions', path, '--json'], { out: (t) => out.push(t), err: (t) => err.push(t), home: run.home, cwd: run.home, env: {} });
      expect(err.filter((line) => line.startsWith('toolkiln:'))).toEqual([]);
      expect(code).toBe(0);
      return JSON.parse(out.join('')) as { items: number; metrics: Record<string, number>; byCategory: Record<string, Record<string, number>>; missing: number };
    };
    const best = (metric: string) => (recipe.lower.includes(metric) ? 0 : 1);
    const gold = (shape: Shape) => rows.flatMap((row) => row.items.map((item) => predictionLine(shape, row, item)));

    it('the rows name every evaluation item of the version once', async () => {
      const ids = rows.flatMap((row) => row.items.map((item) => item.id));
      expect(new Set(ids).size).toBe(ids.length);
      const report = await evalOf('chat-ids.jsonl', ids.map((id) => ({ id, tool_calls: [] })));
      expect(report.items).toBe(ids.length);
      expect(report.missing).toBe(0);
    }, 600_000);

    for (const shape of SHAPES) {
      it(`the gold turns written as ${shape} score the oracle's figures on every metric and category`, async () => {
        const report = await evalOf(`chat-${shape}.jsonl`, gold(shape));
        expect(report.missing).toBe(0);
        for (const [metric, value] of Object.entries(report.metrics)) expect([metric, value]).toEqual([metric, best(metric)]);
        for (const [category, table] of Object.entries(report.byCategory)) for (const [metric, value] of Object.entries(table)) expect([category, metric, value]).toEqual([category, metric, best(metric)]);
      }, 600_000);
    }

    /** The gold lines with the first item that `change` takes changed (messages shape). */
    const perturbed = (change: (calls: TrlToolCall[]) => TrlToolCall[] | null) => {
      let done = false;
      const lines = rows.flatMap((row) =>
        row.items.map((item) => {
          const turn = row.messages.slice(item.at, item.end);
          const calls = turn.flatMap((m) => m.tool_calls ?? []);
          const changed = done ? null : change(calls);
          if (!changed) return predictionLine('messages', row, item);
          done = true;
          return { id: item.id, tool_calls: changed };
        }),
      );
      expect(done).toBe(true);
      return lines;
    };

    if (recipe.wrongArgument) {
      const metric = recipe.wrongArgument;
      it(`one wrong argument lowers ${metric}`, async () => {
        const lines = perturbed((calls) => {
          const at = calls.findIndex((c) => Object.values(c.function.arguments).some((v) => typeof v === 'string'));
          if (at < 0) return null;
          const args = { ...calls[at].function.arguments };
          const name = Object.keys(args).find((k) => typeof args[k] === 'string')!;
          args[name] = 'zz wrong value zz';
          return calls.map((call, i) => (i === at ? { ...call, function: { ...call.function, arguments: args } } : call));
        });
        const report = await evalOf('chat-wrong-argument.jsonl', lines);
        expect(report.metrics[metric]).toBeLessThan(1);
      }, 600_000);
    }

    it(`one missing call lowers ${recipe.missingCall}`, async () => {
      const lines = perturbed((calls) => (calls.length >= 2 ? calls.slice(0, -1) : null));
      const report = await evalOf('chat-missing-call.jsonl', lines);
      expect(report.metrics[recipe.missingCall]).toBeLessThan(1);
    }, 600_000);
  });
}

describe('a predictions line that is no answer', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tk-chat-predictions-bad-'));
  const errorOf = (line: string) => {
    const path = join(dir, 'answers.jsonl');
    writeFileSync(path, `{"id": "a", "output": "fine"}\n${line}\n`);
    try {
      Predictions.open(path, 'answers.jsonl');
    } catch (error) {
      expect(error).toBeInstanceOf(UserError);
      return (error as Error).message;
    }
    throw new Error('no error');
  };

  it.each([
    ['{"id": "b"}', 'answers.jsonl line 2: item b has no answer; give exactly one of "output", "message", "messages", "tool_calls", "text"'],
    ['{"id": "b", "output": "x", "tool_calls": []}', 'answers.jsonl line 2: item b has both "output" and "tool_calls"; give exactly one of'],
    ['{"id": "b", "tool_calls": {"name": "f"}}', 'answers.jsonl line 2: item b: "tool_calls" must be a list of calls'],
    ['{"id": "b", "tool_calls": [{"function": {"arguments": "{}"}}]}', 'answers.jsonl line 2: item b: call 1 of "tool_calls" has no function "name"'],
    ['{"id": "b", "tool_calls": [{"function": {"name": "f", "arguments": "{\\"a\\": "}}]}', 'answers.jsonl line 2: item b: call 1 of "tool_calls" (f): "arguments" is text that is not a JSON object ({"a": ); give the arguments the model wrote as a JSON object, or the generated text as "text"'],
    ['{"id": "b", "message": {"from": "function_call", "value": "f(a=1)"}}', 'answers.jsonl line 2: item b: "message": "value" of the function_call turn is not JSON (f(a=1)); write {"name": …, "arguments": {…}} or a list of them'],
    ['{"id": "b", "message": {"role": "user", "content": "hi"}}', 'answers.jsonl line 2: item b: "message": "role" is "user"; an answer is an "assistant" message'],
    ['{"id": "b", "messages": []}', 'answers.jsonl line 2: item b: "messages" must be a non-empty list of the assistant\'s messages'],
    ['{"id": "b", "text": ["<tool_call>"]}', 'answers.jsonl line 2: item b: "text" must be the text the model generated (a string)'],
    ['{"id": 3, "text": "hi"}', 'answers.jsonl line 2: "id" is missing or not a string (the item id: items.jsonl of an oracle run, or the "items" column of a trl export)'],
  ])('%s', (line, message) => {
    expect(errorOf(line)).toContain(message);
  });

  it('generated text whose call block is not JSON is the answer as text, never an error', () => {
    const path = join(dir, 'text.jsonl');
    writeFileSync(path, '{"id": "a", "text": "<tool_call>\\n{not json\\n</tool_call>"}\n');
    expect(Predictions.open(path).answerOf('a')).toEqual({ reply: { calls: [], text: '<tool_call>\n{not json\n</tool_call>' } });
  });
});

describe('generated text and messages read as a reply', () => {
  const paris = { name: 'getWeather', arguments: { city: 'Paris' } };
  it.each([
    ['Hermes / Qwen, with a thought before', 'I look it up.\n<tool_call>\n{"name": "getWeather", "arguments": {"city": "Paris"}}\n</tool_call>', { calls: [paris], text: 'I look it up.' }],
    ['Hermes, the block left open at the end', '<tool_call>\n{"name": "getWeather", "arguments": {"city": "Paris"}}', { calls: [paris], text: null }],
    ['Llama 3.1 JSON, two calls joined by ;', '{"name": "getWeather", "parameters": {"city": "Paris"}}; {"name": "getWeather", "parameters": {"city": "Rome"}}', { calls: [paris, { name: 'getWeather', arguments: { city: 'Rome' } }], text: null }],
    ['Mistral v3 with ids', '[TOOL_CALLS] [{"name": "getWeather", "arguments": {"city": "Paris"}, "id": "call00001"}]</s>', { calls: [{ ...paris, id: 'call00001' }], text: null }],
    ['Mistral v11', '[TOOL_CALLS]getWeather[ARGS]{"city": "Paris"}', { calls: [paris], text: null }],
    ['a reply in words', 'It is sunny in Paris.', { calls: [], text: 'It is sunny in Paris.' }],
    ['JSON that is no call', '{"answer": 3}', { calls: [], text: '{"answer": 3}' }],
  ])('%s', (_name, text, reply) => {
    expect(replyOfText(text)).toEqual(reply);
  });

  it('messages: calls in an assistant message\'s text, results given to their calls (by id, else in order), ShareGPT turns', () => {
    const reply = readReply({
      messages: [
        { role: 'assistant', content: '<tool_call>\n{"name": "getFlight", "arguments": {"from": "a"}}\n</tool_call>' },
        { role: 'tool', tool_call_id: 'call00001', content: '{"id": "F1"}' },
        { from: 'function_call', value: '[{"name": "getFare", "arguments": {"flight": "F1"}}]' },
        { from: 'observation', value: '{"fare": 20}' },
        { from: 'gpt', value: 'F1 costs 20.' },
      ],
    });
    expect(reply).toEqual({
      calls: [
        { name: 'getFlight', arguments: { from: 'a' }, result: { id: 'F1' } },
        { name: 'getFare', arguments: { flight: 'F1' }, result: { fare: 20 } },
      ],
      text: 'F1 costs 20.',
    });
  });
});
