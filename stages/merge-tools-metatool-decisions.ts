import { z } from 'zod';
import { UserError } from '../core/errors.ts';
import { formatZodError } from '../core/records.ts';
import type { MergeProposal } from './merge-tools-metatool-proposals.ts';
import { readSourceText } from '../core/source-files.ts';

/**
 * Overlap decisions (paper Appendix A.1 step 2): which tools are merged into one, which tool is
 * decomposed (its queries shared out among other tools), which are kept as they are. They come
 * from a decisions file a curator writes — the proposals file a run leaves behind has the same
 * shape, so accepting a proposal is copying it — or, for proposals nobody decided, from the
 * `undecided` setting.
 *
 * ```json
 * {
 *   "merge": [{ "tools": ["weather", "Weather_Forecast"], "into": "WeatherTool", "description": "optional" }],
 *   "decompose": [{ "tool": "travel_all", "into": ["TripTool", "HotelTool"], "queries": { "<query id or text>": "TripTool" } }],
 *   "keep": ["metar"]
 * }
 * ```
 */
export const OverlapDecisions = z
  .object({
    merge: z
      .array(
        z
          .object({
            /** Two or more tools; one tool with `into` is a rename. */
            tools: z.array(z.string().min(1)).min(1, 'a merge needs at least two tools'),
            /** The merged tool's name (a person names it, as in the paper); empty: the LLM proposes one. */
            into: z.string().optional(),
            /** The merged tool's description; absent: the LLM writes one from the members'. */
            description: z.string().optional(),
            similarity: z.number().optional(),
          })
          .strict()
          .refine((m) => m.tools.length >= 2 || !!m.into?.trim(), { message: 'a merge needs at least two tools (one tool with "into" renames it)', path: ['tools'] }),
      )
      .default([]),
    decompose: z
      .array(
        z
          .object({
            tool: z.string().min(1),
            into: z.array(z.string().min(1)).min(1, 'a decomposition needs at least one tool to move queries to'),
            /** Query (by id or exact text) → the tool it goes to; queries not listed are classified by the LLM. */
            queries: z.record(z.string(), z.string()).default({}),
          })
          .strict(),
      )
      .default([]),
    keep: z.array(z.string()).default([]),
  })
  .strict();
export type OverlapDecisions = z.infer<typeof OverlapDecisions>;

export function readDecisionsFile(path: string, shown = path): OverlapDecisions {
  const text = readSourceText(path, shown);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UserError(code ? `overlap decisions file not readable: ${shown} (${code}); fix overlap.decisions in the config` : `${shown}: not valid JSON (${(error as Error).message})`);
  }
  const parsed = OverlapDecisions.safeParse(json);
  if (!parsed.success) throw new UserError(`${shown}: not a valid overlap decisions file: ${formatZodError(parsed.error)} (expected {"merge": [{"tools": [...], "into"?}], "decompose": [{"tool", "into": [...], "queries"?}], "keep": [...]})`);
  return parsed.data;
}

export interface PlannedMerge {
  members: string[];
  into?: string;
  description?: string;
  /** `decision`: a person decided it; `proposal`: an undecided proposal accepted by the `undecided: merge` setting. */
  source: 'decision' | 'proposal';
}

/** Where a decomposed tool's queries may go: a tool left as it was, or the tool a planned merge makes. */
export type Target = { tool: string } | { merge: number };

export interface PlannedDecomposition {
  tool: string;
  into: Target[];
  /** Query id or text → index into `into`. */
  queries: Record<string, number>;
}

export interface OverlapPlan {
  merges: PlannedMerge[];
  decompositions: PlannedDecomposition[];
  /** Names the decisions mention that are not in this run's library (left out by --limit, rejected earlier, or misspelt). */
  unknownTools: string[];
}

/**
 * Checks the decisions against the tools of this run and turns them, with the proposals nobody
 * decided, into a plan. Names missing from this run are skipped and listed (a `--limit` run holds
 * only some tools); contradictions — a tool in two merges, merged and decomposed, a merge into the
 * name of a tool outside it or of another merge (in any letter case), a query sent to a tool not among the decomposition's targets — are
 * errors naming the file and entry.
 */
