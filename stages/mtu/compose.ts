import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { HashedStringMap, HashedStringSet, sortedCounts, tally } from '../../core/collections.ts';
import { SpilledRecords } from '../../core/jsonl.ts';
import { isRef, parseRef, Sample, sampleId, type ArgValue, type Call, type Json, type ToolSpec, type Turn } from '../../core/records.ts';
import type { Rng } from '../../core/rng.ts';
import { scanStage, type LineageEntry, type ScanStage, type StageContext } from '../../core/stage.ts';
import { mtuComposePrompt } from '../../prompts/mtu-compose.ts';
import type { MtuConfig } from './config.ts';
import { ToolLibrary } from './library.ts';
import { allCalls, assistantIndexes, categoryOf, expectedOf, literalText, mtuMeta, turnCalls, userTurns, type MtuMeta } from './sample.ts';

/**
 * Multi-tool synthesis. The source datasets hardly ever call several tools in one turn, while
 * MTU-Bench's S-M and M-M settings do; as the released S-M files show, such turns are written by
 * joining requests. Three compositions, each within one split and worded by the LLM:
 * - chained (S-M): a dialogue whose later call uses a value an earlier call returned becomes one
 *   request with both calls, the dependent value a reference (`Tool.field` in MTU's notation);
 * - independent (S-M): 2–5 single-tool requests of different tools joined into one message;
 * - chained multi-turn (M-M): the same, but the joined request stays one turn of its dialogue;
 * - multi-turn (M-M): one call turn of a dialogue also carries a single-tool request of another sample.
 * In joined requests a parameter named like a result field of an earlier call's tool takes that
 * result (`linkRate`), the request then saying "that one" instead of the value.
 */

/**
 * A composition decided, as plain data: what it joins and how, kept on disk until its sample is
 * built in `finish` from the samples it names (`sources`, kept on disk too). `parts` are the requests
 * the LLM joins into one message.
 */
export type Job = { id: string; parts: string[]; sources: string[] } & (
  | { kind: 'chained'; chain: Chain }
  /** `ask`: the turn of the first request, where the joined one goes. */
  | { kind: 'chained-multi-turn'; chain: Chain; ask: number }
  /** Per source, its parameters that take an earlier source's result (parameter → index of that source). */
  | { kind: 'independent'; links: Record<string, number>[] }
  /** `turn`: the call turn that also takes `sources[1]`'s call, whose parameters may take the result of that turn's own call (`ownId`). */
  | { kind: 'multi-turn'; turn: number; links: Record<string, number>; ownId: string }
);

/** How the LLM is asked to join a job's requests. */
function modeOf(job: Job): 'independent' | 'chained' {
  return job.kind === 'chained' || job.kind === 'chained-multi-turn' ? 'chained' : 'independent';
}

/** The message the LLM wrote for a job, with the lineage entry of its answer. */
export interface Written {
  message: string;
  entry: LineageEntry;
}

/** What drawing a single-tool request needs of a sample: its tools, the tools it calls, its request. */
export interface Single {
  id: string;
  tools: ToolSpec[];
  called: string[];
  call: Call;
  request: string;
}

export function singleOf(sample: Sample): Single | undefined {
  if (userTurns(sample) !== 1 || allCalls(sample).length !== 1) return undefined;
  const [call] = allCalls(sample);
  return { id: sample.id, tools: sample.tools, called: [call.tool], call, request: sample.dialogue[0].content };
}

/** Result fields of a tool, by name (from the run's documented library). */
export type ResultFields = (tool: string, tools: ToolSpec[]) => string[];

/**
 * Parameters of `call` that take an earlier call's result: a parameter named like a result field
 * of an earlier call's tool, whose value the request states (so that the request can say "that
 * one" instead), each drawn at `rate`. Parameter → index of the earlier call.
 */
export function resultLinks(earlier: { call: Call; tools: ToolSpec[] }[], call: Call, request: string, fields: ResultFields, take: () => boolean): Record<string, number> {
  const links: Record<string, number> = {};
  for (const [parameter, value] of Object.entries(call.arguments)) {
    const text = literalText(value);
    if (!text || text === 'dontcare' || !request.toLowerCase().includes(text.toLowerCase())) continue;
    const from = earlier.findIndex((e) => e.call.tool !== call.tool && fields(e.call.tool, e.tools).includes(parameter));
    if (from !== -1 && take()) links[parameter] = from;
  }
  return links;
}

