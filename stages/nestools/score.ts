import { f1, rate, tablesByCategory, type BenchmarkScorer, type Corruption, type EvalItem, type EvalOutput, type EvalReport, type EvalVersion, type JudgedItem, type MetricTable, type ModelReply, type ReportTables, type TallyRule } from '../../core/eval.ts';
import { ALL_ITEMS, tallyTables } from '../../core/eval-tally.ts';
import { parsePythonLiteral } from '../../core/python-literal.ts';
import { pythonRepr } from '../../core/python-json.ts';
import type { Json, Sample } from '../../core/records.ts';
import type { Rng } from '../../core/rng.ts';
import { samplesInMemory } from '../../core/sample-source.ts';
import { returnFields } from '../../prompts/nestools-render-program.ts';
import { ApiIds, apiIdsOf } from './api-ids.ts';
import { apiOfToolSpec } from './api-spec.ts';
import { taskOf } from './import-export.ts';
import { toNotation } from './notation.ts';

/**
 * NesTools' evaluation (the paper's §4.1 and the released evaluation/utils.py), also applied to
 * versions imported from Seal-Tools. The model answers with a list of calls
 * `[{"api_name", "api_id", "parameters", "responses": {field: "API_call_k"}}]`; a gold call has the
 * api_id the prompt gives its API: the version-wide id the export writes to `test_api_ids.jsonl`
 * (`ApiIds`; a sample scored without its version numbers its own APIs from 0). Counted over the set:
 *  - format accuracy: the answer is a list of objects with api_name, api_id and a parameters object;
 *  - API selection: a predicted call whose api_id has an unmatched gold call is correct;
 *  - call order: pairs of consecutive api_ids, gold against predicted (multiset overlap);
 *  - parameters: per matched call, each predicted parameter the gold call has scores its value: 1 for
 *    an equal value, ROUGE-L F for strings (the better of raw and dates normalised), element-wise for
 *    lists, 0 otherwise; a nested gold value (`API_call_k`) scores 1 only when the prediction points at
 *    the same return value of the call matched to the gold parent;
 *  - nesting: the nested values among those, against nested values predicted and in the gold;
 *  - tree accuracy: every count of an item equal in gold, prediction and correct.
 * API, order, parameter and nesting figures are precision / recall / F1; `average` is as eval.py takes it.
 * An item without output counts as an unreadable answer (eval.py skips items whose generation failed).
 */

export interface GoldCall {
  api_name: string;
  api_id: number;
  parameters: Record<string, Json>;
  responses: string[];
}

interface NesToolsGold {
  calls: GoldCall[];
  /** The api_id the prompt shows each of the item's tools with, in their order. */
  apiIds: number[];
}

export interface PredictedCall {
  api_name: unknown;
  api_id: unknown;
  parameters: Record<string, Json>;
  responses?: unknown;
}

const INSTRUCTIONS = [
  'Below are a list of APIs and a task. Decide which APIs the task needs and in which order, then fill in their parameters from the task. Reply with the API calls only, no explanation.',
  'Reply in this format: [{"api_name": ..., "api_id": ..., "parameters": {"arg0": "value0", ...}, "responses": {"ret0": "API_call_0", ...}}, ...].',
  'Name each return value of a call with a placeholder "API_call_<n>" in "responses", numbering them 0, 1, 2, … across the whole answer. When a parameter takes the return value of an earlier call, write that placeholder as its value.',
  'Fill in every parameter in an API\'s "required" list; write "UNK" for a required value the task does not give. Fill in optional parameters only when the task asks for them.',
].join('\n');

const WRONG_VALUE = '__wrong_value__';

// ---------------------------------------------------------------- items

function items(sample: Sample, version?: EvalVersion): EvalItem[] {
  const calls = sample.expected.calls;
  if (!calls?.length) return [];
  const ids = apiIdsOfVersion(version) ?? apiIdsOf(samplesInMemory([sample]));
  const apiIds = ids.idsOfTools(sample.tools);
  const apiId = new Map(sample.tools.map((tool, i) => [tool.name, apiIds[i]]));
  const gold: NesToolsGold = {
    calls: toNotation(calls, sample.tools, `sample ${sample.id}`).map((call) => ({ api_name: call.api_name, api_id: apiId.get(call.api_name)!, parameters: call.parameters, responses: call.responses })),
    apiIds,
  };
  const apis = sample.tools.map((tool, i) => {
    const { api_name, ...rest } = apiOfToolSpec(tool);
    return { api_name, api_id: apiIds[i], ...rest };
  });
  const content = `${INSTRUCTIONS}\n\nAPIs:\n${pythonRepr(apis)}\n\nTask:\n${taskOf(sample)}\n\nAPI calls:\n`;
  return [{ id: sample.id, sampleId: sample.id, category: sample.category, messages: [{ role: 'user', content }], tools: sample.tools, gold: gold as unknown as Json }];
}

