import { UnusableAnswer } from '../core/llm/structured.ts';

/**
 * Telling a model's talk from the text a prompt asked for (a rewritten message, a task). A refusal
 * in words ("I cannot help with that request."), a preamble with nothing after it ("Sure! Here is
 * what you asked:") and markup or code where a sentence belongs are not data: the reader throws
 * `UnusableAnswer`, so the gateway asks once more and then rejects the record with the reason.
 */

const APOLOGY = String.raw`(?:(?:I'm|I am) sorry|sorry|unfortunately|I apologi[sz]e)[,.!]?\s*(?:but\s+)?`;
/** "I cannot help with that request.", "I'm sorry, but I can't assist with this." — not "I can't help but wonder …". */
const REFUSAL = new RegExp(
  String.raw`^(?:${APOLOGY})?(?:I|we)\s*(?:cannot|can't|can not|won't|will not|am unable to|'m unable to|am not able to|'m not able to|must decline to)\s+(?:help|assist|comply|fulfil+|complete|provide|do|generate|create|write|rewrite|process|answer)\b(?:\s+(?:you\s+)?with)?\s+(?:this|that|the|your|these|those)\b`,
  'i',
);
const AS_AN_AI = /^as an AI\b/i;
/**
 * Openers addressed to the requester, not part of the answer: "Sure! …", "Certainly, …", "Here is
 * the rewritten message:". A user's own "Here is my budget: …" is no preamble.
 */
const PREAMBLE = /^(?:sure|certainly|of course|absolutely)\b|^(?:here(?:'s| is| are)|below (?:is|are))\b[^:\n]*?\b(?:rewritten|revised|rewrite|message|query|queries|task|version|examples?|what you asked|result|answer|your)\b/i;

/** Whether an answer is a refusal in words. */
export function isRefusal(answer: string): boolean {
  const text = answer.trim();
  return REFUSAL.test(text) || AS_AN_AI.test(text);
}

/** The first characters of a text on one line, for messages. */
export function opening(text: string, length = 80): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > length ? `${flat.slice(0, length)}…` : flat;
}

/**
 * The text an answer holds, read by `read` (which strips the prompt's usual wrapping: list
 * markers, quotes, labels): the whole answer, or what follows a preamble's colon or line break.
 * Throws `UnusableAnswer('chatter')` for a refusal, a preamble with nothing after it, and text that
 * is no sentence (no word, or markup, JSON or code where a sentence belongs).
 */
export function answerText(answer: string, what: string, read: (text: string) => string): string {
  const trimmed = answer.trim();
  if (isRefusal(trimmed)) throw new UnusableAnswer('chatter', `the answer is a refusal, not ${what} ("${opening(trimmed)}")`);
  let rest = answer;
  if (PREAMBLE.test(trimmed)) {
    const cut = trimmed.search(/[:\n]/);
    rest = cut >= 0 ? trimmed.slice(cut + 1) : '';
  }
  const text = read(rest);
  const start = text.trim();
  if (!/\p{L}{2}/u.test(start) || /^[{<`]/.test(start)) throw new UnusableAnswer('chatter', `the answer holds no ${what}, only talk around it ("${opening(trimmed)}")`);
  return text;
}
