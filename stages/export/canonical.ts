import { join } from 'node:path';
import { mapIterable } from '../../core/collections.ts';
import { writeJsonlAtomic } from '../../core/jsonl.ts';
import { sampleToLine, toolToLine } from '../../core/line-form.ts';
import type { ToolSpec } from '../../core/records.ts';
import type { SampleSource } from '../../core/sample-source.ts';

/**
 * The canonical records in the line form the store publishes (core/line-form.ts): one JSONL per
 * split plus the tool library, each file of one shape that Arrow-based loaders read. An empty tool
 * library writes no `tools.jsonl` (an empty JSONL file breaks such loaders).
 */
export async function exportCanonical(samples: SampleSource, tools: ToolSpec[], outDir: string): Promise<string[]> {
  const written = [...samples.splits].sort().map((split) => {
    writeJsonlAtomic(join(outDir, `${split}.jsonl`), mapIterable(samples.inSplit(split), sampleToLine));
    return join(outDir, `${split}.jsonl`);
  });
  if (!tools.length) return written;
  writeJsonlAtomic(join(outDir, 'tools.jsonl'), tools.map(toolToLine));
  return [...written, join(outDir, 'tools.jsonl')];
}
