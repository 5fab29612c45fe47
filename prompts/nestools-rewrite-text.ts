import { answerText } from './answer-text.ts';

/**
 * An LLM's rewritten task as plain text: without a code fence, a leading label such as
 * "Rewritten task:" or "Result:", or quotes around the whole answer.
 */
export function cleanRewrittenTask(answer: string): string {
  let text = answer.trim();
  if (text.startsWith('```')) text = text.replace(/^```[^\n]*\n?/, '').replace(/\n?```\s*$/, '');
  text = text.replace(/^(rewritten task|result|task|task description|answer)\s*:\s*/i, '').trim();
  const quoted = (open: string, close: string) => text.length > 1 && text.startsWith(open) && text.endsWith(close) && !text.slice(1, -1).includes(open);
  if (quoted('"', '"') || quoted('\u201c', '\u201d') || quoted("'", "'")) text = text.slice(1, -1).trim();
  return text.replace(/\s+/g, ' ');
}

/** The rewritten task of an answer; a refusal or bare talk is `UnusableAnswer('chatter')` (see answer-text.ts). */
export function readRewrittenTask(answer: string): string {
  return answerText(answer, 'rewritten task', cleanRewrittenTask);
}
