import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { BenchmarkScorer, EvalItem } from '../../core/eval.ts';
import { mapIterable } from '../../core/collections.ts';
import { UserError } from '../../core/errors.ts';
import { AtomicJsonlFile, writeFileAtomic } from '../../core/jsonl.ts';
import type { Exporter, ExportOptions } from '../../core/pipeline.ts';
import { isRef, parseRef, type ArgValue, type Call, type Json, type OpenAIFunctionTool, type Sample, type Turn } from '../../core/records.ts';
import { readManifest } from '../../core/store.ts';
import { datasetCard, hfSplitName } from './hf-card.ts';
import { dialogueMessages, sampleToChat, type ChatMessage, type GoldReply } from './openai-chat.ts';
import { chatExampleProblems } from './openai-chat-validate.ts';
import { writeParquet, type Column } from './parquet.ts';

/**
 * One sample as one training row of the conversational tool-calling format TRL's `SFTTrainer` and
 * Hugging Face chat templates read (`tokenizer.apply_chat_template(messages, tools=tools)`):
 *
 * - `messages`: roles `user`, `assistant`, `tool`. An assistant message that calls tools carries
 *   `tool_calls` (`id`, `type: "function"`, `function.name`, `function.arguments` as a JSON
 *   object: the templates write it with `tojson`, so a JSON string would be written quoted) and
 *   as `content` the turn's ReAct thought (`""` without one); each result follows as a `tool`
 *   message naming the call (`tool_call_id`) and the function (`name`, which Hermes-style
 *   templates print), its `content` the result as JSON text. A turn's text reply (its response,
 *   or the text of a turn without calls: a question back, a refusal) is an assistant message of its
 *   own (two in a row are one, joined by a blank line); a message without calls has no `tool_calls`
 *   key at all (a template tests whether the key is there). A turn's calls keep their order; one
 *   that uses the result of a call of the message being filled starts the next message, after that
 *   result, with the value (stages/export/openai-chat.ts). The thought of a turn
 *   without calls has no place and is left out (the exporter counts them). What the dialogue does
 *   not hold yet is added as the gold answer, as for OpenAI chat (stages/export/openai-chat.ts); the
 *   row ends with the last assistant message.
 * - `tools`: the sample's candidate tools as `{type: "function", function: {name, description,
 *   parameters}}` with JSON-Schema parameters.
 *
 * Call ids are renumbered `call00001`, `call00002`, … in the sample's order: Mistral's tokenizer and
 * template take nine letters or digits, and the canonical ids (`call_0`) are only unique within
 * their sample anyway. With `oneCallPerMessage`, a message with several calls is written as one
 * message per call, each followed by its result: Llama 3.1's JSON tool format has no parallel calls.
 */
export interface TrlMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  tool_calls?: TrlToolCall[];
  tool_call_id?: string;
  name?: string;
}

export interface TrlToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: Record<string, Json> };
}

export interface TrlRow {
  id: string;
  category: string;
  messages: TrlMessage[];
  tools: OpenAIFunctionTool[];
  /**
   * The evaluation items the row holds (`toolkiln eval` of the version scores them): each item's id
   * and where its gold answer is: `messages.slice(0, at)` is what a model is shown, `messages.slice(at,
   * end)` the gold turn (its calls, their results, its reply). Empty for a sample the recipe does not
   * score (a training split).
   */
  items: TrlItem[];
}

export interface TrlItem {
  id: string;
  at: number;
  end: number;
}

export interface TrlOptions extends ExportOptions {
  goldReply?: GoldReply;
  /** The recipe's evaluation items of a sample (its scorer's `items`): the `items` column names them. */
  itemsOf?: (sample: Sample) => Pick<EvalItem, 'id' | 'turn'>[];
}

