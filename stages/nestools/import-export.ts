import { join } from 'node:path';
import { z } from 'zod';
import { mapIterable } from '../../core/collections.ts';
import { UserError } from '../../core/errors.ts';
import { writeJsonlAtomic } from '../../core/jsonl.ts';
import { Sample, formatZodError, isRef, sampleId, type Call, type Json, type ToolSpec } from '../../core/records.ts';
import type { SampleSource } from '../../core/sample-source.ts';
import { parseRecord as validated } from '../../core/validate.ts';
import { ApiSpec, apiOfToolSpec, toolSpecDraft } from './api-spec.ts';
import { fromNotation, leaves, toNotation } from './notation.ts';

/**
 * NesTools and Seal-Tools JSONL records ↔ canonical Samples. Importing a file and exporting it again
 * gives the same records back (same values, same key order).
 */

// ---------------------------------------------------------------- record shapes

export const NesToolsCall = z.object({
  api_name: z.string().min(1),
  parameters: z.record(z.string(), z.unknown()),
  responses: z.array(z.string()),
});

export const NesToolsRecord = z
  .object({
    test_id: z.union([z.number(), z.string()]),
    api: z.array(ApiSpec),
    task: z.string(),
    call: z.array(NesToolsCall),
    field: z.string().optional(),
  })
  .passthrough();
export type NesToolsRecord = z.infer<typeof NesToolsRecord>;

export const SealToolsCall = z.object({
  api: z.string().min(1),
  parameters: z.record(z.string(), z.unknown()),
  responses: z.array(z.string()),
});

export const SealToolsRecord = z.object({ id: z.string(), query: z.string(), calling: z.array(SealToolsCall) }).passthrough();
export type SealToolsRecord = z.infer<typeof SealToolsRecord>;

const NESTOOLS_KEYS = ['test_id', 'api', 'task', 'call', 'field'];

// ---------------------------------------------------------------- helpers

export function isNestedCall(calls: Call[]): boolean {
  return calls.some((call) => Object.values(call.arguments).some((value) => leaves(value).some(isRef)));
}

/** `nested` when some argument takes an earlier call's result, else `non-nested`. */
export function chainCategory(calls: Call[]): string {
  return isNestedCall(calls) ? 'nested' : 'non-nested';
}

export function taskOf(sample: Sample): string {
  return sample.dialogue.find((turn) => turn.role === 'user')?.content ?? '';
}

function parseRecord<T>(schema: z.ZodType<T>, raw: unknown, where: string, expected: string): T {
  const parsed = validated(schema, raw);
  if (!parsed.success) throw new UserError(`${where}: not a ${expected} record: ${formatZodError(parsed.error)}`);
  return parsed.data;
}

export interface ImportOptions {
  /** File name kept in meta.source (for messages and lineage). */
  file?: string;
  split?: string;
  /** Line or index of the record, for messages. */
  where?: string;
}

// ---------------------------------------------------------------- NesTools

export function fromNesToolsRecord(raw: unknown, options: ImportOptions = {}): Sample {
  const where = options.where ?? options.file ?? 'NesTools record';
  const record = parseRecord(NesToolsRecord, raw, where, 'NesTools');
  const at = `${where} (test_id ${record.test_id})`;
  const provenance = { source: 'nestools', id: String(record.test_id), ...(options.file ? { file: options.file } : {}) };
  const tools = record.api.map((api) => toolSpecDraft(api, provenance, record.field));
  const calls = fromNotation(record.call as never, tools, at);
  const extra = Object.fromEntries(Object.entries(record).filter(([key]) => !NESTOOLS_KEYS.includes(key)));
  return parseRecord(Sample, {
    // The record's own text identifies it (cheaper to hash than its key-sorted form).
    id: sampleId('nestools', JSON.stringify(raw)),
    benchmark: 'nestools',
    category: chainCategory(calls),
    split: options.split ?? 'test',
    tools,
    dialogue: [{ role: 'user', content: record.task }],
    expected: { calls },
    meta: {
      source: { dataset: 'nestools', id: String(record.test_id), testId: record.test_id, ...(options.file ? { file: options.file } : {}) },
      ...(record.field !== undefined ? { field: record.field } : {}),
      ...(Object.keys(extra).length ? { nestoolsExtra: extra } : {}),
      lineage: [],
      checks: [],
      tags: [],
    },
  }, at, 'canonical');
}

