import type { Sample } from '../core/records.ts';
import { isJsonObject } from '../core/records.ts';
import { readCell } from './csv.ts';
import type { QueueItem } from './queue.ts';
import type { ImportProblem, ReviewRow, SheetSource } from './rows.ts';
import { datasetLabel, DECISIONS, EDITABLE_COLUMNS, SHEET_COLUMNS, sheetRow, type DatasetLabel } from './sheet.ts';

/**
 * Argilla 2.x: the dataset settings (`rg.Settings.from_json`), records in the shape `rg.Record.to_dict`
 * writes and `rg.Record.from_dict` reads, and the reader of the records exported back with their
 * responses (`dataset.records.to_list(flatten=True)` or `to_json`). Field, metadata and question
 * names are the sheet's column names, so a record maps onto a sheet row one to one.
 */

/** Read-only columns shown as record fields (text kept exactly as the sheet has it). */
const FIELDS = ['what_to_check', 'dialogue', 'calls', 'failed_checks', 'calls_json'] as const;
/** Read-only columns kept as record metadata (filterable in Argilla's UI). */
const METADATA = ['category', 'priority', 'sample_id', 'dataset'] as const;
/** Fields that may be empty: they are left out of a record when they are (Argilla refuses empty required fields). */
const OPTIONAL_FIELDS: ReadonlySet<string> = new Set(['calls', 'failed_checks']);
/** The text questions: every reviewer column but the decision and the annotator (Argilla knows who answered). */
const TEXT_QUESTIONS = EDITABLE_COLUMNS.filter((c) => c !== 'decision' && c !== 'annotator');
const QUESTIONS: readonly string[] = ['decision', ...TEXT_QUESTIONS];

/** The agent named in the suggestions toolkiln writes. */
export const SUGGESTION_AGENT = 'toolkiln-checks';

const FIELD_TEXT: Record<(typeof FIELDS)[number], { title: string; description: string }> = {
  what_to_check: { title: 'What to check', description: 'Why this record is in the queue, one reason per line.' },
  dialogue: { title: 'Dialogue', description: 'One line per turn: [index] role: text; assistant turns show → calls and ← observations.' },
  calls: { title: 'Gold calls', description: 'The gold calls, readably (per turn for multi-turn samples).' },
  failed_checks: { title: 'Failed checks', description: "The recipe's checks this sample failed." },
  calls_json: { title: 'Calls as JSON', description: 'Copy this into "Corrected calls" to edit the calls.' },
};

const QUESTION_TEXT: Record<string, { title: string; description: string }> = {
  decision: { title: 'Decision', description: 'accept: the sample is right; reject: drop it; edit: fix it with the corrections below.' },
  corrected_query: { title: 'Corrected query', description: 'With edit: the new text of the first user turn.' },
  corrected_calls: { title: 'Corrected calls', description: 'With edit: the corrected calls, JSON in the shape of "Calls as JSON".' },
  corrected_labels: { title: 'Corrected labels', description: 'With edit, for samples with labels: the new labels, one per line.' },
  notes: { title: 'Notes', description: 'Free text, kept with the decision.' },
};

const GUIDELINES = `# Reviewing ${'`'}toolkiln${'`'} samples

Each record is one sample of the dataset named in its **dataset** metadata. Read *What to check*, the
dialogue and the gold calls, then answer **Decision**:

- **accept** — the sample is right as it is;
- **reject** — the sample is wrong and should be dropped (say why in *Notes*);
- **edit** — fix it: fill *Corrected query*, *Corrected calls* (copy *Calls as JSON* and change it) or
  *Corrected labels*. Leave the corrections empty with accept or reject.

A suggested decision comes from the recipe's failed checks; it is a hint, not an answer. Text that
starts with \`=\`, \`+\`, \`@\`, a tab or a carriage return is refused on import (a spreadsheet would run
it as a formula): write \`'\` before it to keep it as text.

Submit each record when done: only **submitted** responses are imported; drafts count as not
reviewed yet and discarded records are skipped.
`;

