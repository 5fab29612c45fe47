import type { ToolDecision, ToolDecisionKind, ToolQuestion } from '../core/tool-review.ts';
import { toCsv } from './csv.ts';
import { datasetLabel, type DatasetLabel } from './sheet.ts';
import { RESERVED_NAMES } from './typed-text.ts';

/**
 * The tool review sheet's row model: one row per tool-level question a recipe's run left (a cluster
 * that cannot be merged blindly, a merge proposal nobody decided), the decision words and the
 * fields each needs, and the check of one decision (`validateToolDecision`), which the CSV import
 * and any other front end (a browser app) share.
 */

export const TOOL_SHEET_COLUMNS = [
  'question_id',
  'dataset',
  'kind',
  'tools',
  'descriptions',
  'sample_counts',
  'example_queries',
  'proposal',
  'suggested_name',
  'allowed_decisions',
  'decision',
  'merged_name',
  'new_name',
  'target_tools',
  'annotator',
  'notes',
] as const;
export type ToolSheetColumn = (typeof TOOL_SHEET_COLUMNS)[number];

/** Columns a reviewer fills in; every other column is read-only and compared with the version on import. */
export const TOOL_EDITABLE_COLUMNS: readonly ToolSheetColumn[] = ['decision', 'merged_name', 'new_name', 'target_tools', 'annotator', 'notes'];
export const TOOL_READ_ONLY_COLUMNS: readonly ToolSheetColumn[] = TOOL_SHEET_COLUMNS.filter((c) => !TOOL_EDITABLE_COLUMNS.includes(c));

/** The column that tells a tool sheet from a sample sheet. */
export const TOOL_SHEET_MARKER: ToolSheetColumn = 'question_id';

/** How each decision is written in the sheet. */
export const DECISION_WORDS: Record<ToolDecisionKind, string> = { merge: 'merge', 'keep-apart': 'keep apart', decompose: 'decompose', rename: 'rename' };

export type ToolSheetRow = Record<ToolSheetColumn, string>;

/** One tool per line, `name: text` for what belongs to a tool. */
function perTool(question: ToolQuestion, text: (tool: ToolQuestion['tools'][number]) => string[]): string {
  return question.tools.flatMap((tool) => text(tool).map((line) => `${tool.name}: ${line.replace(/\s*\n\s*/g, ' ')}`)).join('\n');
}

/** A fresh row for a question (reviewer columns empty, `annotator` pre-filled if given). */
export function toolSheetRow(ref: DatasetLabel, question: ToolQuestion, annotator = ''): ToolSheetRow {
  return {
    question_id: question.id,
    dataset: datasetLabel(ref),
    kind: question.kind,
    tools: question.tools.map((t) => t.name).join('\n'),
    descriptions: perTool(question, (t) => [t.description || '(no description)']),
    sample_counts: perTool(question, (t) => [String(t.samples)]),
    example_queries: perTool(question, (t) => t.examples),
    proposal: question.proposal,
    suggested_name: question.suggestedName,
    allowed_decisions: question.decisions.map((d) => DECISION_WORDS[d]).join(', '),
    decision: '',
    merged_name: '',
    new_name: '',
    target_tools: '',
    annotator,
    notes: '',
  };
}

/** The sheet: UTF-8 with BOM, CRLF, formula cells neutralised (csv.ts). */
export function toolSheetCsv(ref: DatasetLabel, questions: readonly ToolQuestion[]): string {
  return toCsv(TOOL_SHEET_COLUMNS, questions.map((q) => toolSheetRow(ref, q)));
}

/** What a reviewer gave for one question (the sheet's cells, or a form's fields). */
export interface ToolDecisionInput {
  decision: string;
  merged_name?: string;
  new_name?: string;
  target_tools?: string;
}

export interface FieldError {
  field: ToolSheetColumn;
  message: string;
}

export interface ToolDecisionContext {
  question: ToolQuestion;
  /** Every tool name of the version: its library and every question's tools (merged-away members included). */
  knownTools: ReadonlySet<string>;
}

export type ToolDecisionCheck = { status: 'pending'; errors: FieldError[] } | { status: 'decided'; decision: ToolDecision; errors: [] } | { status: 'invalid'; errors: FieldError[] };

/** A new tool name: what function-calling APIs accept, starting with a letter, digit or `_` (never a formula character). */
const TOOL_NAME = /^[A-Za-z0-9_][A-Za-z0-9_-]{0,63}$/;

function nameProblem(name: string): string | null {
  if (RESERVED_NAMES.has(name)) return `"${name}" is not allowed as a tool name (it names a part of every JavaScript object)`;
  return TOOL_NAME.test(name) ? null : `"${name}" is not a tool name: use letters, digits, _ and - (up to 64, not starting with -)`;
}

/** Tool names in a cell: one per line or comma-separated. */
export function parseToolList(text: string): string[] {
  return [...new Set(text.split(/[\n,;]/).map((t) => t.trim()).filter(Boolean))];
}

/** `Old -> New` (or `→`) per line. */
const RENAME_LINE = /^(.+?)\s*(?:->|→)\s*(.+)$/;

/** The decision word as written (any case, `keep apart` / `keep-apart` / `keep_apart` / `keep`), or null. */
export function decisionKind(word: string): ToolDecisionKind | null {
  const w = word.trim().toLowerCase().replace(/[\s_-]+/g, ' ');
  if (w === 'keep' || w === 'keep apart') return 'keep-apart';
  return w === 'merge' || w === 'decompose' || w === 'rename' ? w : null;
}

