import { countBy } from '../../core/collections.ts';
import { isRef, Sample, sampleId, type Call, type Turn } from '../../core/records.ts';
import type { Rng } from '../../core/rng.ts';
import { reject, scanStage, type LineageEntry, type RejectReason, type ScanStage, type StageContext } from '../../core/stage.ts';
import {
  askMessages,
  buildComposed,
  chainedJob,
  chainedMultiTurnJob,
  drawCompatible,
  findChain,
  fitsWith,
  independentJob,
  multiTurnJob,
  resultFieldsOf,
  resultLinks,
  singleOf,
  type Job,
  type ResultFields,
  type Single,
  type Written,
} from './compose.ts';
import { mtuComposePrompt } from '../../prompts/mtu-compose.ts';
import { SETTINGS, type MtuConfig, type Setting } from './config.ts';
import { compositionOf, releasedFigures, resolveTargets, type Composition, type SteeringReport } from './stats.ts';
import { assistantIndexes, categoryOf, mtuMeta, turnCalls } from './sample.ts';

/**
 * Test-set sampling toward a composition (MTU-Eval §2.2.1: the test sets are sampled by hand from
 * the converted data; the released files hold S-S 11 %, S-M 10 %, M-S 51 %, M-M 28 % of the test
 * records, 51 % of M-S records calling no tool). The converted data has far more single-turn
 * requests and far fewer multi-tool dialogues than that, so the test split is steered toward
 * `targets.mix` and `targets.noCall` (the ood split toward `noCall.OOD`), in this order:
 * 1. trailing no-call turns (thanks, goodbye) are trimmed from multi-turn dialogues whose setting
 *    calls no tool in too many records: a record's history holds every turn before it, so only a
 *    dialogue's tail can go, and a dialogue keeps at least two user turns;
 * 2. shapes the targets want more of are built as the composition stage builds them, from test
 *    dialogues not yet used for that shape: M-M from a dialogue whose later call takes an earlier
 *    result first, then by joining a request whose parameter takes the turn's result, then any;
 *    S-M from such chains, then by joining single requests;
 * 3. each setting keeps the records the targets allow — the largest set in which every setting has
 *    its share — chosen in a seeded order that keeps its no-call share at the target, dialogues
 *    already in a composed sample going first; every other sample is rejected with the target it
 *    exceeds. A target the data cannot meet (no dialogue of that setting, none to build it from) is
 *    reported, and the other settings keep their shares relative to each other.
 */

/** How close a no-call share counts as on target. */
const SHARE_TOLERANCE = 0.005;
/** Single-tool requests looked at when searching one whose parameter takes a turn's result. */
const LINK_SEARCH = 400;

type Group = Setting | 'OOD';

/** A sample of the test or ood split, as the choice needs it: whether each record (answered user turn) calls no tool. */
interface Item {
  id: string;
  group: Group;
  /** Records as the sample came in, and whether each of those kept calls no tool. */
  records: number;
  noCall: boolean[];
  /** Already a source of a composed sample: dropped first when its setting has a surplus. */
  composedSource: boolean;
  /** A sample this stage builds, with the message the LLM wrote. */
  built?: { job: Job; written: Written };
}

const records = (items: Item[]) => items.reduce((n, i) => n + i.noCall.length, 0);
const noCalls = (items: Item[]) => items.reduce((n, i) => n + i.noCall.filter(Boolean).length, 0);
const shareOf = (i: Item) => (i.noCall.length ? i.noCall.filter(Boolean).length / i.noCall.length : 0);
const pct = (x: number) => `${Math.round(x * 100)} %`;

/** Indexes of the assistant turns that answer a user turn: one MTU-Eval record each. */
function recordTurns(sample: Sample): number[] {
  return assistantIndexes(sample).filter((i) => sample.dialogue[i - 1]?.role === 'user');
}

function noCallPattern(sample: Sample): boolean[] {
  return recordTurns(sample).map((i) => turnCalls(sample, i).length === 0);
}

/** Records a multi-turn dialogue keeps without its trailing no-call turns (at least two). */
export function trimmedLength(noCall: boolean[]): number {
  if (noCall.length <= 2) return noCall.length;
  return Math.min(noCall.length, Math.max(2, noCall.lastIndexOf(false) + 1));
}