export function planOverlap(input: { decisions: OverlapDecisions | null; proposals: MergeProposal[]; tools: string[]; undecided: 'merge' | 'keep'; source: string }): OverlapPlan {
  const { decisions, source } = input;
  const known = new Set(input.tools);
  const knownCaseless = new Map(input.tools.map((name) => [name.toLowerCase(), name]));
  const namedMerge = new Map<string, number>();
  const unknown = new Set<string>();
  const keep = (name: string) => (known.has(name) ? true : (unknown.add(name), false));
  const mergedIn = new Map<string, number>();
  const merges: PlannedMerge[] = [];

  (decisions?.merge ?? []).forEach((entry, i) => {
    const members = [...new Set(entry.tools)].filter(keep);
    for (const name of members) {
      if (mergedIn.has(name)) throw new UserError(`${source}: merge[${i}] lists ${name}, which merge[${mergedIn.get(name)}] already merges; a tool can be merged only once`);
      mergedIn.set(name, i);
    }
    const into = entry.into?.trim() || undefined;
    // Names are compared without regard to case: a prompt lists, and a model answers, "weather" for "Weather".
    const taken = into && knownCaseless.get(into.toLowerCase());
    if (taken && !members.includes(taken)) throw new UserError(`${source}: merge[${i}] is named "${into}", the name of another tool that is not in the merge${taken !== into ? ` (${taken}, in other letter case)` : ''}; choose a new name or add ${taken} to its tools`);
    const earlier = into && namedMerge.get(into.toLowerCase());
    if (into && earlier !== undefined) throw new UserError(`${source}: merge[${i}] is named "${into}", as merge[${earlier}] is (names are compared without regard to case); give each merge its own name`);
    if (into) namedMerge.set(into.toLowerCase(), i);
    if (members.length >= 2 || (members.length === 1 && into)) merges.push({ members, into, description: entry.description, source: 'decision' });
  });

  const decided = new Set([...mergedIn.keys(), ...(decisions?.keep ?? []), ...(decisions?.decompose ?? []).map((d) => d.tool)]);
  if (decisions) for (const name of decisions.keep) keep(name);
  if (input.undecided === 'merge') {
    for (const proposal of input.proposals) {
      const members = proposal.tools.filter((t) => known.has(t) && !decided.has(t));
      if (members.length < 2) continue;
      for (const name of members) decided.add(name);
      merges.push({ members, source: 'proposal' });
    }
  }

  // A target named by a member of a merge, or by the merge's new name, is that merge's tool.
  const targetOf = (name: string): string | undefined => {
    const merge = merges.findIndex((m) => m.into === name || m.members.includes(name));
    if (merge >= 0) return `merge:${merge}`;
    return known.has(name) ? `tool:${name}` : undefined;
  };
  const decompositions: PlannedDecomposition[] = [];
  (decisions?.decompose ?? []).forEach((entry, i) => {
    if (!keep(entry.tool)) return;
    if (mergedIn.has(entry.tool)) throw new UserError(`${source}: decompose[${i}] decomposes ${entry.tool}, which merge[${mergedIn.get(entry.tool)}] merges; a tool is either merged or decomposed`);
    if (entry.into.includes(entry.tool)) throw new UserError(`${source}: decompose[${i}] moves ${entry.tool}'s queries to ${entry.tool} itself`);
    const keys: string[] = [];
    for (const name of entry.into) {
      const key = targetOf(name);
      if (!key) unknown.add(name);
      else if (!keys.includes(key)) keys.push(key);
    }
    if (!keys.length) return;
    const queries: Record<string, number> = {};
    for (const [query, target] of Object.entries(entry.queries)) {
      const at = keys.indexOf(targetOf(target) ?? '');
      if (at < 0) throw new UserError(`${source}: decompose[${i}] sends query "${query}" to ${target}, which is not among its targets (${entry.into.join(', ')})`);
      queries[query] = at;
    }
    const into: Target[] = keys.map((key) => (key.startsWith('merge:') ? { merge: Number(key.slice(6)) } : { tool: key.slice(5) }));
    decompositions.push({ tool: entry.tool, into, queries });
  });
  return { merges, decompositions, unknownTools: [...unknown].sort() };
}

/** The proposals as a decisions file a curator can edit and pass back as `overlap.decisions`. */
export function proposalsAsDecisions(proposals: MergeProposal[]): OverlapDecisions {
  return { merge: proposals.map((p) => ({ tools: p.tools, into: '', similarity: p.similarity })), decompose: [], keep: [] };
}
