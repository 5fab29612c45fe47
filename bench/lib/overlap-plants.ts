import { fileURLToPath } from 'node:url';
import { callSignatures, goldCalls, nearCallSignature } from '../../core/overlap/calls.ts';
import type { ReferenceSet } from '../../core/overlap/reference-index.ts';
import { ngramHashes, userText, words } from '../../core/overlap/text.ts';
import { hashOf } from '../../core/hash.ts';
import { isJsonObject, isRef, type ArgValue, type Call, type Sample } from '../../core/records.ts';
import { Rng } from '../../core/rng.ts';
import { pathResolver } from '../../core/run.ts';
import { UnionFind } from '../../core/cluster/union-find.ts';
import { pipelines } from '../../pipelines/index.ts';

/**
 * Known overlaps planted among clean look-alikes, to measure what `datasets overlap` finds. Each
 * released test set (as its recipe reads it) is cut in two halves by source group: the reference
 * half is what overlap is measured against; the plants are made from reference samples, the
 * look-alikes are samples of the other half (same benchmark, same domains and often the same tools,
 * different items):
 *
 *   - verbatim: a reference sample copied under a new id;
 *   - paraphrase: its user text reworded by word substitution (a table of common phrasings and
 *     synonyms) and reordering (sentences rotated, or the two halves of a sentence swapped), the
 *     calls kept;
 *   - call: its tool set and gold calls, arguments in another key order, text values in another
 *     case, numbers written as text, under the user text of a look-alike;
 *   - translation (ACEBench): its tool set and gold calls under the user text of a record in the
 *     other language. The released ACEBench data_en and data_zh are not translations of each other
 *     (records of one id share no call), and ACEBench's own translation rule keeps names, parameters
 *     and every argument value: what a translated copy keeps that a monolingual detector can see;
 *   - clean look-alike: a sample of the other half, unless its normalised user text or its exact
 *     call signature is one of a reference sample's (a duplicate inside the release is not clean).
 */

export type PlantKind = 'verbatim' | 'paraphrase' | 'call' | 'translation' | 'look-alike';
export const PLANT_KINDS: readonly PlantKind[] = ['verbatim', 'paraphrase', 'call', 'translation', 'look-alike'];

export interface Plant {
  sample: Sample;
  kind: PlantKind;
  benchmark: string;
  /** The reference sample it was made from (none for a look-alike). */
  from?: string;
}

export interface PlantedSet {
  benchmark: string;
  reference: ReferenceSet;
  plants: Plant[];
  /** Look-alikes left out as duplicates of a reference sample inside the release. */
  duplicatesSkipped: number;
}

const PROJECT_DIR = fileURLToPath(new URL('../..', import.meta.url));

/** The released set `name` (as its recipe reads it) from its place beside the project. */
export function releasedSamples(name: string): Sample[] {
  const resolvePath = pathResolver(PROJECT_DIR, PROJECT_DIR);
  const entry = Object.values(pipelines)
    .flatMap((p) => p.released ?? [])
    .find((e) => e.name === name);
  if (!entry) throw new Error(`no released set ${name}`);
  return Array.from(entry.read(resolvePath(entry.path), resolvePath).samples());
}

/** A text long enough to be an item's own (short openers such as "I have a request" are shared by unrelated dialogues). */
const OWN_TEXT = 8;
/** A call specific enough to be an item's own: it states this many values (`FindProvider(city)` is not; `FindHome(area, beds, baths)` is). */
const OWN_CALL_VALUES = 2;

/** The plain values a call's arguments state (a reference to an earlier call is none). */
function statedValues(value: unknown): number {
  if (isRef(value)) return 0;
  if (Array.isArray(value)) return value.reduce((n: number, item) => n + statedValues(item), 0);
  if (value && typeof value === 'object') return Object.values(value).reduce((n: number, item) => n + statedValues(item), 0);
  return 1;
}

