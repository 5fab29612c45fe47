import { z } from 'zod';
import { isRef, parseRef, type ArgValue, type Call, type Sample, type ToolSpec, type Turn } from '../../core/records.ts';
import { parseRecord } from '../../core/validate.ts';
import { Situation } from '../../prompts/mtu-situation.ts';

/**
 * What an MTU sample carries in `meta.mtu`, and small helpers over MTU samples. A sample is a
 * whole dialogue: user turns, assistant turns with ReAct calls / observations / responses, and
 * `expected.turns` holding the gold calls of every assistant turn (an empty list: no call).
 */

export const MtuMeta = z
  .object({
    /** Services (tool plugins) the dialogue draws on. */
    services: z.array(z.string()),
    /** Topics, for the out-of-domain hold-out. */
    domains: z.array(z.string()),
    /** The split the source put the dialogue in (`train`, `dev`, `validate`, …). */
    sourceSplit: z.string(),
    /** Situation of each assistant turn, by dialogue index. */
    situations: z.record(z.string(), Situation).default({}),
    /** Set for MultiWOZ: observations come from its databases. */
    database: z.string().optional(),
    /** Samples this one was composed from (S-M / M-M composition) or is a variant of (hard set). */
    composedFrom: z.array(z.string()).optional(),
    variantOf: z.string().optional(),
    /** Hard-set rules the sample meets (test split only). */
    hard: z.array(z.string()).optional(),
    /** Hard variants: a tool shown under a meaningless name (new name → documented name) … */
    renamed: z.record(z.string(), z.string()).optional(),
    /** … or tools left out of the candidate list on purpose. */
    withheld: z.array(z.string()).optional(),
    /** The date the prompts call today. */
    today: z.string().optional(),
  })
  .passthrough();
export type MtuMeta = z.infer<typeof MtuMeta>;

/** The sample's MTU meta, checked (read, not copied, when it is already as the schema makes it: do not edit it). */
export function mtuMeta(sample: Sample): MtuMeta {
  const parsed = parseRecord(MtuMeta, (sample.meta as { mtu?: unknown }).mtu ?? {});
  if (!parsed.success) throw parsed.error;
  return parsed.data;
}

export function withMtuMeta(sample: Sample, patch: Partial<MtuMeta>): Sample {
  return { ...sample, meta: { ...sample.meta, mtu: { ...mtuMeta(sample), ...patch } } };
}

/** Indexes of the assistant turns, in order. */
export function assistantIndexes(sample: Pick<Sample, 'dialogue'>): number[] {
  const indexes: number[] = [];
  const dialogue = sample.dialogue;
  for (let i = 0; i < dialogue.length; i++) if (dialogue[i].role === 'assistant') indexes.push(i);
  return indexes;
}

/** Gold calls of each assistant turn (from `expected.turns`, else the turn's own calls). */
export function turnCalls(sample: Pick<Sample, 'dialogue' | 'expected'>, index: number): Call[] {
  return sample.expected.turns?.[String(index)] ?? sample.dialogue[index]?.calls ?? [];
}

export function allCalls(sample: Pick<Sample, 'dialogue' | 'expected'>): Call[] {
  const calls: Call[] = [];
  const dialogue = sample.dialogue;
  for (let i = 0; i < dialogue.length; i++) if (dialogue[i].role === 'assistant') for (const call of turnCalls(sample, i)) calls.push(call);
  return calls;
}

/** `expected` rebuilt from the dialogue's assistant turns. */
export function expectedOf(dialogue: Turn[]): Sample['expected'] {
  const turns: Record<string, Call[]> = {};
  dialogue.forEach((turn, i) => {
    if (turn.role === 'assistant') turns[String(i)] = turn.calls ?? [];
  });
  return { calls: Object.values(turns).flat(), turns };
}

/** Number of user turns: the MTU-Eval records a dialogue gives. */
export function userTurns(sample: Pick<Sample, 'dialogue'>): number {
  let n = 0;
  for (const turn of sample.dialogue) if (turn.role === 'user') n++;
  return n;
}

/**
 * MTU-Bench's four settings: single- or multi-turn (user turns), single- or multi-tool (at most
 * one call in every turn, or several calls in some turn).
 */
export function categoryOf(sample: Pick<Sample, 'dialogue' | 'expected'>): 'S-S' | 'S-M' | 'M-S' | 'M-M' {
  const turns = userTurns(sample) > 1 ? 'M' : 'S';
  let tools: 'M' | 'S' = 'S';
  for (let i = 0; i < sample.dialogue.length && tools === 'S'; i++) if (sample.dialogue[i].role === 'assistant' && turnCalls(sample, i).length > 1) tools = 'M';
  return `${turns}-${tools}`;
}

/** The tool a call uses, among the sample's tools (by name). */
export function toolOf(sample: Pick<Sample, 'tools'>, call: Call): ToolSpec | undefined {
  return sample.tools.find((t) => t.name === call.tool);
}

/** Key of a tool in a library: its plugin (source service) and name. */
export function toolKey(tool: Pick<ToolSpec, 'name' | 'plugin'>): string {
  return `${tool.plugin ?? ''}/${tool.name}`;
}

/** Every `$ref` inside an argument value. */
export function refsIn(value: ArgValue): { callId: string; field: string }[] {
  if (isRef(value)) return [parseRef(value)];
  if (Array.isArray(value)) return value.flatMap(refsIn);
  return NO_REFS;
}

/** The answer for a value without references: one frozen list, shared (callers only read it). */
const NO_REFS = Object.freeze([]) as unknown as { callId: string; field: string }[];

/** A literal argument as text (for matching against utterances); undefined for references. */
export function literalText(value: ArgValue): string | undefined {
  if (isRef(value)) return undefined;
  if (Array.isArray(value)) return undefined;
  if (value === null || typeof value === 'object') return undefined;
  return String(value);
}

/** The date an MTU prompt calls today when the sample does not say (the sources' own period). */
export const DEFAULT_TODAY = '2019-03-01';
