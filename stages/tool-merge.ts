import type { Call, Check, Sample, ToolSpec } from '../core/records.ts';
import type { ToolEvidence } from '../core/tool-review.ts';

/**
 * What both tool-merging stages (merge-tools-mtu.ts, merge-tools-metatool.ts) do to samples once they
 * know which tools become which: rewrite every call, replace candidate tools, note the change in
 * lineage and flag it for review, and count each tool's use for the tool sheet.
 */

/** Examples of queries kept per tool for the tool sheet. */
const EXAMPLES_PER_TOOL = 3;

/** Applies `rewrite` to every call of a sample: dialogue turns, expected calls, expected calls per turn. */
export function mapCalls(sample: Sample, rewrite: (call: Call) => Call): Sample {
  const expected = { ...sample.expected };
  if (expected.calls) expected.calls = expected.calls.map(rewrite);
  if (expected.turns) expected.turns = Object.fromEntries(Object.entries(expected.turns).map(([turn, calls]) => [turn, calls.map(rewrite)]));
  return { ...sample, dialogue: sample.dialogue.map((turn) => (turn.calls ? { ...turn, calls: turn.calls.map(rewrite) } : turn)), expected };
}

/** Visits every call of a sample in `mapCalls`'s order (expected calls, expected calls per turn, dialogue turns), building nothing. */
export function eachCall(sample: Sample, visit: (call: Call) => void): void {
  const { calls, turns } = sample.expected;
  if (calls) for (const call of calls) visit(call);
  if (turns) for (const turn of Object.keys(turns)) for (const call of turns[turn]) visit(call);
  for (const turn of sample.dialogue) if (turn.calls) for (const call of turn.calls) visit(call);
}

/** Replaces tools in a sample's candidate list (several old tools may become one), keeping first positions. */
export function replaceTools(tools: readonly ToolSpec[], replacement: (tool: ToolSpec) => ToolSpec[]): ToolSpec[] {
  const seen = new Set<string>();
  const out: ToolSpec[] = [];
  for (const tool of tools) {
    for (const next of replacement(tool)) {
      if (seen.has(next.name)) continue;
      seen.add(next.name);
      out.push(next);
    }
  }
  return out;
}

/** Records a stage's changes on a sample: its lineage entry, failed soft checks, and `tag` when there are any. */
export function noteChanges(sample: Sample, entry: Sample['meta']['lineage'][number], checks: Check[], tag: string): Sample {
  const flagged = flagForReview(sample, checks, tag);
  return { ...flagged, meta: { ...flagged.meta, lineage: [...flagged.meta.lineage, entry] } };
}

/** Adds failed soft checks to a sample, and `tag` when there are any: the review queue picks both up. */
export function flagForReview(sample: Sample, checks: Check[], tag: string): Sample {
  if (!checks.length) return sample;
  const tags = sample.meta.tags.includes(tag) ? sample.meta.tags : [...sample.meta.tags, tag];
  return { ...sample, meta: { ...sample.meta, tags, checks: [...sample.meta.checks, ...checks] } };
}

/** The tools a sample's gold answer names: its labels and every tool it calls. */
export function goldTools(sample: Sample): Set<string> {
  const gold = new Set(sample.expected.labels ?? []);
  eachCall(sample, (call) => gold.add(call.tool));
  return gold;
}

/** Per tool: how many samples' gold answer uses it, and the first few of their queries (what a tool sheet shows). */
export class ToolUsage {
  private readonly byTool = new Map<string, { samples: number; examples: string[] }>();

  add(sample: Sample): void {
    const query = (sample.dialogue.find((turn) => turn.role === 'user')?.content ?? '').trim().slice(0, 300);
    for (const name of goldTools(sample)) {
      const entry = this.byTool.get(name) ?? { samples: 0, examples: [] };
      entry.samples++;
      if (query && entry.examples.length < EXAMPLES_PER_TOOL && !entry.examples.includes(query)) entry.examples.push(query);
      this.byTool.set(name, entry);
    }
  }

  evidence(name: string, description: string): ToolEvidence {
    const entry = this.byTool.get(name);
    return { name, description, samples: entry?.samples ?? 0, examples: entry?.examples ?? [] };
  }
}
