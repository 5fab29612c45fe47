import { rmSync } from 'node:fs';
import type { BenchmarkScorer, EvalItem, JudgedItem } from '../core/eval.ts';
import { eachJsonl, JsonlWriter } from '../core/jsonl.ts';
import type { Json } from '../core/records.ts';

/** The unit of an item: what the scorer scores together, else its sample. */
export const unitOf = (scorer: BenchmarkScorer, item: EvalItem): string => scorer.unitOf?.(item) ?? item.sampleId;

const NONE: never[] = [];

type Scalar = string | number | boolean | null;
/** A scalar as a line holds it: a number JSON cannot write (NaN, ±Infinity) as `{"n": "<its text>"}`. */
type Written = Exclude<Scalar, number> | number | { n: string };
/** One judged item as a line of the file: unit, id, sample id, category, the gold's plain fields, the figures. */
type Line = [string, string, string, string, Record<string, Written>, Record<string, Written>];

/**
 * The judged items of an evaluation, kept until the tables are made (and, for `eval compare`, drawn
 * in resamples): per item only what a scorer's `tablesOf` reads (core/eval.ts) — its ids, category,
 * the plain fields of its gold (strings, numbers, booleans, null) and its figures, with its unit.
 * While the items stream they go to a file, one short line each, so the process holds nothing per
 * item until the end; `units` reads them back as `JudgedItem`s grouped in their units, in
 * first-seen order, and removes the file.
 */
export class JudgedItems {
  private readonly writer: JsonlWriter;
  private closed = false;

  /** `path`: a file of the evaluation's staging folder (removed once read). */
  constructor(private readonly path: string) {
    this.writer = new JsonlWriter(path);
  }

  add(item: EvalItem, figures: Record<string, number | boolean>, unit: string): void {
    const gold: Record<string, Written> = {};
    if (item.gold && typeof item.gold === 'object' && !Array.isArray(item.gold)) {
      for (const [key, value] of Object.entries(item.gold)) if (value === null || typeof value !== 'object') gold[key] = written(value);
    }
    const kept: Record<string, Written> = {};
    for (const key in figures) if (figures[key] !== undefined) kept[key] = written(figures[key]);
    const line: Line = [unit, item.id, item.sampleId, item.category, gold, kept];
    this.writer.write(line);
  }

  /** The judged items as `tablesOf` takes them: grouped in their units, in first-seen order. */
  units(): JudgedItem[][] {
    this.close();
    const units = new Map<string, JudgedItem[]>();
    for (const [unit, id, sampleId, category, gold, figures] of eachJsonl<Line>(this.path)) {
      const item: EvalItem = { id, sampleId, category, messages: NONE, tools: NONE, gold: read(gold) as Record<string, Json> };
      const judged = { item, figures: read(figures) as Record<string, number | boolean> };
      const members = units.get(unit);
      if (members) members.push(judged);
      else units.set(unit, [judged]);
    }
    rmSync(this.path, { force: true });
    return [...units.values()];
  }

  /** Closes the file (it goes with the staging folder when the evaluation fails). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.writer.close();
  }
}

function written(value: Scalar): Written {
  return typeof value === 'number' && !Number.isFinite(value) ? { n: String(value) } : value;
}

function read(values: Record<string, Written>): Record<string, Scalar> {
  const out: Record<string, Scalar> = {};
  for (const key in values) {
    const value = values[key];
    out[key] = value !== null && typeof value === 'object' ? Number(value.n) : value;
  }
  return out;
}
