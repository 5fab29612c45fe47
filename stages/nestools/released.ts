import { statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { UNREADABLE } from '../../core/audit.ts';
import type { Finding } from '../../core/invariants.ts';
import type { Sample, ToolSpec } from '../../core/records.ts';
import { readJsonlValues } from '../../core/source-files.ts';
import { fromSealToolsRecord } from './import-export.ts';
import { eachNesToolsSample } from '../sources/nestools.ts';
import { loadSealToolsLibrary } from '../sources/seal-tools.ts';

/**
 * The released NesTools test set as samples: `test_data.jsonl` in the folder `path`, or the file
 * `path` itself (the recipe's `referenceFile` names the file).
 */
export function releasedNesTools(path: string): { samples: () => Generator<Sample> } {
  const file = statSync(path).isDirectory() ? join(path, 'test_data.jsonl') : path;
  return { samples: () => eachNesToolsSample(file) };
}

/** The released Seal-Tools files, by split. */
export const SEAL_TOOLS_SPLITS = ['dev', 'test_in_domain', 'test_out_domain'] as const;

/**
 * The released Seal-Tools files as samples, their tools from the Seal-Tools library (`tool.jsonl`
 * of the sources), to audit them like any version. A record the import refuses (a placeholder no
 * earlier call produced, a tool the library lacks) is not a sample: it is a `record-readable`
 * finding naming its file, line and reason, and the other records are read on.
 */
export function releasedSealTools(dir: string, toolFile: string): { samples: () => Generator<Sample>; tools: () => ToolSpec[]; unreadable: () => Finding[] } {
  const library = loadSealToolsLibrary(toolFile);
  let unreadable: Finding[] = [];
  return {
    tools: () => library.tools,
    unreadable: () => unreadable,
    samples: function* () {
      unreadable = [];
      for (const split of SEAL_TOOLS_SPLITS) {
        const path = join(dir, `${split}.jsonl`);
        for (const { line, value } of readJsonlValues(path)) {
          const where = `${basename(path)}:${line}`;
          try {
            yield fromSealToolsRecord(value, library.byName, { file: basename(path), split, where: `${path}:${line}` });
          } catch (error) {
            const id = (value as { id?: unknown })?.id;
            unreadable.push({ check: UNREADABLE, sampleId: typeof id === 'string' ? id : where, where, problem: (error as Error).message.replace(`${path}:${line} `, '') });
          }
        }
      }
    },
  };
}
