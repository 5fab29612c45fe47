import { groupBy } from '../core/collections.ts';
import { stableStringify } from '../core/hash.ts';
import type { Sample } from '../core/records.ts';
import { formatCallsJson } from './calls.ts';
import { toCsv } from './csv.ts';
import type { SampleLookup } from './items.ts';
import type { QueueItem } from './queue.ts';
import { ADJUDICATION_COLUMNS, ANNOTATIONS_COLUMN, sampleCells, sheetRow, type DatasetLabel, type Decision, type SheetRow } from './sheet.ts';
import type { RowDecision } from './validate.ts';

/** What happens to one item: the agreed (or adjudicated) decision and every answer behind it. */
export interface FinalDecision {
  itemId: string;
  sampleId: string;
  decision: Decision;
  correction: RowDecision['correction'];
  edited?: Sample;
  answers: { annotator: string; kind: RowDecision['kind']; decision: Decision; notes: string }[];
  adjudicated: boolean;
}

export interface Disagreement {
  itemId: string;
  sampleId: string;
  answers: RowDecision[];
}

export interface Resolution {
  final: FinalDecision[];
  /** Items whose annotators differ (decision, or the content of their edits) and no adjudicator decided. */
  disagreements: Disagreement[];
}

/** Two answers agree when decision and corrections are the same. */
export function answerKey(d: Pick<RowDecision, 'decision' | 'correction'>): string {
  return stableStringify({ decision: d.decision, correction: d.correction });
}

/**
 * Per item: the adjudicator's decision wins; otherwise the annotators' when they all agree; otherwise
 * the item waits for adjudication. Items come out in the order they were first answered.
 */
export function resolveDecisions(decisions: RowDecision[]): Resolution {
  const final: FinalDecision[] = [];
  const disagreements: Disagreement[] = [];
  for (const [itemId, answers] of groupBy(decisions, (d) => d.itemId)) {
    const adjudication = answers.find((a) => a.kind === 'adjudication');
    const annotators = answers.filter((a) => a.kind === 'annotator');
    const winner = adjudication ?? (new Set(annotators.map(answerKey)).size === 1 ? annotators[0] : undefined);
    if (!winner) {
      disagreements.push({ itemId, sampleId: answers[0].sampleId, answers: annotators });
      continue;
    }
    final.push({
      itemId,
      sampleId: winner.sampleId,
      decision: winner.decision,
      correction: winner.correction,
      ...(winner.edited ? { edited: winner.edited } : {}),
      answers: answers.map((a) => ({ annotator: a.annotator, kind: a.kind, decision: a.decision, notes: a.notes })),
      adjudicated: !!adjudication,
    });
  }
  return { final, disagreements };
}

/** Every annotator's answer, for the adjudicator to read. */
export function describeAnswers(answers: RowDecision[]): string {
  return answers
    .map((a) => {
      const lines = [`${a.annotator}: ${a.decision}`];
      if (a.correction.query !== undefined) lines.push(`  corrected_query: ${a.correction.query}`);
      if (a.correction.calls !== undefined) lines.push(`  corrected_calls: ${formatCallsJson(a.correction.calls).replace(/\n/g, '\n  ')}`);
      if (a.correction.labels !== undefined) lines.push(`  corrected_labels: ${a.correction.labels.join(', ')}`);
      if (a.notes) lines.push(`  notes: ${a.notes}`);
      return lines.join('\n');
    })
    .join('\n');
}

/**
 * The adjudication sheet: the review sheet's columns plus `annotations` (what each annotator
 * answered) before `decision`. The adjudicator fills the same columns; on import, these decisions win.
 */
export function adjudicationSheet(ref: DatasetLabel, disagreements: Disagreement[], items: SampleLookup, queue: Map<string, QueueItem[]>): string {
  const rows: SheetRow[] = disagreements.map((d) => {
    const sample = items.get(d.itemId)!;
    const queued = queue.get(d.itemId)?.[0];
    const base: SheetRow = queued ? sheetRow(ref, queued, sample) : sampleCells(ref, sample);
    return { ...base, [ANNOTATIONS_COLUMN]: describeAnswers(d.answers), annotator: 'adjudicator' };
  });
  return toCsv(ADJUDICATION_COLUMNS, rows);
}
