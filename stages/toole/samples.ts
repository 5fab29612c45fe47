import { z } from 'zod';
import { Sample, sampleId, type Call, type ToolSpec } from '../../core/records.ts';
import { reject, type ScanStage } from '../../core/stage.ts';
import { MULTI_TOOL_SPLIT, SINGLE_TOOL_SPLIT, TooleItem, type QueryItem, type TooleTool } from './records.ts';

/**
 * The ToolE dataset as canonical samples: one per query, the user turn and the gold call(s) to the
 * labelled tool(s) (ToolE queries have no arguments). Single-tool queries form the `single-tool`
 * split (`all_clean_data.csv`), two-tool queries the `multi-tool` split
 * (`multi_tool_query_golden.json`). The tools are folded into the samples that use them (a tool
 * no query is left for drops out of the library); a job still unanswered here is a pipeline error.
 * `meta.generatedFor` keeps the plugin a query was written for, whatever label merging gives it.
 */

/**
 * The input schema of ToolE's whole-set stages on samples: every sample was validated as the output
 * of the stage before, and parsing twenty thousand samples again costs seconds per stage.
 */
export const SampleInput = z.custom<Sample>((value) => !!value && typeof value === 'object' && typeof (value as Sample).id === 'string' && Array.isArray((value as Sample).dialogue), 'expected a canonical sample');

export function toolSpecOf(tool: TooleTool): ToolSpec {
  return {
    name: tool.name,
    description: tool.description,
    parameters: { type: 'object', properties: {}, required: [] },
    returns: { type: 'object', properties: {}, required: [] },
    plugin: tool.nameForHuman,
    // Where the plugin came from, without repeating the source file on every sample; an imported tool's server and original name.
    provenance: { source: tool.provenance.source, id: tool.provenance.id, index: tool.provenance.index, server: tool.provenance.server, originalName: tool.provenance.originalName },
  };
}

/** Every distinct tool the samples offer, by name (first definition wins). */
export function toolLibrary(samples: Iterable<Sample>): Map<string, ToolSpec> {
  const library = new Map<string, ToolSpec>();
  for (const sample of samples) for (const tool of sample.tools) if (!library.has(tool.name)) library.set(tool.name, tool);
  return library;
}

/** Calls of the gold tools, one per label. */
export function goldCalls(labels: readonly string[]): Call[] {
  return labels.map((tool, i) => ({ id: `call_${i}`, tool, arguments: {} }));
}

export function querySample(item: QueryItem, tools: Map<string, ToolSpec>): Sample {
  const q = item.query;
  const labels = q.tools ?? [q.tool];
  const calls = goldCalls(labels);
  const multi = q.method === 'multi-tool';
  return {
    id: sampleId('toole', item.id),
    benchmark: 'toole',
    category: `toole/${q.method}`,
    split: multi ? MULTI_TOOL_SPLIT : SINGLE_TOOL_SPLIT,
    tools: labels.map((label) => tools.get(label)!),
    dialogue: [
      { role: 'user', content: q.text },
      { role: 'assistant', content: '', calls },
    ],
    expected: { calls, labels },
    meta: {
      source: { dataset: 'toole', id: item.id },
      lineage: q.lineage,
      checks: q.checks,
      tags: q.tags,
      method: q.method,
      ...(q.emotion !== undefined && { emotion: q.emotion }),
      ...(q.keyword !== undefined && { keyword: q.keyword }),
      ...(q.round !== undefined && { round: q.round }),
      ...(q.basedOn !== undefined && { basedOn: `toole-${q.basedOn}` }),
      ...(q.usage !== undefined && { usage: q.usage }),
      generatedFor: q.generatedFor,
      queryId: item.id,
    },
  };
}

interface SamplesState {
  tools: Map<string, ToolSpec>;
  /** Tools some sample uses. */
  used: Set<string>;
}

/** A whole-set step on a projection: only the tool library is kept between the two passes. */
export function querySamplesStage(): ScanStage<TooleItem, Sample, SamplesState> {
  return {
    kind: 'scan',
    name: 'toole-samples',
    version: 1,
    // Tool records are consumed into the samples' tool lists; every query becomes a sample or a reject.
    fanOut: true,
    input: TooleItem,
    output: Sample,
    collect: (items) => {
      const tools = new Map<string, ToolSpec>();
      for (const item of items) {
        if (item.kind === 'job') throw new Error(`toole-samples: job ${item.id} (${item.job.method}) was never answered; a stage answering it is missing from the pipeline`);
        if (item.kind === 'tool') tools.set(item.tool.name, toolSpecOf(item.tool));
      }
      return { tools, used: new Set() };
    },
    run: (item, ctx) => {
      if (item.kind !== 'query') return [];
      const { tools, used } = ctx.state;
      const missing = (item.query.tools ?? [item.query.tool]).filter((label) => !tools.has(label));
      if (missing.length) return reject('unknown_label', `label(s) ${missing.join(', ')} not in the tool library`, { recordId: item.id });
      const sample = querySample(item, tools);
      for (const tool of sample.tools) used.add(tool.name);
      return [sample];
    },
    finish: ({ tools, used }, ctx) => {
      ctx.report('toole.library', { tools: tools.size, withQueries: used.size, withoutQueries: [...tools.keys()].filter((t) => !used.has(t)).sort() });
    },
  };
}
