import { join } from 'node:path';
import { UserError } from '../../core/errors.ts';
import { stableStringify } from '../../core/hash.ts';
import { writeFileAtomic } from '../../core/jsonl.ts';
import type { Json, Sample, ToolSpec } from '../../core/records.ts';
import type { SampleSource } from '../../core/sample-source.ts';
import { sampleToConversation, toolTalkMetaOf } from './conversation.ts';
import { readDatabasesFolder, readDatabasesReport, type DatabasesReport } from './database-report.ts';
import { DEFAULT_DATABASES_DIR, type DatabasesJson } from './databases.ts';
import { pythonJson } from '../../core/python-json.ts';
import { DATABASE_NAMES } from './tool.ts';

/**
 * `--format tooltalk`: one JSON file per conversation in the released shape (at `<easy|tooltalk>/<name>.json`,
 * written as ToolTalk's Python writes it), and `databases/<Name>.json`: the initial databases with
 * every conversation's overlay laid over them. An overlay record that another conversation's overlay
 * (or the initial databases) holds under the same key with other content stops the export, naming
 * both, before anything is written. Over an imported tool library: the conversations and `tools.json`
 * (the version's tool library) in place of the databases.
 */
export async function exportToolTalk(samples: SampleSource, tools: ToolSpec[], outDir: string, version?: { dir: string }): Promise<string[]> {
  const files = new Map<string, string>();
  let toolsImported = false;
  for (const sample of samples.all()) {
    const meta = toolTalkMetaOf(sample);
    if (files.has(meta.file)) throw new UserError(`samples ${files.get(meta.file)} and ${sample.id} both export to ${meta.file}; give one of them another name`);
    files.set(meta.file, sample.id);
    toolsImported ||= meta.toolsImported === true;
  }
  const written: string[] = [];
  for (const sample of samples.all()) {
    const meta = toolTalkMetaOf(sample);
    const path = join(outDir, meta.file);
    writeFileAtomic(path, pythonJson(sampleToConversation(sample) as unknown as Json, { indent: 4, floatKeys: new Set(meta.floatKeys) }));
    written.push(path);
  }
  // Over an imported library there are no databases: the conversations record the results, and `tools.json` documents the tools.
  if (toolsImported) {
    const path = join(outDir, 'tools.json');
    writeFileAtomic(path, pythonJson(tools as unknown as Json, { indent: 4 }));
    return [...written, path];
  }
  const initial = (version && readDatabasesReport(version.dir)) ?? readDatabasesFolder(DEFAULT_DATABASES_DIR);
  const databases = mergeOverlays(initial, samples.all());
  const floatKeys = new Set(initial.floatKeys);
  for (const name of DATABASE_NAMES) {
    const path = join(outDir, 'databases', `${name}.json`);
    writeFileAtomic(path, pythonJson((databases[name] ?? {}) as Json, { indent: 4, floatKeys }));
    written.push(path);
  }
  return written;
}

/** The initial databases with every sample's overlay laid over them; a conflicting key is an error. */
export function mergeOverlays(initial: DatabasesReport, samples: Iterable<Sample>): DatabasesJson {
  const merged = structuredClone(initial.databases) as Record<string, Record<string, Record<string, unknown>>>;
  const owners = new Map<string, string>();
  for (const sample of samples) {
    const overlay = toolTalkMetaOf(sample).overlay as Record<string, Record<string, Record<string, unknown>>>;
    for (const [database, byOwner] of Object.entries(overlay)) {
      const table = (merged[database] ??= {});
      // Account: username → record; the others: owner → { id → record }.
      const entries = database === 'Account' ? [[null, byOwner] as const] : Object.entries(byOwner).map(([owner, rows]) => [owner, rows as Record<string, unknown>] as const);
      for (const [owner, rows] of entries) {
        const target = owner === null ? table : (table[owner] ??= {});
        for (const [id, record] of Object.entries(rows)) {
          const key = owner === null ? `${database} › ${id}` : `${database} › ${owner} › ${id}`;
          const claimedBy = owners.get(key);
          const existing = (target as Record<string, unknown>)[id];
          if (existing !== undefined && stableStringify(existing) !== stableStringify(record)) {
            throw new UserError(
              `overlay key ${key} of sample ${sample.id} (${toolTalkMetaOf(sample).file}) collides with ${claimedBy ? `the overlay of sample ${claimedBy}` : 'the initial databases'}: give the record another id`,
            );
          }
          (target as Record<string, unknown>)[id] = record;
          if (!claimedBy) owners.set(key, sample.id);
        }
      }
    }
  }
  return merged as DatabasesJson;
}
