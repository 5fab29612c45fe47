import type { Check, Sample, ToolSpec, Turn } from '../../core/records.ts';
import { callGroups, formatCallsJson, goldCalls, type GoldCalls } from '../calls.ts';
import type { QueueReason } from '../queue.ts';
import type { ImportProblem, SheetSource } from '../rows.ts';
import { DECISIONS, EDITABLE_COLUMNS, SHEET_COLUMNS } from '../sheet.ts';
import { validateSheets, type ValidationContext } from '../validate.ts';
import type { DecisionSheet } from './decision-sheet.ts';
import { typedAnswer, type DecisionOutcome, type FieldProblem, type ItemKind, type ItemSummary } from './item-kind.ts';

/** What a reviewer sends for a sample: the sheet's reviewer columns, as typed. */
const ANSWER_COLUMNS = EDITABLE_COLUMNS.filter((c) => c !== 'annotator');

/** The sheet column a form field edits (problems of other columns concern the whole decision). */
const FIELD_OF_COLUMN: Record<string, string> = { corrected_query: 'query', corrected_calls: 'calls', corrected_labels: 'labels', notes: 'notes' };

/** Everything the page shows for one sample of the queue. */
export interface SampleView {
  kind: 'sample';
  id: string;
  sampleId: string;
  category: string;
  priority: string;
  whatToCheck: string[];
  failedChecks: Check[];
  dialogue: Turn[];
  tools: ToolSpec[];
  /** The gold calls: a list, or per assistant turn (keyed by dialogue index); null for label-only samples. */
  gold: GoldCalls | null;
  labels: string[] | null;
  /** The first user turn: what `corrected_query` replaces. */
  query: string;
  /** The saved answer (the sheet's reviewer cells); `calls` is `corrected_calls` read back. */
  answer: { decision: string; corrected_query: string; corrected_calls: string; corrected_labels: string; notes: string; calls: GoldCalls | null };
}

export interface SampleItemsOptions {
  sheet: DecisionSheet;
  ctx: ValidationContext;
  /** Item id → why it is queued (items kept from an earlier queue use their entry there). */
  reasons: Map<string, QueueReason[]>;
  annotator: string;
  /** Titles already made (`sampleTitle`), by item id: the session makes them as it writes the sheet, from the samples it reads then. */
  titles?: Map<string, string>;
}

/** A sample's line in the item list: its id and the start of its first user turn. */
export function sampleTitle(sample: Sample): string {
  const query = sample.dialogue.find((t) => t.role === 'user')?.content ?? '';
  return `${sample.id} · ${query.replace(/\s+/g, ' ').slice(0, 90)}`;
}

/** The label a reason is counted under in the page ("failed check arg-grounded", "flagged review:x", "random sample"). */
export function reasonLabel(reason: QueueReason): string {
  return reason.kind === 'check' ? `failed check ${reason.name}` : reason.kind === 'tag' ? `flagged ${reason.tag}` : 'random sample';
}

/**
 * The queue's samples as review items: decisions are the sheet's reviewer columns, checked by the
 * import's own validation (validateSheets on a one-row sheet) before they are written.
 */