/** `rg.Settings.from_json` input: what `rg.Settings.to_json` writes (each entry carries its type twice, as the SDK does). */
export function argillaSettings(ref: DatasetLabel, items: readonly QueueItem[]) {
  const priorities = items.map((item) => item.priority);
  const categories = [...new Set(items.map((item) => item.category))].sort();
  const metadata = (name: string, title: string, settings: Record<string, unknown>) => ({ name, title, type: settings.type, settings, visible_for_annotators: true });
  return {
    guidelines: GUIDELINES,
    fields: FIELDS.map((name) => ({
      name,
      ...FIELD_TEXT[name],
      required: !OPTIONAL_FIELDS.has(name),
      type: 'text',
      settings: { type: 'text', use_markdown: false },
    })),
    questions: QUESTIONS.map((name) => ({
      name,
      ...QUESTION_TEXT[name],
      required: name === 'decision',
      ...(name === 'decision'
        ? { type: 'label_selection', settings: { type: 'label_selection', options: DECISIONS.map((d) => ({ value: d, text: d })), visible_options: null } }
        : { type: 'text', settings: { type: 'text', use_markdown: false } }),
    })),
    vectors: [],
    metadata: [
      metadata('category', 'Category', { type: 'terms', values: categories }),
      metadata('priority', 'Priority', { type: 'integer', min: priorities.length ? priorities.reduce((a, b) => Math.min(a, b)) : null, max: priorities.length ? priorities.reduce((a, b) => Math.max(a, b)) : null }),
      metadata('sample_id', 'Sample id', { type: 'terms', values: null }),
      metadata('dataset', 'Dataset', { type: 'terms', values: [datasetLabel(ref)] }),
    ],
    allow_extra_metadata: false,
    distribution: { strategy: 'overlap', min_submitted: 1 },
    mapping: null,
  };
}

export interface ArgillaSuggestion {
  value: string;
  score: number;
  agent: string;
}

/** A record as `rg.Record.to_dict` writes it (and `rg.Record.from_dict` reads it), without responses. */
export interface ArgillaRecord {
  id: string;
  fields: Record<string, string>;
  metadata: Record<string, string | number>;
  suggestions: Record<string, ArgillaSuggestion>;
  responses: Record<string, never>;
}

export function argillaRecord(ref: DatasetLabel, item: QueueItem, sample: Sample): ArgillaRecord {
  const row = sheetRow(ref, item, sample);
  const fields: Record<string, string> = {};
  for (const name of FIELDS) if (row[name] || !OPTIONAL_FIELDS.has(name)) fields[name] = row[name];
  return {
    id: row.item_id,
    fields,
    metadata: { category: row.category, priority: item.priority, sample_id: row.sample_id, dataset: row.dataset },
    suggestions: checkSuggestions(sample),
    responses: {},
  };
}

/**
 * A failed check suggests rejecting the sample: score = the share of its checks that failed, agent =
 * toolkiln's checks (the names are in the failed_checks field). toolkiln's checks propose no fix, so
 * nothing is suggested for the corrections.
 */
function checkSuggestions(sample: Sample): Record<string, ArgillaSuggestion> {
  const failed = sample.meta.checks.filter((c) => !c.pass);
  if (!failed.length) return {};
  return { decision: { value: 'reject', score: failed.length / sample.meta.checks.length, agent: SUGGESTION_AGENT } };
}

/** One user's answer to one record, whichever export shape it came from. */
interface UserAnswer {
  user: string;
  status: string | null;
  values: Map<string, unknown>;
}

const STATUSES = ['submitted', 'draft', 'discarded'];

/** Does this list look like Argilla records (nested `fields` / `responses`, or flattened `<question>.responses`)? */
export function looksLikeArgillaRecords(list: readonly unknown[]): boolean {
  return list.some((entry) => isJsonObject(entry) && (isJsonObject(entry.fields) || 'responses' in entry || Object.keys(entry).some((k) => k.endsWith('.responses'))));
}

/**
 * Argilla records exported with their responses: nested (`to_json`, `to_list(flatten=False)`:
 * `{id, fields, metadata, responses: {question: [{value, user_id, status}]}}`; a list of
 * `{question_name, value, user_id, status}` is read too) or flattened (`to_list(flatten=True)`:
 * `<question>.responses`, `.responses.users`, `.responses.status`). Per record and user, a submitted
 * response is one row, a draft a row left blank (pending), a discarded one nothing. `row` is the
 * record's 1-based position in the file, `annotation` the user's number within the record.
 */
