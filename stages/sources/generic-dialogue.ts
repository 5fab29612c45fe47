import { existsSync } from 'node:fs';
import { basename } from 'node:path';
import { z } from 'zod';
import { UserError } from '../../core/errors.ts';
import { jsonlErrorMessage, readJsonlLines } from '../../core/source-files.ts';
import type { SourceDialogue, SourceTurn } from './dialogue.ts';

/**
 * Plain dialogues without annotations, one JSON object per line:
 * `{"id"?, "domain"?, "split"?, "turns": [{"role": "user" | "assistant", "content": "…"}]}`
 * (`messages` is accepted for `turns`, as in chat logs). Tools are created for them by the LLM.
 */

const GenericTurn = z.object({ role: z.enum(['user', 'assistant']), content: z.string() });
const GenericLine = z
  .object({
    id: z.union([z.string().min(1), z.number()]).optional(),
    domain: z.string().min(1).optional(),
    split: z.string().min(1).optional(),
    turns: z.array(GenericTurn).optional(),
    messages: z.array(GenericTurn).optional(),
  })
  .refine((line) => (line.turns ?? line.messages)?.length, { message: 'needs a non-empty "turns" (or "messages") list' });

export interface GenericDialogueOptions {
  /** Source name: it becomes the tools' plugin and the samples' source dataset. */
  name: string;
  /** Topic of every dialogue that names none itself. */
  domain?: string;
  split: string;
}

/** Parses a JSONL file of plain dialogues; an error names the file and line. */
export function parseGenericDialogues(path: string, options: GenericDialogueOptions): SourceDialogue[] {
  if (!existsSync(path)) throw new UserError(`dialogue file not found: ${path} (sources.generic[].file)`);
  const out: SourceDialogue[] = [];
  const ids = new Set<string>();
  for (const entry of readJsonlLines(path)) {
    if ('error' in entry) throw new UserError(jsonlErrorMessage(path, entry, 'one dialogue object per line'));
    const where = `${path}:${entry.line}`;
    const parsed = GenericLine.safeParse(entry.value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new UserError(`${where}: ${issue.path.join('.') || 'dialogue'} ${issue.message} (expected {"turns": [{"role": "user"|"assistant", "content": "..."}]})`);
    }
    const line = parsed.data;
    const turns = mergeRuns(line.turns ?? line.messages ?? []);
    if (!turns.some((t) => t.speaker === 'user') || !turns.some((t) => t.speaker === 'system')) {
      throw new UserError(`${where}: a dialogue needs at least one user and one assistant turn`);
    }
    const id = String(line.id ?? `line-${entry.line}`);
    if (ids.has(id)) throw new UserError(`${where}: dialogue id "${id}" appears twice in the file`);
    ids.add(id);
    const domain = line.domain ?? options.domain ?? 'General';
    out.push({
      source: options.name,
      id,
      file: basename(path),
      split: line.split ?? options.split,
      services: [options.name],
      domains: [domain],
      turns,
      schema: [],
    });
  }
  if (!out.length) throw new UserError(`${path}: no dialogues in the file`);
  return out;
}

/** Consecutive turns of one role are one turn (chat logs often split a message in two). */
function mergeRuns(turns: { role: 'user' | 'assistant'; content: string }[]): SourceTurn[] {
  const out: SourceTurn[] = [];
  for (const turn of turns) {
    const speaker = turn.role === 'user' ? 'user' : 'system';
    const last = out.at(-1);
    if (last && last.speaker === speaker) last.text = `${last.text} ${turn.content}`.trim();
    else out.push({ speaker, text: turn.content });
  }
  return out;
}