/** A sample's training row; a sample that makes no valid chat example stops the export, named with its problems. */
export function sampleToTrl(sample: Sample, options: TrlOptions = {}): TrlRow {
  const { sample: prepared, ids } = renumberCalls(sample);
  const example = sampleToChat(prepared, { goldReply: options.goldReply });
  const problems = chatExampleProblems(example);
  if (problems.length) throw new UserError(`sample ${sample.id} (split ${sample.split}) makes no training row: ${problems.join('; ')}`);
  const messages = rowMessages(example.messages, ids, options);
  // An item without a turn answers the sample's last answer: its last assistant turn, or the gold after its dialogue.
  const lastAnswer = prepared.dialogue.at(-1)?.role === 'assistant' ? prepared.dialogue.length - 1 : prepared.dialogue.length;
  const items = (options.itemsOf?.(sample) ?? []).map((item): TrlItem => {
    // What the row shows before the item's turn is the dialogue before it, rendered the same way.
    const before = rowMessages(dialogueMessages({ ...prepared, dialogue: prepared.dialogue.slice(0, item.turn ?? lastAnswer) }), ids, options);
    const at = before.length;
    const shown = isDeepStrictEqual(before, messages.slice(0, at));
    if (!shown || messages[at]?.role !== 'assistant') throw new UserError(`sample ${sample.id} (split ${sample.split}): its evaluation item ${item.id} has no assistant message of its own in the training row${shown ? '' : ' (its answer was joined to the reply before it)'}; report it with the sample`);
    let end = at + 1;
    while (end < messages.length && messages[end].role !== 'user') end++;
    return { id: item.id, at, end };
  });
  return { id: sample.id, category: sample.category, messages, tools: example.tools ?? [], items };
}

/** A row's messages from the chat messages: its call ids, tool names on results, replies joined, one call per message when asked. */
function rowMessages(chat: ChatMessage[], ids: Map<string, string>, options: TrlOptions): TrlMessage[] {
  // The ids of the sample's calls are already row ids; a recipe's gold reply brings its own.
  const rowIds = new Map([...ids.values()].map((id) => [id, id]));
  const idOf = (id: string) => {
    if (!rowIds.has(id)) rowIds.set(id, rowCallId(rowIds.size));
    return rowIds.get(id)!;
  };
  const names = new Map<string, string>();
  const messages: TrlMessage[] = [];
  for (const message of chat) {
    const converted = trlMessages(message, idOf, names);
    const last = messages.at(-1);
    // Chat templates (Mistral's) and LLaMA-Factory alternate user and assistant: two texts in a row are one reply.
    if (isText(last) && isText(converted)) last.content = `${last.content}\n\n${converted.content}`;
    else messages.push(converted);
  }
  return options.oneCallPerMessage ? oneCallEach(messages) : messages;
}

/** The thoughts of a sample's assistant turns that call nothing: a row has no place for them (its reply is the message's text). */
export function thoughtsWithoutCalls(sample: Sample): number {
  return sample.dialogue.filter((turn) => turn.role === 'assistant' && turn.thought && !turn.calls?.length).length;
}

/** The n-th call id of a row (from 0): `call00001`, … */
const rowCallId = (n: number) => `call${String(n + 1).padStart(5, '0')}`;

/**
 * The sample with its calls renamed to row ids in the order a row shows them (the dialogue's, then
 * the gold's), in calls, observations, references and the gold alike: a reference whose value the
 * sample does not hold is written as `<call id>.<field>` text, and that id is one the row shows.
 */
