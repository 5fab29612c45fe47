import PQueue from 'p-queue';

export interface LimiterOptions {
  /** Requests in flight at once. */
  concurrency: number;
  /** Requests started in any window (default window: 60 s). Unset or 0: no limit. */
  rpm?: number;
  /** Tokens (prompt + completion) spent in any window. Unset or 0: no limit. */
  tpm?: number;
  /** The window the per-minute limits count in; 60,000 ms except in tests. */
  windowMs?: number;
  /** Added to the window so that network jitter cannot make the endpoint see one request too many. */
  windowMarginMs?: number;
  /** After a 429 the pool recovers one step (an eighth of its full speed) per this many ms of success. */
  recoverStepMs?: number;
  /** Monotonic clock in ms (tests inject one). */
  now?: () => number;
  log?: (message: string) => void;
  /** Told of every request the limiter lets start, with its own clock: what tests and benchmarks check pacing against. */
  onStart?: (start: LimiterStart) => void;
  /**
   * Asked, once this limiter would let a request start, for a permit from a budget other processes
   * share (several workers against one endpoint): resolves to 0 when granted, else the ms to wait
   * before asking again.
   */
  sharedPermit?: SharedPermit;
}

/** A permit request to a shared rate budget: the limits (already slowed after 429s) and the window they count in. */
export type SharedPermit = (request: { tokens: number; rpm?: number; tpm?: number; spanMs: number }) => Promise<number>;

/** One decision to let a request start. */
export interface LimiterStart {
  /** The limiter's clock (`now`) at the decision. */
  at: number;
  /** The tokens the request was estimated at. */
  tokens: number;
}

/** Handed to a request once admitted: report the tokens it really used so the budget is corrected. */
export interface Ticket {
  /** Without a count (a failed request) the estimate stands. */
  settle(actualTokens?: number): void;
}

interface Spend {
  at: number;
  tokens: number;
  live: boolean;
}

const MIN_FACTOR = 1 / 64;
const RECHECK_MS = 25;

/**
 * The one pool every request of a gateway goes through: a concurrency limit (p-queue), request
 * pacing that never starts more than `rpm` requests in any window, and a token budget per window
 * (estimated before sending, corrected from `usage` after). A 429 pauses the whole pool for the
 * wait the endpoint asked for and halves its speed; speed then comes back step by step.
 */
export class RequestLimiter {
  private readonly queue: PQueue;
  private readonly windowMs: number;
  private readonly span: number;
  private readonly starts: number[] = [];
  private startsHead = 0;
  private readonly spends: Spend[] = [];
  private spendsHead = 0;
  private spent = 0;
  /** Admitted requests whose real token count is not known yet. */
  private unsettled = 0;
  private nextSlot = 0;
  private pausedUntil = 0;
  private factor = 1;
  private lastChange = -Infinity;
  private admitChain: Promise<unknown> = Promise.resolve();
  private closed = false;
  private readonly now: () => number;
  private readonly log: (message: string) => void;

  constructor(private readonly options: LimiterOptions) {
    if (!(options.concurrency >= 1)) throw new Error(`concurrency must be at least 1, got ${options.concurrency}`);
    this.queue = new PQueue({ concurrency: Math.floor(options.concurrency) });
    this.windowMs = options.windowMs ?? 60_000;
    this.span = this.windowMs + (options.windowMarginMs ?? Math.ceil(this.windowMs / 120));
    this.now = options.now ?? (() => performance.now());
    this.log = options.log ?? (() => {});
  }

  /** Current share of full speed (1 = configured limits; less after 429s). */
  get speed(): number {
    return this.factor;
  }

  get concurrency(): number {
    return this.queue.concurrency;
  }

  /**
   * Runs `task` once a slot is free and the rate and token budgets allow a request of `tokens`.
   * Higher `priority` goes first (retries and repairs before fresh requests).
   */
  run<T>(task: (ticket: Ticket) => Promise<T>, options: { tokens: number; priority?: number }): Promise<T> {
    return this.queue.add(async () => task(await this.admit(options.tokens)), { priority: options.priority ?? 0 }) as Promise<T>;
  }

  /** The endpoint said 429: pause everyone for `waitMs` and slow the pool down. */
  rateLimited(waitMs: number): void {
    const now = this.now();
    this.pausedUntil = Math.max(this.pausedUntil, now + waitMs);
    // One burst of 429s (all requests in flight at that moment) counts as one signal.
    if (now - this.lastChange < Math.max(1000, waitMs)) return;
    this.factor = Math.max(MIN_FACTOR, this.factor / 2);
    this.lastChange = now;
    this.apply();
    this.log(`rate limited: pausing ${(waitMs / 1000).toFixed(1)} s, slowing to ${Math.round(this.factor * 100)}% (concurrency ${this.queue.concurrency}${this.options.rpm ? `, ${Math.floor(this.options.rpm * this.factor)} rpm` : ''})`);
  }