/** A request with the values it no longer states (they come from an earlier result) worded as "that one". */
function withoutLinkedValues(request: string, call: Call, links: Record<string, number>): string {
  return Object.keys(links).reduce((out, p) => out.replace(new RegExp(literalText(call.arguments[p])!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'i'), 'that one'), request);
}

/** `call` with its linked parameters as references to the result fields of the same name. */
function linked(call: Call, links: Record<string, number>, ids: string[]): Call {
  return { ...call, arguments: { ...call.arguments, ...Object.fromEntries(Object.entries(links).map(([p, i]) => [p, { $ref: `${ids[i]}.${p}` }])) } };
}

export interface Chain {
  first: { call: Call; turn: number };
  second: { call: Call; turn: number };
  /** Parameter of the second call → field of the first call's result it takes. */
  links: Record<string, string>;
}

const NAME_LIKE = /name|title|(^|_)id$/;

/**
 * The first pair of calls in a dialogue where a later call takes a value an earlier call returned
 * and the user could not have known before that result: the value appears in no user turn before
 * the first call, and result field and parameter are both name-like (a restaurant or hotel name,
 * a title, an id), so that two fields sharing a number or a city by chance are no dependency.
 */
export function findChain(sample: Sample): Chain | undefined {
  const calls = assistantIndexes(sample).flatMap((turn) => turnCalls(sample, turn).map((call) => ({ call, turn })));
  for (let j = 1; j < calls.length; j++) {
    for (let i = 0; i < j; i++) {
      if (calls[i].call.tool === calls[j].call.tool) continue;
      const result = sample.dialogue[calls[i].turn].observations?.[calls[i].call.id];
      if (!result || typeof result !== 'object' || Array.isArray(result)) continue;
      const known = sample.dialogue
        .slice(0, calls[i].turn)
        .filter((t) => t.role === 'user')
        .map((t) => t.content.toLowerCase())
        .join('\n');
      const links: Record<string, string> = {};
      for (const [parameter, value] of Object.entries(calls[j].call.arguments)) {
        const text = literalText(value);
        if (!text || text === 'dontcare' || known.includes(text.toLowerCase())) continue;
        const field = NAME_LIKE.test(parameter) ? Object.keys(result).find((f) => String(result[f]) === text && NAME_LIKE.test(f)) : undefined;
        if (field) links[parameter] = field;
      }
      if (Object.keys(links).length) return { first: calls[i], second: calls[j], links };
    }
  }
  return undefined;
}

/** Calls with fresh ids `<prefix>0`, `<prefix>1`, …; references among them follow their new ids. */
function renumber(calls: Call[], prefix: string): Call[] {
  const ids = new Map<string, string>();
  calls.forEach((c, i) => ids.has(c.id) || ids.set(c.id, `${prefix}${i}`));
  const rewrite = (value: ArgValue): ArgValue => {
    if (isRef(value)) {
      const { callId, field } = parseRef(value);
      return { $ref: `${ids.get(callId) ?? callId}.${field}` };
    }
    return Array.isArray(value) ? value.map(rewrite) : value;
  };
  return calls.map((c, i) => ({ ...c, id: `${prefix}${i}`, arguments: Object.fromEntries(Object.entries(c.arguments).map(([k, v]) => [k, rewrite(v)])) }));
}

function unionTools(...lists: ToolSpec[][]): ToolSpec[] {
  const seen = new Set<string>();
  return lists.flat().filter((t) => !seen.has(t.name) && (seen.add(t.name), true));
}

/** Tools of `b` that clash by name with a different tool of `a` (same name, other plugin). */
function clashes(a: ToolSpec[], b: ToolSpec[]): boolean {
  return b.some((t) => a.some((u) => u.name === t.name && u.plugin !== t.plugin));
}