/** A Sample in NesTools format; `testId` is used when the sample did not come from a NesTools file. */
export function toNesToolsRecord(sample: Sample, testId: number | string): NesToolsRecord {
  const source = sample.meta.source as { testId?: number | string } | undefined;
  const id = source?.testId ?? testId;
  const field = (sample.meta as { field?: string }).field ?? sample.tools.find((t) => t.domain)?.domain;
  const extra = (sample.meta as { nestoolsExtra?: Record<string, unknown> }).nestoolsExtra ?? {};
  const calls = sample.expected.calls ?? [];
  return {
    test_id: id,
    api: sample.tools.map(apiOfToolSpec),
    task: taskOf(sample),
    call: toNotation(calls, sample.tools, `sample ${sample.id}`),
    ...(field !== undefined ? { field } : {}),
    ...extra,
  };
}

// ---------------------------------------------------------------- Seal-Tools

/** A Seal-Tools record; its tools come from the Seal-Tools library (`tool.jsonl`) by name. */
export function fromSealToolsRecord(raw: unknown, library: Map<string, ToolSpec>, options: ImportOptions = {}): Sample {
  const where = options.where ?? options.file ?? 'Seal-Tools record';
  const record = parseRecord(SealToolsRecord, raw, where, 'Seal-Tools');
  const at = `${where} (id ${record.id})`;
  const names = [...new Set(record.calling.map((call) => call.api))];
  const tools = names.map((name) => {
    const tool = library.get(name);
    if (!tool) throw new UserError(`${at}: calls ${name}, which the Seal-Tools tool library does not define`);
    return tool;
  });
  const calls = fromNotation(
    record.calling.map((call) => ({ api_name: call.api, parameters: call.parameters as Record<string, Json>, responses: call.responses })),
    tools,
    at,
  );
  const { id: _id, query: _query, calling: _calling, ...extra } = record;
  return parseRecord(Sample, {
    id: sampleId('seal-tools', JSON.stringify(raw)),
    benchmark: 'seal-tools',
    category: chainCategory(calls),
    split: options.split ?? 'test',
    tools,
    dialogue: [{ role: 'user', content: record.query }],
    expected: { calls },
    meta: {
      source: { dataset: 'seal-tools', id: record.id, ...(options.file ? { file: options.file } : {}) },
      ...(Object.keys(extra).length ? { sealToolsExtra: extra } : {}),
      lineage: [],
      checks: [],
      tags: [],
    },
  }, at, 'canonical');
}

export function toSealToolsRecord(sample: Sample): SealToolsRecord {
  const extra = (sample.meta as { sealToolsExtra?: Record<string, unknown> }).sealToolsExtra ?? {};
  const calls = toNotation(sample.expected.calls ?? [], sample.tools, `sample ${sample.id}`);
  return {
    id: sample.meta.source?.id ?? sample.id,
    query: taskOf(sample),
    calling: calls.map((call) => ({ api: call.api_name, parameters: call.parameters, responses: call.responses })),
    ...extra,
  };
}

/** A ToolSpec as a Seal-Tools `tool.jsonl` line (keys in that file's order). */
export function sealToolEntry(tool: ToolSpec): Record<string, unknown> {
  const { api_name, api_description, ...rest } = apiOfToolSpec(tool);
  return { api_name, api_description, ...(tool.domain ? { field: tool.domain } : {}), ...rest };
}

// ---------------------------------------------------------------- exporters

/** `export/nestools/<split>.jsonl` in the released test_data.jsonl format (test_id 1, 2, … per file). */
export async function exportNesTools(samples: SampleSource, _tools: ToolSpec[], outDir: string): Promise<string[]> {
  return [...samples.splits].sort().map((split) => {
    const path = join(outDir, `${split}.jsonl`);
    writeJsonlAtomic(path, mapIterable(samples.inSplit(split), (sample, i) => toNesToolsRecord(sample, i + 1)));
    return path;
  });
}

/** Seal-Tools layout: `<split>.jsonl` records plus `tool.jsonl`, the tool library they call. */
export async function exportSealTools(samples: SampleSource, tools: ToolSpec[], outDir: string): Promise<string[]> {
  const written = [...samples.splits].sort().map((split) => {
    const path = join(outDir, `${split}.jsonl`);
    writeJsonlAtomic(path, mapIterable(samples.inSplit(split), toSealToolsRecord));
    return path;
  });
  const library = join(outDir, 'tool.jsonl');
  writeJsonlAtomic(library, tools.map(sealToolEntry));
  return [...written, library];
}
