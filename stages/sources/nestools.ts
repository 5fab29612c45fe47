import { existsSync } from 'node:fs';
import { basename } from 'node:path';
import { z } from 'zod';
import { UserError, messageOf } from '../../core/errors.ts';
import { Sample as SampleSchema, ToolSpec, type Sample } from '../../core/records.ts';
import type { ToolsConfig } from '../../core/tool-source.ts';
import { importedToolRecords, withTextResult } from './imported-tools.ts';
import { Rng } from '../../core/rng.ts';
import { eachJsonlLine, jsonlErrorMessage, readJsonFile, readJsonlLines } from '../../core/source-files.ts';
import { reject, sourceStage, type SourceStage } from '../../core/stage.ts';
import { checkNesToolsRecord } from '../nestools/check-records.ts';
import { formatIssue } from '../nestools/issues.ts';
import { loadSealToolsLibrary } from './seal-tools.ts';
import { fromNesToolsRecord, fromSealToolsRecord } from '../nestools/import-export.ts';

/**
 * NesTools sources: `fields.json` (the `Domain/Subdomain` list that seeds generation) and
 * NesTools-format JSONL (`test_data.jsonl`: `{test_id, api, task, call, field}` per line).
 */

const Fields = z.array(z.string());

/** The domain list, in file order (duplicates kept: the loader decides what to do with them). */
export function loadDomainFields(path: string): string[] {
  if (!existsSync(path)) throw new UserError(`NesTools domain list not found: ${path} (set fieldsFile in the config)`);
  const parsed = Fields.safeParse(readJsonFile(path, { expected: 'a JSON list of "Domain/Subdomain" strings' }));
  if (!parsed.success) throw new UserError(`${path}: expected a JSON list of "Domain/Subdomain" strings`);
  return parsed.data.map((field) => field.trim()).filter(Boolean);
}

/** A NesTools JSONL file as Samples; a bad line is an error naming the file and line. */
export function loadNesToolsSamples(path: string, split = 'test'): Sample[] {
  return [...eachNesToolsSample(path, split)];
}

/** The records of a NesTools file as samples, one at a time; a bad line is an error naming file and line. */
export function* eachNesToolsSample(path: string, split = 'test'): Generator<Sample> {
  const file = basename(path);
  for (const entry of eachJsonlLine(path)) {
    if ('error' in entry) throw new UserError(jsonlErrorMessage(path, entry));
    yield fromNesToolsRecord(entry.value, { file, split, where: `${path}:${entry.line}` });
  }
}

// ---------------------------------------------------------------- the loader stage

export const DomainRequest = z.object({
  /** Position of the request in the run: rotates the in-context examples. */
  index: z.number().int().min(0),
  domain: z.string().min(1),
  /** With an imported library: the tools the chain is made over (those of the domain's top level). */
  tools: z.array(ToolSpec).optional(),
});
export type DomainRequest = z.infer<typeof DomainRequest>;

export interface DomainRequestOptions {
  fieldsFile: string;
  /** Requests to make: one LLM request per sampled domain. More than the distinct domains cycles through them again. */
  count: number;
}

/**
 * Samples `count` domains (seeded) from the distinct entries of `fields.json`; beyond the distinct
 * count, the domains come round again in a fresh order.
 */
export function sampleDomains(fields: string[], count: number, rng: Rng): DomainRequest[] {
  const distinct = [...new Set(fields)];
  const out: DomainRequest[] = [];
  while (out.length < count && distinct.length) {
    for (const domain of rng.shuffle(distinct)) {
      if (out.length >= count) break;
      out.push({ index: out.length, domain });
    }
  }
  return out;
}

export function loadDomainsStage(options: DomainRequestOptions): SourceStage<DomainRequest> {
  return sourceStage({
    name: 'load-domains',
    version: 1,
    output: DomainRequest,
    load: (ctx) => {
      const fields = loadDomainFields(ctx.resolvePath(options.fieldsFile));
      const distinct = new Set(fields).size;
      ctx.report('nestools.domains', { listed: fields.length, distinct, duplicates: fields.length - distinct, requested: options.count });
      ctx.log(`${fields.length} domains listed (${distinct} distinct); ${options.count} requests`);
      return sampleDomains(fields, options.count, Rng.derive(ctx.seed, 'nestools-domains'));
    },
  });
}

/** A docstring section heading an MCP description may carry (`Args:`, `Returns:`): where its summary ends. */
const SECTION = /^\s*(args|arguments|parameters|params|returns?|raises|examples?|notes?)\s*:/im;