/**
 * The release cut in two halves by groups of samples that are one item in several forms, so no
 * look-alike is a form of a reference item: one MTU dialogue's turns (`M-S_31_1`, `M-S_31_2`), the
 * records that open with the same long first user turn (ACEBench's multi-turn categories continue
 * one dialogue), a user text inside another's, the records with one specific gold call (MTU-Eval's
 * sets re-use dialogues: S-M_20 and a turn of an M-M dialogue make the same two calls), and the
 * queries of one tool (or pair of tools) when the gold is a tool choice alone (ToolE's queries of
 * one tool are often rewordings of one request).
 */
function halves(samples: readonly Sample[]): { reference: Sample[]; held: Sample[] } {
  const groups = new UnionFind(samples.length);
  const first = new Map<string, number>();
  const join = (key: string, i: number) => {
    const at = first.get(key);
    if (at === undefined) first.set(key, i);
    else groups.union(at, i);
  };
  samples.forEach((sample, i) => {
    if (sample.benchmark === 'mtu') join(`dialogue:${(sample.meta.source?.id ?? sample.id).replace(/_\d+$/, '')}`, i);
    const opening = words(sample.dialogue.find((turn) => turn.role === 'user')?.content ?? '');
    if (opening.length >= OWN_TEXT) join(`opening:${opening.join(' ')}`, i);
    for (const call of goldCalls(sample)) if (statedValues(call.arguments) >= OWN_CALL_VALUES) join(`call:${nearCallSignature(call)}`, i);
    const tools = (sample.expected.calls ?? []).map((call) => call.tool).sort();
    if (tools.length && callSignatures(sample).exact === null) join(`tools:${tools.join(' ')}`, i);
  });
  // A text inside another (found through its first 8-gram, which the other then has too).
  const texts = samples.map((sample) => words(userText(sample)).join(' '));
  const byGram = new Map<number, number[]>();
  texts.forEach((text, i) => {
    for (const gram of ngramHashes(text.split(' '), 8)) byGram.set(gram, [...(byGram.get(gram) ?? []), i]);
  });
  texts.forEach((text, i) => {
    const tokens = text.split(' ');
    if (tokens.length < OWN_TEXT) return;
    for (const j of byGram.get(ngramHashes(tokens.slice(0, 8), 8)[0]) ?? []) if (j !== i && texts[j].includes(text)) groups.union(i, j);
  });
  const inReference = (i: number) => parseInt(hashOf(samples[groups.find(i)].id, 8), 16) % 2 === 0;
  return { reference: samples.filter((_, i) => inReference(i)), held: samples.filter((_, i) => !inReference(i)) };
}

/** Phrasings and synonyms a paraphrase swaps (either way round), longest first. */
const SWAPS: [string, string][] = [
  ['i want to', "i'd like to"],
  ['i would like to', 'i want to'],
  ['i need to', 'i have to'],
  ['can you', 'could you'],
  ['could you', 'would you'],
  ['please', 'kindly'],
  ['help me', 'assist me'],
  ['tell me', 'let me know'],
  ['what is', "what's"],
  ['make sure', 'ensure'],
  ['find', 'look up'],
  ['search for', 'look for'],
  ['check', 'verify'],
  ['need', 'require'],
  ['want', 'wish'],
  ['get', 'obtain'],
  ['show', 'display'],
  ['give', 'provide'],
  ['book', 'reserve'],
  ['buy', 'purchase'],
  ['information', 'details'],
  ['also', 'additionally'],
  ['about', 'regarding'],
  ['using', 'with'],
  ['current', 'present'],
  ['latest', 'most recent'],
  ['recommend', 'suggest'],
  ['create', 'make'],
  ['set up', 'configure'],
  ['start', 'begin'],
  ['help', 'aid'],
  ['plan', 'schedule'],
  ['analyze', 'examine'],
  ['analysis', 'assessment'],
  ['quickly', 'fast'],
  ['big', 'large'],
  ['small', 'little'],
  ['buy', 'get'],
  ['tomorrow', 'the next day'],
  ['today', 'this day'],
  ['friend', 'pal'],
  ['movie', 'film'],
  ['trip', 'journey'],
  ['car', 'vehicle'],
  ['house', 'home'],
  ['job', 'work'],
  ['detailed', 'thorough'],
  ['specific', 'particular'],
  ['provide', 'supply'],
  ['know', 'learn'],
  ['looking for', 'seeking'],
  ['recently', 'lately'],
  ['however', 'but'],
  ['and', 'as well as'],
  ['my', 'the'],
  ['the', 'this'],
  ['is', "'s"],
  ['for', 'regarding'],
  ['with', 'along with'],
  ['to', 'in order to'],
];

