/**
 * Progress on stderr: a redrawn bar on a terminal, plain periodic lines otherwise (CI logs stay
 * readable). Writes nothing when `quiet`.
 */
export interface ProgressOptions {
  stream?: NodeJS.WriteStream;
  quiet?: boolean;
  /** Seconds between plain lines when not a TTY. */
  intervalSeconds?: number;
}

export class Progress {
  private done = 0;
  private started = Date.now();
  private lastDraw = 0;
  private readonly stream: NodeJS.WriteStream;
  private readonly tty: boolean;

  constructor(private readonly label: string, private readonly total: number, private readonly options: ProgressOptions = {}) {
    this.stream = options.stream ?? process.stderr;
    this.tty = !!this.stream.isTTY;
  }

  tick(count = 1): void {
    this.done += count;
    const now = Date.now();
    const interval = this.tty ? 100 : (this.options.intervalSeconds ?? 5) * 1000;
    if (now - this.lastDraw >= interval) {
      this.lastDraw = now;
      this.draw(false);
    }
  }

  /** Draws the final line; `done` sets the count when the work was not ticked record by record. */
  finish(done?: number): void {
    if (done !== undefined) this.done = done;
    this.draw(true);
  }

  private draw(final: boolean): void {
    if (this.options.quiet) return;
    const seconds = (Date.now() - this.started) / 1000;
    const rate = seconds > 0 ? this.done / seconds : 0;
    // No total (a loader), or an estimate the work outgrew (records of a stage that fans out, piped on
    // before it has finished): the count alone, not a share over 100 %.
    const known = this.total > 0 && this.done <= this.total;
    const share = known ? this.done / this.total : final ? 1 : 0;
    const figures = known ? `${this.done}/${this.total} ${(share * 100).toFixed(0)}% ${rate.toFixed(1)}/s` : `${this.done} ${rate.toFixed(1)}/s`;
    if (this.tty) {
      const width = 30;
      const filled = Math.round(share * width);
      const bar = known || final ? ` [${'#'.repeat(filled)}${'.'.repeat(width - filled)}]` : '';
      this.stream.write(`\r${this.label}${bar} ${figures}${final ? '\n' : ''}`);
    } else if (final || this.done > 0) {
      this.stream.write(`${this.label}: ${figures}${final ? ` done in ${seconds.toFixed(1)}s` : ''}\n`);
    }
  }
}