/** The dialogue up to the answer of its `keep`-th record (`entry`: the trimming stage's lineage entry); the turns after it are returned apart. */
export function trimSample(sample: Sample, keep: number, entry: LineageEntry): { sample: Sample; dropped: Turn[] } {
  const cut = recordTurns(sample)[keep - 1] + 1;
  const turns = Object.fromEntries(Object.entries(sample.expected.turns ?? {}).filter(([i]) => Number(i) < cut));
  const meta = mtuMeta(sample);
  const situations = Object.fromEntries(Object.entries(meta.situations).filter(([i]) => Number(i) < cut));
  return {
    sample: {
      ...sample,
      id: sampleId('mtu', { trimmed: keep, of: sample.id }),
      dialogue: sample.dialogue.slice(0, cut),
      expected: { ...sample.expected, turns, calls: Object.values(turns).flat() },
      meta: {
        ...sample.meta,
        lineage: [...sample.meta.lineage, entry],
        tags: [...sample.meta.tags, 'steer:trimmed'],
        mtu: { ...meta, situations, trimmedFrom: sample.id },
      },
    },
    dropped: sample.dialogue.slice(cut),
  };
}

/**
 * The most records of `items` whose no-call share can be brought to `target`: all of them when their
 * share is on target or there is none, else the longest run of the items sorted toward the target.
 */
export function capacity(items: Item[], target: number | undefined): number {
  const total = records(items);
  if (target === undefined || !total) return total;
  const share = noCalls(items) / total;
  if (Math.abs(share - target) <= SHARE_TOLERANCE) return total;
  const high = share > target;
  const sorted = [...items].sort((a, b) => (high ? shareOf(a) - shareOf(b) : shareOf(b) - shareOf(a)));
  let [r, n, best] = [0, 0, 0];
  for (const item of sorted) {
    r += item.noCall.length;
    n += item.noCall.filter(Boolean).length;
    if (high ? n / r <= target + SHARE_TOLERANCE : n / r >= target - SHARE_TOLERANCE) best = r;
  }
  return best;
}

/**
 * Up to `quota` records of `items`, taken in their order from groups of like items (same records,
 * same no-call records), each time from the group that keeps the no-call share nearest `target`.
 */
