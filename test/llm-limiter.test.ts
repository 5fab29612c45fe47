import { describe, expect, it } from 'vitest';
import { RequestLimiter } from '../core/llm/limiter.ts';

describe('RequestLimiter', () => {
  it('halves the pool once per burst of 429s and recovers it step by step', () => {
    let now = 0;
    const logs: string[] = [];
    const limiter = new RequestLimiter({ concurrency: 8, rpm: 600, recoverStepMs: 1000, now: () => now, log: (m) => logs.push(m) });
    limiter.rateLimited(2000);
    expect(limiter.concurrency).toBe(4);
    limiter.rateLimited(2000); // the same burst
    expect(limiter.concurrency).toBe(4);
    now = 2500;
    limiter.rateLimited(500);
    expect(limiter.concurrency).toBe(2);
    expect(limiter.speed).toBe(0.25);
    expect(logs[1]).toMatch(/slowing to 25% \(concurrency 2, 150 rpm\)/);

    now = 3000;
    limiter.succeeded(); // too soon after the last change
    expect(limiter.speed).toBe(0.25);
    const speeds: number[] = [];
    for (let step = 1; step <= 7; step++) {
      now = 2500 + step * 1000;
      limiter.succeeded();
      speeds.push(limiter.speed);
    }
    expect(speeds).toEqual([0.375, 0.5, 0.625, 0.75, 0.875, 1, 1]);
    expect(limiter.concurrency).toBe(8);
    expect(logs.at(-1)).toBe('rate limit cleared: back to full speed');
  });

  it('corrects the token budget from what requests really used', async () => {
    const limiter = new RequestLimiter({ concurrency: 8, tpm: 100, windowMs: 60_000 });
    const admitted: number[] = [];
    // Each estimated at 60 tokens, really 10: without correction only one would start this minute.
    await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        limiter.run(async (ticket) => {
          admitted.push(i);
          ticket.settle(10);
        }, { tokens: 60 }),
      ),
    );
    expect(admitted).toEqual([0, 1, 2, 3]);
  });

  it('lets a request larger than the whole budget go alone', async () => {
    const limiter = new RequestLimiter({ concurrency: 2, tpm: 100 });
    const value = await limiter.run(async () => 'done', { tokens: 500 });
    expect(value).toBe('done');
  });

  it('starts higher priorities first', async () => {
    const limiter = new RequestLimiter({ concurrency: 1 });
    const order: string[] = [];
    let release!: () => void;
    const first = limiter.run(() => new Promise<void>((resolve) => (release = resolve)), { tokens: 0 });
    const low = limiter.run(async () => void order.push('fresh'), { tokens: 0, priority: 0 });
    const high = limiter.run(async () => void order.push('retry'), { tokens: 0, priority: 2 });
    await new Promise((resolve) => setTimeout(resolve, 10));
    release();
    await Promise.all([first, low, high]);
    expect(order).toEqual(['retry', 'fresh']);
  });
});
