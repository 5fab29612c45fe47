import { join } from 'node:path';
import { mapIterable } from '../../core/collections.ts';
import { UserError } from '../../core/errors.ts';
import { writeFileAtomic } from '../../core/jsonl.ts';
import { sampleToLine, toolToLine, type SampleLineForm, type ToolLine, type TurnLine } from '../../core/line-form.ts';
import type { ToolSpec } from '../../core/records.ts';
import type { SampleSource } from '../../core/sample-source.ts';
import { readManifest } from '../../core/store.ts';
import { datasetCard, hfSplitName } from './hf-card.ts';
import { writeParquet, type Column } from './parquet.ts';

/**
 * A folder to upload to the Hugging Face Hub as it is: one Parquet file per split under `data/`,
 * the tool library under `tools/`, a `README.md` dataset card whose YAML header tells the Hub
 * which file is which split, and the run's config (`toolkiln-config.json`) for regenerating it.
 *
 * Rows are the line form of the canonical records (core/line-form.ts) with a fixed Parquet schema:
 * `tools` and `dialogue` are lists of structs, values whose shape varies by record are JSON text
 * (stages/export/parquet.ts writes each file from the sample stream).
 */
export async function exportHuggingFace(samples: SampleSource, tools: ToolSpec[], outDir: string, version?: { dir: string }): Promise<string[]> {
  if (!version) throw new UserError('the hf format needs the published version (its manifest goes into the dataset card): export a version with toolkiln export <name>@v --format hf');
  const manifest = readManifest(version.dir);
  const written: string[] = [];
  const dataFiles: { split: string; path: string }[] = [];
  for (const split of [...samples.splits].sort()) {
    const path = `data/${hfSplitName(split, samples.splits)}-00000-of-00001.parquet`;
    await writeParquet(join(outDir, path), SAMPLE_COLUMNS, mapIterable(samples.inSplit(split), sampleToLine));
    dataFiles.push({ split, path });
    written.push(join(outDir, path));
  }
  let toolsFile: string | null = null;
  if (tools.length) {
    toolsFile = 'tools/library-00000-of-00001.parquet';
    await writeParquet(join(outDir, toolsFile), TOOL_COLUMNS, tools.map(toolToLine));
    written.push(join(outDir, toolsFile));
  }
  writeFileAtomic(join(outDir, 'toolkiln-config.json'), `${JSON.stringify(manifest.config, null, 2)}\n`);
  writeFileAtomic(join(outDir, 'README.md'), datasetCard({ manifest, dataFiles, toolsFile, splits: samples.splits }));
  return [...written, join(outDir, 'toolkiln-config.json'), join(outDir, 'README.md')];
}

/** The Parquet schema of the line form, field for field (the types make a field left out or added a compile error). */
const TURN_COLUMNS: { [K in keyof TurnLine]-?: Column } = {
  role: 'string',
  content: 'string',
  thought: 'string',
  calls: 'string',
  observations: 'string',
  response: 'string',
};
const TOOL_COLUMNS: { [K in keyof ToolLine]-?: Column } = {
  name: 'string',
  description: 'string',
  parameters: 'string',
  returns: 'string',
  domain: 'string',
  plugin: 'string',
  isAction: 'string',
  provenance: 'string',
};
const SAMPLE_COLUMNS: { [K in keyof SampleLineForm]-?: Column } = {
  id: 'string',
  benchmark: 'string',
  category: 'string',
  split: 'string',
  tools: { list: TOOL_COLUMNS },
  dialogue: { list: TURN_COLUMNS },
  expected: 'string',
  meta: 'string',
};
