/**
 * NesTools placeholders `API_call_k`: the k-th return value of a chain, numbered 0, 1, 2, … globally
 * in call and response order. (No imports: the checker loads this without the record schemas.)
 */

const PLACEHOLDER_PREFIX = 'API_call_';

/** `API_call_12` → 12; undefined for anything else. */
export function placeholderNumber(value: unknown): number | undefined {
  if (typeof value !== 'string' || !value.startsWith(PLACEHOLDER_PREFIX)) return undefined;
  const digits = value.slice(PLACEHOLDER_PREFIX.length);
  return /^(0|[1-9]\d*)$/.test(digits) ? Number(digits) : undefined;
}

export function placeholder(n: number): string {
  return `${PLACEHOLDER_PREFIX}${n}`;
}
