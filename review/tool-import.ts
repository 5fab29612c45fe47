import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { countBy, groupBy } from '../core/collections.ts';
import { UserError } from '../core/errors.ts';
import { sha256, stableStringify } from '../core/hash.ts';
import { toJsonl, writeFileAtomic } from '../core/jsonl.ts';
import type { LlmGateway } from '../core/llm/types.ts';
import type { PipelineDefinition } from '../core/pipeline.ts';
import type { ProgressOptions } from '../core/progress.ts';
import { DEFAULT_SEED, runPipeline } from '../core/run.ts';
import type { DatasetStore, VersionRef } from '../core/store.ts';
import type { ToolDecision } from '../core/tool-review.ts';
import { assertCarriable, carrySampleReviews, type CarryResult } from './carry.ts';
import { openCsv } from './csv.ts';
import { problemsCsv, type SheetFile } from './import.ts';
import { rowCount, type ImportProblem, type SheetSource } from './rows.ts';
import { datasetLabel } from './sheet.ts';
import { toolReviewContext, type ToolReviewContext } from './tool-export.ts';
import { readSheetFile } from './sources.ts';
import { namesGiven, TOOL_EDITABLE_COLUMNS, TOOL_READ_ONLY_COLUMNS, TOOL_SHEET_COLUMNS, TOOL_SHEET_MARKER, toolSheetRow, validateToolDecision } from './tool-sheet.ts';
import { difference, normalise, typedFormulaProblems } from './validate.ts';

/**
 * `review import` of tool sheets: every row of every sheet is checked first (problems name file,
 * row and column; with any, nothing is applied); answers from several annotators must agree per
 * question; then the recipe runs again with the decisions added to its config and publishes the
 * next version (`parent` = the reviewed one, `stats.toolReview`, the decisions in its config).
 */

export const TOOL_PROBLEMS_FILE = 'tool-import-problems.csv';
/** Problems quoted in the one-line error (all of them are in the problems file). */
const QUOTED_PROBLEMS = 5;

/** A tool sheet is told from a sample sheet by its header. */
export function isToolSheetFile(path: string): boolean {
  return /\.(csv|tsv|txt)$/i.test(path) && openCsv(path).header.includes(TOOL_SHEET_MARKER);
}

/** One annotator's valid decision on one question. */
export interface ToolAnswer {
  file: string;
  row: number;
  annotator: string;
  notes: string;
  decision: ToolDecision;
}

/** A question's decision with everyone who gave it. */
export interface AgreedToolDecision {
  decision: ToolDecision;
  answers: { annotator: string; file: string; row: number; notes: string }[];
}

export interface ToolSheetValidation {
  decided: AgreedToolDecision[];
  problems: ImportProblem[];
  rows: number;
  pending: number;
}

/**
 * Every row checked against the version's questions: the header, the dataset, the question id,
 * read-only cells unchanged, typed formulas, the decision and its fields; one row per question per
 * file and per annotator; then the questions whose annotators differ, naming their rows.
 */