/** The version's API ids, numbered once per version (the same object is passed for each of its samples). */
const apiIdsByVersion = new WeakMap<EvalVersion, ApiIds>();
function apiIdsOfVersion(version: EvalVersion | undefined): ApiIds | undefined {
  if (!version?.samples) return undefined;
  let ids = apiIdsByVersion.get(version);
  if (!ids) apiIdsByVersion.set(version, (ids = apiIdsOf(version.samples)));
  return ids;
}

const goldOf = (item: EvalItem) => item.gold as unknown as NesToolsGold;

// ---------------------------------------------------------------- writing answers

function answer(calls: GoldCall[], item: EvalItem): string {
  const byName = new Map(item.tools.map((tool) => [tool.name, tool]));
  return JSON.stringify(
    calls.map((call) => {
      const tool = byName.get(call.api_name);
      const fields = tool ? returnFields(tool) : [];
      const responses = Object.fromEntries(call.responses.map((placeholder, i) => [fields[i] ?? `return_${i}`, placeholder]));
      return { api_name: call.api_name, api_id: call.api_id, parameters: call.parameters, responses };
    }),
  );
}

function oracle(item: EvalItem): string {
  return answer(goldOf(item).calls, item);
}

/**
 * A chat model's reply as NesTools' answer: each call with its tool's api_id and a placeholder
 * `API_call_<n>` for each of its return fields (numbered across the answer); an argument naming an
 * earlier call's return field — `"<call id>.<field>"` as the chat exports write it, or `{"$ref":
 * "<call id>.<field>"}` — becomes that field's placeholder (an `API_call_<n>` value stays as it is).
 * A call without an id is `call00001`, `call00002`, … in the reply's order, the ids a trl row gives
 * the calls of a NesTools sample. A reply without calls is no list: an unreadable answer.
 */
function answerOfReply(item: EvalItem, reply: ModelReply): string {
  if (!reply.calls.length) return reply.text ?? '';
  const { apiIds } = goldOf(item);
  const toolIndex = new Map(item.tools.map((tool, i) => [tool.name, i]));
  const placeholders = new Map<string, string>();
  let next = 0;
  const calls = reply.calls.map((call, i) => {
    const index = toolIndex.get(call.name);
    const fields = index === undefined ? [] : returnFields(item.tools[index]);
    const responses = Object.fromEntries(fields.map((field) => [field, `API_call_${next++}`]));
    for (const id of new Set([call.id, `call${String(i + 1).padStart(5, '0')}`])) if (id) for (const field of fields) placeholders.set(`${id}.${field}`, responses[field]);
    return { api_name: call.name, api_id: index === undefined ? -1 : apiIds[index], parameters: call.arguments, responses };
  });
  const resolved = (value: Json): Json => {
    const ref = value && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 1 && typeof value.$ref === 'string' ? value.$ref : value;
    if (typeof ref === 'string') return placeholders.get(ref) ?? ref;
    return Array.isArray(value) ? value.map(resolved) : value;
  };
  return JSON.stringify(calls.map((call) => ({ ...call, parameters: Object.fromEntries(Object.entries(call.parameters).map(([name, value]) => [name, resolved(value)])) })));
}

