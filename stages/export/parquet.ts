import { mkdirSync, renameSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileWriter, parquetWriteRows, type SchemaElement } from 'hyparquet-writer';
import { withPath } from '../../core/errors.ts';

/**
 * Parquet files of the exports, from a fixed schema (hyparquet-writer), written row group by row
 * group from a row stream (`parquetWriteRows`), so a large version is never held whole.
 *
 * A column is UTF-8 text, a list of JSON values, or a list of structs. A list of JSON values has
 * Parquet's JSON type on its elements, which pyarrow reads as its `arrow.json` extension type and
 * Hugging Face `datasets` as `List(Json())`: each element comes back as the object written, whatever
 * its keys, where a list of structs would give every element every key of every other (null where
 * it had none).
 */
export type Column = 'string' | 'json-list' | { list: Record<string, Column> };

/** Rows per row group: a group is what is held in memory while a file is written. */
const ROW_GROUP_ROWS = 1000;

/** Schema elements of columns, depth first (a list in Parquet's three-level LIST layout). */
function schemaElements(columns: Record<string, Column>): SchemaElement[] {
  return Object.entries(columns).flatMap(([name, column]): SchemaElement[] => {
    if (column === 'string') return [{ name, type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' }];
    const list: SchemaElement[] = [
      { name, repetition_type: 'REQUIRED', converted_type: 'LIST', num_children: 1 },
      { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
    ];
    if (column === 'json-list') return [...list, { name: 'element', type: 'BYTE_ARRAY', converted_type: 'JSON', logical_type: { type: 'JSON' }, repetition_type: 'REQUIRED' }];
    return [...list, { name: 'element', repetition_type: 'REQUIRED', num_children: Object.keys(column.list).length }, ...schemaElements(column.list)];
  });
}

function fileSchema(columns: Record<string, Column>): SchemaElement[] {
  return [{ name: 'root', num_children: Object.keys(columns).length }, ...schemaElements(columns)];
}

/** Writes rows to a Parquet file whole or not at all (a temporary file renamed into place). */
export async function writeParquet(path: string, columns: Record<string, Column>, rows: Iterable<object>): Promise<void> {
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
