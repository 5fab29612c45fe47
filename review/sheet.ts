import type { Sample, Turn } from '../core/records.ts';
import { formatCallsJson, goldCalls, renderCall, renderGold } from './calls.ts';
import { describeReasons, itemIdOf, type QueueItem } from './queue.ts';

/**
 * The fixed column set of a review sheet (documented in review/README.md). Read-only columns are
 * compared with the version on import; an edit there is an error.
 */
export const SHEET_COLUMNS = [
  'item_id',
  'dataset',
  'sample_id',
  'category',
  'priority',
  'what_to_check',
  'dialogue',
  'calls',
  'failed_checks',
  'calls_json',
  'decision',
  'corrected_query',
  'corrected_calls',
  'corrected_labels',
  'annotator',
  'notes',
] as const;
export type SheetColumn = (typeof SHEET_COLUMNS)[number];

/** Columns a reviewer fills in. */
export const EDITABLE_COLUMNS: readonly SheetColumn[] = ['decision', 'corrected_query', 'corrected_calls', 'corrected_labels', 'annotator', 'notes'];
/** Read-only columns that depend only on the sample (checked on every import). */
export const SAMPLE_COLUMNS: readonly SheetColumn[] = ['dataset', 'sample_id', 'category', 'dialogue', 'calls', 'failed_checks', 'calls_json'];
/** Read-only columns that depend on the queue (checked when the item is in the version's queue). */
export const QUEUE_COLUMNS: readonly SheetColumn[] = ['priority', 'what_to_check'];

/** The adjudication sheet adds one read-only column, before `decision`: every annotator's answer. */
export const ANNOTATIONS_COLUMN = 'annotations';
export const ADJUDICATION_COLUMNS: readonly string[] = [...SHEET_COLUMNS.slice(0, SHEET_COLUMNS.indexOf('decision')), ANNOTATIONS_COLUMN, ...SHEET_COLUMNS.slice(SHEET_COLUMNS.indexOf('decision'))];

export const DECISIONS = ['accept', 'reject', 'edit'] as const;
export type Decision = (typeof DECISIONS)[number];

export type SheetRow = Record<string, string>;

export interface DatasetLabel {
  name: string;
  version: string;
}

export function datasetLabel(ref: DatasetLabel): string {
  return `${ref.name}@${ref.version}`;
}

/** One turn as a reader sees it: the text, then thought, calls, observations and response. */
export function renderTurn(turn: Turn): string {
  const lines: string[] = [];
  if (turn.content) lines.push(turn.content);
  if (turn.thought) lines.push(`(thought) ${turn.thought}`);
  for (const call of turn.calls ?? []) lines.push(`→ ${renderCall(call)}`);
  for (const [id, result] of Object.entries(turn.observations ?? {})) lines.push(`← ${id}: ${JSON.stringify(result)}`);
  if (turn.response) lines.push(turn.response);
  return lines.join('\n');
}

/** The dialogue as Label Studio `Paragraphs` data: one `{author, text}` per turn. */
export interface Paragraph {
  author: string;
  text: string;
}

export function dialogueParagraphs(sample: Sample): Paragraph[] {
  return sample.dialogue.map((turn) => ({ author: turn.role, text: renderTurn(turn) }));
}

/** The dialogue in one cell: `[index] role: text` per turn (the index is what per-turn calls refer to). */
export function paragraphsText(paragraphs: readonly Paragraph[]): string {
  return paragraphs.map((p, i) => `[${i}] ${p.author}: ${p.text}`).join('\n');
}

export function renderDialogue(sample: Sample): string {
  return paragraphsText(dialogueParagraphs(sample));
}

export function renderFailedChecks(sample: Sample): string {
  return sample.meta.checks
    .filter((c) => !c.pass)
    .map((c) => `${c.name}${c.soft ? ' (soft)' : ''}${c.reason ? `: ${c.reason}` : ''}`)
    .join('\n');
}

/** The read-only cells that come from the sample alone. */
export function sampleCells(ref: DatasetLabel, sample: Sample): Record<SheetColumn, string> {
  return {
    item_id: itemIdOf(ref, sample.id),
    dataset: datasetLabel(ref),
    sample_id: sample.id,
    category: sample.category,
    priority: '',
    what_to_check: '',
    dialogue: renderDialogue(sample),
    calls: renderGold(sample),
    failed_checks: renderFailedChecks(sample),
    calls_json: formatCallsJson(goldCalls(sample)),
    decision: '',
    corrected_query: '',
    corrected_calls: '',
    corrected_labels: '',
    annotator: '',
    notes: '',
  };
}

/** A fresh sheet row for a queued item (reviewer columns empty, `annotator` pre-filled if given). */
export function sheetRow(ref: DatasetLabel, item: QueueItem, sample: Sample, annotator = ''): SheetRow {
  return { ...sampleCells(ref, sample), priority: String(item.priority), what_to_check: describeReasons(item.reasons), annotator };
}
