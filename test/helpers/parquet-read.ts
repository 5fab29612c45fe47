import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tableFromIPC } from 'apache-arrow';

/**
 * Reads a Parquet file with parquet-wasm (the Rust `parquet` crate compiled to WebAssembly), a
 * different implementation from the writer's (hyparquet-writer), into apache-arrow.
 */
const wasm = createRequire(import.meta.url)('parquet-wasm/node') as typeof import('parquet-wasm/node');

export function readParquetRows(path: string): { rows: unknown[]; schema: string } {
  const table = tableFromIPC(wasm.readParquet(readFileSync(path)).intoIPCStream());
  return { rows: JSON.parse(JSON.stringify(table.toArray())) as unknown[], schema: String(table.schema) };
}

export async function parquetRowGroups(path: string): Promise<number[]> {
  const file = await wasm.ParquetFile.fromFile(new Blob([readFileSync(path)]));
  const metadata = file.metadata();
  return Array.from({ length: metadata.numRowGroups() }, (_, i) => metadata.rowGroup(i).numRows());
}