export function choose(items: Item[], quota: number, target: number | undefined): Set<string> {
  const groups = new Map<string, Item[]>();
  for (const item of items) {
    const key = `${item.noCall.length}/${item.noCall.filter(Boolean).length}`;
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  const heads = new Map([...groups.keys()].map((k) => [k, 0]));
  const position = new Map(items.map((item, i) => [item.id, i]));
  const chosen = new Set<string>();
  let [r, n] = [0, 0];
  for (;;) {
    let best: { key: string; item: Item; score: number } | undefined;
    for (const [key, list] of groups) {
      const item = list[heads.get(key)!];
      if (!item || r + item.noCall.length > quota) continue;
      const m = item.noCall.filter(Boolean).length;
      const score = target === undefined ? 0 : Math.abs((n + m) / (r + item.noCall.length) - target);
      if (!best || score < best.score - 1e-12 || (Math.abs(score - best.score) <= 1e-12 && position.get(item.id)! < position.get(best.item.id)!)) best = { key, item, score };
    }
    if (!best) return chosen;
    heads.set(best.key, heads.get(best.key)! + 1);
    chosen.add(best.item.id);
    r += best.item.noCall.length;
    n += best.item.noCall.filter(Boolean).length;
  }
}

export interface SteerOptions {
  targets: MtuConfig['targets'];
  /** Folder of the released MTU-Eval files (the targets left unset). */
  reference: string;
  compose: MtuConfig['compose'];
}

interface SteerState {
  active: boolean;
  /** Why a sample goes: by its id as it comes in. */
  rejects: Map<string, RejectReason>;
  /** Records kept of the dialogues trimmed, by id as they come in. */
  trims: Map<string, number>;
  built: Item[];
  builtRejects: Map<string, RejectReason>;
  /** Samples the built ones are made of (by id after trimming), as JSON text once they passed. */
  texts: Map<string, string>;
  trimmedTails: { id: string; dropped: Turn[] }[];
  report?: SteeringReport;
}

const inactive = (): SteerState => ({ active: false, rejects: new Map(), trims: new Map(), built: [], builtRejects: new Map(), texts: new Map(), trimmedTails: [] });

function groupOf(sample: Sample): Group | undefined {
  if (sample.split === 'ood') return 'OOD';
  return sample.split === 'test' ? categoryOf(sample) : undefined;
}

/** Trims trailing no-call turns, in `rng`'s order, until the items' no-call share is at `target`. */
function planTrims(items: Item[], target: number | undefined, rng: Rng, trims: Map<string, number>): void {
  if (target === undefined) return;
  let [r, n] = [records(items), noCalls(items)];
  for (const item of rng.shuffle(items)) {
    if (!r || n / r <= target + SHARE_TOLERANCE) return;
    const keep = trimmedLength(item.noCall);
    if (keep === item.noCall.length) continue;
    r -= item.noCall.length - keep;
    n -= item.noCall.length - keep;
    item.noCall = item.noCall.slice(0, keep);
    trims.set(item.id, keep);
  }
}

/** Items by setting. */
function bySetting(items: Item[]): Record<Setting, Item[]> {
  return Object.fromEntries(SETTINGS.map((s) => [s, items.filter((i) => i.group === s)])) as Record<Setting, Item[]>;
}

/**
 * The no-call targets a setting's records can meet at all: a setting none of whose records can be
 * brought to its target (S-S before the hard set's no-suitable-tool variants, which alone call no
 * tool there) keeps its records regardless of it, and the target is reported as not reachable.
 */
function reachableNoCall(groups: Record<Setting, Item[]>, noCall: Composition['noCall'], unreachable: string[], which: (s: Setting) => boolean): Composition['noCall'] {
  const out = { ...noCall };
  for (const setting of SETTINGS.filter(which)) {
    const target = out[setting];
    if (target === undefined || !groups[setting].length || capacity(groups[setting], target) > 0) continue;
    const share = noCalls(groups[setting]) / records(groups[setting]);
    unreachable.push(`${setting}: no-call target ${pct(target)}, but ${pct(share)} of its test records call no tool and none can be brought to the target; its records are kept as they are`);
    delete out[setting];
  }
  return out;
}

/**
 * How many test records the targets allow in all: the largest total in which every targeted setting
 * has its share, over the settings that have records (or, with `only`, over those settings).
 */
function allowedTotal(groups: Record<Setting, Item[]>, targets: Composition, only?: (s: Setting) => boolean): number {
  const totals = SETTINGS.filter((s) => (targets.mix[s] ?? 0) > 0 && (!only || only(s)))
    .map((s) => capacity(groups[s], targets.noCall[s]) / targets.mix[s]!)
    .filter((t) => t > 0);
  return totals.length ? Math.min(...totals) : 0;
}

export function steerCompositionStage(options: SteerOptions): ScanStage<Sample, Sample, SteerState> {
  return scanStage<Sample, Sample, SteerState>({
    name: 'steer-composition',
    version: 1,
    fanOut: true,
    input: Sample,
    output: Sample,
    // Built samples are worded as the composition stage words them (see compose.ts).
    prompts: [mtuComposePrompt],
    collect: (samples, ctx) => plan(samples, options, ctx),
    run: (sample, ctx) => {
      const { state } = ctx;
      if (!state.active) return sample;
      const keep = state.trims.get(sample.id);
      const trimmed = keep === undefined ? undefined : trimSample(sample, keep, ctx.lineage());
      const kept = trimmed?.sample ?? sample;
      if (state.texts.get(kept.id) === '') state.texts.set(kept.id, JSON.stringify(kept));
      const why = state.rejects.get(sample.id);
      if (why) return reject(why.reason, why.detail);
      if (trimmed) state.trimmedTails.push({ id: sample.id, dropped: trimmed.dropped });
      return kept;
    },
    finish: (state, ctx) => {
      if (!state.active) return;
      const source = (id: string) => JSON.parse(state.texts.get(id)!) as Sample;
      const out: Sample[] = [];
      const rejects: (RejectReason & { record: unknown })[] = [];
      for (const item of state.built) {
        const { job, written } = item.built!;
        // A built sample not kept is recorded as what it would have been made of (its sources are not kept for it).
        const why = state.builtRejects.get(item.id);
        if (why) {
          rejects.push({ ...why, recordId: job.id, record: { id: job.id, setting: item.group, composedFrom: job.sources, message: written.message } });
          continue;
        }
        // Its lineage names this stage's answer (the message), the last entry.
        const made = buildComposed(job, written, source);
        out.push({ ...made, meta: { ...made.meta, tags: [...made.meta.tags, 'steer:built'] } });
      }
      state.report!.builtDependentCalls = out.flatMap((s) => s.expected.calls ?? []).filter((c) => Object.values(c.arguments).some(isRef)).length;
      for (const { id, dropped } of state.trimmedTails) {
        rejects.push({ reason: 'no-call target: trailing no-call turns trimmed', detail: `${dropped.filter((t) => t.role === 'user').length} user turns after the dialogue's last call`, recordId: id, record: { id, dropped } });
      }
      ctx.report('mixSteering', state.report);
      return { out, rejects };
    },
  });
}

async function plan(samples: Iterable<Sample>, options: SteerOptions, ctx: StageContext): Promise<SteerState> {
  const state = inactive();
  if (!options.targets.steer) return state;
  const released = releasedFigures(ctx.resolvePath(options.reference));
  let targets = resolveTargets(options.targets, released ? compositionOf(released) : null);
  if (!targets) {
    ctx.log('targets.steer is set but there are no targets: set targets.mix / targets.noCall, or point reference at the released MTU-Eval files; the splits are left as they are');
    state.report = { targets: { mix: {}, noCall: {} }, before: { mix: {}, noCall: {} }, chosen: { mix: {}, noCall: {} }, built: {}, builtDependentCalls: 0, buildFailures: {}, trimmed: { samples: 0, records: 0 }, rejected: {}, unreachable: ['no targets: neither targets.mix / targets.noCall nor the released files'] };
    state.active = true;
    return state;
  }

  // Pass 1: the test and ood samples as the choice needs them, and what was composed from what.
  const items: Item[] = [];
  const composedFrom = new Set<string>();
  for (const sample of samples) {
    const group = groupOf(sample);
    if (!group) continue;
    for (const id of mtuMeta(sample).composedFrom ?? []) composedFrom.add(id);
    const noCall = noCallPattern(sample);
    items.push({ id: sample.id, group, records: noCall.length, noCall, composedSource: false });
  }
  for (const item of items) item.composedSource = composedFrom.has(item.id);
  const before = compositionOf(figuresOf(items));

  // 1. Trailing no-call turns of multi-turn dialogues.
  for (const group of ['M-S', 'M-M', 'OOD'] as const) {
    planTrims(
      items.filter((i) => i.group === group && i.noCall.length > 1),
      targets.noCall[group],
      ctx.rng('steer', 'trim', group),
      state.trims,
    );
  }

  // 2. More of the shapes the targets want than the test split has.
  const unreachable: string[] = [];
  const test = items.filter((i) => i.group !== 'OOD');
  const steered: Composition = { mix: targets.mix, noCall: reachableNoCall(bySetting(test), targets.noCall, unreachable, (s) => !BUILDABLE.has(s)) };
  const { built, failures } = await build(samples, test, steered, state, options, ctx);
  state.built = built;

  // 3. What each setting keeps, and why the others go.
  const groups = bySetting([...test, ...built]);
  steered.noCall = reachableNoCall(groups, steered.noCall, unreachable, (s) => BUILDABLE.has(s));
  targets = steered;
  const total = allowedTotal(groups, targets);
  const kept = new Set<string>();
  const reasons = new Map<string, RejectReason>();
  for (const setting of SETTINGS) {
    const share = targets.mix[setting];
    const list = order(groups[setting], ctx.rng('steer', 'order', setting));
    if (share === undefined && !Object.keys(targets.mix).length) {
      // No mix target: only the no-call share steers.
      keepChosen(list, capacity(list, targets.noCall[setting]), targets.noCall[setting], setting, kept, reasons, undefined);
      continue;
    }
    const cap = capacity(list, targets.noCall[setting]);
    if ((share ?? 0) > 0 && cap === 0) {
      unreachable.push(
        list.length
          ? `${setting}: target ${pct(share!)} of the test records, but no ${setting} records meet its no-call target ${pct(targets.noCall[setting]!)}`
          : `${setting}: target ${pct(share!)} of the test records, but the test split has no ${setting} dialogue and none could be built (${setting.startsWith('M') ? 'no multi-turn dialogue to compose from' : 'no single-tool request to compose from'})`,
      );
    }
    const quota = Math.min(cap, Math.round(total * (share ?? 0)));
    keepChosen(list, quota, targets.noCall[setting], setting, kept, reasons, quota < cap ? share ?? 0 : undefined);
  }
  if (targets.noCall.OOD !== undefined) {
    const list = order(items.filter((i) => i.group === 'OOD'), ctx.rng('steer', 'order', 'OOD'));
    const cap = capacity(list, targets.noCall.OOD);
    if (list.length && !cap) unreachable.push(`OOD: no-call target ${pct(targets.noCall.OOD)}, but no ood records can be brought to it; they are kept as they are`);
    keepChosen(list, cap || records(list), cap ? targets.noCall.OOD : undefined, 'OOD', kept, reasons, undefined);
  } else for (const item of items) if (item.group === 'OOD') kept.add(item.id);
  for (const [id, why] of reasons) (built.some((b) => b.id === id) ? state.builtRejects : state.rejects).set(id, why);
  // The built samples kept need their sources as they pass through `run`.
  for (const item of built) if (kept.has(item.id)) for (const id of item.built!.job.sources) state.texts.set(id, '');

  const chosenItems = [...items, ...built].filter((i) => kept.has(i.id));
  const trimmed = items.filter((i) => state.trims.has(i.id) && kept.has(i.id));
  state.report = {
    targets: resolveTargets(options.targets, released ? compositionOf(released) : null)!,
    before,
    chosen: compositionOf(figuresOf(chosenItems)),
    built: countBy(built.filter((b) => kept.has(b.id)).map((b) => b.group)),
    builtDependentCalls: 0,
    buildFailures: countBy(failures),
    trimmed: { samples: trimmed.length, records: trimmed.reduce((n, i) => n + i.records - i.noCall.length, 0) },
    rejected: countBy([...reasons.values()].map((r) => r.reason)),
    unreachable,
  };
  state.active = true;
  return state;
}

function figuresOf(items: Item[]): Partial<Record<Group, { records: number; noCallRecords: number }>> {
  const out: Partial<Record<Group, { records: number; noCallRecords: number }>> = {};
  for (const item of items) {
    const f = (out[item.group] ??= { records: 0, noCallRecords: 0 });
    f.records += item.noCall.length;
    f.noCallRecords += item.noCall.filter(Boolean).length;
  }
  return out;
}

/** A setting's samples in the order they are kept: seeded, the sources of composed samples and the built ones after the others. */
function order(items: Item[], rng: Rng): Item[] {
  const rank = (i: Item) => (i.built ? 2 : i.composedSource ? 1 : 0);
  return rng.shuffle(items).sort((a, b) => rank(a) - rank(b));
}

/** Keeps `quota` records of `list` and gives every other sample the target it exceeds. */
function keepChosen(list: Item[], quota: number, noCall: number | undefined, group: Group, kept: Set<string>, reasons: Map<string, RejectReason>, mixShare: number | undefined): void {
  const chosen = choose(list, quota, noCall);
  for (const id of chosen) kept.add(id);
  const dropped = list.filter((i) => !chosen.has(i.id));
  if (!dropped.length) return;
  const all = records(list);
  const natural = all ? noCalls(list) / all : 0;
  const reason =
    mixShare !== undefined
      ? `category mix target: ${group} above its ${pct(mixShare)} share`
      : `no-call target: ${group} no-call records ${natural > (noCall ?? 0) ? 'above' : 'below'} its ${pct(noCall ?? 0)} share`;
  const detail = `${group} keeps ${records(list.filter((i) => chosen.has(i.id)))} of its ${all} records`;
  for (const item of dropped) reasons.set(item.id, { reason, detail });
}

const BUILDABLE: ReadonlySet<Setting> = new Set(['S-M', 'M-M']);

interface Candidate {
  job: Job;
  group: Setting;
  noCall: boolean[];
}

/** A single-tool request of `pool` that fits `tools` and has a parameter taking a result field of `own`'s tool, if one is found. */
function linkedExtra(pool: Single[], own: Call, tools: Sample['tools'], fields: ResultFields, rng: Rng): Single | undefined {
  for (const single of rng.sample(pool, LINK_SEARCH)) {
    if (fitsWith(tools, single) && Object.keys(resultLinks([{ call: own, tools }], single.call, single.request, fields, () => true)).length) return single;
  }
  return undefined;
}

/**
 * Builds S-M and M-M samples while the targets want more of them than the test split has: the
 * candidates of each setting in tiers (a dependent call first), seeded within a tier, added until
 * the setting can give its share of the total the other settings allow; the LLM words their requests.
 */
async function build(samples: Iterable<Sample>, test: Item[], targets: Composition, state: SteerState, options: SteerOptions, ctx: StageContext): Promise<{ built: Item[]; failures: string[] }> {
  const groups = bySetting(test);
  const total = allowedTotal(groups, targets, (s) => !BUILDABLE.has(s));
  const wanted = new Map<Setting, number>();
  for (const setting of BUILDABLE) {
    const want = Math.round(total * (targets.mix[setting] ?? 0));
    if (want > capacity(groups[setting], targets.noCall[setting])) wanted.set(setting, want);
  }
  if (!wanted.size) return { built: [], failures: [] };
  const fields = resultFieldsOf(ctx);
  const byId = new Map(test.map((i) => [i.id, i]));
  const singles: Single[] = [];
  for (const sample of samples) {
    const single = sample.split === 'test' ? singleOf(sample) : undefined;
    if (single) singles.push(single);
  }
  // Tiers: 0 a dialogue's own chain, 1 a joined request taking the turn's result, 2 any joined request.
  const tiers: Record<string, Candidate[][]> = { 'M-M': [[], [], []], 'S-M': [[], [], []] };
  for (const sample of samples) {
    const item = byId.get(sample.id);
    if (!item || item.group !== 'M-S' || item.composedSource) continue;
    const keep = state.trims.get(sample.id);
    const base = keep === undefined ? sample : trimSample(sample, keep, ctx.lineage()).sample;
    const chain = findChain(base);
    if (wanted.has('M-M')) {
      const chained = chain && chainedMultiTurnJob(base, chain);
      const preview = chained && buildComposed(chained, { message: '', entry: ctx.lineage() }, () => base);
      if (chained && preview && categoryOf(preview) === 'M-M') tiers['M-M'][0].push({ job: chained, group: 'M-M', noCall: noCallPattern(preview) });
      else {
        const rng = ctx.rng('steer', 'multi-turn', sample.id);
        const turns = recordTurns(base).filter((i) => turnCalls(base, i).length === 1);
        if (turns.length) {
          const turn = rng.pick(turns);
          const [own] = turnCalls(base, turn);
          const linked = linkedExtra(singles, own, base.tools, fields, rng);
          const extra = linked ?? drawCompatible(singles, 1, rng, base.tools)[0];
          if (extra) tiers['M-M'][linked ? 1 : 2].push({ job: multiTurnJob(base, turn, extra, fields, () => rng.chance(options.compose.linkRate)), group: 'M-M', noCall: item.noCall });
        }
      }
    }
    if (wanted.has('S-M') && chain) tiers['S-M'][0].push({ job: chainedJob(base, chain), group: 'S-M', noCall: [false] });
  }
  const chosen: Candidate[] = [];
  for (const [setting, want] of wanted) {
    const rng = ctx.rng('steer', 'build', setting);
    const have = [...groups[setting]];
    const enough = () => records(have) >= want && capacity(have, targets.noCall[setting]) >= want;
    const take = (candidate: Candidate) => {
      chosen.push(candidate);
      have.push({ id: candidate.job.id, group: setting, records: candidate.noCall.length, noCall: candidate.noCall, composedSource: false });
    };
    for (const tier of tiers[setting]) for (const candidate of rng.shuffle(tier)) if (!enough() && !byId.has(candidate.job.id)) take(candidate);
    // S-M: independent requests joined, as many as wanted.
    const { minTools, maxTools, linkRate } = options.compose;
    for (let attempt = 0; setting === 'S-M' && !enough() && singles.length >= 2 && attempt < want * 4; attempt++) {
      const picked = drawCompatible(singles, rng.int(minTools, Math.max(minTools, maxTools)), rng);
      if (picked.length >= 2 && !byId.has(independentJob(picked, fields, () => false).id)) take({ job: independentJob(picked, fields, () => rng.chance(linkRate)), group: 'S-M', noCall: [false] });
    }
  }
  const unique = [...new Map(chosen.map((c) => [c.job.id, c])).values()];
  const { asked, failures } = await askMessages(
    unique.map((c) => c.job),
    ctx,
  );
  const built = asked.flatMap(({ job, written }, i) => (written === undefined ? [] : [{ id: job.id, group: unique[i].group as Group, records: unique[i].noCall.length, noCall: unique[i].noCall, composedSource: false, built: { job, written } }]));
  return { built, failures };
}
