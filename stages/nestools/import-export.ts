import { join } from 'node:path';
import { z } from 'zod';
import { mapIterable } from '../../core/collections.ts';
import { UserError } from '../../core/errors.ts';
import { writeJsonlAtomic } from '../../core/jsonl.ts';
import { Sample, formatZodError, isRef, sampleId, type Call, type Json, type ToolSpec } from '../../core/records.ts';
import type { SampleSource } from '../../core/sample-source.ts';
import { parseRecord as validated } from '../../core/validate.ts';
import { ApiIds, numberedSplits } from './api-ids.ts';
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

/**
 * A Sample as a Seal-Tools record. A record imported from Seal-Tools keeps its id; any other is
 * named as the release names its records, `<split>-<easy|difficult>-<n>` (easy: one call;
 * difficult: several; n its position in the file), which its scorer reads to split easy from hard.
 */
export function toSealToolsRecord(sample: Sample, position = 0): SealToolsRecord {
  const extra = (sample.meta as { sealToolsExtra?: Record<string, unknown> }).sealToolsExtra ?? {};
  const calls = toNotation(sample.expected.calls ?? [], sample.tools, `sample ${sample.id}`);
  const source = sample.meta.source;
  const id = source?.dataset === 'seal-tools' && source.id ? source.id : `${sample.split}-${calls.length > 1 ? 'difficult' : 'easy'}-${position}`;
  return {
    id,
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

/**
 * `export/nestools/<split>.jsonl` in the released test_data.jsonl format (test_id 1, 2, … per file
 * for samples that did not come from NesTools), and beside it `<split>_api_ids.jsonl` in the shape
 * of NesTools' `test_api_ids.jsonl` (`test_api_ids.jsonl` for the test split): line k holds
 * `{"test_id": k, "api_ids": [...]}`, the id of each of that record's `api` entries, which NesTools'
 * eval.py reads by `test_id - 1`. An api has one id across the export (the same definition, the
 * same id: `ApiIds`, the ids the eval prompt shows); a test_id no record has gets an empty list.
 */
export async function exportNesTools(samples: SampleSource, _tools: ToolSpec[], outDir: string): Promise<string[]> {
  const apiIds = new ApiIds();
  return numberedSplits(samples).flatMap((split) => {
    const path = join(outDir, `${split}.jsonl`);
    const byTestId = new Map<number, number[]>();
    writeJsonlAtomic(
      path,
      mapIterable(samples.inSplit(split), (sample, i) => {
        const record = toNesToolsRecord(sample, i + 1);
        const testId = record.test_id;
        if (typeof testId !== 'number' || !Number.isInteger(testId) || testId < 1) {
          throw new UserError(`sample ${sample.id} (split ${split}): test_id ${JSON.stringify(testId)} is not a positive integer, which NesTools' eval.py needs (it reads ${split}_api_ids.jsonl by test_id - 1); give the sample a numeric test_id`);
        }
        if (byTestId.has(testId)) throw new UserError(`sample ${sample.id} (split ${split}): test_id ${testId} is used by an earlier record of the split; NesTools' eval.py needs each test_id once`);
        byTestId.set(testId, record.api.map((api) => apiIds.idOf(api)));
        return record;
      }),
    );
    const idsPath = join(outDir, `${split}_api_ids.jsonl`);
    let last = 0;
    for (const testId of byTestId.keys()) last = Math.max(last, testId);
    writeJsonlAtomic(idsPath, (function* () {
      for (let testId = 1; testId <= last; testId++) yield { test_id: testId, api_ids: byTestId.get(testId) ?? [] };
    })());
    return [path, idsPath];
  });
}

/** Seal-Tools layout: `<split>.jsonl` records plus `tool.jsonl`, the tool library they call. */
export async function exportSealTools(samples: SampleSource, tools: ToolSpec[], outDir: string): Promise<string[]> {
  const written = [...samples.splits].sort().map((split) => {
    const path = join(outDir, `${split}.jsonl`);
    writeJsonlAtomic(path, mapIterable(samples.inSplit(split), (sample, i) => toSealToolsRecord(sample, i)));
    return path;
  });
  const library = join(outDir, 'tool.jsonl');
  writeJsonlAtomic(library, tools.map(sealToolEntry));
  return [...written, library];
}