  /** A request succeeded: recover a step of speed if the last change is long enough ago. */
  succeeded(): void {
    if (this.factor >= 1) return;
    const now = this.now();
    if (now - this.lastChange < (this.options.recoverStepMs ?? 5000)) return;
    this.factor = Math.min(1, this.factor + 1 / 8);
    this.lastChange = now;
    this.apply();
    if (this.factor === 1) this.log('rate limit cleared: back to full speed');
  }

  private apply(): void {
    this.queue.concurrency = Math.max(1, Math.floor(this.options.concurrency * this.factor));
  }

  private admit(tokens: number): Promise<Ticket> {
    // Admissions are granted one at a time, in the order the queue started them.
    const ticket = this.admitChain.then(() => this.waitForRoom(tokens));
    this.admitChain = ticket.catch(() => {});
    return ticket;
  }

  private async waitForRoom(tokens: number): Promise<Ticket> {
    for (;;) {
      if (this.closed) throw new Error('the LLM gateway was closed');
      const now = this.now();
      let wait = this.delay(tokens, now);
      if (wait <= 0 && this.options.sharedPermit) wait = await this.sharedWait(tokens);
      if (wait <= 0) return this.record(tokens, this.now());
      await new Promise((resolve) => setTimeout(resolve, Math.max(1, Math.ceil(wait))));
    }
  }

  private sharedWait(tokens: number): Promise<number> {
    const { rpm, tpm } = this.options;
    const slowed = (limit: number | undefined) => (limit ? Math.max(1, Math.floor(limit * this.factor)) : undefined);
    return this.options.sharedPermit!({ tokens, rpm: slowed(rpm), tpm: slowed(tpm), spanMs: this.span });
  }

  /** How long until a request of `tokens` may start (<= 0: now). */
  private delay(tokens: number, now: number): number {
    let wait = this.pausedUntil - now;
    const { rpm, tpm } = this.options;
    if (rpm) {
      while (this.startsHead < this.starts.length && this.starts[this.startsHead] <= now - this.span) this.startsHead++;
      if (this.startsHead > 4096) this.starts.splice(0, this.startsHead), (this.startsHead = 0);
      if (this.starts.length - this.startsHead >= rpm) wait = Math.max(wait, this.starts[this.startsHead] + this.span - now);
      wait = Math.max(wait, this.nextSlot - now);
    }
    if (tpm) {
      while (this.spendsHead < this.spends.length && this.spends[this.spendsHead].at <= now - this.span) {
        const old = this.spends[this.spendsHead++];
        old.live = false;
        this.spent -= old.tokens;
      }
      if (this.spendsHead > 4096) this.spends.splice(0, this.spendsHead), (this.spendsHead = 0);
      // A request bigger than the whole budget still goes, alone, once the window is empty.
      let over = this.spent + tokens - tpm;
      let tokenWait = 0;
      for (let i = this.spendsHead; over > 0 && i < this.spends.length; i++) {
        over -= this.spends[i].tokens;
        tokenWait = Math.max(tokenWait, this.spends[i].at + this.span - now);
      }
      // Requests in flight may turn out cheaper than estimated: look again soon rather than wait them out.
      if (tokenWait > 0 && this.unsettled > 0) tokenWait = Math.min(tokenWait, RECHECK_MS);
      wait = Math.max(wait, tokenWait);
    }
    return wait;
  }

  private record(tokens: number, now: number): Ticket {
    const { rpm, tpm } = this.options;
    this.options.onStart?.({ at: now, tokens });
    if (rpm) {
      this.starts.push(now);
      const interval = this.span / (rpm * this.factor);
      // Pace on a fixed grid so that late timers are caught up with rather than lost; after idling
      // longer than a sixtieth of the window, start afresh (the window log above bounds any burst).
      this.nextSlot = (now - this.nextSlot > Math.max(interval, this.windowMs / 60) ? now : this.nextSlot) + interval;
    }
    if (!tpm) return { settle() {} };
    const spend: Spend = { at: now, tokens, live: true };
    this.spends.push(spend);
    this.spent += tokens;
    this.unsettled++;
    let settled = false;
    return {
      settle: (actual?: number) => {
        if (settled) return;
        settled = true;
        this.unsettled--;
        if (!spend.live || actual === undefined) return;
        this.spent += actual - spend.tokens;
        spend.tokens = actual;
      },
    };
  }

  /** Waits for every admitted or queued request to finish. */
  async idle(): Promise<void> {
    await this.queue.onIdle();
  }

  close(): void {
    this.closed = true;
    this.queue.clear();
  }
}
