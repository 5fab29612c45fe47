import { readFileSync } from 'node:fs';
import { messageOf } from '../core/errors.ts';
import type { Sample } from '../core/records.ts';
import { readCell } from './csv.ts';
import type { QueueItem } from './queue.ts';
import { DECISIONS, dialogueParagraphs, EDITABLE_COLUMNS, paragraphsText, SHEET_COLUMNS, sheetRow, type DatasetLabel, type Paragraph } from './sheet.ts';
import type { ImportProblem, ReviewRow, SheetSource } from './rows.ts';

/**
 * Label Studio: a labeling config (dialogue as `Paragraphs`, decision as `Choices`, corrections and
 * notes as `TextArea`s) and tasks whose `data` holds the sheet's read-only columns; its JSON export
 * (a list of tasks with `annotations[].result[]`) comes back through `readLabelStudioExport`.
 */

/** Task data: the read-only sheet columns, the dialogue as paragraphs. */
export type TaskData = Record<string, string> & { dialogue: Paragraph[] } & Record<string, unknown>;

export interface LabelStudioTask {
  data: TaskData;
}

/** The sheet's read-only columns, in sheet order: what a task's `data` holds. */
const READ_ONLY_COLUMNS = SHEET_COLUMNS.slice(0, SHEET_COLUMNS.indexOf('decision'));

/** Text controls: their `from_name` is the sheet column they fill. */
const TEXT_CONTROLS = ['corrected_query', 'corrected_calls', 'corrected_labels', 'notes'] as const;

export function labelingConfig(): string {
  return `<View>
  <Style>.htx-text { white-space: pre-wrap; }</Style>
  <Header value="What to check"/>
  <Text name="what_to_check" value="$what_to_check"/>
  <Header value="Dialogue"/>
  <Paragraphs name="dialogue" value="$dialogue" layout="dialogue" nameKey="author" textKey="text"/>
  <Header value="Gold calls"/>
  <Text name="calls" value="$calls"/>
  <Header value="Failed checks"/>
  <Text name="failed_checks" value="$failed_checks"/>
  <Header value="Calls as JSON (copy into the correction to edit)"/>
  <Text name="calls_json" value="$calls_json"/>
  <Header value="Decision"/>
  <Choices name="decision" toName="dialogue" choice="single" showInline="true" required="true">
${DECISIONS.map((d) => `    <Choice value="${d}"/>`).join('\n')}
  </Choices>
  <Header value="Corrected query (edit only; replaces the first user turn)"/>
  <TextArea name="corrected_query" toName="dialogue" rows="2" editable="true" maxSubmissions="1"/>
  <Header value="Corrected calls (edit only; JSON in the shape of calls_json)"/>
  <TextArea name="corrected_calls" toName="dialogue" rows="8" editable="true" maxSubmissions="1"/>
  <Header value="Corrected labels (edit only, for samples with labels; one per line)"/>
  <TextArea name="corrected_labels" toName="dialogue" rows="2" editable="true" maxSubmissions="1"/>
  <Header value="Notes"/>
  <TextArea name="notes" toName="dialogue" rows="2" editable="true" maxSubmissions="1"/>
</View>
`;
}

export function labelStudioTask(ref: DatasetLabel, item: QueueItem, sample: Sample): LabelStudioTask {
  const row = sheetRow(ref, item, sample);
  const data: Record<string, unknown> = {};
  for (const column of READ_ONLY_COLUMNS) data[column] = column === 'dialogue' ? dialogueParagraphs(sample) : row[column];
  return { data: data as TaskData };
}

/** `completed_by` is a user id in current exports and a `{id, email}` object in older ones. */
function annotatorOf(completedBy: unknown): string {
  if (completedBy && typeof completedBy === 'object') {
    const user = completedBy as { email?: unknown; id?: unknown };
    if (typeof user.email === 'string' && user.email) return user.email;
    if (user.id !== undefined) return `labelstudio-user-${String(user.id)}`;
  }
  if (typeof completedBy === 'number' || typeof completedBy === 'string') return `labelstudio-user-${completedBy}`;
  return 'labelstudio-user';
}

