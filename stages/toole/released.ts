import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseCsvRecords } from '../../core/csv.ts';
import type { EvalItem } from '../../core/eval.ts';
import { UserError } from '../../core/errors.ts';
import { Sample, sampleId, type ToolSpec } from '../../core/records.ts';
import { readJsonFile } from '../../core/source-files.ts';
import { tooleItem } from './score.ts';

/** The released MetaTool file of (query, tool) rows. */
const QUERIES_FILE = 'all_clean_data.csv';

/** The released set's folder and its query file, from the folder or from the query file in it. */
function releasedPaths(path: string): { dir: string; csv: string } {
  return statSync(path).isFile() ? { dir: dirname(path), csv: path } : { dir: path, csv: join(path, QUERIES_FILE) };
}

/** The `Query,Tool` rows of the released CSV (or of toolkiln's export of one, its formula escapes undone). */
export function releasedQueryRows(csv: string): { query: string; tool: string }[] {
  let rows: Record<string, string>[];
  try {
    rows = parseCsvRecords(readFileSync(csv));
  } catch (error) {
    throw new UserError(`${csv}: not a readable Query,Tool CSV (${(error as Error).message})`);
  }
  return rows.map((row, i) => {
    if (typeof row.Query !== 'string' || typeof row.Tool !== 'string') throw new UserError(`${csv}: row ${i + 2} has no Query and Tool columns`);
    return { query: row.Query, tool: row.Tool };
  });
}

/**
 * The released MetaTool data (ToolE) as canonical samples, to audit it like any version: the tool
 * library is `plugin_des.json` with the merged tools of `big_tool_des.json`; each row of
 * `all_clean_data.csv` is a single-tool sample (its query, its tool offered and called), each
 * query of `multi_tool_query_golden.json` a multi-tool sample, each `scenario/<name>.json` a
 * candidate list (a sample with no dialogue). A name the library lacks is offered with no
 * description, for the audit to find. Ids hash what a sample is (a row repeated in the CSV gets
 * the same id, as a version's would). `path` is the released folder, or its `all_clean_data.csv`.
 */
export function releasedMetaTool(path: string): { samples: () => Generator<Sample>; tools: () => ToolSpec[] } {
  const { dir, csv } = releasedPaths(path);
  const tools = () => metaToolLibrary(dir);
  return {
    tools,
    samples: function* () {
      const library = new Map(tools().map((tool) => [tool.name, tool]));
      const offer = (name: string): ToolSpec => library.get(name) ?? plainTool(name, '');
      const make = (origin: unknown, category: string, split: string, query: string | null, names: string[], source: Record<string, string>): Sample =>
        Sample.parse({
          id: sampleId('toole', origin),
          benchmark: 'toole',
          category,
          split,
          tools: names.map(offer),
          dialogue: query === null ? [] : [{ role: 'user', content: query }],
          expected: query === null ? { labels: names } : { calls: names.map((tool, k) => ({ id: `call_${k}`, tool, arguments: {} })), labels: names },
          meta: { source: { dataset: 'metatool', ...source }, lineage: [], checks: [], tags: [] },
        });
      for (const [i, row] of releasedQueryRows(csv).entries()) yield make(row, 'toole/single-tool', 'single-tool', row.query, [row.tool], { file: QUERIES_FILE, id: `row ${i + 2}` });
      const golden = readJsonFile(join(dir, 'multi_tool_query_golden.json')) as { query: string; tool: string[] }[];
      for (const [i, entry] of golden.entries()) yield make({ query: entry.query, tools: entry.tool }, 'toole/multi-tool', 'multi-tool', entry.query, entry.tool, { file: 'multi_tool_query_golden.json', id: `entry ${i}` });
      for (const file of readdirSync(join(dir, 'scenario')).filter((name) => name.endsWith('.json')).sort()) {
        const listed = (readJsonFile(join(dir, 'scenario', file)) as { Tools: string[] }).Tools;
        yield make({ scenario: file }, 'toole/scenario', 'scenario', null, listed, { file: `scenario/${file}` });
      }
    },
  };
}

/** `plugin_des.json`'s tools, a merged tool's description from `big_tool_des.json`. */
function metaToolLibrary(dir: string): ToolSpec[] {
  const descriptions = { ...(readJsonFile(join(dir, 'plugin_des.json')) as Record<string, string>), ...(readJsonFile(join(dir, 'big_tool_des.json')) as Record<string, string>) };
  return Object.entries(descriptions).map(([name, description]) => plainTool(name, description));
}

function plainTool(name: string, description: string): ToolSpec {
  return { name, description, parameters: { type: 'object', properties: {}, required: [] }, returns: { type: 'object', properties: {}, required: [] }, provenance: { source: 'metatool' } };
}

/**
 * The released MetaTool data as ToolE task items. The release gives the queries and their tools, not
 * the candidate lists its prompts were built from (MetaTool draws them when it prompts), so they are
 * drawn here the same way every time: each (query, tool) row of all_clean_data.csv is a similar-choices
 * item (its tool among the next four of the sorted tool list), an awareness item ("yes") and a
 * reliability item (those four without it: "None"); each scenario file's tools with two of their
 * queries each; each multi-tool golden query with its pair among three other tools.
 */
export function releasedMetaToolItems(path: string): EvalItem[] {
  const { dir, csv } = releasedPaths(path);
  const library = new Map(metaToolLibrary(dir).map((tool) => [tool.name, tool]));
  const tools = (names: string[]) => names.map((name) => plainTool(name, library.get(name)?.description ?? ''));
  const rows = releasedQueryRows(csv);
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