function corrupt(item: EvalItem, corruption: Corruption, rng: Rng): string | null {
  const calls = goldOf(item).calls.map((call) => ({ ...call, parameters: { ...call.parameters } }));
  const { apiIds } = goldOf(item);
  const unused = item.tools.map((tool, i) => ({ name: tool.name, id: apiIds[i] })).filter((t) => !calls.some((c) => c.api_name === t.name));
  switch (corruption) {
    case 'wrong-tool': {
      if (!unused.length) return null;
      const other = rng.pick(unused);
      Object.assign(calls[rng.int(0, calls.length - 1)], { api_name: other.name, api_id: other.id });
      break;
    }
    case 'drop-parameter':
    case 'wrong-value': {
      const withArgs = calls.filter((call) => Object.keys(call.parameters).length);
      if (!withArgs.length) return null;
      const call = rng.pick(withArgs);
      const name = rng.pick(Object.keys(call.parameters));
      if (corruption === 'drop-parameter') delete call.parameters[name];
      else call.parameters[name] = WRONG_VALUE;
      break;
    }
    case 'extra-call': {
      if (!unused.length) return null;
      const other = rng.pick(unused);
      calls.unshift({ api_name: other.name, api_id: other.id, parameters: {}, responses: [] });
      break;
    }
  }
  return answer(calls, item);
}

// ---------------------------------------------------------------- reading predictions

/** utils.check_string and the format check: the list between the first "[" and the last "]"; null when unreadable. */
export function readCalls(output: string | null): PredictedCall[] | null {
  if (output === null) return null;
  const start = output.indexOf('[');
  const end = output.lastIndexOf(']');
  if (start === -1 || end < start) return null;
  let value: Json;
  try {
    value = parsePythonLiteral(output.slice(start, end + 1));
  } catch {
    return null;
  }
  if (!Array.isArray(value)) return null;
  const isCall = (v: Json) => !!v && typeof v === 'object' && !Array.isArray(v) && 'api_name' in v && 'api_id' in v && !!v.parameters && typeof v.parameters === 'object' && !Array.isArray(v.parameters);
  return value.every(isCall) ? (value as unknown as PredictedCall[]) : null;
}

// ---------------------------------------------------------------- comparing values

/** `==` between Python values: True == 1, dicts regardless of key order. */
function pyEqual(a: Json, b: Json): boolean {
  const numeric = (v: Json) => typeof v === 'number' || typeof v === 'boolean';
  if (numeric(a) && numeric(b)) return Number(a) === Number(b);
  if (typeof a === 'string' || typeof b === 'string' || a === null || b === null) return a === b;
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => pyEqual(v, b[i]));
  const [da, db] = [a as Record<string, Json>, b as Record<string, Json>];
  const keys = Object.keys(da);
  return keys.length === Object.keys(db).length && keys.every((k) => k in db && pyEqual(da[k], db[k]));
}

const pyStr = (value: Json): string => (typeof value === 'string' ? value : pythonRepr(value));

/** The sentences of the `rouge` package: split at ".", blanks squeezed; an empty text is an error there. */
function sentences(text: string): string[] {
  return text
    .split('.')
    .filter((part) => part.length > 0)
    .map((part) => part.split(/\s+/).filter(Boolean).join(' '));
}

/** The words of the longest common subsequence of `x` and `y`, recovered as the `rouge` package does. */
function lcsWords(x: string[], y: string[]): string[] {
  const table = Array.from({ length: x.length + 1 }, () => new Array<number>(y.length + 1).fill(0));
  for (let i = 1; i <= x.length; i++) for (let j = 1; j <= y.length; j++) table[i][j] = x[i - 1] === y[j - 1] ? table[i - 1][j - 1] + 1 : Math.max(table[i - 1][j], table[i][j - 1]);
  const words: string[] = [];
  for (let i = x.length, j = y.length; i > 0 && j > 0; ) {
    if (x[i - 1] === y[j - 1]) {
      words.push(x[i - 1]);
      i--;
      j--;
    } else if (table[i - 1][j] > table[i][j - 1]) i--;
    else j--;
  }
  return words;
}

/** ROUGE-L F (summary level) of the `rouge` package that utils.py uses: words as sets, 1e-8 in the denominator. */
export function rougeLF(hypothesis: string, reference: string): number {
  const hyp = sentences(hypothesis);
  const ref = sentences(reference);
  if (!hyp.length || !ref.length) throw new Error('rouge: an empty text');
  const words = (list: string[]) => new Set(list.flatMap((s) => s.split(' ')));
  const union = new Set<string>();
  for (const r of ref) for (const h of hyp) for (const word of lcsWords(r.split(' '), h.split(' '))) union.add(word);
  const recall = union.size / words(ref).size;
  const precision = union.size / words(hyp).size;
  return (2 * precision * recall) / (precision + recall + 1e-8);
}

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
const SUFFIX_OK: Record<string, (day: number) => boolean> = {
  st: (d) => d === 1 || d === 21 || d === 31,
  nd: (d) => d === 2 || d === 22,
  rd: (d) => d === 3 || d === 23,
  th: (d) => (d >= 4 && d <= 20) || (d >= 24 && d <= 30),
};

