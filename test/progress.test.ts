import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { Progress } from '../core/progress.ts';

/** The lines a Progress writes to a non-terminal stream. */
function linesOf(total: number, ticks: number): string[] {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk) => (text += chunk));
  const progress = new Progress('stage', total, { stream: stream as unknown as NodeJS.WriteStream, intervalSeconds: 3600 });
  progress.tick(ticks);
  progress.finish();
  return text.trim().split('\n');
}

describe('progress lines', () => {
  it('gives the share of a known total', () => {
    expect(linesOf(10, 4).at(-1)).toMatch(/^stage: 4\/10 40% [\d.]+\/s done in [\d.]+s$/);
  });

  it('gives the count alone without a total, or when the work outgrew the estimate (no share over 100 %)', () => {
    expect(linesOf(0, 13).at(-1)).toMatch(/^stage: 13 [\d.]+\/s done in [\d.]+s$/);
    expect(linesOf(10, 80).at(-1)).toMatch(/^stage: 80 [\d.]+\/s done in [\d.]+s$/);
  });
});
