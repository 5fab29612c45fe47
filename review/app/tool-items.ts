import type { ToolSpec } from '../../core/records.ts';
import type { VersionRef } from '../../core/store.ts';
import { TOOL_DECISION_KINDS, type ToolDecisionKind, type ToolEvidence } from '../../core/tool-review.ts';
import type { SheetSource } from '../rows.ts';
import type { ToolReviewContext } from '../tool-export.ts';
import { validateToolSheets } from '../tool-import.ts';
import { DECISION_WORDS, decisionKind, TOOL_EDITABLE_COLUMNS, TOOL_SHEET_COLUMNS, type ToolSheetColumn } from '../tool-sheet.ts';
import type { DecisionSheet } from './decision-sheet.ts';
import { typedAnswer, type DecisionOutcome, type FieldProblem, type ItemKind, type ItemSummary } from './item-kind.ts';

/** What a reviewer sends for a tool question: the tool sheet's reviewer columns (the annotator is the session's). */
const ANSWER_COLUMNS = TOOL_EDITABLE_COLUMNS.filter((c) => c !== 'annotator');

/** Everything the page shows for one tool question. */
export interface ToolQuestionView {
  kind: 'tools';
  id: string;
  /** `merge-conflict` (MTU), `merge-proposal` (ToolE). */
  questionKind: string;
  proposal: string;
  suggestedName: string;
  /** The decisions this question allows, in button order. */
  decisions: ToolDecisionKind[];
  /** The question's tools with their documentation in the version's library (null: no longer in it, e.g. merged away by the run). */
  tools: (ToolEvidence & { spec: ToolSpec | null })[];
  /** Every tool name of the version (what decompose may name as targets). */
  knownTools: string[];
  /** The saved answer: the decision as a kind ('' while open) and the sheet's reviewer cells. */
  answer: { decision: ToolDecisionKind | ''; merged_name: string; new_name: string; target_tools: string; notes: string };
}

export interface ToolItemsOptions {
  /** The app's tool sheet (the layout of `<name>-<v>-tools.csv`), one row per question. */
  sheet: DecisionSheet<ToolSheetColumn>;
  ref: VersionRef;
  ctx: ToolReviewContext;
  library: ToolSpec[];
  annotator: string;
}

/** The label a question is counted under in the page ("tool question: merge conflict"). */
const reasonLabel = (questionKind: string) => `tool question: ${questionKind.replace(/-/g, ' ')}`;

/**
 * The version's tool-level questions as review items. An answer is checked as `review import` checks
 * the app's whole tool sheet with that row changed (validateToolSheets: the decision and its fields
 * by validateToolDecision, typed formulas, and names or targets that clash with another saved row),
 * so the file is always one import takes as it is.
 */
export function toolItems(options: ToolItemsOptions): ItemKind {
  const { sheet, ref, ctx, annotator } = options;
  const library = new Map(options.library.map((t) => [t.name, t]));

  const summary = (id: string): ItemSummary | undefined => {
    const decision = sheet.decision(id);
    const question = ctx.questions.get(id);
    if (decision === undefined || !question) return undefined;
    return { id, kind: 'tools', title: question.tools.map((t) => t.name).join(' · '), reasons: [reasonLabel(question.kind)], decision: decisionKind(decision) };
  };

  return {
    kind: 'tools',
    file: sheet.path,
    decisions: TOOL_DECISION_KINDS,
    summaries: () => sheet.itemIds().map((id) => summary(id)!),
    summary,

    view(id): ToolQuestionView | undefined {
      const row = sheet.row(id);
      const question = ctx.questions.get(id);
      if (!row || !question) return undefined;
      return {
        kind: 'tools',
        id,
        questionKind: question.kind,
        proposal: question.proposal,
        suggestedName: question.suggestedName,
        decisions: question.decisions,
        tools: question.tools.map((t) => ({ ...t, spec: library.get(t.name) ?? null })),
        knownTools: [...ctx.knownTools].sort(),
        answer: { decision: decisionKind(row.decision) ?? '', merged_name: row.merged_name, new_name: row.new_name, target_tools: row.target_tools, notes: row.notes },
      };
    },

    decide(id, answer): DecisionOutcome {
      const current = sheet.row(id);
      if (!current) return { ok: false, problems: [{ column: 'question_id', message: `unknown question id "${id}"` }] };
      const typed = typedAnswer(current, answer, ANSWER_COLUMNS, annotator);
      if ('problem' in typed) return { ok: false, problems: [typed.problem] };
      const { cells, formulaColumns } = typed;
      // The whole sheet with this row changed, the row last: a clash with a saved row is reported on it.
      const rowNumber = sheet.rowNumber(id);
      const others = sheet.itemIds().filter((other) => other !== id);
      const row = (cellsOf: Record<string, string>, at: number, typedFormulas: string[]) => ({ file: sheet.path, row: at, cells: cellsOf, formulaColumns: typedFormulas, defaultAnnotator: annotator });
      const source: SheetSource = {
        file: sheet.path,
        kind: 'annotator',
        format: 'csv',
        columns: [...TOOL_SHEET_COLUMNS],
        rows: [...others.map((other) => row(sheet.row(other)!, sheet.rowNumber(other), [])), row(cells, rowNumber, formulaColumns)],
        problems: [],
      };
      const { problems } = validateToolSheets([source], ref, ctx);
      if (problems.length) {
        const questionAt = new Map(others.map((other) => [sheet.rowNumber(other), other]));
        return {
          ok: false,
          problems: problems.map((p): FieldProblem => {
            // A saved row this answer clashes with: the whole decision is at fault, the other row named.
            if (p.row !== rowNumber) return { column: null, message: `row ${p.row} (question ${questionAt.get(p.row ?? 0)}): ${p.message}` };
            const field = p.column && (ANSWER_COLUMNS as readonly string[]).includes(p.column) ? p.column : undefined;
            return { column: p.column, ...(field ? { field } : {}), message: p.message };
          }),
        };
      }
      const kind = decisionKind(cells.decision);
      sheet.update(id, {
        annotator,
        decision: kind ? DECISION_WORDS[kind] : '',
        merged_name: cells.merged_name.trim(),
        new_name: cells.new_name.trim(),
        target_tools: cells.target_tools.trim(),
        notes: cells.notes.trim(),
      });
      return { ok: true, summary: summary(id)! };
    },

    close: () => sheet.close(),
  };
}
