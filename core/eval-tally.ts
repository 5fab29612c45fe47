import type { JudgedItem, MetricTable, ReportTables, TallyRule } from './eval.ts';

/**
 * The units of one side as numbers only: per unit its terms, each with its slot (table × sum). The
 * judged items can go once this is made.
 */
export class UnitTally {
  private readonly tableNames: string[] = [];
  private readonly tableIndex = new Map<string, number>();
  private terms = new Float64Array(1024);
  private slots = new Int32Array(1024);
  private length = 0;
  /** Where each unit's terms start (and the next one's: one more entry than units). */
  private readonly starts: number[] = [0];

  constructor(private readonly rule: TallyRule) {}

  static of(rule: TallyRule, units: Iterable<readonly JudgedItem[]>): UnitTally {
    const tally = new UnitTally(rule);
    for (const unit of units) tally.addUnit(unit);
    return tally;
  }

  get units(): number {
    return this.starts.length - 1;
  }

  addUnit(items: readonly JudgedItem[]): void {
    const width = this.rule.sums.length;
    this.rule.unit(items, (table, sum, term) => {
      let index = this.tableIndex.get(table);
      if (index === undefined) {
        index = this.tableNames.push(table) - 1;
        this.tableIndex.set(table, index);
      }
      if (this.length === this.terms.length) this.grow();
      this.terms[this.length] = term;
      this.slots[this.length++] = index * width + sum;
    });
    this.starts.push(this.length);
  }

  /** The tables of the units at `drawn` (indexes; one drawn twice counts twice), as the rule's `tablesOf` gives them. */
  tablesOf(drawn: readonly number[]): ReportTables {
    const width = this.rule.sums.length;
    const sums = new Float64Array(this.tableNames.length * width);
    // First-seen order of the tables in this draw: the order `tablesOf` would meet them.
    const seen = new Uint8Array(this.tableNames.length);
    const order: number[] = [];
    for (const unit of drawn) {
      for (let k = this.starts[unit], end = this.starts[unit + 1]; k < end; k++) {
        const slot = this.slots[k];
        const table = (slot / width) | 0;
        if (!seen[table]) {
          seen[table] = 1;
          order.push(table);
        }
        sums[slot] += this.terms[k];
      }
    }
    return this.rule.tables(new Map(order.map((table) => [this.tableNames[table], sums.subarray(table * width, (table + 1) * width)])));
  }

  private grow(): void {
    const terms = new Float64Array(this.terms.length * 2);
    terms.set(this.terms);
    const slots = new Int32Array(this.slots.length * 2);
    slots.set(this.slots);
    this.terms = terms;
    this.slots = slots;
  }
}

/** The name of the whole side's table in a rule's sums. */
export const ALL_ITEMS = '';

/** The whole side's table and each category's (every other table, in first-seen order), each from its sums by `table`. */
export function tallyTables(sums: ReadonlyMap<string, Float64Array>, width: number, table: (sums: Float64Array) => MetricTable): ReportTables {
  const byCategory: Record<string, MetricTable> = {};
  for (const [name, figures] of sums) if (name !== ALL_ITEMS) byCategory[name] = table(figures);
  return { metrics: table(sums.get(ALL_ITEMS) ?? new Float64Array(width)), byCategory };
}
