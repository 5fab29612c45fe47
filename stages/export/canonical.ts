import { join } from 'node:path';
import { writeJsonlAtomic } from '../../core/jsonl.ts';
import type { ToolSpec } from '../../core/records.ts';
import type { SampleSource } from '../../core/sample-source.ts';

/** The canonical records as they are: one JSONL per split plus the tool library. */
export async function exportCanonical(samples: SampleSource, tools: ToolSpec[], outDir: string): Promise<string[]> {
  const written = [...samples.splits].sort().map((split) => {
    writeJsonlAtomic(join(outDir, `${split}.jsonl`), samples.inSplit(split));
    return join(outDir, `${split}.jsonl`);
  });
  writeJsonlAtomic(join(outDir, 'tools.jsonl'), tools);
  return [...written, join(outDir, 'tools.jsonl')];
}