function composedMeta(sources: Sample[], patch: Partial<MtuMeta>): MtuMeta {
  const metas = sources.map(mtuMeta);
  return {
    services: [...new Set(metas.flatMap((m) => m.services))],
    domains: [...new Set(metas.flatMap((m) => m.domains))],
    sourceSplit: metas[0].sourceSplit,
    situations: {},
    ...(metas.find((m) => m.database)?.database ? { database: metas.find((m) => m.database)!.database } : {}),
    composedFrom: sources.map((s) => s.id),
    ...patch,
  };
}

function composedSample(id: string, base: Sample, sources: Sample[], tools: ToolSpec[], dialogue: Turn[], mode: string, entry: LineageEntry, patch: Partial<MtuMeta> = {}): Sample {
  const expected = expectedOf(dialogue);
  return {
    id,
    benchmark: 'mtu',
    category: categoryOf({ dialogue, expected }),
    split: base.split,
    tools,
    dialogue,
    expected,
    meta: {
      source: { dataset: 'composed', id: mode },
      lineage: [...base.meta.lineage, entry],
      checks: [],
      tags: [`composed:${mode}`],
      mtu: composedMeta(sources, patch),
    },
  };
}

/**
 * The requests a chained composition joins: from turn `from` on, the turns that asked for each call
 * and the turns that state their values, minus the values the user only learnt from the first result.
 */
function chainParts(sample: Sample, chain: Chain, from: number): string[] {
  const learnt = Object.keys(chain.links).map((p) => literalText(chain.second.call.arguments[p])!);
  const stated = [...Object.values(chain.first.call.arguments), ...Object.entries(chain.second.call.arguments).filter(([p]) => !(p in chain.links)).map(([, v]) => v)]
    .map(literalText)
    .filter((v): v is string => !!v && v !== 'dontcare');
  const triggers = new Set([from, chain.first.turn - 1, chain.second.turn - 1]);
  return sample.dialogue
    .slice(0, chain.second.turn)
    .flatMap((t, i) => (i >= from && t.role === 'user' && (triggers.has(i) || stated.some((v) => t.content.toLowerCase().includes(v.toLowerCase()))) ? [t.content] : []))
    .map((text) => learnt.reduce((out, v) => out.split(v).join('that one'), text));
}

/** The chain's two calls with fresh ids, the second's linked parameters as references to the first's result, and their observations. */
function chainCalls(sample: Sample, chain: Chain, prefix: string): { first: Call; second: Call; observations: Record<string, Json> } {
  const [first, second] = renumber([chain.first.call, chain.second.call], prefix);
  second.arguments = { ...second.arguments, ...Object.fromEntries(Object.entries(chain.links).map(([p, f]) => [p, { $ref: `${first.id}.${f}` }])) };
  const observations: Record<string, Json> = {};
  for (const [call, source] of [[first, chain.first], [second, chain.second]] as const) {
    const result = sample.dialogue[source.turn].observations?.[source.call.id];
    if (result !== undefined) observations[call.id] = result;
  }
  return { first, second, observations };
}

/**
 * M-M from a chain: the dialogue keeps its turns before the first request and after the second
 * call; the two requests become one turn whose calls are both, the second taking the first's
 * result. Undefined when nothing would be left around that turn (the S-M chain covers that case).
 */
export function chainedMultiTurnJob(sample: Sample, chain: Chain): Job | undefined {
  const ask = chain.first.turn - 1;
  if (sample.dialogue[ask]?.role !== 'user') return undefined;
  const after = sample.dialogue.slice(chain.second.turn + 1);
  if (ask === 0 && !after.some((t) => t.role === 'user')) return undefined;
  const id = sampleId('mtu', { compose: 'chained-multi-turn', from: sample.id });
  return { id, kind: 'chained-multi-turn', parts: chainParts(sample, chain, ask), sources: [sample.id], chain, ask };
}

