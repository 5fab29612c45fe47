import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, extname, join } from 'node:path';
import { UserError } from '../../core/errors.ts';
import { checkNesToolsRecord } from './check-records.ts';
import type { CheckIssue } from './issues.ts';
import { readJsonlLines, readSourceText } from '../../core/source-files.ts';
import type { ChainView } from './statistics.ts';

/**
 * `toolkiln check nestools`: checks NesTools JSONL records (`.jsonl`, or `.json` holding one record
 * or a list) and Python programs (`.py`, or an LLM answer in `.md` / `.txt` with a code block).
 * A folder is checked file by file. An unreadable file is a UserError (exit 2); a record or program
 * that fails is a result.
 */

export interface FileCheckResult {
  /** `test_id` for records (as the record has it), the file name for programs. */
  id: string | number;
  ok: boolean;
  errors: CheckIssue[];
  warnings: CheckIssue[];
  file: string;
}

export interface FilesCheck {
  checked: number;
  passed: number;
  failed: number;
  results: FileCheckResult[];
}

export interface CheckFilesOptions {
  strict?: boolean;
  /** Also return the chains of passing items (for statistics). */
  collectChains?: boolean;
}

const RECORD_EXTENSIONS = new Set(['.jsonl', '.json']);
const PROGRAM_EXTENSIONS = new Set(['.py', '.md', '.txt']);

function expand(path: string): string[] {
  if (!existsSync(path)) throw new UserError(`no such file: ${path}`);
  if (!statSync(path).isDirectory()) return [path];
  const files = readdirSync(path)
    .filter((name) => RECORD_EXTENSIONS.has(extname(name)) || PROGRAM_EXTENSIONS.has(extname(name)))
    .sort()
    .map((name) => join(path, name));
  if (!files.length) throw new UserError(`${path}: no .jsonl, .json, .py, .md or .txt files to check`);
  return files;
}

function readText(path: string): string {
  return readSourceText(path);
}

function recordsOf(path: string): { where: string; value?: unknown; error?: string }[] {
  if (extname(path) === '.jsonl') return readJsonlLines(path).map((entry) => ({ where: `line ${entry.line}`, ...entry }));
  let json: unknown;
  try {
    json = JSON.parse(readText(path));
  } catch (error) {
    throw new UserError(`${path}: not valid JSON (${(error as Error).message})`);
  }
  return (Array.isArray(json) ? json : [json]).map((value, i) => ({ where: `record ${i + 1}`, value }));
}

/**
 * The Python parser and the record schemas load only when a file needs them, so checking JSONL
 * records starts quickly.
 */
export async function checkNesToolsFiles(paths: string[], options: CheckFilesOptions = {}): Promise<FilesCheck & { chains: ChainView[] }> {
  const results: FileCheckResult[] = [];
  const chains: ChainView[] = [];
  for (const path of paths.flatMap(expand)) {
    const extension = extname(path);
    if (RECORD_EXTENSIONS.has(extension)) {
      for (const entry of recordsOf(path)) {
        if (entry.error !== undefined) {
          results.push({ id: entry.where, ok: false, errors: [{ code: 'invalid_json', message: `${entry.where} is not valid JSON: ${entry.error}` }], warnings: [], file: path });
          continue;
        }
        const check = checkNesToolsRecord(entry.value, { strict: options.strict, where: entry.where });
        results.push({ id: check.id, ok: check.ok, errors: check.errors, warnings: check.warnings, file: path });
        if (check.ok && options.collectChains) {
          const { fromNesToolsRecord } = await import('./import-export.ts');
          const sample = fromNesToolsRecord(entry.value, { where: `${path} ${entry.where}` });
          chains.push({ tools: sample.tools, calls: sample.expected.calls ?? [], task: sample.dialogue[0]?.content ?? '' });
        }
      }
    } else if (PROGRAM_EXTENSIONS.has(extension)) {
      const { parseProgram } = await import('./parse-program.ts');
      const { checkProgram } = await import('./check-program.ts');
      const program = parseProgram(readText(path));
      const check = checkProgram(program, { strict: options.strict });
      results.push({ id: basename(path), ok: check.ok, errors: check.errors, warnings: check.warnings, file: path });
      if (check.ok && options.collectChains) chains.push((await import('./convert.ts')).programToChain(program, check));
    } else {
      throw new UserError(`${path}: cannot check a ${extension || 'extension-less'} file; give NesTools records (.jsonl, .json) or a Python program (.py, or .md / .txt holding a code block)`);
    }
  }
  const passed = results.filter((r) => r.ok).length;
  return { checked: results.length, passed, failed: results.length - passed, results, chains };
}