const PARAPHRASE_RATE = 0.5;

/** Word substitution: each phrase of the table met is swapped with probability PARAPHRASE_RATE. */
function substitute(text: string, rng: Rng): string {
  const pairs = [...SWAPS.flatMap(([a, b]) => [[a, b], [b, a]] as [string, string][])].sort((x, y) => y[0].length - x[0].length);
  const pattern = new RegExp(`\\b(${pairs.map(([a]) => a.replace(/[.*+?^${}()|[\]\\']/g, '\\$&')).join('|')})\\b`, 'gi');
  const lookup = new Map(pairs.map(([a, b]) => [a, b]));
  return text.replace(pattern, (found) => {
    if (!rng.chance(PARAPHRASE_RATE)) return found;
    const swapped = lookup.get(found.toLowerCase())!;
    return found[0] === found[0].toUpperCase() && found[0] !== found[0].toLowerCase() ? swapped[0].toUpperCase() + swapped.slice(1) : swapped;
  });
}

/** Reordering: sentences rotated, or a one-sentence text's two halves (at a comma or "and") swapped. */
function reorder(text: string): string {
  const sentences = text.match(/[^.!?。！？]+[.!?。！？]*\s*/g)?.map((s) => s.trim()).filter(Boolean) ?? [text];
  if (sentences.length > 1) return [...sentences.slice(1), sentences[0]].join(' ');
  const cut = /,\s+|\s+and\s+/.exec(text);
  if (!cut || cut.index < 10 || cut.index > text.length - 10) return text;
  const first = text.slice(0, cut.index);
  const rest = text.slice(cut.index + cut[0].length).replace(/[.!?]\s*$/, '');
  return `${rest[0].toUpperCase()}${rest.slice(1)}, and ${first[0].toLowerCase()}${first.slice(1)}.`;
}

export function paraphrase(text: string, rng: Rng): string {
  return text
    .split('\n')
    .map((line) => substitute(reorder(line), rng))
    .join('\n');
}

/** A value in another case, numbers as text, keys in reverse order: what the exact and near call forms undo. */
function disguise(value: ArgValue, rng: Rng): ArgValue {
  if (isRef(value)) return value;
  if (Array.isArray(value)) return value.map((item) => disguise(item, rng));
  if (isJsonObject(value))
    return Object.fromEntries(
      Object.entries(value)
        .reverse()
        .map(([key, inner]) => [key, disguise(inner as ArgValue, rng)]),
    );
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return rng.chance(0.5) ? value.toUpperCase() : value.toLowerCase() === value ? value.replace(/\b\w/g, (c) => c.toUpperCase()) : value.toLowerCase();
  return value;
}

function withUserText(sample: Sample, text: string): Sample['dialogue'] {
  // The text goes to the first user turn; other user turns are emptied (it already holds them all).
  let placed = false;
  return sample.dialogue.map((turn) => {
    if (turn.role !== 'user') return turn;
    const content = placed ? '' : text;
    placed = true;
    return { ...turn, content };
  });
}

function disguisedCalls(calls: Call[], rng: Rng): Call[] {
  return calls.map((call) => ({ ...call, arguments: disguise(call.arguments as ArgValue, rng) as Call['arguments'] }));
}

/** The sample with its gold calls disguised wherever they are (expected calls, per-turn calls). */
function withDisguisedCalls(sample: Sample, rng: Rng): Sample['expected'] {
  const expected = { ...sample.expected };
  if (expected.calls) expected.calls = disguisedCalls(expected.calls, new Rng(rng.int(0, 1e9)));
  if (expected.turns) expected.turns = Object.fromEntries(Object.entries(expected.turns).map(([turn, calls]) => [turn, disguisedCalls(calls, new Rng(rng.int(0, 1e9)))]));
  return expected;
}