/**
 * Checks one decision against its question: the decision word and that the question allows it, and
 * the fields it needs (and only those). merge: `merged_name` (empty: the suggested name), optional
 * `target_tools` (two or more of the question's tools; empty: all); keep apart: nothing; decompose:
 * `target_tools` (tools of the version; the question's tools not listed are decomposed into them);
 * rename: `new_name` as `Old -> New` lines.
 */
export function validateToolDecision(input: ToolDecisionInput, ctx: ToolDecisionContext): ToolDecisionCheck {
  const errors: FieldError[] = [];
  const error = (field: ToolSheetColumn, message: string) => errors.push({ field, message });
  const fields = { merged_name: (input.merged_name ?? '').trim(), new_name: (input.new_name ?? '').trim(), target_tools: (input.target_tools ?? '').trim() };
  const filled = (Object.keys(fields) as (keyof typeof fields)[]).filter((f) => fields[f] !== '');
  const { question } = ctx;
  const tools = question.tools.map((t) => t.name);
  const allowed = question.decisions.map((d) => DECISION_WORDS[d]).join(', ');

  if (!input.decision.trim()) {
    for (const field of filled) error(field, `${field} is filled in but the decision is empty: write one of ${allowed} (or clear ${field})`);
    return errors.length ? { status: 'invalid', errors } : { status: 'pending', errors: [] };
  }
  const kind = decisionKind(input.decision);
  if (!kind || !question.decisions.includes(kind)) {
    error('decision', `decision "${input.decision.trim()}" is not one of ${allowed}${kind ? ' (this question does not allow it)' : ''}`);
    return { status: 'invalid', errors };
  }
  const needs: Record<ToolDecisionKind, (keyof typeof fields)[]> = { merge: ['merged_name', 'target_tools'], 'keep-apart': [], decompose: ['target_tools'], rename: ['new_name'] };
  for (const field of filled.filter((f) => !needs[kind].includes(f))) error(field, `"${DECISION_WORDS[kind]}" takes no ${field}: clear it`);
  /** A new name may be a tool's own name only for that tool (`own`), in any letter case. */
  const newName = (field: ToolSheetColumn, name: string, own: readonly string[]) => {
    const problem = nameProblem(name);
    if (problem) error(field, problem);
    else {
      // In any letter case: prompts list, and models answer, "weather" for "Weather".
      const taken = [...ctx.knownTools].find((tool) => tool.toLowerCase() === name.toLowerCase() && !own.includes(tool));
      if (taken) error(field, `"${name}" is already the name of another tool${taken !== name ? ` (${taken}, in other letter case)` : ''}: choose a new name`);
    }
  };
  const listed = parseToolList(fields.target_tools);

  if (kind === 'merge') {
    const members = listed.length ? listed : tools;
    const outside = members.filter((t) => !tools.includes(t));
    if (outside.length) error('target_tools', `${outside.join(', ')} ${outside.length === 1 ? 'is' : 'are'} not among this question's tools (${tools.join(', ')}); list the ones to merge, or leave it empty to merge all`);
    else if (members.length < 2) error('target_tools', 'a merge needs two or more of the question\'s tools (leave it empty to merge all)');
    const into = fields.merged_name || question.suggestedName;
    newName('merged_name', into, members);
    return errors.length ? { status: 'invalid', errors } : { status: 'decided', decision: { question: question.id, tools, decision: 'merge', members, into }, errors: [] };
  }
  if (kind === 'decompose') {
    const unknown = listed.filter((t) => !ctx.knownTools.has(t));
    const decomposed = tools.filter((t) => !listed.includes(t));
    if (!listed.length) error('target_tools', 'decompose needs target_tools: the tools that take over the queries (the question\'s tools not listed are decomposed)');
    else if (unknown.length) error('target_tools', `unknown tool${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}: name tools of this version`);
    else if (!decomposed.length) error('target_tools', 'target_tools lists every tool of the question: leave out the one(s) to decompose');
    return errors.length ? { status: 'invalid', errors } : { status: 'decided', decision: { question: question.id, tools, decision: 'decompose', decomposed, into: listed }, errors: [] };
  }
  if (kind === 'rename') {
    const renames: { from: string; to: string }[] = [];
    const lines = fields.new_name.split('\n').map((l) => l.trim()).filter(Boolean);
    if (!lines.length) error('new_name', 'rename needs new_name: one "Old -> New" line per tool to rename');
    for (const line of lines) {
      const match = RENAME_LINE.exec(line);
      if (!match) {
        error('new_name', `"${line}" is not "Old -> New"`);
        continue;
      }
      const [from, to] = [match[1].trim(), match[2].trim()];
      if (!tools.includes(from)) error('new_name', `${from} is not among this question's tools (${tools.join(', ')})`);
      else if (renames.some((r) => r.from === from)) error('new_name', `${from} is renamed twice`);
      else if (renames.some((r) => r.to.toLowerCase() === to.toLowerCase())) error('new_name', `two tools would be named ${to}`);
      else if (from === to) error('new_name', `${from} -> ${to} keeps the name: use "keep apart"`);
      else {
        newName('new_name', to, [from]);
        renames.push({ from, to });
      }
    }
    return errors.length ? { status: 'invalid', errors } : { status: 'decided', decision: { question: question.id, tools, decision: 'rename', renames }, errors: [] };
  }
  return errors.length ? { status: 'invalid', errors } : { status: 'decided', decision: { question: question.id, tools, decision: 'keep-apart' }, errors: [] };
}

/** The names a decision gives tools (merged or renamed), to check that no two decisions give the same one. */
export function namesGiven(decision: ToolDecision): string[] {
  return decision.decision === 'merge' ? [decision.into] : decision.decision === 'rename' ? decision.renames.map((r) => r.to) : [];
}