/** The chained multi-turn sample: the dialogue with the two requests made one turn, whose calls are both. */
function chainedMultiTurnSample(job: Job & { kind: 'chained-multi-turn' }, base: Sample, { message, entry }: Written): Sample {
  const { chain, ask } = job;
  const { first, second, observations } = chainCalls(base, chain, 'chain_');
  const dialogue: Turn[] = [
    ...base.dialogue.slice(0, ask),
    { role: 'user', content: message },
    // The reply must cover both requests: the ReAct synthesis writes it.
    { role: 'assistant', content: '', calls: [first, second], observations },
    ...base.dialogue.slice(chain.second.turn + 1),
  ];
  // Situations follow their turns to the new positions.
  const shift = chain.second.turn - (ask + 1);
  const situations = Object.fromEntries(
    Object.entries(mtuMeta(base).situations).flatMap(([turn, situation]) => {
      const i = Number(turn);
      return i < ask ? [[turn, situation]] : i > chain.second.turn ? [[String(i - shift), situation]] : [];
    }),
  );
  return composedSample(job.id, base, [base], base.tools, dialogue, 'chained-multi-turn', entry, { situations: { ...situations, [String(ask + 1)]: 'api_call' } });
}

export function chainedJob(sample: Sample, chain: Chain): Job {
  const id = sampleId('mtu', { compose: 'chained', from: sample.id });
  return { id, kind: 'chained', parts: chainParts(sample, chain, 0), sources: [sample.id], chain };
}

function chainedSample(job: Job & { kind: 'chained' }, sample: Sample, { message, entry }: Written): Sample {
  const { chain } = job;
  const { first, second, observations } = chainCalls(sample, chain, 'call_');
  return composedSample(job.id, sample, [sample], sample.tools, [
    { role: 'user', content: message },
    { role: 'assistant', content: sample.dialogue[chain.second.turn].content, calls: [first, second], observations },
  ], 'chained', entry, { situations: { '1': 'api_call' } });
}

export function independentJob(singles: Single[], fields: ResultFields, take: () => boolean): Job {
  const sources = singles.map((s) => s.id);
  const id = sampleId('mtu', { compose: 'independent', from: sources });
  const links = singles.map((s, j) => resultLinks(singles.slice(0, j), s.call, s.request, fields, take));
  return { id, kind: 'independent', parts: singles.map((s, j) => withoutLinkedValues(s.request, s.call, links[j])), sources, links };
}

function independentSample(job: Job & { kind: 'independent' }, sources: Sample[], { message, entry }: Written): Sample {
  // Each source's calls are numbered from 0: renumbered per source, then as one list (one call per source).
  const numbered = renumber(sources.flatMap((s, n) => renumber(allCalls(s), `s${n}_`)), 'call_');
  const calls = numbered.map((call, j) => linked(call, job.links[j], numbered.map((c) => c.id)));
  return composedSample(job.id, sources[0], sources, unionTools(...sources.map((s) => s.tools)), [
    { role: 'user', content: message },
    { role: 'assistant', content: '', calls },
  ], 'independent', entry, { situations: { '1': 'api_call' } });
}

export function multiTurnJob(sample: Sample, turn: number, extra: Single, fields: ResultFields, take: () => boolean): Job {
  const sources = [sample.id, extra.id];
  const id = sampleId('mtu', { compose: 'multi-turn', from: sources, turn });
  const [own] = turnCalls(sample, turn);
  const links = resultLinks([{ call: own, tools: sample.tools }], extra.call, extra.request, fields, take);
  return { id, kind: 'multi-turn', parts: [sample.dialogue[turn - 1].content, withoutLinkedValues(extra.request, extra.call, links)], sources, turn, links, ownId: own.id };
}

function multiTurnSample(job: Job & { kind: 'multi-turn' }, base: Sample, added: Sample, { message, entry }: Written): Sample {
  const { turn, links, ownId } = job;
  const calls = renumber(allCalls(added), 'call_m').map((call) => linked(call, links, [ownId]));
  const dialogue = structuredClone(base.dialogue);
  dialogue[turn - 1] = { role: 'user', content: message };
  // The reply must now cover both requests: it is written again by the ReAct synthesis.
  dialogue[turn] = { ...dialogue[turn], content: '', calls: [...(dialogue[turn].calls ?? []), ...calls] };
  return composedSample(job.id, base, [base, added], unionTools(base.tools, added.tools), dialogue, 'multi-turn', entry, { situations: mtuMeta(base).situations });
}