const planted = (sample: Sample, kind: PlantKind, fields: Partial<Sample>): Sample => ({
  ...sample,
  ...fields,
  id: `plant-${kind}-${hashOf([sample.id, kind], 12)}`,
  split: 'planted',
  category: kind,
  meta: { ...sample.meta, source: undefined },
});

export interface PlantOptions {
  /** Plants of each kind per benchmark (at most). */
  perKind: number;
  /** Look-alikes per benchmark (at most). */
  lookAlikes: number;
  seed?: number;
}

/** Plants and look-alikes from one released set (see the module comment). */
export function plantSet(benchmark: string, samples: readonly Sample[], options: PlantOptions, translations: readonly Sample[] = []): PlantedSet {
  const rng = new Rng(options.seed ?? 7);
  const { reference, held } = halves(samples);
  const texts = new Set(reference.map((s) => words(userText(s)).join(' ')));
  const signatures = new Set(reference.map((s) => callSignatures(s).exact).filter((s): s is number => s !== null));
  const clean = held.filter((s) => !texts.has(words(userText(s)).join(' ')) && !signatures.has(callSignatures(s).exact ?? NaN));
  const withText = reference.filter((s) => words(userText(s)).length >= 4);
  const withCalls = withText.filter((s) => callSignatures(s).exact !== null);
  const plants: Plant[] = [];
  const add = (kind: PlantKind, from: Sample | undefined, sample: Sample) => plants.push({ sample, kind, benchmark, ...(from ? { from: from.id } : {}) });

  for (const source of rng.sample(withText, options.perKind)) add('verbatim', source, planted(source, 'verbatim', {}));
  for (const source of rng.sample(withText, options.perKind)) {
    add('paraphrase', source, planted(source, 'paraphrase', { dialogue: withUserText(source, paraphrase(userText(source), new Rng(rng.int(0, 1e9)))) }));
  }
  const donors = rng.shuffle(clean.filter((s) => words(userText(s)).length >= 4));
  rng.sample(withCalls, options.perKind).forEach((source, i) => {
    const donor = donors[i % Math.max(1, donors.length)];
    if (!donor) return;
    add('call', source, planted(source, 'call', { dialogue: withUserText(source, userText(donor)), expected: withDisguisedCalls(source, rng) }));
  });
  const others = rng.shuffle(translations.filter((s) => words(userText(s)).length >= 4));
  rng.sample(withCalls, Math.min(options.perKind, others.length)).forEach((source, i) => {
    add('translation', source, planted(source, 'translation', { dialogue: withUserText(source, userText(others[i])) }));
  });
  for (const sample of rng.sample(clean, options.lookAlikes)) add('look-alike', undefined, { ...sample, split: 'planted', category: 'look-alike' });
  return {
    benchmark,
    reference: { name: benchmark, kind: 'released', path: `${benchmark} (reference half)`, samples: () => reference },
    plants,
    duplicatesSkipped: held.length - clean.length,
  };
}

/** The plant sets of the five released test sets the recipes read (ACEBench: English references, Chinese texts for the translations). */
export function plantReleased(options: PlantOptions): PlantedSet[] {
  const sets: PlantedSet[] = [];
  for (const name of ['mtu-bench', 'metatool', 'tooltalk', 'nestools', 'acebench']) {
    const samples = releasedSamples(name);
    if (name !== 'acebench') {
      sets.push(plantSet(name, samples, options));
      continue;
    }
    const language = (s: Sample) => (s.meta as { acebench?: { language?: string } }).acebench?.language;
    sets.push(plantSet(name, samples.filter((s) => language(s) === 'en'), options, samples.filter((s) => language(s) === 'zh')));
  }
  return sets;
}

/** How much a paraphrase changed: the share of the source's 8-grams it kept, and the share of its words it kept. */
export function paraphraseStrength(source: string, paraphrased: string): { grams: number; words: number } {
  const a = words(source);
  const b = words(paraphrased);
  const gramsA = ngramHashes(a, 8);
  const gramsB = new Set(ngramHashes(b, 8));
  const wordsB = new Set(b);
  return { grams: gramsA.length ? gramsA.filter((g) => gramsB.has(g)).length / gramsA.length : 0, words: a.length ? a.filter((w) => wordsB.has(w)).length / a.length : 0 };
}

