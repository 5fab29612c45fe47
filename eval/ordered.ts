/**
 * `answer(item)` for each item, at most `window` at once, given back in the items' order: a sliding
 * window (an item that finishes lets the next start; none waits for the slowest of a batch), with at
 * most `ahead` items taken from `items` and not yet given back, so memory follows the window, not the
 * number of items. Items are pulled from `items` only as room frees up.
 */
export async function* inOrder<T, U>(items: Iterable<T>, answer: (item: T) => Promise<U>, options: { window: number; ahead: number }): AsyncGenerator<[T, U]> {
  type Entry = { item: T; settled: boolean; value?: U; error?: unknown; failed?: boolean };
  const source = items[Symbol.iterator]();
  const started: Entry[] = [];
  let running = 0;
  let exhausted = false;
  let wake: (() => void) | null = null;
  const fill = () => {
    while (!exhausted && running < options.window && started.length < options.ahead) {
      const next = source.next();
      if (next.done) {
        exhausted = true;
        break;
      }
      const entry: Entry = { item: next.value, settled: false };
      started.push(entry);
      running++;
      answer(next.value).then(
        (value) => settle(entry, { value }),
        (error: unknown) => settle(entry, { error, failed: true }),
      );
    }
  };
  const settle = (entry: Entry, outcome: Partial<Entry>) => {
    Object.assign(entry, outcome, { settled: true });
    running--;
    wake?.();
  };
  try {
    fill();
    while (started.length) {
      if (!started[0].settled) {
        await new Promise<void>((resolve) => (wake = resolve));
        wake = null;
        fill();
        continue;
      }
      const entry = started.shift()!;
      if (entry.failed) throw entry.error;
      yield [entry.item, entry.value as U];
      fill();
    }
  } finally {
    source.return?.();
  }
}
