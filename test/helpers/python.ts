import { spawnSync } from 'node:child_process';

/**
 * Python with Hugging Face `datasets` and pandas, for the tests that load files the way a user does.
 * The project does not need Python: those tests are skipped where `python3` cannot import them.
 */
export const pythonHasDatasets: boolean = spawnSync('python3', ['-c', 'import datasets, pandas, pyarrow'], { stdio: 'ignore' }).status === 0;

const SCRIPT = new URL('./hf_load.py', import.meta.url).pathname;

export interface PythonFileLoad {
  file: string;
  /** `ok`, or the error `datasets.load_dataset` raised. */
  datasets: string;
  rows?: number;
  json_columns?: string[];
  /** `ok`, or the error pandas raised. */
  pandas: string;
  pandas_rows?: number;
}

function runScript(args: string[]): unknown {
  const run = spawnSync('python3', [SCRIPT, ...args], { encoding: 'utf8', maxBuffer: 256 << 20 });
  if (run.status !== 0) throw new Error(`python3 ${SCRIPT} ${args[0]} failed: ${run.stderr.trim().split('\n').slice(-3).join(' | ')}`);
  return JSON.parse(run.stdout);
}

/** Each file loaded with `datasets` (json / csv / parquet builder, a fresh cache each; the json builder reading `chunkBytes` at a time) and pandas. */
export function loadFilesInPython(files: string[], options: { chunkBytes?: number } = {}): PythonFileLoad[] {
  return runScript(['files', ...(options.chunkBytes ? ['--chunksize', String(options.chunkBytes)] : []), ...files]) as PythonFileLoad[];
}

/** Each hf export folder loaded with `load_dataset(<folder>)`, one after the other in one shared cache: the ids of each split. */
export function loadFoldersInOneCache(folders: string[]): { folder: string; splits: Record<string, string[]> }[] {
  return runScript(['folders', ...folders]) as { folder: string; splits: Record<string, string[]> }[];
}

/** One export folder loaded with `load_dataset(<folder>)`: each column's feature (its repr) and each split's rows as `datasets` gives them. */
export function loadRowsInPython(folder: string): { features: Record<string, string>; splits: Record<string, unknown[]> } {
  return runScript(['rows', folder]) as { features: Record<string, string>; splits: Record<string, unknown[]> };
}
