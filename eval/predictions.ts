import { existsSync, statSync } from 'node:fs';
import { UserError } from '../core/errors.ts';
import { jsonlTexts } from '../core/jsonl.ts';

/**
 * A predictions file: one JSON object a line, `{"id": "<item id>", "output": "<what the model wrote>"}`
 * (`output` null: the model gave none). Every id must name an item of the version, once; an item with
 * no line counts as no output.
 */
export function readPredictions(path: string, itemIds: ReadonlySet<string>, shown = path): Map<string, string | null> {
  if (!existsSync(path)) throw new UserError(`predictions file not found: ${shown}`);
  if (!statSync(path).isFile()) throw new UserError(`predictions file ${shown} is a folder; give a JSONL file`);
  const outputs = new Map<string, string | null>();
  const firstLine = new Map<string, number>();
  for (const { text, number } of jsonlTexts(path)) {
    const at = `${shown} line ${number}`;
    let line: unknown;
    try {
      line = JSON.parse(text);
    } catch (error) {
      throw new UserError(`${at}: not valid JSON (${(error as Error).message}); each line is {"id": …, "output": …}`);
    }
    if (!line || typeof line !== 'object' || Array.isArray(line)) throw new UserError(`${at}: not a JSON object; each line is {"id": …, "output": …}`);
    const { id, output } = line as { id?: unknown; output?: unknown };
    if (typeof id !== 'string' || !id) throw new UserError(`${at}: "id" is missing or not a string; each line is {"id": …, "output": …}`);
    if (output !== null && typeof output !== 'string') throw new UserError(`${at}: "output" of ${id} must be the model's text (a string) or null`);
    if (!itemIds.has(id)) throw new UserError(`${at}: unknown item id "${id}": not an item of this version (toolkiln eval --model oracle lists every id in its items.jsonl)`);
    const first = firstLine.get(id);
    if (first !== undefined) throw new UserError(`${at}: item "${id}" again (first on line ${first}); keep one prediction per item`);
    firstLine.set(id, number);
    outputs.set(id, output);
  }
  return outputs;
}