/** The composed sample of a job, from the message the LLM wrote for it and the samples it takes. */
export function buildComposed(job: Job, written: Written, source: (id: string) => Sample): Sample {
  const sources = job.sources.map(source);
  switch (job.kind) {
    case 'chained':
      return chainedSample(job, sources[0], written);
    case 'chained-multi-turn':
      return chainedMultiTurnSample(job, sources[0], written);
    case 'independent':
      return independentSample(job, sources, written);
    case 'multi-turn':
      return multiTurnSample(job, sources[0], sources[1], written);
  }
}

/** Whether a single-tool request can join a tool list: it calls none of its tools, and none of its tools clashes by name. */
export function fitsWith(tools: ToolSpec[], candidate: Single): boolean {
  return !candidate.called.some((name) => tools.some((t) => t.name === name)) && !clashes(tools, candidate.tools);
}

/** Single-tool requests to draw from: a list, or one kept on disk (read back by position). */
export interface SinglePool {
  readonly length: number;
  at(index: number): Single | undefined;
}

/** Draws up to `k` single-tool samples of pairwise different tools that can share a tool list. */
export function drawCompatible(pool: SinglePool, k: number, rng: Rng, taken: ToolSpec[] = []): Single[] {
  const picked: Single[] = [];
  let tools = [...taken];
  for (let attempt = 0; attempt < k * 20 && picked.length < k && pool.length; attempt++) {
    // As `rng.pick` draws from a list.
    const candidate = pool.at(rng.int(0, pool.length - 1))!;
    if (!fitsWith(tools, candidate)) continue;
    picked.push(candidate);
    tools = unionTools(tools, candidate.tools);
  }
  return picked;
}

interface Composition {
  /** The jobs, in the order their samples are made (each id once). */
  jobs: SpilledRecords<Job>;
  /** The messages the LLM wrote for them; per job, the number of its message, or -1 when asking failed. */
  messages: SpilledRecords<Written>;
  messageOf: Int32Array;
  /** Why asking failed, counted by reason. */
  failures: Record<string, number>;
  /** The samples the jobs take, by id: where each is among `sources` (-1 until it passes through `run`). */
  taken: HashedStringMap;
  /** The samples the jobs take, kept on disk as they pass through `run` (from the first one taken). */
  sources?: SpilledRecords<Sample>;
}

/**
 * Decides the compositions in one pass over the input (a second over the multi-turn dialogues it
 * kept), holding in memory only numbers: the
 * single-tool requests of each split (ids, tools, request text) are kept on disk and drawn by
 * position, the jobs (plain data naming the samples they take) are kept on disk in their order, and
 * so are the messages the LLM writes for them. The samples the jobs take are kept on disk as they
 * pass through `run`, and the composed samples built one at a time in `finish` as the runner writes them.
 */
async function planCompositions(samples: Iterable<Sample>, options: MtuConfig['compose'], ctx: StageContext): Promise<Composition> {
  const files = new SpillFiles(ctx);
  try {
    // Pass 1: the single-tool requests, per split in order of first appearance; and the
    // multi-turn dialogues, the only samples the jobs are planned from, kept on disk for pass 2
    // (a fifth of the input's bytes: the input is read once).
    const singles = new Map<string, SpilledRecords<Single>>();
    const dialogues = files.open<Sample>('dialogues');
    for (const sample of samples) {
      if (!singles.has(sample.split)) singles.set(sample.split, files.open(`singles-${singles.size}`));
      if (userTurns(sample) > 1) dialogues.push(sample);
      else {
        const single = singleOf(sample);
        if (single) singles.get(sample.split)!.push(single);
      }
    }
    const { jobs, taken } = planJobs(eachSpilled(dialogues), singles, options, ctx, files);
    const messages = files.open<Written>('messages');
    const messageOf = new Int32Array(jobs.length);
    const failures: Record<string, number> = {};
    await askEach(jobs.length, (k) => jobs.get(k), ctx, (k, answer) => {
      if (typeof answer === 'string') tally(failures, answer);
      messageOf[k] = typeof answer === 'string' ? -1 : messages.push(answer);
    });
    files.closeAllBut(jobs, messages);
    return { jobs, messages, messageOf, failures, taken };
  } catch (error) {
    files.closeAllBut();
    throw error;
  }
}

/** The records kept in `file`, in order. */
function* eachSpilled<T>(file: SpilledRecords<T>): Generator<T> {
  for (let k = 0; k < file.length; k++) yield file.get(k);
}

