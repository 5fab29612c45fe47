import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { byString, groupBy } from '../../core/collections.ts';
import { writeJsonlAtomic } from '../../core/jsonl.ts';
import type { Sample, ToolSpec } from '../../core/records.ts';

/** The canonical records as they are: one JSONL per split plus the tool library. */
export async function exportCanonical(samples: Sample[], tools: ToolSpec[], outDir: string): Promise<string[]> {
  mkdirSync(outDir, { recursive: true });
  const written: string[] = [];
  for (const [split, rows] of [...groupBy(samples, (s) => s.split)].sort(byString(([split]) => split))) {
    writeJsonlAtomic(join(outDir, `${split}.jsonl`), rows);
    written.push(join(outDir, `${split}.jsonl`));
  }
  writeJsonlAtomic(join(outDir, 'tools.jsonl'), tools);
  return [...written, join(outDir, 'tools.jsonl')];
}
