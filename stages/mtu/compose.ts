import { countBy } from '../../core/collections.ts';
import { isRef, parseRef, Sample, sampleId, type ArgValue, type Call, type Json, type ToolSpec, type Turn } from '../../core/records.ts';
import type { Rng } from '../../core/rng.ts';
import type { ScanStage, StageContext } from '../../core/stage.ts';
import { mtuComposePrompt } from '../../prompts/mtu-compose.ts';
import type { MtuConfig } from './config.ts';
import { allCalls, assistantIndexes, lineageEntry, categoryOf, expectedOf, literalText, mtuMeta, turnCalls, userTurns, type MtuMeta } from './sample.ts';

/**
 * Multi-tool synthesis. The source datasets hardly ever call several tools in one turn, while
 * MTU-Bench's S-M and M-M settings do; as the released S-M files show, such turns are written by
 * joining requests. Three compositions, each within one split and worded by the LLM:
 * - chained (S-M): a dialogue whose later call uses a value an earlier call returned becomes one
 *   request with both calls, the dependent value a reference (`Tool.field` in MTU's notation);
 * - independent (S-M): 2–5 single-tool requests of different tools joined into one message;
 * - multi-turn (M-M): one call turn of a dialogue also carries an independent single-tool request.
 */

interface Job {
  id: string;
  mode: 'independent' | 'chained';
  parts: string[];
  /** Ids of the samples `build` takes. */
  sources: string[];
  build: (message: string, source: (id: string) => Sample) => Sample;
}

/** What drawing a single-tool request needs of a sample: its tools, the tools it calls, its request. */
interface Single {
  id: string;
  tools: ToolSpec[];
  called: string[];
  request: string;
}

function singleOf(sample: Sample): Single | undefined {
  if (userTurns(sample) !== 1 || allCalls(sample).length !== 1) return undefined;
  return { id: sample.id, tools: sample.tools, called: allCalls(sample).map((c) => c.tool), request: sample.dialogue[0].content };
}

interface Chain {
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

function composedSample(id: string, base: Sample, sources: Sample[], tools: ToolSpec[], dialogue: Turn[], mode: string, patch: Partial<MtuMeta> = {}): Sample {
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
      lineage: [...base.meta.lineage, lineageEntry('compose-multi-tool', 1, mtuComposePrompt)],
      checks: [],
      tags: [`composed:${mode}`],
      mtu: composedMeta(sources, patch),
    },
  };
}

function chainedJob(sample: Sample, chain: Chain): Job {
  const calls = renumber([chain.first.call, chain.second.call], 'call_');
  const [first, second] = calls;
  second.arguments = { ...second.arguments, ...Object.fromEntries(Object.entries(chain.links).map(([p, f]) => [p, { $ref: `${first.id}.${f}` }])) };
  // The request keeps the turns that state the calls' values, minus values the user only learnt from the first result.
  const learnt = Object.keys(chain.links).map((p) => literalText(chain.second.call.arguments[p])!);
  const stated = [...Object.values(chain.first.call.arguments), ...Object.entries(chain.second.call.arguments).filter(([p]) => !(p in chain.links)).map(([, v]) => v)]
    .map(literalText)
    .filter((v): v is string => !!v && v !== 'dontcare');
  // The first request, the turns that asked for each call, and the turns that state their values.
  const triggers = new Set([0, chain.first.turn - 1, chain.second.turn - 1]);
  const parts = sample.dialogue
    .slice(0, chain.second.turn)
    .flatMap((t, i) => (t.role === 'user' && (triggers.has(i) || stated.some((v) => t.content.toLowerCase().includes(v.toLowerCase()))) ? [t.content] : []))
    .map((text) => learnt.reduce((out, v) => out.split(v).join('that one'), text));
  const observations: Record<string, Json> = {};
  for (const [call, source] of [[first, chain.first], [second, chain.second]] as const) {
    const result = sample.dialogue[source.turn].observations?.[source.call.id];
    if (result !== undefined) observations[call.id] = result;
  }
  const id = sampleId('mtu', { compose: 'chained', from: sample.id });
  return {
    id,
    mode: 'chained',
    parts,
    sources: [sample.id],
    build: (message, source) => chainedSample(id, source(sample.id), chain, first, second, observations, message),
  };
}

function chainedSample(id: string, sample: Sample, chain: Chain, first: Call, second: Call, observations: Record<string, Json>, message: string): Sample {
  return composedSample(id, sample, [sample], sample.tools, [
    { role: 'user', content: message },
    { role: 'assistant', content: sample.dialogue[chain.second.turn].content, calls: [first, second], observations },
  ], 'chained', { situations: { '1': 'api_call' } });
}

function independentJob(singles: Single[]): Job {
  const id = sampleId('mtu', { compose: 'independent', from: singles.map((s) => s.id) });
  return {
    id,
    mode: 'independent',
    parts: singles.map((s) => s.request),
    sources: singles.map((s) => s.id),
    build: (message, source) => {
      const sources = singles.map((s) => source(s.id));
      // Each source's calls are numbered from 0: renumbered per source, then as one list.
      const calls = renumber(sources.flatMap((s, n) => renumber(allCalls(s), `s${n}_`)), 'call_');
      return composedSample(id, sources[0], sources, unionTools(...sources.map((s) => s.tools)), [
        { role: 'user', content: message },
        { role: 'assistant', content: '', calls },
      ], 'independent', { situations: { '1': 'api_call' } });
    },
  };
}