/** The files a stage keeps records in for a later pass (in the run's folder), closed together. */
class SpillFiles {
  private readonly open_: SpilledRecords<unknown>[] = [];

  constructor(private readonly ctx: Pick<StageContext, 'runDir'>) {}

  open<T>(name: string): SpilledRecords<T> {
    const kept = new SpilledRecords<T>(spillPath(this.ctx, name));
    this.open_.push(kept);
    return kept;
  }

  /** Closes (and removes) every file but `kept`. */
  closeAllBut(...kept: SpilledRecords<any>[]): void {
    for (const file of this.open_.splice(0)) if (!kept.includes(file)) file.close();
  }
}

/** Where the stage keeps records on disk for a later pass (in the run's folder). */
function spillPath(ctx: Pick<StageContext, 'runDir'>, name: string): string {
  return join(ctx.runDir, 'mtu', `compose-${name}.json`);
}

/**
 * Pass 2, over the multi-turn dialogues: the jobs, drawing single-tool requests from `singles`, written to disk in order (each id
 * once: where it first comes, as it last came), with the ids of the samples they take.
 */
function planJobs(samples: Iterable<Sample>, singles: Map<string, SpilledRecords<Single>>, options: MtuConfig['compose'], ctx: StageContext, files: SpillFiles): { jobs: SpilledRecords<Job>; taken: HashedStringMap } {
  const fields = resultFieldsOf(ctx);
  const pools = new Map([...singles].map(([split, kept]) => [split, { length: kept.length, at: (i: number) => kept.get(i) } satisfies SinglePool]));
  // Per split, the chained and multi-turn jobs of its dialogues in order, then its independent jobs.
  const dialogueJobs = new Map([...singles.keys()].map((split, n) => [split, files.open<Job>(`dialogue-jobs-${n}`)]));
  for (const sample of samples) {
    if (userTurns(sample) < 2) continue;
    const jobs = dialogueJobs.get(sample.split)!;
    const chain = findChain(sample);
    if (chain && ctx.rng('chain', sample.id).chance(options.chainRate)) jobs.push(chainedJob(sample, chain));
    const multiTurnChain = chain && ctx.rng('chain-multi-turn', sample.id).chance(options.chainMultiTurnRate) ? chainedMultiTurnJob(sample, chain) : undefined;
    if (multiTurnChain) jobs.push(multiTurnChain);
    const rng = ctx.rng('multi-turn', sample.id);
    const turns = assistantIndexes(sample).filter((i) => turnCalls(sample, i).length === 1 && sample.dialogue[i - 1]?.role === 'user');
    if (!turns.length || !rng.chance(options.multiTurnRate)) continue;
    const [extra] = drawCompatible(pools.get(sample.split)!, 1, rng, sample.tools);
    if (extra) jobs.push(multiTurnJob(sample, rng.pick(turns), extra, fields, () => rng.chance(options.linkRate)));
  }
  const all = files.open<Job>('all-jobs');
  const ids = new HashedStringSet();
  /** The ids that come again, with where they last came. */
  const again = new Map<string, number>();
  const taken = new HashedStringMap();
  const add = (job: Job) => {
    const at = all.push(job);
    if (!ids.add(job.id)) again.set(job.id, at);
    for (const id of job.sources) taken.set(id, -1);
  };
  for (const [split, pool] of pools) {
    const jobs = dialogueJobs.get(split)!;
    for (let k = 0; k < jobs.length; k++) add(jobs.get(k));
    const rng = ctx.rng('independent', split);
    const count = Math.round(options.singleTurnRate * pool.length);
    for (let n = 0; n < count; n++) {
      const picked = drawCompatible(pool, rng.int(options.minTools, Math.max(options.minTools, options.maxTools)), rng);
      if (picked.length >= 2) add(independentJob(picked, fields, () => rng.chance(options.linkRate)));
    }
  }
  if (!again.size) return { jobs: all, taken };
  const jobs = files.open<Job>('jobs');
  const placed = new Set<string>();
  for (let k = 0; k < all.length; k++) {
    const job = all.get(k);
    const last = again.get(job.id);
    if (last === undefined) jobs.push(job);
    else if (!placed.has(job.id)) {
      placed.add(job.id);
      jobs.push(all.get(last));
    }
  }
  return { jobs, taken };
}