export function sampleItems(options: SampleItemsOptions): ItemKind {
  const { sheet, ctx, annotator } = options;
  const sampleOf = (id: string): Sample | undefined => (sheet.has(id) ? ctx.items.get(id) : undefined);

  // The list shows every item's title: kept once made, so listing does not read each sample again.
  const titles = options.titles ?? new Map<string, string>();
  const titleOf = (id: string): string => {
    let title = titles.get(id);
    if (title === undefined) titles.set(id, (title = sampleTitle(ctx.items.get(id)!)));
    return title;
  };

  const summary = (id: string): ItemSummary | undefined => {
    const decision = sheet.decision(id);
    if (decision === undefined) return undefined;
    const reasons = options.reasons.get(id);
    return {
      id,
      kind: 'sample',
      title: titleOf(id),
      reasons: reasons ? [...new Set(reasons.map(reasonLabel))] : ['not in the current queue'],
      decision: decision || null,
    };
  };

  return {
    kind: 'sample',
    file: sheet.path,
    decisions: DECISIONS,
    summaries: () => sheet.itemIds().map((id) => summary(id)!),
    summary,

    view(id): SampleView | undefined {
      const sample = sampleOf(id);
      if (!sample) return undefined;
      const row = sheet.row(id)!;
      return {
        kind: 'sample',
        id,
        sampleId: sample.id,
        category: sample.category,
        priority: row.priority,
        whatToCheck: row.what_to_check.split('\n').filter(Boolean),
        failedChecks: sample.meta.checks.filter((c) => !c.pass),
        dialogue: sample.dialogue,
        tools: sample.tools,
        gold: goldCalls(sample),
        labels: sample.expected.labels ?? null,
        query: sample.dialogue.find((t) => t.role === 'user')?.content ?? '',
        answer: {
          decision: row.decision,
          corrected_query: row.corrected_query,
          corrected_calls: row.corrected_calls,
          corrected_labels: row.corrected_labels,
          notes: row.notes,
          // Written by this app only after validation, so it reads back.
          calls: row.corrected_calls ? (JSON.parse(row.corrected_calls) as GoldCalls) : null,
        },
      };
    },

    decide(id, answer): DecisionOutcome {
      const current = sheet.row(id);
      if (!current) return { ok: false, problems: [{ column: 'item_id', message: `unknown item id "${id}"` }] };
      const typed = typedAnswer(current, answer, ANSWER_COLUMNS, annotator);
      if ('problem' in typed) return { ok: false, problems: [typed.problem] };
      const { cells, formulaColumns } = typed;
      const source: SheetSource = {
        file: sheet.path,
        kind: 'annotator',
        format: 'csv',
        columns: [...SHEET_COLUMNS],
        rows: [{ file: sheet.path, row: sheet.rowNumber(id), cells, formulaColumns, defaultAnnotator: annotator }],
        problems: [],
      };
      const result = validateSheets([source], ctx);
      if (result.problems.length) return { ok: false, problems: result.problems.map((p) => withField(p, cells.corrected_calls)) };

      const decided = result.decisions[0];
      // Only what the decision carries is kept: corrections equal to the version are no corrections.
      sheet.update(
        id,
        decided
          ? {
              annotator,
              decision: decided.decision,
              corrected_query: decided.correction.query ?? '',
              corrected_calls: decided.correction.calls ? formatCallsJson(decided.correction.calls) : '',
              corrected_labels: decided.correction.labels?.join('\n') ?? '',
              notes: decided.notes,
            }
          : { annotator, decision: '', corrected_query: '', corrected_calls: '', corrected_labels: '', notes: cells.notes.trim() },
      );
      return { ok: true, summary: summary(id)! };
    },

    close: () => sheet.close(),
  };
}

/** An import problem with the form field it is about: a call's parameter, a call, or a column's field. */
function withField(problem: ImportProblem, callsText: string): FieldProblem {
  const field = problem.column === 'corrected_calls' ? (callField(problem.message, callsText) ?? 'calls') : problem.column ? FIELD_OF_COLUMN[problem.column] : undefined;
  return { column: problem.column, ...(field ? { field } : {}), message: problem.message };
}

/**
 * Which call (and parameter) a problem with corrected calls names, as the page's form numbers its
 * fields: `calls:<turn or "">:<index>[:<param>]`. Schema problems read `<turn label><call id>: <tool>.<param>…`
 * or `… the required parameter "<param>"` (review/schema-check.ts); problems with typed text name a
 * JSON path, `at $[0].arguments.city` or `at $["1"][0].arguments.city` (review/typed-text.ts).
 */
function callField(message: string, text: string): string | undefined {
  const path = /at \$(?:\["(\d+)"\])?\[(\d+)\](?:\.arguments(?:\.([A-Za-z_$][\w$]*)|\[("(?:[^"\\]|\\.)*")\]))?/.exec(message);
  if (path) {
    const [, turn = '', index, name, quoted] = path;
    const param = name ?? (quoted ? (JSON.parse(quoted) as string) : undefined);
    return `calls:${turn}:${index}${param === undefined ? '' : `:${param}`}`;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!value || typeof value !== 'object') return undefined;
  for (const { turn, label, calls } of callGroups(value as GoldCalls)) {
    if (!Array.isArray(calls)) continue;
    for (const [index, call] of calls.entries()) {
      if (!call || typeof call !== 'object' || typeof call.id !== 'string' || typeof call.tool !== 'string') continue;
      const where = `${label}${call.id}: `;
      if (!message.includes(where)) continue;
      const field = `calls:${turn ?? ''}:${index}`;
      const rest = message.slice(message.indexOf(where) + where.length);
      const param = rest.startsWith(`${call.tool}.`)
        ? /^[^:[]+/.exec(rest.slice(call.tool.length + 1))?.[0]
        : / (?:needs the required parameter|has no parameter) "([^"]+)"/.exec(rest)?.[1];
      return param ? `${field}:${param}` : field;
    }
  }
  return undefined;
}