/** One paragraph: the text before any docstring section, its whitespace collapsed (a stub's docstring holds one line per item). */
function oneParagraph(text: string): string {
  const at = text.search(SECTION);
  return (at >= 0 ? text.slice(0, at) : text).replace(/\s+/g, ' ').trim();
}

function flatDescriptions(properties: ToolSpec['parameters']['properties']): ToolSpec['parameters']['properties'] {
  return Object.fromEntries(Object.entries(properties).map(([name, property]) => [name, property.description === undefined ? property : { ...property, description: oneParagraph(property.description) }]));
}

/**
 * A tool's NesTools view: descriptions as one paragraph (an MCP description often holds its own
 * `Args:` / `Returns:` sections, which a stub's docstring would read as items), and a tool that
 * declares no result fields (most MCP tools: their result is text content) returning one string
 * field `result`, which is what such a tool answers (its provenance says `returnsGiven: false`).
 */
export function nestoolsToolView(tool: ToolSpec): ToolSpec {
  const { returns } = withTextResult(tool);
  return { ...tool, description: oneParagraph(tool.description), parameters: { ...tool.parameters, properties: flatDescriptions(tool.parameters.properties) }, returns: { ...returns, properties: flatDescriptions(returns.properties) } };
}

/**
 * Domain requests over an imported tool library: the distinct `domain`s of its tools (a TOUCAN
 * server's is `<Smithery label>/<server>`, a live server's its name), drawn as `sampleDomains`
 * draws fields; each request carries the tools of its domain's top level, so a chain may link the
 * tools of several servers of one kind. Tools a source refused are rejects of this stage.
 */
export function importedDomainsStage(options: { tools: ToolsConfig; count: number }): SourceStage<DomainRequest> {
  return sourceStage({
    name: 'load-imported-domains',
    version: 1,
    output: DomainRequest,
    load: async function* (ctx) {
      const tools: ToolSpec[] = [];
      for await (const item of importedToolRecords(options.tools, ctx, (tool) => nestoolsToolView(tool))) {
        if ('reject' in item) yield item;
        else tools.push(item);
      }
      const top = (tool: ToolSpec) => (tool.domain ?? tool.plugin ?? '').split('/')[0];
      const byTop = new Map<string, ToolSpec[]>();
      for (const tool of tools) byTop.set(top(tool), [...(byTop.get(top(tool)) ?? []), tool]);
      const fields = tools.map((tool) => tool.domain ?? tool.plugin ?? 'tools');
      ctx.report('nestools.domains', { listed: fields.length, distinct: new Set(fields).size, requested: options.count, tools: tools.length });
      for (const request of sampleDomains(fields, options.count, Rng.derive(ctx.seed, 'nestools-domains'))) yield { ...request, tools: byTop.get(request.domain.split('/')[0]) ?? [] };
    },
  });
}

export interface ImportFileOptions {
  file: string;
  format: 'nestools' | 'seal-tools';
  /** Seal-Tools records name their tools; they are looked up in this library. */
  sealToolsFile: string;
  split: string;
}

/**
 * Loads an existing NesTools or Seal-Tools JSONL file as Samples (to tag, review and re-export it).
 * A record that fails the NesTools check, or cannot be imported, is rejected with the reason.
 */
export function importFileStage(options: ImportFileOptions): SourceStage<Sample> {
  return sourceStage<Sample>({
    name: `import-${options.format}`,
    version: 1,
    output: SampleSchema,
    load: function* (ctx) {
      const path = ctx.resolvePath(options.file);
      const file = basename(path);
      const library = options.format === 'seal-tools' ? loadSealToolsLibrary(ctx.resolvePath(options.sealToolsFile)) : undefined;
      let imported = 0;
      let rejected = 0;
      for (const entry of readJsonlLines(path)) {
        const where = `${path}:${entry.line}`;
        if ('error' in entry) {
          rejected++;
          yield { ...reject('invalid_json', jsonlErrorMessage(path, entry)), record: null };
          continue;
        }
        if (!library) {
          const check = checkNesToolsRecord(entry.value, { where: `line ${entry.line}` });
          if (!check.ok) {
            rejected++;
            yield { ...reject(check.errors[0].code, `${where}: ${check.errors.map(formatIssue).join('; ')}`, { recordId: String(check.id) }), record: entry.value };
            continue;
          }
        }
        try {
          yield library ? fromSealToolsRecord(entry.value, library.byName, { file, split: options.split, where }) : fromNesToolsRecord(entry.value, { file, split: options.split, where });
          imported++;
        } catch (error) {
          rejected++;
          yield { ...reject('not_importable', messageOf(error)), record: entry.value };
        }
      }
      ctx.log(`${imported} records imported from ${path}, ${rejected} rejected`);
    },
  });
}
