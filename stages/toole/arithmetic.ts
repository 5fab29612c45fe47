/**
 * Simple-arithmetic detection (paper Appendix A.3, "calculation-related tools"): "What is 7 * 9?" or
 * "sin 30 degrees" needs no tool, so such queries of a calculation tool go to review; complex
 * calculations ("3.0117 ^ 3.82488", integrals, a loan schedule) stay. A heuristic: it flags, a
 * person decides.
 */

const NUMBER = String.raw`\d+(?:[.,]\d+)?`;
const OPERATOR = String.raw`(?:[-+*/x×÷^]|\*\*|plus|minus|times|multiplied by|divided by|over|to the power of)`;
const EXPRESSION = new RegExp(String.raw`\(?\s*${NUMBER}\s*\)?(?:\s*${OPERATOR}\s*\(?\s*${NUMBER}\s*\)?)+`, 'gi');
const FUNCTION_OF = new RegExp(String.raw`\b(?:square root|cube root|sqrt|sin(?:e)?|cos(?:ine)?|tan(?:gent)?|log|ln|\d+\s*%|\d+\s*percent|half|double|square|cube)\s*(?:of\s*)?\(?\s*${NUMBER}\s*\)?(?:\s*degrees?)?(?:\s*(?:of|in)\s*${NUMBER})?`, 'gi');
const COMPLEX = /\b(integra(?:l|te)|derivative|differentiat|matri(?:x|ces)|eigen|solve|equations?|system of|limit|series|probabilit|regression|standard deviation|variance|compound|mortgage|amorti[sz]|loan|interest rate|factor(?:ise|ize)|prime factor|polynomial|roots of|statistic|optimi[sz]|simulate|plot|graph)\w*/i;
/** Letters next to an operator mean algebra ("2x + 3 = 7"), not arithmetic. */
const VARIABLE = /\b\d*[a-wyz]\s*[-+*/^=]\s*\d|\d\s*[a-wyz]\b(?!\w)/i;

function operands(expression: string): string[] {
  return expression.match(/\d+(?:[.,]\d+)?/g) ?? [];
}

function smallNumber(text: string): boolean {
  const [whole, fraction = ''] = text.replace(',', '.').split('.');
  return whole.replace(/^0+/, '').length <= 4 && fraction.length <= 2;
}

/**
 * Whether a query is a simple calculation an LLM can do unaided: a short query around an
 * expression of at most three operations on small numbers (≤ 4 digits, ≤ 2 decimals), or one basic
 * function of a small number, with nothing that makes it a harder problem.
 */
export function isSimpleArithmetic(query: string, options: { maxWords?: number; maxOperations?: number } = {}): boolean {
  const maxWords = options.maxWords ?? 25;
  const maxOperations = options.maxOperations ?? 3;
  if (query.trim().split(/\s+/).length > maxWords) return false;
  if (COMPLEX.test(query) || VARIABLE.test(query)) return false;
  const spans = [...(query.match(EXPRESSION) ?? []), ...(query.match(FUNCTION_OF) ?? [])];
  if (!spans.length) return false;
  return spans.every((span) => {
    const numbers = operands(span);
    return numbers.length >= 1 && numbers.length - 1 <= maxOperations && numbers.every(smallNumber);
  });
}