interface ResultItem {
  from_name?: unknown;
  value?: { choices?: unknown; text?: unknown };
}

/**
 * Label Studio's JSON export: `[{id, data, annotations: [{completed_by, was_cancelled, result:
 * [{from_name, to_name, type, value: {choices | text}}]}]}]`. Each annotation that was not cancelled
 * becomes one row; the task's `data` supplies the read-only columns.
 */
export function readLabelStudioExport(path: string, shown = path): SheetSource {
  const rows: ReviewRow[] = [];
  const source: SheetSource = { file: shown, kind: 'annotator', format: 'labelstudio', columns: [], rows, problems: [] };
  const fileProblem = (message: string) => (source.problems.push({ file: shown, row: null, column: null, message }), source);
  let tasks: unknown;
  try {
    tasks = JSON.parse(readFileSync(path, 'utf8').replace(/^\uFEFF/, ''));
  } catch (error) {
    return fileProblem(`not a readable Label Studio JSON export: ${messageOf(error)}`);
  }
  if (!Array.isArray(tasks)) return fileProblem('not a Label Studio JSON export: expected a list of tasks (export the project as "JSON")');
  source.columns = [...SHEET_COLUMNS];

  tasks.forEach((task: unknown, t) => {
    const row = t + 1;
    const problem = (column: string | null, message: string, annotation?: number) =>
      source.problems.push({ file: shown, row, ...(annotation ? { annotation } : {}), column, message } satisfies ImportProblem);
    const taskObject = task && typeof task === 'object' ? (task as { data?: unknown; annotations?: unknown }) : null;
    if (!taskObject?.data || typeof taskObject.data !== 'object') {
      problem(null, 'task has no "data" object (a "JSON-MIN" or CSV export? export the project as "JSON")');
      return;
    }
    const data = taskObject.data as Record<string, unknown>;
    const base: Record<string, string> = {};
    let complete = true;
    for (const column of READ_ONLY_COLUMNS) {
      const value = column === 'dialogue' ? dialogueText(data.dialogue) : data[column];
      if (typeof value !== 'string') {
        problem(column, `task data has no "${column}" (tasks must come from toolkiln review export)`);
        complete = false;
      } else base[column] = value;
    }
    if (!complete) return;
    const annotations = Array.isArray(taskObject.annotations) ? taskObject.annotations : [];
    annotations.forEach((annotation: unknown, a) => {
      const entry = (annotation ?? {}) as { result?: unknown; completed_by?: unknown; was_cancelled?: unknown };
      if (entry.was_cancelled === true) return;
      const cells: Record<string, string> = { ...base, ...Object.fromEntries(EDITABLE_COLUMNS.map((c) => [c, ''])) };
      const formulaColumns: string[] = [];
      for (const item of (Array.isArray(entry.result) ? entry.result : []) as ResultItem[]) {
        const name = String(item?.from_name ?? '');
        if (name === 'decision') {
          const choices = item.value?.choices;
          if (!Array.isArray(choices) || choices.length !== 1) problem('decision', `choose exactly one decision (got ${JSON.stringify(choices ?? null)})`, a + 1);
          else cells.decision = String(choices[0]);
        } else if ((TEXT_CONTROLS as readonly string[]).includes(name)) {
          const text = item.value?.text;
          // The same rule as a sheet's cells: a leading formula character needs a `'` before it.
          const cell = readCell(Array.isArray(text) ? text.map(String).join('\n') : typeof text === 'string' ? text : '');
          cells[name] = cell.text;
          if (cell.formula) formulaColumns.push(name);
        }
        // Other controls (a rating someone added to the config) carry nothing toolkiln applies.
      }
      rows.push({ file: shown, row, annotation: a + 1, cells, formulaColumns, defaultAnnotator: annotatorOf(entry.completed_by) });
    });
  });
  return source;
}

function dialogueText(value: unknown): string | undefined {
  if (!Array.isArray(value)) return undefined;
  const paragraphs = value.map((p) => (p && typeof p === 'object' ? { author: String((p as Paragraph).author ?? ''), text: String((p as Paragraph).text ?? '') } : { author: '', text: String(p) }));
  return paragraphsText(paragraphs);
}
