import { closeSync, existsSync, fsyncSync, openSync, readdirSync, readFileSync, readSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { UserError, withPath } from '../../core/errors.ts';
import { syncFolder } from '../../core/jsonl.ts';
import { parseSheetRecord, sheetHeaderText, sheetRecordText } from '../csv.ts';
import { EDITABLE_COLUMNS, SHEET_COLUMNS } from '../sheet.ts';
import { TOOL_EDITABLE_COLUMNS, TOOL_SHEET_COLUMNS, type ToolSheetColumn } from '../tool-sheet.ts';

/** A sheet's columns: all of them in file order, the reviewer's, the one that identifies a row and the one that holds its decision. */
export interface SheetLayout<C extends string> {
  columns: readonly C[];
  editable: readonly C[];
  key: C;
  decision: C;
}

/** The sample review sheet `review export` writes (`<name>-<v>-review.csv`). */
export const SAMPLE_SHEET_LAYOUT: SheetLayout<string> = { columns: SHEET_COLUMNS, editable: EDITABLE_COLUMNS, key: 'item_id', decision: 'decision' };

/** The tool sheet `review export` writes (`<name>-<v>-tools.csv`). */
export const TOOL_SHEET_LAYOUT: SheetLayout<ToolSheetColumn> = { columns: TOOL_SHEET_COLUMNS, editable: TOOL_EDITABLE_COLUMNS, key: 'question_id', decision: 'decision' };

/**
 * One annotator's decisions from the browser app, kept as a sheet in the exact CSV format
 * `review export` writes (`review import` reads it unchanged): one row per item (a queued sample, or
 * a tool question in the tool sheet's layout), the reviewer columns filled as decisions are made.
 *
 * The file is the only copy of the rows: in memory each row is its item id, where its record is in
 * the file and its decision, so what the app holds grows with the items' count, not with their text
 * (a queue grows with the version). A row is read back from the file when asked for. Every change
 * writes a new file beside the sheet (the rows before the changed one copied byte for byte, its new
 * record, the rows after it), syncs it and renames it over the sheet, then syncs the folder: a crash
 * leaves the old or the new sheet, never a torn one, and a decision is on disk once `update` returns.
 * The server reads from the file it wrote last (kept open), not from the path. A lock file keeps a
 * second server from writing the same sheet.
 */
export class DecisionSheet<C extends string = string> {
  /** Item ids in sheet order. */
  private readonly ids: string[] = [];
  /** Item id → its place in `ids`. */
  private readonly places = new Map<string, number>();
  /** Per row: where its record starts in the file and how many bytes it has (its CRLF included). */
  private starts: number[] = [];
  private lengths: number[] = [];
  /** Per row: its `decision` cell (what the item list shows). */
  private readonly decisions: string[] = [];
  /** The sheet as last written, open for reading; and its size. */
  private fd = -1;
  private size = 0;
  private readonly copyBuffer = Buffer.allocUnsafe(COPY_CHUNK);

  private constructor(
    readonly path: string,
    private readonly layout: SheetLayout<C>,
    private readonly lockPath: string,
  ) {}

  /**
   * Takes the lock and writes the sheet: the rows of `fresh` (the queue's), each with the reviewer
   * cells of its row in `saved` (the rows already in the file) copied over; then the saved rows of
   * items no longer in the queue, so no decision is ever dropped. Both are read as they come (`saved`
   * twice: it may be the file being replaced, which stays in place until the new one is complete);
   * only the reviewer cells of saved rows are held meanwhile.
   */
  static open<C extends string>(path: string, layout: SheetLayout<C>, fresh: Iterable<Record<C, string>>, saved: Iterable<Record<C, string>>): DecisionSheet<C> {
    const lockPath = `${path}.lock`;
    takeLock(lockPath, path);
    removeTemporaries(path);
    const sheet = new DecisionSheet(path, layout, lockPath);
    try {
      const savedCells = new Map<string, Partial<Record<C, string>>>();
      for (const row of saved) if (!savedCells.has(row[layout.key])) savedCells.set(row[layout.key], Object.fromEntries(layout.editable.map((c) => [c, row[c] ?? ''])) as Partial<Record<C, string>>);
      const file = sheet.newFile();
      try {
        file.text(sheetHeaderText(layout.columns));
        for (const row of fresh) {
          const old = savedCells.get(row[layout.key]);
          savedCells.delete(row[layout.key]);
          const merged = old ? { ...row, ...old } : row;
          sheet.place(merged, file.text(sheetRecordText(layout.columns, merged)), file.written);
        }
        for (const row of saved) {
          if (!savedCells.delete(row[layout.key])) continue;
          sheet.place(row, file.text(sheetRecordText(layout.columns, row)), file.written);
        }
        sheet.replaceWith(file);
      } catch (error) {
        file.discard();
        throw error;
      }
    } catch (error) {
      sheet.close();
      throw error;
    }
    return sheet;
  }

  /** Item ids in sheet order: the queue's, then items kept from an earlier queue. */
  itemIds(): readonly string[] {
    return this.ids;
  }

  has(itemId: string): boolean {
    return this.places.has(itemId);
  }

  /** An item's `decision` cell, without reading its row. */
  decision(itemId: string): string | undefined {
    const at = this.places.get(itemId);
    return at === undefined ? undefined : this.decisions[at];
  }

  /** An item's row, read back from the file. */
  row(itemId: string): Record<C, string> | undefined {
    const at = this.places.get(itemId);
    return at === undefined ? undefined : this.readRow(at);
  }

  /** 1-based spreadsheet row of an item (the header is row 1), as import numbers rows. */
  rowNumber(itemId: string): number {
    return (this.places.get(itemId) ?? -1) + 2;
  }

  /** Sets an item's reviewer cells and writes the sheet; the row as it is now in the file. */
  update(itemId: string, reviewer: Partial<Record<C, string>>): Record<C, string> {
    const at = this.places.get(itemId);
    if (at === undefined) throw new Error(`item ${itemId} is not in ${this.path}`);
    const next = { ...this.readRow(at), ...reviewer };
    const end = this.starts[at] + this.lengths[at];
    const file = this.newFile();
    let length: number;
    try {
      this.copyTo(file, 0, this.starts[at]);
      length = file.text(sheetRecordText(this.layout.columns, next));
      this.copyTo(file, end, this.size - end);
      this.replaceWith(file);
    } catch (error) {
      file.discard();
      throw error;
    }
    const shift = length - this.lengths[at];
    this.lengths[at] = length;
    for (let later = at + 1; later < this.ids.length; later++) this.starts[later] += shift;
    this.decisions[at] = next[this.layout.decision] ?? '';
    return next;
  }

  close(): void {
    if (this.fd !== -1) closeSync(this.fd);
    this.fd = -1;
    removeTemporaries(this.path);
    rmSync(this.lockPath, { force: true });
  }

  /** Notes a row just written to `file`, `length` bytes ending at `end`. */
  private place(row: Record<C, string>, length: number, end: number): void {
    const id = row[this.layout.key];
    this.places.set(id, this.ids.length);
    this.ids.push(id);
    this.starts.push(end - length);
    this.lengths.push(length);
    this.decisions.push(row[this.layout.decision] ?? '');
  }

  private readRow(at: number): Record<C, string> {
    const bytes = Buffer.allocUnsafe(this.lengths[at]);
    readFully(this.fd, bytes, this.starts[at]);
    const cells = parseSheetRecord(bytes.toString('utf8'));
    const id = this.ids[at];
    const { columns, key } = this.layout;
    // Only this server writes the file it reads (the lock); a record that is not the item's means it was changed under it.
    if (cells.length !== columns.length || cells[columns.indexOf(key)] !== id) throw new Error(`${this.path}: row ${at + 2} is not the row of ${id} this server wrote; restart review serve`);
    return Object.fromEntries(columns.map((c, i) => [c, cells[i]])) as Record<C, string>;
  }

  private newFile(): SheetFile {
    return new SheetFile(`${this.path}.tmp-${process.pid}`);
  }

  /** `length` bytes of the current sheet from `start`, appended to `file` as they are. */
  private copyTo(file: SheetFile, start: number, length: number): void {
    for (let done = 0; done < length; ) {
      const part = Math.min(COPY_CHUNK, length - done);
      readFully(this.fd, this.copyBuffer.subarray(0, part), start + done);
      file.bytes(this.copyBuffer.subarray(0, part));
      done += part;
    }
  }

  /** Makes `file` the sheet (synced, renamed into place, the folder synced) and the file rows are read from. */
  private replaceWith(file: SheetFile): void {
    const fd = file.commit(this.path);
    if (this.fd !== -1) closeSync(this.fd);
    this.fd = fd;
    this.size = file.written;
  }
}

/** Bytes copied at a time when a sheet is written again. */
const COPY_CHUNK = 1 << 18;

/** A new sheet written beside it (`<sheet>.tmp-<pid>`), then synced and renamed over it; kept open to read it back. */
class SheetFile {
  private readonly fd: number;
  /** Bytes written so far. */
  written = 0;

  constructor(private readonly tmp: string) {
    try {
      this.fd = openSync(tmp, 'w+');
    } catch (error) {
      throw withPath(error, tmp);
    }
  }

  /** Appends a text as UTF-8; returns its length in bytes. */
  text(text: string): number {
    const bytes = Buffer.from(text, 'utf8');
    this.bytes(bytes);
    return bytes.length;
  }

  bytes(bytes: Uint8Array): void {
    for (let done = 0; done < bytes.length; ) done += writeSync(this.fd, bytes, done, bytes.length - done, this.written + done);
    this.written += bytes.length;
  }

  /** Syncs the file, renames it to `path` and syncs the folder; the open descriptor is the caller's from then on. */
  commit(path: string): number {
    fsyncSync(this.fd);
    renameSync(this.tmp, path);
    syncFolder(dirname(path));
    return this.fd;
  }

  discard(): void {
    try {
      closeSync(this.fd);
    } catch {
      // Already closed: the temporary file goes either way.
    }
    rmSync(this.tmp, { force: true });
  }
}

/** Fills `bytes` from `fd` at `position`. */
function readFully(fd: number, bytes: Buffer, position: number): void {
  for (let done = 0; done < bytes.length; ) {
    const n = readSync(fd, bytes, done, bytes.length - done, position + done);
    if (n === 0) throw new Error('the review sheet ended before the row being read: it was changed under the review server; restart it');
    done += n;
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
