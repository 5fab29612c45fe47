import { z } from 'zod';

/** A slot value located in its utterance: `text.slice(start, end) === value`. */
export const SlotSpan = z.object({
  name: z.string().min(1),
  value: z.string(),
  start: z.number().int().nonnegative(),
  end: z.number().int().nonnegative(),
});
export type SlotSpan = z.infer<typeof SlotSpan>;

/**
 * One annotated user utterance from an intent/slot dataset (SNIPS, ATIS): the input of the
 * grammar-based tool creation. Several intents (ATIS `a#b`) make a single-turn multi-tool sample.
 */
export const AnnotatedUtterance = z.object({
  source: z.string(),
  /** Stable id within the source: file and position. */
  id: z.string(),
  file: z.string(),
  split: z.string(),
  text: z.string().min(1),
  intents: z.array(z.string().min(1)).min(1),
  slots: z.array(SlotSpan),
});
export type AnnotatedUtterance = z.infer<typeof AnnotatedUtterance>;