export function validateToolSheets(sources: SheetSource[], ref: VersionRef, ctx: ToolReviewContext): ToolSheetValidation {
  const problems: ImportProblem[] = [...sources.flatMap((s) => s.problems)];
  const answers: ToolAnswer[] = [];
  const label = datasetLabel(ref);
  const seen = new Map<string, { file: string; row: number }>();
  let rows = 0;
  let pending = 0;
  for (const source of sources) {
    const missing = source.problems.some((p) => p.row === null) ? [] : TOOL_SHEET_COLUMNS.filter((c) => !source.columns.includes(c));
    for (const column of missing) problems.push({ file: source.file, row: 1, column, message: `missing column "${column}": a tool sheet needs the columns ${TOOL_SHEET_COLUMNS.join(', ')} (export a fresh one)` });
    if (missing.length || source.problems.some((p) => p.row === null)) continue;
    for (const row of source.rows) {
      rows++;
      const at = row.row ?? 0;
      const found: ImportProblem[] = [];
      const problem = (column: string | null, message: string) => found.push({ file: row.file, row: at, column, message });
      const cell = (column: string) => row.cells[column] ?? '';
      const annotator = cell('annotator').trim() || row.defaultAnnotator;
      const id = cell('question_id').trim();
      const question = ctx.questions.get(id);
      if (cell('dataset').trim() !== label) problem('dataset', `this sheet is from ${cell('dataset').trim() ? `"${cell('dataset').trim()}"` : 'no dataset'}, not ${label}: import it into the version it was exported from`);
      else if (!question) problem('question_id', id ? `unknown question "${id}": ${label} has no such tool question (was the cell edited?)` : 'question_id is empty: every row needs the id it was exported with');
      let check: ReturnType<typeof validateToolDecision> | null = null;
      if (question && !found.length) {
        const exported = toolSheetRow(ref, question);
        for (const column of TOOL_READ_ONLY_COLUMNS) {
          if (normalise(cell(column)).trimEnd() !== normalise(exported[column]).trimEnd()) problem(column, `read-only column "${column}" was edited ${difference(exported[column], normalise(cell(column)))}; undo it (decisions go in decision, merged_name, new_name, target_tools)`);
        }
        const key = `${id}\u0000${annotator}`;
        const earlier = seen.get(key);
        if (earlier) problem('question_id', `annotator "${annotator}" already answered question ${id} in ${earlier.file} row ${earlier.row}; keep one answer per question`);
        else seen.set(key, { file: row.file, row: at });
        check = validateToolDecision({ decision: cell('decision'), merged_name: cell('merged_name'), new_name: cell('new_name'), target_tools: cell('target_tools') }, { question, knownTools: ctx.knownTools });
        for (const e of check.errors) problem(e.field, e.message);
      }
      typedFormulaProblems(row, problem, TOOL_EDITABLE_COLUMNS);
      if (!found.length && check?.status === 'pending') pending++;
      if (!found.length && check?.status === 'decided') answers.push({ file: row.file, row: at, annotator, notes: cell('notes').trim(), decision: check.decision });
      problems.push(...found);
    }
  }
  const decided: AgreedToolDecision[] = [];
  for (const [question, given] of groupBy(answers, (a) => a.decision.question)) {
    if (new Set(given.map((a) => stableStringify(a.decision))).size > 1) {
      const first = given[0];
      const others = given.map((a) => `${a.annotator} (${a.file} row ${a.row}): ${describeDecision(a.decision)}`).join('; ');
      problems.push({ file: first.file, row: first.row, column: 'decision', message: `annotators disagree on question ${question}: ${others}; make the rows agree (or import only the adjudicated sheet)` });
      continue;
    }
    decided.push({ decision: given[0].decision, answers: given.map(({ annotator, file, row, notes }) => ({ annotator, file, row, notes })) });
  }
  problems.push(...crossDecisionProblems(decided));
  return { decided, problems, rows, pending };
}

/** Decisions that contradict each other across questions: one new name given twice, a target that another decision decomposes. */
function crossDecisionProblems(decided: AgreedToolDecision[]): ImportProblem[] {
  const problems: ImportProblem[] = [];
  const named = new Map<string, AgreedToolDecision>();
  const decomposed = new Set(decided.flatMap((d) => (d.decision.decision === 'decompose' ? d.decision.decomposed : [])));
  for (const d of decided) {
    const at = d.answers[0];
    for (const name of namesGiven(d.decision)) {
      const other = named.get(name);
      if (other) problems.push({ file: at.file, row: at.row, column: d.decision.decision === 'merge' ? 'merged_name' : 'new_name', message: `"${name}" is also the new name given in ${other.answers[0].file} row ${other.answers[0].row}: two tools cannot take one name` });
      else named.set(name, d);
    }
    if (d.decision.decision === 'decompose') {
      for (const target of d.decision.into.filter((t) => decomposed.has(t))) problems.push({ file: at.file, row: at.row, column: 'target_tools', message: `${target} is decomposed by another row: it cannot take over queries` });
    }
  }
  return problems;
}

export function describeDecision(d: ToolDecision): string {
  if (d.decision === 'merge') return `merge ${d.members.join(', ')} into ${d.into}`;
  if (d.decision === 'decompose') return `decompose ${d.decomposed.join(', ')} into ${d.into.join(', ')}`;
  if (d.decision === 'rename') return `rename ${d.renames.map((r) => `${r.from} -> ${r.to}`).join(', ')}`;
  return `keep ${d.tools.join(', ')} apart`;
}

export interface ToolImportOptions {
  store: DatasetStore;
  ref: VersionRef;
  files: SheetFile[];
  /** The recipe that made the version: its `toolReview` and stages. */
  pipeline: PipelineDefinition;
  /** The gateway the recipe runs again with (its model must be the version's). */
  llm: LlmGateway;
  /** TOOLKILN_HOME, the project folder and the current folder, as for `toolkiln run`. */
  home: string;
  projectDir: string;
  cwd: string;
  log?: (message: string) => void;
  progress?: ProgressOptions;
}

