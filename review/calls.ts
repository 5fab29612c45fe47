import { z } from 'zod';
import { Call, formatZodError, isRef, parseRef, type ArgValue, type Sample, type Turn } from '../core/records.ts';
import { jsonTextProblems, sampleHolds } from './typed-text.ts';

/**
 * The gold calls a reviewer sees and corrects: `expected.calls` as a JSON array, or for multi-turn
 * samples `expected.turns` as an object keyed by dialogue index (the same shape comes back).
 */
export type GoldCalls = Call[] | Record<string, Call[]>;

export function goldCalls(sample: Sample): GoldCalls | null {
  if (sample.expected.turns && Object.keys(sample.expected.turns).length) return sample.expected.turns;
  return sample.expected.calls ?? null;
}

/** JSON with one call per line: readable in a cell and easy to edit. */
export function formatCallsJson(calls: GoldCalls | null): string {
  if (calls === null) return '';
  const list = (items: Call[], indent: string) => (items.length ? `[\n${items.map((c) => `${indent}  ${JSON.stringify(c)}`).join(',\n')}\n${indent}]` : '[]');
  if (Array.isArray(calls)) return list(calls, '');
  const entries = Object.entries(calls);
  return entries.length ? `{\n${entries.map(([turn, items]) => `  ${JSON.stringify(turn)}: ${list(items, '  ')}`).join(',\n')}\n}` : '{}';
}

/** What a reviewer's `edit` replaces: the first user turn, the gold calls, the gold labels. */
export interface Correction {
  query?: string;
  calls?: GoldCalls;
  labels?: string[];
}

/** `call_0: search_flights(origin="Paris", date=$call_1.date)`. */
export function renderCall(call: Call): string {
  const args = Object.entries(call.arguments).map(([name, value]) => `${name}=${renderArg(value)}`);
  return `${call.id}: ${call.tool}(${args.join(', ')})`;
}

function renderArg(value: ArgValue): string {
  if (isRef(value)) {
    const { callId, field } = parseRef(value);
    return `$${callId}.${field}`;
  }
  if (Array.isArray(value)) return `[${value.map(renderArg).join(', ')}]`;
  return JSON.stringify(value);
}

/** The gold answer, readably: calls one per line (per turn for multi-turn samples), or labels. */
export function renderGold(sample: Sample): string {
  const gold = goldCalls(sample);
  const lines: string[] = [];
  if (Array.isArray(gold)) lines.push(...gold.map(renderCall));
  else if (gold) for (const [turn, calls] of Object.entries(gold)) lines.push(`turn ${turn}:`, ...calls.map((c) => `  ${renderCall(c)}`));
  if (sample.expected.labels?.length) lines.push(`labels: ${sample.expected.labels.join(', ')}`);
  return lines.join('\n');
}

const CallList = z.array(Call);
const TurnCalls = z.record(z.string().regex(/^\d+$/, 'turn keys are dialogue indices'), CallList);

/** Parses a reviewer's corrected calls; the shape must match the sample's (list or per turn). */
export function parseCorrectedCalls(text: string, sample: Sample): { ok: true; value: GoldCalls } | { ok: false; message: string } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { ok: false, message: `not valid JSON (${(error as Error).message}); copy calls_json and edit it` };
  }
  // Before the schema: it would drop a `__proto__` key silently.
  const unsafe = jsonTextProblems(json, (text) => sampleHolds(sample, text));
  if (unsafe.length) return { ok: false, message: `not accepted: ${unsafe.join('; ')}` };
  const perTurn = !Array.isArray(goldCalls(sample)) && goldCalls(sample) !== null;
  const parsed = perTurn ? TurnCalls.safeParse(json) : CallList.safeParse(json);
  if (!parsed.success) {
    return { ok: false, message: `${perTurn ? 'expected an object {"<turn index>": [calls]}' : 'expected a JSON array of calls {"id", "tool", "arguments"}'}: ${formatZodError(parsed.error)}` };
  }
  const value = parsed.data as GoldCalls;
  const problems: string[] = [];
  for (const { turn, label, calls } of callGroups(value)) {
    const ids = new Set<string>();
    for (const call of calls) {
      if (ids.has(call.id)) problems.push(`${label}call id "${call.id}" is used twice`);
      ids.add(call.id);
    }
    if (turn !== null && sample.dialogue[Number(turn)]?.role !== 'assistant') problems.push(`${label}dialogue turn ${turn} is not an assistant turn`);
  }
  return problems.length ? { ok: false, message: problems.join('; ') } : { ok: true, value };
}

/** The calls per turn (`turn` null for a plain list), with a prefix naming the turn in messages. */
export function callGroups(calls: GoldCalls): { turn: string | null; label: string; calls: Call[] }[] {
  return Array.isArray(calls) ? [{ turn: null, label: '', calls }] : Object.entries(calls).map(([turn, list]) => ({ turn, label: `turn ${turn}: `, calls: list }));
}

/**
 * Replaces the first user turn, the gold calls and/or the gold labels. A list replaces `expected.calls` and the
 * assistant turn that carried them; per-turn calls replace the turns they name (others stay) and,
 * when the sample also lists all its calls in `expected.calls`, that list too. Observations of
 * calls that no longer exist are dropped.
 */
export function applyCorrection(sample: Sample, correction: Correction): Sample {
  const dialogue = sample.dialogue.map((turn) => ({ ...turn }));
  const expected = { ...sample.expected };
  if (correction.query !== undefined) {
    const first = dialogue.findIndex((t) => t.role === 'user');
    if (first === -1) dialogue.unshift({ role: 'user', content: correction.query });
    else dialogue[first].content = correction.query;
  }
  const setCalls = (turn: Turn, calls: Call[]) => {
    if (!calls.length && !turn.calls) return;
    turn.calls = calls;
    if (turn.observations) turn.observations = Object.fromEntries(Object.entries(turn.observations).filter(([id]) => calls.some((c) => c.id === id)));
  };
  const calls = correction.calls;
  if (Array.isArray(calls)) {
    const old = JSON.stringify(sample.expected.calls);
    const carrier = dialogue.find((t) => t.role === 'assistant' && t.calls && (old === undefined || JSON.stringify(t.calls) === old));
    if (carrier) setCalls(carrier, calls);
    expected.calls = calls;
  } else if (calls) {
    for (const [index, list] of Object.entries(calls)) if (dialogue[Number(index)]?.role === 'assistant') setCalls(dialogue[Number(index)], list);
    const turns = { ...sample.expected.turns, ...calls };
    expected.turns = turns;
    if (sample.expected.calls) expected.calls = Object.keys(turns).sort((a, b) => Number(a) - Number(b)).flatMap((k) => turns[k]);
  }
  if (correction.labels) expected.labels = correction.labels;
  return { ...sample, dialogue, expected };
}

/** Labels as a reviewer writes them: one per line or comma-separated. */
export function parseLabels(text: string): string[] {
  return text
    .split(/[\n,]/)
    .map((label) => label.trim())
    .filter(Boolean);
}