export function readArgillaRecords(records: readonly unknown[], shown: string): SheetSource {
  const rows: ReviewRow[] = [];
  const source: SheetSource = { file: shown, kind: 'annotator', format: 'argilla', columns: [...SHEET_COLUMNS], rows, problems: [] };
  records.forEach((record, r) => {
    const row = r + 1;
    const id = isJsonObject(record) && typeof record.id === 'string' && record.id ? record.id : undefined;
    const problem = (column: string | null, message: string, annotation?: number) =>
      source.problems.push({ file: shown, row, ...(annotation ? { annotation } : {}), ...(id ? { record: id } : {}), column, message } satisfies ImportProblem);
    if (!isJsonObject(record)) return problem(null, 'not an Argilla record (an object with "id", "fields", "metadata" and "responses"): export the records with dataset.records.to_list(...)');
    if (!id) return problem('item_id', `record has no "id" (got ${JSON.stringify(record.id ?? null)}): the records keep the ids toolkiln gave them; export them with their ids`);
    const flat = !isJsonObject(record.fields);
    const fields = flat ? record : (record.fields as Record<string, unknown>);
    const metadata = flat ? record : isJsonObject(record.metadata) ? record.metadata : {};
    const base: Record<string, string> = { item_id: id };
    let complete = true;
    for (const name of [...METADATA, ...FIELDS]) {
      const value = (FIELDS as readonly string[]).includes(name) ? fields[name] : metadata[name];
      if (typeof value === 'string') base[name] = value;
      else if (name === 'priority' && typeof value === 'number') base[name] = String(value);
      else if ((value === undefined || value === null) && OPTIONAL_FIELDS.has(name)) base[name] = '';
      else {
        const where = (FIELDS as readonly string[]).includes(name) ? 'field' : 'metadata';
        problem(name, `record ${id} has no ${where} "${name}" (records must come from toolkiln review export with its settings)`);
        complete = false;
      }
    }
    if (!complete) return;
    const entries = flat ? flatEntries(record, id, problem) : nestedEntries(record.responses, id, problem);
    const answers = entries && answersByUser(entries, id, problem);
    if (!answers) return;
    answers.forEach((answer, a) => {
      if (answer.status === 'discarded') return;
      const annotation = a + 1;
      const who = `user ${answer.user}`;
      const cells: Record<string, string> = { ...base, ...Object.fromEntries(EDITABLE_COLUMNS.map((c) => [c, ''])) };
      const formulaColumns: string[] = [];
      // Every answer but a discarded one is a row: a problem below makes it an invalid row, and a
      // draft (not an answer yet) stays blank, counted as pending.
      rows.push({ file: shown, row, annotation, cells, formulaColumns, defaultAnnotator: `argilla-user-${answer.user}` });
      if (answer.status === null) return problem(null, `record ${id}: the response of ${who} has no status (submitted, draft or discarded); export with dataset.records.to_list(flatten=True), which keeps it (see review/README.md)`, annotation);
      if (!STATUSES.includes(answer.status)) return problem(null, `record ${id}: the response of ${who} has the status "${answer.status}", not one of ${STATUSES.join(', ')}`, annotation);
      if (answer.status === 'draft') return;
      const decision = answer.values.get('decision');
      if (decision === undefined || decision === null) return problem('decision', `record ${id}: the submitted response of ${who} has no answer to the question "decision" (it is required: were the records loaded with toolkiln's settings?)`, annotation);
      if (typeof decision !== 'string') return problem('decision', `record ${id}: the decision of ${who} is ${JSON.stringify(decision)}, not one label (accept, reject or edit)`, annotation);
      const wrongType = TEXT_QUESTIONS.filter((q) => answer.values.get(q) !== undefined && answer.values.get(q) !== null && typeof answer.values.get(q) !== 'string');
      for (const question of wrongType) problem(question, `record ${id}: the answer of ${who} to "${question}" is ${JSON.stringify(answer.values.get(question))}, not text`, annotation);
      // A row with an unreadable answer stays blank: validating the rest would only report what follows from it.
      if (wrongType.length) return;
      cells.decision = decision;
      for (const question of TEXT_QUESTIONS) {
        const value = answer.values.get(question);
        if (typeof value !== 'string') continue;
        // The same rule as a sheet's cells: a leading formula character needs a `'` before it.
        const cell = readCell(value);
        cells[question] = cell.text;
        if (cell.formula) formulaColumns.push(question);
      }
    });
  });
  return source;
}

