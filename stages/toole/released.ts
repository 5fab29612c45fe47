import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { UserError } from '../../core/errors.ts';
import { Sample, sampleId, type ToolSpec } from '../../core/records.ts';
import { readJsonFile } from '../../core/source-files.ts';

/**
 * The released MetaTool data (ToolE) as canonical samples, to audit it like any version: the tool
 * library is `plugin_des.json` with the merged tools of `big_tool_des.json`; each row of
 * `all_clean_data.csv` is a single-tool sample (its query, its tool offered and called), each
 * query of `multi_tool_query_golden.json` a multi-tool sample, each `scenario/<name>.json` a
 * candidate list (a sample with no dialogue). A name the library lacks is offered with no
 * description, for the audit to find. Ids hash what a sample is (a row repeated in the CSV gets
 * the same id, as a version's would).
 */
export function releasedMetaTool(dir: string): { samples: () => Generator<Sample>; tools: () => ToolSpec[] } {
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
      const rows = parse(readFileSync(join(dir, 'all_clean_data.csv'), 'utf8'), { columns: true, skip_empty_lines: true, bom: true }) as { Query?: string; Tool?: string }[];
      for (const [i, row] of rows.entries()) {
        if (typeof row.Query !== 'string' || typeof row.Tool !== 'string') throw new UserError(`${join(dir, 'all_clean_data.csv')}: row ${i + 2} has no Query and Tool columns`);
        yield make({ query: row.Query, tool: row.Tool }, 'toole/single-tool', 'single-tool', row.Query, [row.Tool], { file: 'all_clean_data.csv', id: `row ${i + 2}` });
      }
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
