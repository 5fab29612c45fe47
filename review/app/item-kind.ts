import { readCell } from '../csv.ts';

/**
 * The seam between the review app's shell (server routes, item list, progress, navigation) and what
 * is being reviewed. Each kind of item (`sample`: a sample of the queue, sample-items.ts; `tools`: a
 * tool-level question of the tool sheet, tool-items.ts) brings its own list, view, decisions and the
 * file its decisions go to; the shell only finds the kind that knows an item id, and the page renders
 * the view with the browser module of the same `kind` (review/app/static/kinds/<kind>.js).
 */

/** One entry of the item list: enough for navigation, progress and counts per reason. */
export interface ItemSummary {
  id: string;
  kind: string;
  /** A short line identifying the item in the list. */
  title: string;
  /** Why the item is to be reviewed, one label per reason (counted per reason in the page): a queue item's reasons, a tool question's kind. */
  reasons: string[];
  /** The saved decision, or null while the item is still open. */
  decision: string | null;
}

/** A problem with a decision, as import reports it, and the form field it belongs to (when known). */
export interface FieldProblem {
  column: string | null;
  /** The view's field id (`query`, `notes`, `calls:<group>:<index>:<param>`, …); absent: the whole decision. */
  field?: string;
  message: string;
}

export type DecisionOutcome = { ok: true; summary: ItemSummary } | { ok: false; problems: FieldProblem[] };

export interface ItemKind {
  kind: string;
  /** The file this kind's decisions are written to. */
  file: string;
  /** Every decision this kind takes, in button order (a tool question's view says which of them it allows). */
  decisions: readonly string[];
  summaries(): ItemSummary[];
  /** One item's summary, or undefined when the id is not an item of this kind. */
  summary(id: string): ItemSummary | undefined;
  /** Everything the page shows for one item (JSON), or undefined for an id of another kind. */
  view(id: string): unknown;
  /** Validates an answer (the reviewer's fields) and saves it when valid. */
  decide(id: string, answer: Record<string, string>): DecisionOutcome;
  close(): void;
}

/**
 * An answer as if typed into a sheet row's reviewer cells (`columns`; the annotator is the session's):
 * a leading `'` escapes, a formula is flagged as import flags it. A field that is not one of `columns`
 * is a problem (the page never sends one).
 */
export function typedAnswer<C extends string>(row: Record<C, string>, answer: Record<string, string>, columns: readonly C[], annotator: string): { cells: Record<C, string>; formulaColumns: string[] } | { problem: FieldProblem } {
  const unknown = Object.keys(answer).filter((k) => !(columns as readonly string[]).includes(k));
  if (unknown.length) return { problem: { column: null, message: `unknown field(s) ${unknown.join(', ')}: an answer has ${columns.join(', ')}` } };
  const cells = { ...row, annotator } as Record<C, string>;
  const formulaColumns: string[] = [];
  for (const column of columns) {
    const typed = readCell(answer[column] ?? '');
    cells[column] = typed.text;
    if (typed.formula) formulaColumns.push(column);
  }
  return { cells, formulaColumns };
}
