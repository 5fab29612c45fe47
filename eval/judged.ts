import type { BenchmarkScorer, EvalItem, JudgedItem } from '../core/eval.ts';
import type { Json } from '../core/records.ts';

/** The unit of an item: what the scorer scores together, else its sample. */
export const unitOf = (scorer: BenchmarkScorer, item: EvalItem): string => scorer.unitOf?.(item) ?? item.sampleId;

const NONE: never[] = [];

/** A value kept per item under a name, by item number (a hole where the item has none). */
type Column = (Json | number | boolean | undefined)[];

/**
 * The judged items of an evaluation, kept until the tables are made (and, for `eval compare`, drawn
 * in resamples): per item only what a scorer's `tablesOf` reads (core/eval.ts) — its ids, category,
 * the plain fields of its gold (strings, numbers, booleans, null) and its figures — stored by column
 * (a value per item under each name, no object per item), with the unit it belongs to. A version's
 * worth of items costs about a hundred bytes each; they become `JudgedItem` objects, grouped in their
 * units in first-seen order, only when the tables are made.
 */
export class JudgedItems {
  private count = 0;
  private readonly ids: string[] = [];
  private readonly sampleIds: string[] = [];
  private readonly categories: string[] = [];
  private categoryOf = new Uint16Array(1024);
  private unitOfItem = new Int32Array(1024);
  private readonly unitNumbers = new Map<string, number>();
  private readonly gold = new Map<string, Column>();
  private readonly figures = new Map<string, Column>();

  get size(): number {
    return this.count;
  }

  add(item: EvalItem, figures: Record<string, number | boolean>, unit: string): void {
    const at = this.count++;
    if (at === this.unitOfItem.length) {
      this.unitOfItem = grown(this.unitOfItem);
      this.categoryOf = grown(this.categoryOf);
    }
    this.ids.push(item.id);
    this.sampleIds.push(item.sampleId);
    let category = this.categories.indexOf(item.category);
    if (category === -1) category = this.categories.push(item.category) - 1;
    if (category > 0xffff) throw new Error(`more than ${0xffff} categories among the judged items`);
    this.categoryOf[at] = category;
    let unitNumber = this.unitNumbers.get(unit);
    if (unitNumber === undefined) this.unitNumbers.set(unit, (unitNumber = this.unitNumbers.size));
    this.unitOfItem[at] = unitNumber;
    if (item.gold && typeof item.gold === 'object' && !Array.isArray(item.gold)) {
      for (const [key, value] of Object.entries(item.gold)) if (value === null || typeof value !== 'object') setAt(this.gold, key, at, value);
    }
    for (const key in figures) setAt(this.figures, key, at, figures[key]);
  }

  /** The judged items as `tablesOf` takes them: grouped in their units, in first-seen order. */
  units(): JudgedItem[][] {
    const sizes = new Int32Array(this.unitNumbers.size);
    for (let i = 0; i < this.count; i++) sizes[this.unitOfItem[i]]++;
    const units: JudgedItem[][] = Array.from(sizes, (size) => new Array<JudgedItem>(size));
    const filled = new Int32Array(this.unitNumbers.size);
    const gold = [...this.gold];
    const figures = [...this.figures];
    for (let i = 0; i < this.count; i++) {
      const itemGold: Record<string, Json> = {};
      for (const [key, column] of gold) if (column[i] !== undefined) itemGold[key] = column[i] as Json;
      const itemFigures: Record<string, number | boolean> = {};
      for (const [key, column] of figures) if (column[i] !== undefined) itemFigures[key] = column[i] as number | boolean;
      const item: EvalItem = { id: this.ids[i], sampleId: this.sampleIds[i], category: this.categories[this.categoryOf[i]], messages: NONE, tools: NONE, gold: itemGold };
      const unit = this.unitOfItem[i];
      units[unit][filled[unit]++] = { item, figures: itemFigures };
    }
    return units;
  }
}

/** Item `at`'s value under `key`; a column is filled with holes up to its item, so it stays a dense array. */
function setAt(columns: Map<string, Column>, key: string, at: number, value: Json | number | boolean): void {
  let column = columns.get(key);
  if (!column) columns.set(key, (column = []));
  while (column.length < at) column.push(undefined);
  if (column.length === at) column.push(value);
  else column[at] = value;
}

function grown<A extends Int32Array | Uint16Array>(array: A): A {
  const bigger = new (array.constructor as new (length: number) => A)(array.length * 2);
  bigger.set(array);
  return bigger;
}