type RecordProblem = (column: string | null, message: string, annotation?: number) => void;

/** One response as the file holds it: one user's value for one question. */
interface ResponseEntry {
  question: string;
  value: unknown;
  user: unknown;
  status: unknown;
}

/** Nested responses: `{question: [{value, user_id, status}]}`, or a list of `{question_name, value, user_id, status}`. */
function nestedEntries(responses: unknown, id: string, problem: RecordProblem): ResponseEntry[] | null {
  if (responses === undefined || responses === null) return [];
  const entry = (question: unknown, response: unknown): ResponseEntry | null =>
    typeof question === 'string' && isJsonObject(response) ? { question, value: response.value, user: response.user_id, status: response.status } : null;
  const entries = Array.isArray(responses)
    ? responses.map((response) => entry(isJsonObject(response) ? response.question_name : undefined, response))
    : isJsonObject(responses)
      ? Object.entries(responses).flatMap(([question, list]) => (Array.isArray(list) ? list : [list]).map((response) => entry(question, response)))
      : [null];
  if (entries.includes(null)) {
    problem(null, `record ${id}: "responses" is not what Argilla exports ({question: [{value, user_id, status}]}): ${JSON.stringify(responses).slice(0, 200)}`);
    return null;
  }
  return entries as ResponseEntry[];
}

/** Flattened responses: `<question>.responses`, `<question>.responses.users`, `<question>.responses.status` side by side. */
function flatEntries(record: Record<string, unknown>, id: string, problem: RecordProblem): ResponseEntry[] | null {
  const entries: ResponseEntry[] = [];
  for (const key of Object.keys(record).filter((k) => k.endsWith('.responses'))) {
    const question = key.slice(0, -'.responses'.length);
    const [values, users, statuses] = [record[key], record[`${key}.users`], record[`${key}.status`]];
    if (values === null || values === undefined) continue;
    if (!Array.isArray(values) || !Array.isArray(users) || users.length !== values.length || (Array.isArray(statuses) && statuses.length !== values.length)) {
      problem(question, `record ${id}: "${key}", "${key}.users" and "${key}.status" must be lists of the same length (as dataset.records.to_list(flatten=True) writes them)`);
      return null;
    }
    values.forEach((value, i) => entries.push({ question, value, user: users[i], status: Array.isArray(statuses) ? statuses[i] : undefined }));
  }
  return entries;
}

/** Responses grouped by user, in the order users first appear; a user's responses to one record share one status. */
function answersByUser(entries: ResponseEntry[], id: string, problem: RecordProblem): UserAnswer[] | null {
  const byUser = new Map<string, UserAnswer>();
  for (const entry of entries) {
    const user = (typeof entry.user === 'string' && entry.user) || typeof entry.user === 'number' ? String(entry.user) : null;
    const status = typeof entry.status === 'string' && entry.status ? entry.status : null;
    if (!user) {
      problem(entry.question, `record ${id}: a response to "${entry.question}" has no user_id`);
      return null;
    }
    const answer = byUser.get(user) ?? { user, status, values: new Map<string, unknown>() };
    if (answer.status !== status) {
      problem(entry.question, `record ${id}: user ${user} has responses with the statuses ${JSON.stringify(answer.status)} and ${JSON.stringify(status)}; Argilla keeps one status per user and record`);
      return null;
    }
    byUser.set(user, answer);
    // Answers to questions toolkiln did not ask carry nothing it applies.
    if (QUESTIONS.includes(entry.question)) answer.values.set(entry.question, entry.value);
  }
  return [...byUser.values()];
}

/** Validation names rows by position; for Argilla files the problems also name the record's id. */
export function withRecordIds(problems: ImportProblem[], sources: readonly SheetSource[]): ImportProblem[] {
  const ids = new Map<string, string>();
  for (const source of sources.filter((s) => s.format === 'argilla')) for (const row of source.rows) ids.set(`${row.file}\u0000${row.row}`, row.cells.item_id);
  return problems.map((p) => {
    const record = p.record ?? ids.get(`${p.file}\u0000${p.row}`);
    return record ? { ...p, record } : p;
  });
}
