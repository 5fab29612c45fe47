import { readFileSync } from 'node:fs';
import { UserError } from '../../core/errors.ts';

/** One line of a JSONL file: its parsed value, or why it could not be parsed. */
export type JsonlLine = { line: number; value: unknown } | { line: number; error: string };

/**
 * Reads a JSONL file line by line, keeping line numbers; a line that is not JSON becomes an error
 * entry instead of stopping the read (a checker reports it with the others).
 */
export function readJsonlLines(path: string): JsonlLine[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new UserError(`cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  const out: JsonlLine[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (!line) continue;
    try {
      out.push({ line: i + 1, value: JSON.parse(line) });
    } catch (error) {
      out.push({ line: i + 1, error: (error as Error).message });
    }
  }
  return out;
}