export interface ToolImportResult {
  dataset: string;
  status: 'published' | 'existing';
  newVersion: string;
  counts: { files: number; rows: number; decided: number; pending: number; questions: number; byDecision: Record<string, number> };
  decisions: AgreedToolDecision[];
  /** Sample decisions made from the reviewed version, carried onto the new one (see carry.ts). */
  carried: CarryResult[];
}

/** Validates the tool sheets, then runs the recipe again with the decisions and publishes the next version. */
export async function importToolReview(options: ToolImportOptions): Promise<ToolImportResult> {
  const { store, ref, pipeline } = options;
  const label = datasetLabel(ref);
  const toolReview = pipeline.toolReview;
  if (!toolReview) throw new UserError(`${label} was made by the ${pipeline.name} recipe, which asks no tool-level questions: import its sample sheets instead`);
  const manifest = store.manifest(ref);
  const sources = options.files.map((f) => readSheetFile(f.path, f.shown ?? f.path));
  const ctx = toolReviewContext(store, ref, toolReview);
  const validation = validateToolSheets(sources, ref, ctx);
  const reviewDir = store.derivedDir(ref, 'review');
  if (validation.problems.length) {
    writeFileAtomic(join(reviewDir, TOOL_PROBLEMS_FILE), problemsCsv(validation.problems));
    const quoted = validation.problems.slice(0, QUOTED_PROBLEMS).map((p) => `${p.file}:${p.row ?? '-'}:${p.column ?? '-'}: ${p.message}`).join(' | ');
    const more = validation.problems.length > QUOTED_PROBLEMS ? ` | … ${validation.problems.length - QUOTED_PROBLEMS} more in ${join(reviewDir, TOOL_PROBLEMS_FILE)}` : '';
    throw new UserError(`nothing applied to ${label}: ${validation.problems.length} problem(s) in the tool sheet(s): ${quoted}${more}`);
  }
  if (!validation.decided.length) throw new UserError(`nothing applied to ${label}: the tool sheet(s) hold no decisions (fill the decision column: merge, keep apart, decompose or rename)`);
  if (manifest.stats.review) throw new UserError(`${label} already holds sample review decisions, which re-running the recipe would lose: import the tool sheet into ${ref.name}@${String((manifest.stats.review as { reviewed?: string }).reviewed ?? manifest.parent)}, and its sample decisions are carried onto the version that publishes (tool decisions come before sample review)`);
  // Sample decisions already made from this version are carried onto the re-run: check they can be read first.
  assertCarriable(store, ref);
  if (!manifest.models.includes(options.llm.model)) throw new UserError(`${label} was made with model ${manifest.models.join(', ')}, not ${options.llm.model}: import with --llm / --model giving that model (the recipe runs again with it)`);

  const decisions = validation.decided.map((d) => d.decision);
  const stats = {
    reviewed: ref.version,
    files: sources.map((s, i) => ({ file: basename(s.file), sha256: sha256(readFileSync(options.files[i].path)), rows: rowCount(s) })),
    questions: ctx.questions.size,
    decided: validation.decided.length,
    pending: validation.pending,
    byDecision: countBy(decisions.map((d) => d.decision)),
    annotators: countBy(validation.decided.flatMap((d) => d.answers.map((a) => a.annotator))),
    decisions: validation.decided.map((d) => ({ ...d.decision, annotators: d.answers.map((a) => a.annotator), notes: d.answers.map((a) => a.notes).filter(Boolean) })),
  };
  const result = await runPipeline({
    pipeline,
    configOverrides: toolReview.withDecisions(manifest.config, decisions),
    configFile: `the tool decisions for ${label}`,
    name: ref.name,
    seed: typeof manifest.stats.seed === 'number' ? manifest.stats.seed : DEFAULT_SEED,
    limit: typeof manifest.stats.limit === 'number' ? manifest.stats.limit : undefined,
    llm: options.llm,
    home: options.home,
    projectDir: options.projectDir,
    cwd: options.cwd,
    log: options.log,
    progress: options.progress,
    parent: { version: ref.version, stats: { toolReview: stats }, files: { [`review/tool-decisions-from-${ref.version}.jsonl`]: toJsonl(stats.decisions) } },
  });
  const carried = carrySampleReviews(store, ref, result.ref!, pipeline);
  return {
    dataset: label,
    status: result.status === 'existing' ? 'existing' : 'published',
    newVersion: result.ref!.version,
    carried,
    counts: { files: sources.length, rows: validation.rows, decided: validation.decided.length, pending: validation.pending, questions: ctx.questions.size, byDecision: stats.byDecision },
    decisions: validation.decided,
  };
}
