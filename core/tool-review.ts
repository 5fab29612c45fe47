import type { Manifest } from './records.ts';
import { hashOf } from './hash.ts';

/**
 * Tool-level review: questions a run leaves about tools rather than about one sample (tools that
 * cluster together but cannot be merged blindly, merges nobody decided). A recipe declares them in
 * its `toolReview` (core/pipeline.ts); review/ writes one tool-sheet row per question, and applies the
 * decisions by running the recipe again with `withDecisions`. Nothing here knows a benchmark.
 */

export const TOOL_DECISION_KINDS = ['merge', 'keep-apart', 'decompose', 'rename'] as const;
export type ToolDecisionKind = (typeof TOOL_DECISION_KINDS)[number];

/** What an annotator sees of one tool: its description, how many samples use it, a few of their queries. */
export interface ToolEvidence {
  name: string;
  description: string;
  samples: number;
  examples: string[];
}

export interface ToolQuestion {
  /** Stable id: the kind and the sorted tool names (`tq-` + hash). */
  id: string;
  /** e.g. `merge-conflict` (MTU), `merge-proposal` (MetaTool). */
  kind: string;
  tools: ToolEvidence[];
  /** What the run proposes or did, in words. */
  proposal: string;
  /** The name a merge takes when the decision gives none. */
  suggestedName: string;
  /** The decisions this question allows. */
  decisions: ToolDecisionKind[];
}

/** One decided question, in the recipe-independent shape `withDecisions` receives. */
export type ToolDecision = {
  question: string;
  /** Every tool of the question: those the decision does not name stay as they are, no longer flagged. */
  tools: string[];
} & (
  /** `members` (two or more of the question's tools) become one tool named `into`. */
  | { decision: 'merge'; members: string[]; into: string }
  | { decision: 'keep-apart' }
  /** Each `decomposed` tool is taken apart: its queries go to `into` (tools of the library). */
  | { decision: 'decompose'; decomposed: string[]; into: string[] }
  /** Each `from` takes the name `to`. */
  | { decision: 'rename'; renames: { from: string; to: string }[] }
);

/** The tools a decision changes (the rest of its question's tools stay as they are). */
export function toolsChanged(d: ToolDecision): string[] {
  return d.decision === 'merge' ? d.members : d.decision === 'decompose' ? d.decomposed : d.decision === 'rename' ? d.renames.map((r) => r.from) : [];
}

export interface ToolReview<C = any> {
  /** Checks (by name) and tags that flag a sample for one of these questions: they leave the sample queue. */
  checks: readonly string[];
  tags: readonly string[];
  /** The version's questions, from what its stages reported in the manifest. */
  questions: (manifest: Manifest) => ToolQuestion[];
  /** The recipe's config with the decisions added (the version's config is `config`). */
  withDecisions: (config: C, decisions: ToolDecision[]) => C;
}

/** A question's id: the same kind over the same tools always has the same id. */
export function toolQuestionId(kind: string, tools: readonly string[]): string {
  return `tq-${hashOf({ kind, tools: [...tools].sort() }, 12)}`;
}