function multiTurnJob(sample: Sample, turn: number, extra: Single): Job {
  const id = sampleId('mtu', { compose: 'multi-turn', from: [sample.id, extra.id], turn });
  return {
    id,
    mode: 'independent',
    parts: [sample.dialogue[turn - 1].content, extra.request],
    sources: [sample.id, extra.id],
    build: (message, source) => {
      const [base, added] = [source(sample.id), source(extra.id)];
      const calls = renumber(allCalls(added), 'call_m');
      const dialogue = structuredClone(base.dialogue);
      dialogue[turn - 1] = { role: 'user', content: message };
      // The reply must now cover both requests: it is written again by the ReAct synthesis.
      dialogue[turn] = { ...dialogue[turn], content: '', calls: [...(dialogue[turn].calls ?? []), ...calls] };
      return composedSample(id, base, [base, added], unionTools(base.tools, added.tools), dialogue, 'multi-turn', { situations: mtuMeta(base).situations });
    },
  };
}

/** Draws up to `k` single-tool samples of pairwise different tools that can share a tool list. */
function drawCompatible(pool: Single[], k: number, rng: Rng, taken: ToolSpec[] = []): Single[] {
  const picked: Single[] = [];
  let tools = [...taken];
  for (let attempt = 0; attempt < k * 20 && picked.length < k && pool.length; attempt++) {
    const candidate = rng.pick(pool);
    if (candidate.called.some((name) => tools.some((t) => t.name === name)) || clashes(tools, candidate.tools)) continue;
    picked.push(candidate);
    tools = unionTools(tools, candidate.tools);
  }
  return picked;
}

interface Composition {
  /** The jobs in order, with the message the LLM wrote for each (undefined when it failed). */
  jobs: { job: Job; message?: string }[];
  failures: string[];
  /** The samples the jobs take, as JSON text, gathered while the samples pass through. */
  texts: Map<string, string>;
}

/**
 * Decides the compositions in two passes over the input, holding only what deciding needs: the
 * single-tool requests of each split (ids, tools, request text), then the jobs; asks the LLM for
 * each job's message. The samples the jobs take are kept (as JSON text) as they pass through `run`,
 * and the composed samples built in `finish`.
 */
async function planCompositions(samples: Iterable<Sample>, options: MtuConfig['compose'], ctx: StageContext): Promise<Composition> {
  // Pass 1: the single-tool requests, per split in order of first appearance.
  const singles = new Map<string, Single[]>();
  for (const sample of samples) {
    if (!singles.has(sample.split)) singles.set(sample.split, []);
    const single = singleOf(sample);
    if (single) singles.get(sample.split)!.push(single);
  }
  // Pass 2: per split, the chained and multi-turn jobs of its dialogues in order, then its independent jobs.
  const dialogueJobs = new Map<string, Job[]>([...singles.keys()].map((split) => [split, []]));
  for (const sample of samples) {
    if (userTurns(sample) < 2) continue;
    const jobs = dialogueJobs.get(sample.split)!;
    const chain = findChain(sample);
    if (chain && ctx.rng('chain', sample.id).chance(options.chainRate)) jobs.push(chainedJob(sample, chain));
    const rng = ctx.rng('multi-turn', sample.id);
    const turns = assistantIndexes(sample).filter((i) => turnCalls(sample, i).length === 1 && sample.dialogue[i - 1]?.role === 'user');
    if (!turns.length || !rng.chance(options.multiTurnRate)) continue;
    const [extra] = drawCompatible(singles.get(sample.split)!, 1, rng, sample.tools);
    if (extra) jobs.push(multiTurnJob(sample, rng.pick(turns), extra));
  }
  const jobs: Job[] = [];
  for (const [split, pool] of singles) {
    jobs.push(...dialogueJobs.get(split)!);
    const rng = ctx.rng('independent', split);
    const count = Math.round(options.singleTurnRate * pool.length);
    for (let n = 0; n < count; n++) {
      const picked = drawCompatible(pool, rng.int(options.minTools, Math.max(options.minTools, options.maxTools)), rng);
      if (picked.length >= 2) jobs.push(independentJob(picked));
    }
  }
  const unique = [...new Map(jobs.map((j) => [j.id, j])).values()];
  const failures: string[] = [];
  const asked = await Promise.all(
    unique.map(async (job) => {
      const requests = job.parts.map((p, i) => `${i + 1}. ${p}`).join('\n');
      const result = await ctx.llm.generate(mtuComposePrompt, { mode: job.mode, requests, parts: job.parts }, { stage: 'compose-multi-tool', key: job.id });
      if (!result.ok) failures.push(result.reason);
      return { job, message: result.ok ? result.value.message : undefined };
    }),
  );
  const texts = new Map(unique.flatMap((job) => job.sources).map((id) => [id, '']));
  return { jobs: asked, failures, texts };
}

export function composeStage(options: MtuConfig['compose']): ScanStage<Sample, Sample, Composition> {
  return {
    kind: 'scan',
    name: 'compose-multi-tool',
    version: 1,
    fanOut: true,
    input: Sample,
    output: Sample,
    prompts: { [mtuComposePrompt.id]: mtuComposePrompt.hash },
    collect: (samples, ctx) => planCompositions(samples, options, ctx),
    // Every sample stays; the ones a job takes are kept until the composed samples are built.
    run: (sample, { state }) => {
      if (state.texts.get(sample.id) === '') state.texts.set(sample.id, JSON.stringify(sample));
      return sample;
    },
    finish: ({ jobs, failures, texts }, ctx) => {
      const source = (id: string) => JSON.parse(texts.get(id)!) as Sample;
      const made = jobs.flatMap(({ job, message }) => (message === undefined ? [] : [job.build(message, source)]));
      ctx.report('composition', { made: countBy(made.map((s) => s.meta.tags.find((t) => t.startsWith('composed:'))!.slice(9))), failed: countBy(failures) });
      return made;
    },
  };
}