/** utils.normalize_date: "March 5th, 2024" → "2024-03-05"; anything else unchanged. */
export function normalizeDate(text: string): string {
  if (/^\d{4}-\d{2}-\d{2}/.test(text) || !/\b[A-Za-z]+ \d+(st|nd|rd|th)?, \d{4}\b/.test(text)) return text;
  const dayPart = /\b(\d+)(st|nd|rd|th)?\b/.exec(text);
  if (!dayPart) return text;
  if (dayPart[2] && !SUFFIX_OK[dayPart[2]](Number(dayPart[1]))) return text;
  const plain = /^([A-Za-z]+) (\d{1,2}), (\d{4})$/.exec(text.replace(/(\d+)(st|nd|rd|th)/g, '$1'));
  const month = plain ? MONTHS.indexOf(plain[1].toLowerCase()) : -1;
  if (!plain || month === -1) return text;
  const [year, day] = [Number(plain[3]), Number(plain[2])];
  const date = new Date(Date.UTC(year, month, day));
  if (day < 1 || date.getUTCMonth() !== month) return text;
  return `${plain[3]}-${String(month + 1).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

/** utils.check_score: how far a predicted value matches the gold one, in [0, 1]; throws where utils.py raises (scored 0). */
function valueScoreOrThrow(gold: Json, predicted: Json): number {
  if (pyEqual(gold, predicted)) return 1;
  if (typeof gold === 'string' && typeof predicted === 'string') {
    const raw = rougeLF(predicted.toLowerCase(), gold.toLowerCase());
    const dated = rougeLF(normalizeDate(predicted).toLowerCase(), normalizeDate(gold).toLowerCase());
    return Math.max(raw, dated);
  }
  if (Array.isArray(gold) && Array.isArray(predicted)) {
    if (gold.length !== predicted.length) return 0;
    return gold.reduce<number>((sum, g, i) => sum + valueScoreOrThrow(g, predicted[i]), 0) / gold.length;
  }
  if (gold && predicted && typeof gold === 'object' && typeof predicted === 'object' && !Array.isArray(gold) && !Array.isArray(predicted)) {
    const gk = Object.keys(gold);
    const pk = Object.keys(predicted);
    if (gk.length !== pk.length) return 0;
    const bare = (key: string) => key.toLowerCase().replace(/[_ ]/g, '');
    return gk.reduce((sum, key, i) => sum + (bare(key) === bare(pk[i]) ? valueScoreOrThrow(gold[key], predicted[pk[i]]) : 0), 0) / pk.length;
  }
  return 0;
}

export function valueScore(gold: Json, predicted: Json): number {
  try {
    return valueScoreOrThrow(gold, predicted);
  } catch {
    return 0;
  }
}

// ---------------------------------------------------------------- scoring one item

interface Counts {
  format: number;
  apiCorrect: number;
  apiPredicted: number;
  apiGold: number;
  orderCorrect: number;
  orderPredicted: number;
  orderGold: number;
  paramCorrect: number;
  paramPredicted: number;
  paramGold: number;
  nestCorrect: number;
  nestPredicted: number;
  nestGold: number;
  tree: number;
}

const COUNT_KEYS: (keyof Counts)[] = ['format', 'apiCorrect', 'apiPredicted', 'apiGold', 'orderCorrect', 'orderPredicted', 'orderGold', 'paramCorrect', 'paramPredicted', 'paramGold', 'nestCorrect', 'nestPredicted', 'nestGold', 'tree'];
const hasPlaceholder = (value: Json) => /API_call/.test(pyStr(value));

/** Where a placeholder is among the response lists: [call, position], the last call holding it as utils.py finds it. */
function locate(lists: (string | number)[][], value: Json): [number, number] | null {
  let found: [number, number] | null = null;
  lists.forEach((list, i) => {
    const at = list.findIndex((r) => r === value);
    if (at !== -1) found = [i, at];
  });
  return found;
}

/** utils.process_results_gen for one item. */
export function countItem(gold: GoldCall[], predicted: PredictedCall[] | null): Counts {
  const c: Counts = Object.fromEntries(COUNT_KEYS.map((k) => [k, 0])) as unknown as Counts;
  c.apiGold = gold.length;

  // Nested gold values: placeholder text → [gold call, its api_id, response position], or the text itself (a list of placeholders).
  const goldNest = new Map<string, [number, number, number] | string>();
  const goldResponses: string[][] = [];
  const unmatched = new Map<number, number[]>(); // api_id → gold positions not yet matched
  gold.forEach((call, position) => {
    c.paramGold += Object.keys(call.parameters).length;
    goldResponses.push(call.responses);
    for (const value of Object.values(call.parameters)) {
      if (!hasPlaceholder(value)) continue;
      c.nestGold++;
      const at = locate(goldResponses, pyStr(value));
      goldNest.set(pyStr(value), at ? [at[0], gold[at[0]].api_id, at[1]] : pyStr(value));
    }
    unmatched.set(call.api_id, [...(unmatched.get(call.api_id) ?? []), position]);
  });

  if (predicted === null) {
    c.orderGold += gold.length - 1;
  } else {
    c.format = 1;
    if (predicted.length <= 1) c.orderGold += gold.length - 1;
    else {
      const pairs = (ids: unknown[]) => ids.slice(0, -1).map((id, i) => `${pyStr(id as Json)}\u0000${pyStr(ids[i + 1] as Json)}`);
      const goldPairs = pairs(gold.map((g) => g.api_id));
      const predictedPairs = pairs(predicted.map((p) => p.api_id));
      c.orderGold += goldPairs.length;
      c.orderPredicted += predictedPairs.length;
      const left = new Map<string, number>();
      for (const pair of goldPairs) left.set(pair, (left.get(pair) ?? 0) + 1);
      for (const pair of predictedPairs) {
        if ((left.get(pair) ?? 0) > 0) {
          c.orderCorrect++;
          left.set(pair, left.get(pair)! - 1);
        }
      }
    }

    const matches: [number, number][] = []; // [gold position, predicted position]
    const predictedResponses: (string | number)[][] = [];
    predicted.forEach((call, index) => {
      c.apiPredicted++;
      c.paramPredicted += Object.keys(call.parameters).length;
      const responses = call.responses && typeof call.responses === 'object' && !Array.isArray(call.responses) ? Object.values(call.responses as Record<string, Json>).map((r) => (typeof r === 'string' ? r : -1)) : [];
      predictedResponses.push(responses);
      for (const value of Object.values(call.parameters)) if (hasPlaceholder(value)) c.nestPredicted++;

      const open = typeof call.api_id === 'number' ? (unmatched.get(call.api_id) ?? []) : [];
      if (!open.length) return;
      c.apiCorrect++;
      let best = { score: 0, nest: 0, position: -1 };
      for (const position of open) {
        let score = 0;
        let nest = 0;
        for (const [name, value] of Object.entries(call.parameters)) {
          if (!(name in gold[position].parameters)) continue;
          const goldValue = gold[position].parameters[name];
          const nested = goldNest.get(pyStr(goldValue));
          if (nested !== undefined) {
            if (Array.isArray(nested)) {
              if (typeof value !== 'string') continue;
              const [goldParent, , goldIndex] = nested;
              const at = locate(predictedResponses, value);
              if (at && at[1] === goldIndex && matches.some(([g, p]) => g === goldParent && p === at[0]) && hasPlaceholder(value)) {
                nest++;
                score++;
              }
            } else if (pyEqual(goldValue, value)) {
              nest++;
              score++;
            }
          } else score += valueScore(goldValue, value);
        }
        if (score > best.score) best = { score, nest, position };
      }
      if (best.score === 0) best.position = open[0];
      c.nestCorrect += best.nest;
      c.paramCorrect += best.score;
      matches.push([best.position, index]);
      unmatched.set(call.api_id as number, open.filter((p) => p !== best.position));
    });
  }

  const same = (a: number, b: number, d: number) => a === b && b === d;
  c.tree = Number(same(c.apiCorrect, c.apiGold, c.apiPredicted) && same(c.orderCorrect, c.orderPredicted, c.orderGold) && same(c.paramCorrect, c.paramPredicted, c.paramGold) && same(c.nestGold, c.nestPredicted, c.nestCorrect));
  return c;
}

// ---------------------------------------------------------------- the set

/** A table's sums (core/eval-tally.ts): its items, then each count over them. */
const SUMS = ['items', ...COUNT_KEYS];

/** An item's terms: one item, and its counts. */
function addCounts(counts: Counts, add: (sum: number, term: number) => void): void {
  add(0, 1);
  COUNT_KEYS.forEach((key, i) => add(i + 1, counts[key]));
}

function table(counts: Counts[]): MetricTable {
  const sums = new Float64Array(SUMS.length);
  for (const c of counts) addCounts(c, (i, term) => (sums[i] += term));
  return metricsOf(sums);
}

function metricsOf(sums: Float64Array): MetricTable {
  const items = sums[0];
  const sum = Object.fromEntries(COUNT_KEYS.map((k, i) => [k, sums[i + 1]])) as unknown as Counts;
  const metrics: MetricTable = { format_accuracy: rate(sum.format, items) };
  const group = (name: string, correct: number, predicted: number, goldCount: number) => {
    if (goldCount === 0) return;
    const p = rate(correct, predicted);
    const r = correct / goldCount;
    Object.assign(metrics, { [`${name}_precision`]: p, [`${name}_recall`]: r, [`${name}_f1`]: f1(p, r) });
  };
  group('api', sum.apiCorrect, sum.apiPredicted, sum.apiGold);
  group('order', sum.orderCorrect, sum.orderPredicted, sum.orderGold);
  group('parameter', sum.paramCorrect, sum.paramPredicted, sum.paramGold);
  group('nesting', sum.nestCorrect, sum.nestPredicted, sum.nestGold);
  // eval.py averages the last F1s it lists: api, order, parameter and nesting; without nesting its index
  // arithmetic takes format accuracy in its place.
  const parts = ['api_f1', 'order_f1', 'parameter_f1', 'nesting_f1' in metrics ? 'nesting_f1' : 'format_accuracy'];
  if (parts.every((k) => k in metrics)) metrics.average = parts.reduce((s, k) => s + metrics[k], 0) / parts.length;
  metrics.tree_accuracy = rate(sum.tree, items);
  return metrics;
}

function score(outputs: readonly EvalOutput[]): EvalReport {
  const scored = outputs.map(({ item, output }) => {
    const predicted = readCalls(output);
    const counts = countItem(goldOf(item).calls, predicted);
    const note =
      predicted === null
        ? output === null
          ? 'no output'
          : 'not a list of {"api_name", "api_id", "parameters": {…}} objects (format error)'
        : counts.tree
          ? undefined
          : `apis ${counts.apiCorrect}/${counts.apiGold}, order ${counts.orderCorrect}/${counts.orderGold}, parameters ${+counts.paramCorrect.toFixed(3)}/${counts.paramGold}, nesting ${counts.nestCorrect}/${counts.nestGold}`;
    return { item, counts, note };
  });
  return {
    benchmark: 'nestools',
    items: outputs.length,
    ...tables(scored),
    details: scored.map(({ item, counts, note }) => ({ id: item.id, category: item.category, figures: { ...counts }, ...(note ? { note } : {}) })),
  };
}

function tables(scored: readonly { item: EvalItem; counts: Counts }[]): ReportTables {
  return { metrics: table(scored.map((s) => s.counts)), byCategory: tablesByCategory(scored, (s) => [s.item.category], (group) => table(group.map((s) => s.counts))) };
}

/** Each item is its own unit: a detail's figures are its counts. */
const tablesOf = (units: readonly (readonly JudgedItem[])[]): ReportTables => tables(units.flat().map(({ item, figures }) => ({ item, counts: figures as unknown as Counts })));

/** `tablesOf` as sums: each item adds its counts to the whole and to its category. */
const tally: TallyRule = {
  sums: SUMS,
  unit(judged, add) {
    for (const { item, figures } of judged) for (const table of [ALL_ITEMS, item.category]) addCounts(figures as unknown as Counts, (i, term) => add(table, i, term));
  },
  tables: (sums) => tallyTables(sums, SUMS.length, metricsOf),
};

export const nestoolsScorer: BenchmarkScorer = { benchmark: 'nestools', items, oracle, answerOfReply, score, corrupt, tablesOf, tally };
