import { closeSync, existsSync, openSync, readdirSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { UserError } from '../../core/errors.ts';
import { writeFileAtomic } from '../../core/jsonl.ts';
import { toCsv } from '../csv.ts';
import { EDITABLE_COLUMNS, SHEET_COLUMNS } from '../sheet.ts';
import { TOOL_EDITABLE_COLUMNS, TOOL_SHEET_COLUMNS, type ToolSheetColumn } from '../tool-sheet.ts';

/** A sheet's columns: all of them in file order, the reviewer's, and the one that identifies a row. */
export interface SheetLayout<C extends string> {
  columns: readonly C[];
  editable: readonly C[];
  key: C;
}

/** The sample review sheet `review export` writes (`<name>-<v>-review.csv`). */
export const SAMPLE_SHEET_LAYOUT: SheetLayout<string> = { columns: SHEET_COLUMNS, editable: EDITABLE_COLUMNS, key: 'item_id' };

/** The tool sheet `review export` writes (`<name>-<v>-tools.csv`). */
export const TOOL_SHEET_LAYOUT: SheetLayout<ToolSheetColumn> = { columns: TOOL_SHEET_COLUMNS, editable: TOOL_EDITABLE_COLUMNS, key: 'question_id' };

/**
 * One annotator's decisions from the browser app, kept as a sheet in the exact CSV format
 * `review export` writes (`review import` reads it unchanged): one row per item (a queued sample, or
 * a tool question in the tool sheet's layout), the reviewer columns filled as decisions are made. Every change rewrites the file atomically and durably
 * (temporary file, fsync, rename, fsync of the folder), so a crash leaves the old or the new sheet,
 * never a torn one. A lock file keeps a second server from writing the same sheet.
 */
export class DecisionSheet<C extends string = string> {
  private readonly rows: Record<C, string>[];
  private readonly byItem = new Map<string, Record<C, string>>();

  private constructor(
    readonly path: string,
    private readonly layout: SheetLayout<C>,
    rows: Record<C, string>[],
    private readonly lockPath: string,
  ) {
    this.rows = rows;
    for (const row of rows) this.byItem.set(row[layout.key], row);
  }

  /**
   * Takes the lock and starts from `fresh` (the queue's rows), with the reviewer cells of `saved`
   * (the rows already in the file, by item) copied over; saved rows of items no longer in the queue
   * are kept after the others, so no decision is ever dropped.
   */
  static open<C extends string>(path: string, layout: SheetLayout<C>, fresh: Record<C, string>[], saved: Record<C, string>[]): DecisionSheet<C> {
    const lockPath = `${path}.lock`;
    takeLock(lockPath, path);
    removeTemporaries(path);
    const savedById = new Map(saved.map((row) => [row[layout.key], row]));
    const rows = fresh.map((row) => {
      const old = savedById.get(row[layout.key]);
      savedById.delete(row[layout.key]);
      return old ? { ...row, ...Object.fromEntries(layout.editable.map((c) => [c, old[c] ?? ''])) } : row;
    });
    const sheet = new DecisionSheet(path, layout, [...rows, ...savedById.values()], lockPath);
    try {
      sheet.write(sheet.rows);
    } catch (error) {
      sheet.close();
      throw error;
    }
    return sheet;
  }

  /** Item ids in sheet order: the queue's, then items kept from an earlier queue. */
  itemIds(): string[] {
    return this.rows.map((row) => row[this.layout.key]);
  }

  row(itemId: string): Record<C, string> | undefined {
    return this.byItem.get(itemId);
  }

  /** 1-based spreadsheet row of an item (the header is row 1), as import numbers rows. */
  rowNumber(itemId: string): number {
    return this.rows.findIndex((row) => row[this.layout.key] === itemId) + 2;
  }

  /** Every row, in sheet order. */
  allRows(): readonly Record<C, string>[] {
    return this.rows;
  }

  /** Sets an item's reviewer cells and writes the sheet; in memory only once the file holds it. */
  update(itemId: string, reviewer: Partial<Record<C, string>>): Record<C, string> {
    const current = this.byItem.get(itemId);
    if (!current) throw new Error(`item ${itemId} is not in ${this.path}`);
    const next = { ...current, ...reviewer };
    this.write(this.rows.map((row) => (row === current ? next : row)));
    this.rows[this.rows.indexOf(current)] = next;
    this.byItem.set(itemId, next);
    return next;
  }

  close(): void {
    removeTemporaries(this.path);
    rmSync(this.lockPath, { force: true });
  }

  private write(rows: Record<C, string>[]): void {
    writeFileAtomic(this.path, toCsv(this.layout.columns, rows), { durable: true });
  }
}

/**
 * The temporary files of the sheet's atomic writes (`<sheet>.tmp-<pid>`): a process killed in the
 * middle of a save leaves one. Only the lock holder writes the sheet, so once it holds the lock
 * every such file is a leftover (taken at start, and its own at exit).
 */
function removeTemporaries(path: string): void {
  const prefix = `${basename(path)}.tmp-`;
  let names: string[];
  try {
    names = readdirSync(dirname(path));
  } catch {
    return;
  }
  for (const name of names) if (name.startsWith(prefix) && /^\d+$/.test(name.slice(prefix.length))) rmSync(join(dirname(path), name), { force: true });
}

/** The lock holds the server's pid; a lock whose process is gone (a crash) is taken over. */
function takeLock(lockPath: string, sheetPath: string): void {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockPath, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const pid = Number(existsSync(lockPath) ? readFileSync(lockPath, 'utf8').trim() : NaN);
    if (Number.isInteger(pid) && pid > 0 && isRunning(pid)) {
      throw new UserError(`${sheetPath} is in use by another review server (pid ${pid}, lock ${lockPath}): stop that one first, or give another --annotator`);
    }
    rmSync(lockPath, { force: true });
  }
  throw new UserError(`cannot take the lock ${lockPath}: remove it if no review server is running`);
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