/** The composed samples, built one at a time from the samples kept on disk; the report once all are made. */
function* composed({ jobs, messages, messageOf, failures, taken, sources }: Composition, ctx: StageContext): Generator<Sample> {
  const source = (id: string) => sources!.get(taken.get(id)!);
  const made: Record<string, number> = {};
  for (let k = 0; k < jobs.length; k++) {
    if (messageOf[k] === -1) continue;
    const job = jobs.get(k);
    yield buildComposed(job, messages.get(messageOf[k]), source);
    tally(made, job.kind);
  }
  ctx.report('composition', { made: sortedCounts(made), failed: sortedCounts(failures) });
}

/** Result fields of a tool from the run's documented library (a stage called alone reads the samples' own tool entries). */
export function resultFieldsOf(ctx: Pick<StageContext, 'runDir'>): ResultFields {
  const library = existsSync(ToolLibrary.path(ctx.runDir)) ? ToolLibrary.load(ctx.runDir) : undefined;
  return (tool, tools) => {
    const ref = tools.find((t) => t.name === tool);
    return Object.keys((ref && (library?.get(ref) ?? ref).returns.properties) ?? {});
  };
}

/**
 * Jobs asked at once at most: a request waiting in the gateway holds its rendered prompt, so asking
 * every job at once held all of them (about 1 GB at a million samples).
 */
const ASKED_AT_ONCE = 256;

/**
 * Asks the LLM for the message of each of `count` jobs (`jobAt(k)`), at most {@link ASKED_AT_ONCE}
 * waiting at a time, as the stage whose context this is (it declares {@link mtuComposePrompt}),
 * keyed by the job; `answered` sees each answer as it comes: the message written, or why it failed.
 */
async function askEach(count: number, jobAt: (k: number) => Job, ctx: StageContext, answered: (k: number, answer: Written | string) => void): Promise<void> {
  let next = 0;
  const askInTurn = async () => {
    while (next < count) {
      const k = next++;
      const job = jobAt(k);
      const requests = job.parts.map((p, i) => `${i + 1}. ${p}`).join('\n');
      const result = await ctx.tryAsk(mtuComposePrompt, { mode: modeOf(job), requests, parts: job.parts }, { key: job.id });
      answered(k, result.ok ? { message: result.value.message, entry: result.lineage } : result.reason);
    }
  };
  await Promise.all(Array.from({ length: Math.min(ASKED_AT_ONCE, count) }, askInTurn));
}

/**
 * The message the LLM writes for each of a few jobs held in memory, in the jobs' order (undefined
 * where it failed, the reason among `failures`): see {@link askEach}.
 */
export async function askMessages(jobs: Job[], ctx: StageContext): Promise<{ asked: { job: Job; written?: Written }[]; failures: string[] }> {
  const failures: string[] = [];
  const asked: { job: Job; written?: Written }[] = new Array(jobs.length);
  await askEach(jobs.length, (k) => jobs[k], ctx, (k, answer) => {
    if (typeof answer === 'string') failures.push(answer);
    asked[k] = { job: jobs[k], written: typeof answer === 'string' ? undefined : answer };
  });
  return { asked, failures };
}

export function composeStage(options: MtuConfig['compose']): ScanStage<Sample, Sample, Composition> {
  return scanStage<Sample, Sample, Composition>({
    name: 'compose-multi-tool',
    version: 3,
    fanOut: true,
    input: Sample,
    output: Sample,
    prompts: [mtuComposePrompt],
    collect: (samples, ctx) => planCompositions(samples, options, ctx),
    // Every sample stays; the ones a job takes are kept (the first of an id) until the composed samples are built.
    run: (sample, { state, runDir }) => {
      if (state.taken.get(sample.id) === -1) state.taken.set(sample.id, (state.sources ??= new SpilledRecords(spillPath({ runDir }, 'sources'))).push(sample));
      return sample;
    },
    finish: composed,
    // After finish, or when the run fails before it.
    dispose: ({ jobs, messages, sources }) => {
      for (const kept of [jobs, messages, sources]) kept?.close();
    },
  });
}