function renumberCalls(sample: Sample): { sample: Sample; ids: Map<string, string> } {
  const ids = new Map<string, string>();
  const idOf = (id: string) => {
    if (!ids.has(id)) ids.set(id, rowCallId(ids.size));
    return ids.get(id)!;
  };
  for (const turn of sample.dialogue) for (const call of turn.calls ?? []) idOf(call.id);
  for (const call of [...(sample.expected.turns?.[String(sample.dialogue.length)] ?? []), ...(sample.expected.calls ?? [])]) idOf(call.id);
  for (const calls of Object.values(sample.expected.turns ?? {})) for (const call of calls) idOf(call.id);
  const renamedArg = (value: ArgValue): ArgValue => {
    if (isRef(value)) {
      const { callId, field } = parseRef(value);
      return { $ref: `${ids.get(callId) ?? callId}.${field}` };
    }
    return Array.isArray(value) ? value.map(renamedArg) : value;
  };
  const renamed = (calls: Call[]) => calls.map((call) => ({ ...call, id: ids.get(call.id)!, arguments: Object.fromEntries(Object.entries(call.arguments).map(([k, v]) => [k, renamedArg(v)])) }));
  const dialogue = sample.dialogue.map((turn): Turn => ({
    ...turn,
    ...(turn.calls ? { calls: renamed(turn.calls) } : {}),
    ...(turn.observations ? { observations: Object.fromEntries(Object.entries(turn.observations).map(([id, result]) => [ids.get(id) ?? id, result])) } : {}),
  }));
  const expected = {
    ...sample.expected,
    ...(sample.expected.calls ? { calls: renamed(sample.expected.calls) } : {}),
    ...(sample.expected.turns ? { turns: Object.fromEntries(Object.entries(sample.expected.turns).map(([k, calls]) => [k, renamed(calls)])) } : {}),
  };
  return { sample: { ...sample, dialogue, expected }, ids };
}

/** An assistant message of text only. */
const isText = (message: TrlMessage | undefined): message is TrlMessage => message?.role === 'assistant' && !message.tool_calls;

function trlMessages(message: ChatMessage, idOf: (id: string) => string, names: Map<string, string>): TrlMessage {
  if (message.role === 'tool') {
    const id = idOf(message.tool_call_id!);
    return { role: 'tool', tool_call_id: id, name: names.get(id)!, content: message.content ?? '' };
  }
  if (!message.tool_calls) return { role: message.role, content: message.content ?? '' };
  const calls = message.tool_calls.map((call): TrlToolCall => {
    const id = idOf(call.id);
    names.set(id, call.function.name);
    return { id, type: 'function', function: { name: call.function.name, arguments: JSON.parse(call.function.arguments) as Record<string, Json> } };
  });
  return { role: 'assistant', content: message.content ?? '', tool_calls: calls };
}

/** Each call in a message of its own, followed by its result; the thought stays with the first call. */
function oneCallEach(messages: TrlMessage[]): TrlMessage[] {
  const results = new Map(messages.filter((m) => m.role === 'tool').map((m) => [m.tool_call_id!, m]));
  const out: TrlMessage[] = [];
  for (const message of messages) {
    if (message.role === 'tool') continue;
    if (!message.tool_calls) {
      out.push(message);
      continue;
    }
    message.tool_calls.forEach((call, i) => {
      out.push({ role: 'assistant', content: i === 0 ? message.content : '', tool_calls: [call] });
      const result = results.get(call.id);
      if (result) out.push(result);
    });
  }
  return out;
}

const ROW_COLUMNS: { [K in keyof TrlRow]-?: Column } = { id: 'string', category: 'string', messages: 'json-list', tools: 'json-list', items: 'json-list' };

/**
 * `--format trl`: a folder to load with `datasets.load_dataset(<folder>)` or upload to the Hub as it
 * is: `data/<split>-00000-of-00001.parquet` per split (`messages` and `tools` as lists of JSON
 * values, see stages/export/parquet.ts), the same rows as `jsonl/<split>.jsonl`, a dataset card
 * (`README.md`) and the run's config. A sample that makes no valid row stops the export before a
 * file is kept.
 */
