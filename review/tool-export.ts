import { writeFileAtomic } from '../core/jsonl.ts';
import type { DatasetStore, VersionRef } from '../core/store.ts';
import type { ToolQuestion, ToolReview } from '../core/tool-review.ts';
import { toolSheetCsv } from './tool-sheet.ts';

/** What the tool sheet of a version shows and import checks against. */
export interface ToolReviewContext {
  /** Question id → question, in the recipe's order. */
  questions: Map<string, ToolQuestion>;
  /** Every tool name of the version: its library and every question's tools (members merged away included). */
  knownTools: Set<string>;
}

/**
 * The version's tool-level questions. A tool still in the version's library shows the description
 * it has there (stages after the question's may have written it); others the one the stage saw.
 */
export function toolReviewContext(store: DatasetStore, ref: VersionRef, toolReview: Pick<ToolReview, 'questions'>): ToolReviewContext {
  const library = new Map(store.tools(ref).map((t) => [t.name, t]));
  const questions = toolReview.questions(store.manifest(ref)).map((q) => ({ ...q, tools: q.tools.map((t) => ({ ...t, description: library.get(t.name)?.description || t.description })) }));
  return { questions: new Map(questions.map((q) => [q.id, q])), knownTools: new Set([...library.keys(), ...questions.flatMap((q) => q.tools.map((t) => t.name))]) };
}

/** Writes `file`, one row per question; null (and nothing written) when the version has none. */
export function writeToolSheet(options: { store: DatasetStore; ref: VersionRef; toolReview: Pick<ToolReview, 'questions'>; file: string }): { file: string; rows: number } | null {
  const { questions } = toolReviewContext(options.store, options.ref, options.toolReview);
  if (!questions.size) return null;
  writeFileAtomic(options.file, toolSheetCsv(options.ref, [...questions.values()]));
  return { file: options.file, rows: questions.size };
}
