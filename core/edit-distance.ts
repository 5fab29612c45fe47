import { createRequire } from 'node:module';

/** fast-levenshtein's API (a CommonJS package). */
type FastLevenshtein = typeof import('fast-levenshtein');

let loaded: FastLevenshtein | undefined;

/**
 * The Levenshtein distance of two strings (fast-levenshtein), its package loaded at the first call:
 * loading it makes an ICU collator (5–10 ms of CPU) that a run which compares no strings (an
 * `run mtu` whose config keys are all known) has no use for.
 */
export function editDistance(a: string, b: string): number {
  loaded ??= createRequire(import.meta.url)('fast-levenshtein') as FastLevenshtein;
  return loaded.get(a, b);
}