export function trlExporter(goldReply?: GoldReply, scorer?: BenchmarkScorer): Exporter {
  return async (samples, _tools, outDir, version, options = {}) => {
    if (!version) throw new UserError('the trl format needs the published version (its manifest goes into the dataset card): export a version with toolkiln export <name>@v --format trl');
    const manifest = readManifest(version.dir);
    // The scorer numbers some things across the version (NesTools' API ids); item ids never depend on them.
    const evalVersion = { dir: version.dir, samples };
    const itemsOf = scorer && ((sample: Sample) => scorer.items(sample, evalVersion));
    const written: string[] = [];
    const dataFiles: { split: string; path: string }[] = [];
    let unsaidThoughts = 0;
    for (const split of [...samples.splits].sort()) {
      const name = hfSplitName(split, samples.splits);
      const path = `data/${name}-00000-of-00001.parquet`;
      const jsonl = new AtomicJsonlFile(join(outDir, 'jsonl', `${name}.jsonl`));
      try {
        const rows = mapIterable(samples.inSplit(split), (sample) => {
          const row = sampleToTrl(sample, { ...options, goldReply, itemsOf });
          unsaidThoughts += thoughtsWithoutCalls(sample);
          jsonl.write(row);
          return row;
        });
        await writeParquet(join(outDir, path), ROW_COLUMNS, rows);
      } catch (error) {
        jsonl.discard();
        throw error;
      }
      written.push(join(outDir, path), jsonl.commit());
      dataFiles.push({ split, path });
    }
    if (unsaidThoughts) options.notice?.(`trl: ${unsaidThoughts} thought(s) of turns without calls left out (a row carries a thought only as the text before calls)`);
    writeFileAtomic(join(outDir, 'toolkiln-config.json'), `${JSON.stringify(manifest.config, null, 2)}\n`);
    const card = datasetCard({ manifest, dataFiles, toolsFile: null, splits: samples.splits, format: { name: 'trl', configSuffix: '-trl', columns: options.oneCallPerMessage ? `${TRL_COLUMNS_TEXT} ${ONE_CALL_TEXT}` : TRL_COLUMNS_TEXT } });
    writeFileAtomic(join(outDir, 'README.md'), card);
    return [...written, join(outDir, 'toolkiln-config.json'), join(outDir, 'README.md')];
  };
}

export const exportTrl = trlExporter();

const TRL_COLUMNS_TEXT = [
  'One row per sample: `id` and `category` (text), `messages` and `tools`, the columns TRL\'s `SFTTrainer` passes to `tokenizer.apply_chat_template(messages, tools=tools)`.',
  '`messages`: roles `user`, `assistant`, `tool`. An assistant message that calls tools has `tool_calls` (`[{id, type: "function", function: {name, arguments}}]`, `arguments` a JSON object) and as `content` the ReAct thought before the calls (`""` without one); each result follows as a `tool` message with `tool_call_id`, the function\'s `name` and the result as JSON text in `content`. A reply in words (an answer after the results, a question back, a refusal) is an assistant message without a `tool_calls` key; two in a row are joined into one. The row ends with the assistant\'s last message; where the sample\'s dialogue stops before its gold answer, the gold calls (or its labels as text) are that message.',
  '`tools`: the sample\'s candidate tools, `{type: "function", function: {name, description, parameters}}` with JSON-Schema parameters.',
  'Call ids are `call00001`, `call00002`, … in the row\'s order (Mistral\'s template takes nine letters or digits).',
  '`items`: the evaluation items the row holds, `{id, at, end}`: the item id `toolkiln eval --predictions` keys a model\'s answer by, `messages[0:at]` what the model is shown for it, `messages[at:end]` its gold turn (empty in a split the benchmark does not score).',
  'Both columns are lists of Parquet JSON values: `datasets` (5.0.1 with pyarrow 25) loads them as `List(Json())`, each message and tool exactly as written, and a reader without Parquet\'s JSON type (pandas) gets each element as its JSON text. A list of structs would give every message every other message\'s keys with null values, which chat templates read as present (a `tool_calls: null` is a defined `tool_calls`). The same rows are in `jsonl/`.',
].join(' ');

const ONE_CALL_TEXT = 'This export was written with `--one-call-per-message`: each call is an assistant message of its own, followed by its result (Llama 3.1\'s JSON tool format has no parallel calls).';
