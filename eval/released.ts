import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCsvRecords } from '../core/csv.ts';
import { UserError } from '../core/errors.ts';
import type { BenchmarkScorer, EvalItem } from '../core/eval.ts';
import type { ToolSpec } from '../core/records.ts';
import { readJsonFile } from '../core/source-files.ts';
import { acebenchScorer } from '../stages/acebench/score.ts';
import { importAceFolder } from '../stages/acebench/import.ts';
import { mtuScorer, releasedMtuItems } from '../stages/mtu/score.ts';
import { nestoolsScorer } from '../stages/nestools/score.ts';
import { loadNesToolsSamples } from '../stages/sources/nestools.ts';
import { tooleItem, tooleScorer } from '../stages/toole/score.ts';
import { conversationFiles } from '../stages/tooltalk/conversation-files.ts';
import { importConversationFile } from '../stages/tooltalk/import.ts';
import { tooltalkScorer } from '../stages/tooltalk/score.ts';

/** Where the released benchmarks live: `../shared/data/reference/<name>/` beside the project folder. */
export const REFERENCE_ROOT = fileURLToPath(new URL('../../shared/data/reference/', import.meta.url));

/** A released benchmark a scorer reads as items, to compare a generated version with. */
export interface ReleasedSet {
  /** The name `--reference` takes, also its folder under the reference root. */
  name: string;
  /** The scorer that reads it. */
  scorer: BenchmarkScorer;
  /** What is read, for the report. */
  files: string;
  items(dir: string): EvalItem[];
}

/**
 * The released sets by the scorer that reads them. Not here: Seal-Tools (the NesTools scorer reads it
 * only through the recipe's import, which needs the Seal-Tools tool library of the sources).
 */
export const RELEASED_SETS: readonly ReleasedSet[] = [
  { name: 'mtu-bench', scorer: mtuScorer, files: 'MTU-Eval: S-S, S-M, M-S, M-M and OOD _eval.jsonl', items: releasedMtuItems },
  { name: 'nestools', scorer: nestoolsScorer, files: 'test_data.jsonl', items: (dir) => loadNesToolsSamples(join(dir, 'test_data.jsonl')).flatMap((s) => nestoolsScorer.items(s)) },
  { name: 'metatool', scorer: tooleScorer, files: 'all_clean_data.csv, scenario/*.json, multi_tool_query_golden.json', items: releasedMetaToolItems },
  { name: 'tooltalk', scorer: tooltalkScorer, files: 'easy/ and tooltalk/ conversations', items: (dir) => conversationFiles(dir).flatMap((file) => tooltalkScorer.items(importConversationFile(dir, file))) },
  { name: 'acebench', scorer: acebenchScorer, files: 'data_en and data_zh', items: (dir) => [...importAceFolder(dir)].flatMap((s) => acebenchScorer.items(s)) },
];

/** The released set `name` (default: the first its scorer reads), or a one-line error saying what there is. */
export function releasedSetFor(benchmark: string, shownVersion: string, name?: string): ReleasedSet {
  const readable = RELEASED_SETS.filter((set) => set.scorer.benchmark === benchmark);
  if (!readable.length) {
    const known = [...new Set(RELEASED_SETS.map((set) => set.scorer.benchmark))].join(', ');
    throw new UserError(`${shownVersion} is scored by ${benchmark} rules, and no released set is read by that scorer; eval compare compares versions scored by ${known}`);
  }
  if (name === undefined) return readable[0];
  const set = readable.find((s) => s.name === name);
  if (!set) throw new UserError(`--reference ${name}: not a released set the ${benchmark} scorer reads; ${shownVersion} compares with ${readable.map((s) => s.name).join(', ')}`);
  return set;
}

/** The released set's items read from `dir` (default: its folder under the reference root). */
export function releasedItems(set: ReleasedSet, dir = join(REFERENCE_ROOT, set.name)): EvalItem[] {
  if (!existsSync(dir)) throw new UserError(`released ${set.name} not found at ${dir}; put its files (${set.files}) there or give --reference-dir <folder>`);
  return set.items(dir);
}

const spec = (name: string, description = ''): ToolSpec => ({ name, description, parameters: { type: 'object', properties: {}, required: [] }, returns: { type: 'object', properties: {}, required: [] } });

/**
 * The released MetaTool data as ToolE task items. The release gives the queries and their tools, not
 * the candidate lists its prompts were built from (MetaTool draws them when it prompts), so they are
 * drawn here the same way every time: each (query, tool) row of all_clean_data.csv is a similar-choices
 * item (its tool among the next four of the sorted tool list), an awareness item ("yes") and a
 * reliability item (those four without it: "None"); each scenario file's tools with two of their
 * queries each; each multi-tool golden query with its pair among three other tools.
 */
export function releasedMetaToolItems(dir: string): EvalItem[] {
  const descriptions = { ...(readJsonFile(join(dir, 'plugin_des.json')) as Record<string, string>), ...(readJsonFile(join(dir, 'big_tool_des.json')) as Record<string, string>) };
  const tools = (names: string[]) => names.map((n) => spec(n, descriptions[n]));
  // The release's file, or toolkiln's export of it (its formula escapes undone).
  const rows = parseCsvRecords(readFileSync(join(dir, 'all_clean_data.csv'))).map((r) => ({ query: r.Query, tool: r.Tool }));
  const names = [...new Set(rows.map((r) => r.tool))].sort();
  const next = (tool: string, k: number) => Array.from({ length: k }, (_, i) => names[(names.indexOf(tool) + 1 + i) % names.length]);
  const items: EvalItem[] = [];
  rows.forEach((row, i) => {
    const near = next(row.tool, 4);
    items.push(tooleItem(`similar-${i}`, `row-${i}`, { task: 'similar', labels: [row.tool] }, row.query, tools([row.tool, ...near].sort())));
    items.push(tooleItem(`reliability-${i}`, `row-${i}`, { task: 'reliability', labels: [] }, row.query, tools(near)));
    items.push(tooleItem(`awareness-${i}`, `row-${i}`, { task: 'awareness', labels: ['yes'] }, row.query, []));
  });
  for (const file of readdirSync(join(dir, 'scenario')).sort()) {
    const scenario = file.replace(/\.json$/, '');
    const listed = (readJsonFile(join(dir, 'scenario', file)) as { Tools: string[] }).Tools;
    for (const tool of listed) {
      rows
        .filter((r) => r.tool === tool)
        .slice(0, 2)
        .forEach((row, i) => items.push(tooleItem(`scenario-${scenario}-${tool}-${i}`, `scenario-${scenario}-${tool}-${i}`, { task: 'scenario', labels: [tool], scenario }, row.query, tools(listed))));
    }
  }
  const golden = readJsonFile(join(dir, 'multi_tool_query_golden.json')) as { query: string; tool: string[] }[];
  const big = Object.keys(readJsonFile(join(dir, 'big_tool_des.json')) as Record<string, string>);
  golden.forEach((row, i) => {
    const rest = big.filter((n) => !row.tool.includes(n)).slice(i % 5, (i % 5) + 3);
    items.push(tooleItem(`multi-${i}`, `multi-${i}`, { task: 'multi-tool', labels: row.tool }, row.query, tools([...row.tool, ...rest])));
  });
  return items;
}
