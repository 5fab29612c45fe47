import { basename } from 'node:path';
import { UserError } from '../../../core/errors.ts';
import type { RawTool, ReportLine } from './convert.ts';

/**
 * OpenAI tool lists: a JSON list (or `{"tools": […]}`, `{"functions": […]}`) of
 * `{"type": "function", "function": {name, description, parameters}}` or of the bare function
 * objects `{name, description, parameters}`, as the Chat Completions API and most function-calling
 * datasets write them.
 */

const isObject = (value: unknown): value is Record<string, unknown> => !!value && typeof value === 'object' && !Array.isArray(value);

function listOf(doc: unknown): unknown[] | undefined {
  if (Array.isArray(doc)) return doc;
  if (isObject(doc)) for (const key of ['tools', 'functions']) if (Array.isArray(doc[key])) return doc[key] as unknown[];
  return undefined;
}

/** Whether the document is a list of OpenAI tools (objects, at least one a function tool or holding `parameters`). */
export function isFunctionsDocument(doc: unknown): boolean {
  const list = listOf(doc);
  return !!list && list.every(isObject) && list.some((item) => isObject(item) && (item.type === 'function' || 'parameters' in item));
}

export function readFunctionsDocument(doc: unknown, shown: string, name?: string): (RawTool | ReportLine)[] {
  const list = listOf(doc);
  if (!list) throw new UserError(`${shown}: not an OpenAI tool list (expected a JSON list of {"type": "function", "function": {…}} or {"tools": […]})`);
  const server = name ?? basename(shown).replace(/\.(jsonl?|ya?ml)$/i, '');
  const entries: (RawTool | ReportLine)[] = [];
  list.forEach((item, i) => {
    const where = `${shown}: item ${i}`;
    if (!isObject(item)) {
      entries.push({ server, where, tool: '', outcome: 'refused', reason: 'not-a-function', detail: `item ${i} is ${JSON.stringify(item)?.slice(0, 40)}, not a tool object`, notes: [] });
      return;
    }
    if (item.type !== undefined && item.type !== 'function') {
      entries.push({ server, where, tool: String((item as Record<string, unknown>).name ?? ''), outcome: 'refused', reason: 'not-a-function', detail: `item ${i} is a "${String(item.type)}" tool; only function tools are read`, notes: [] });
      return;
    }
    const fn = item.type === 'function' ? item.function : item;
    if (!isObject(fn)) {
      entries.push({ server, where, tool: '', outcome: 'refused', reason: 'not-a-function', detail: `item ${i} has no "function" object`, notes: [] });
      return;
    }
    entries.push({ kind: 'functions', server, where, file: basename(shown), originalName: fn.name, description: fn.description, inputSchema: fn.parameters, domain: server });
  });
  return entries;
}
