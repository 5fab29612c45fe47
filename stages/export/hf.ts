import { mkdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileWriter, parquetWriteRows, type SchemaElement } from 'hyparquet-writer';
import { mapIterable } from '../../core/collections.ts';
import { UserError, withPath } from '../../core/errors.ts';
import { writeFileAtomic } from '../../core/jsonl.ts';
import { sampleToLine, toolToLine, type SampleLineForm, type ToolLine, type TurnLine } from '../../core/line-form.ts';
import type { ToolSpec } from '../../core/records.ts';
import type { SampleSource } from '../../core/sample-source.ts';
import { readManifest } from '../../core/store.ts';
import { datasetCard, hfSplitName } from './hf-card.ts';

/**
 * A folder to upload to the Hugging Face Hub as it is: one Parquet file per split under `data/`,
 * the tool library under `tools/`, a `README.md` dataset card whose YAML header tells the Hub
 * which file is which split, and the run's config (`toolkiln-config.json`) for regenerating it.
 *
 * Rows are the line form of the canonical records (core/line-form.ts) with a fixed Parquet schema:
 * `tools` and `dialogue` are lists of structs, values whose shape varies by record are JSON text.
 * Each file is written row group by row group from the sample stream (hyparquet-writer's
 * `parquetWriteRows`), so a large version is never held whole.
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

/** Rows per row group: a group is what is held in memory while a file is written. */
const ROW_GROUP_ROWS = 1000;

/** A column of the line form: text (never null, core/line-form.ts) or a list of structs. */
type Column = 'string' | { list: Record<string, Column> };

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

/** Schema elements of columns, depth first (a list of structs in Parquet's three-level LIST layout). */
function schemaElements(columns: Record<string, Column>): SchemaElement[] {
  return Object.entries(columns).flatMap(([name, column]): SchemaElement[] => {
    if (column === 'string') return [{ name, type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' }];
    return [
      { name, repetition_type: 'REQUIRED', converted_type: 'LIST', num_children: 1 },
      { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
      { name: 'element', repetition_type: 'REQUIRED', num_children: Object.keys(column.list).length },
      ...schemaElements(column.list),
    ];
  });
}

function fileSchema(columns: Record<string, Column>): SchemaElement[] {
  return [{ name: 'root', num_children: Object.keys(columns).length }, ...schemaElements(columns)];
}

/** Writes rows to a Parquet file whole or not at all (a temporary file renamed into place). */
async function writeParquet(path: string, columns: Record<string, Column>, rows: Iterable<object>): Promise<void> {
  const tmp = `${path}.tmp-${process.pid}`;
  try {
    mkdirSync(dirname(path), { recursive: true });
    await parquetWriteRows({
      writer: fileWriter(tmp),
      schema: fileSchema(columns),
      columns: Object.keys(columns).map((name) => ({ name })),
      rows: rows as Iterable<Record<string, unknown>>,
      rowGroupSize: ROW_GROUP_ROWS,
      createdBy: 'toolkiln',
    });
    renameSync(tmp, path);
  } catch (error) {
    rmSync(tmp, { force: true });
    throw withPath(error, path);
  }
}
