import type { Sample } from '../../core/records.ts';

/** The first user turn holds the NesTools task. */
export function withTask(sample: Sample, task: string): Sample {
  let done = false;
  const dialogue = sample.dialogue.map((turn) => {
    if (done || turn.role !== 'user') return turn;
    done = true;
    return { ...turn, content: task };
  });
  return { ...sample, dialogue: done ? dialogue : [{ role: 'user', content: task }, ...dialogue] };
}
