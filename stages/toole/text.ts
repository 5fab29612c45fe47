/** Small text helpers the ToolE stages share: word tokens, spacing-insensitive names, word counts. */

import { splitWords } from '../../core/embed/index.ts';

/** Lower-case alphanumeric tokens: "Vio.com's best-deal" → ["vio", "com", "s", "best", "deal"]. CamelCase is split too. */
export const tokens = splitWords;

/** A name with case, spacing and punctuation removed: "Vio.com" → "viocom", "web_scraper" → "webscraper". */
export function squash(text: string): string {
  return text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');
}

/** Words as a person counts them (whitespace-separated). */
export function wordCount(text: string): number {
  const trimmed = text.trim();
  return trimmed ? trimmed.split(/\s+/).length : 0;
}

const STOP = new Set('a an the and or but of for to in on at by with from into your you our my this that is are be can it its as all any'.split(' '));

/** Tokens that carry meaning (stop words and single letters dropped). */
export function contentTokens(text: string): string[] {
  return tokens(text).filter((t) => t.length > 1 && !STOP.has(t));
}

/**
 * Whether some run of consecutive tokens of `text` spells `name` once case, spacing and punctuation
 * are ignored ("web scraper", "WebScraper" and "web-scraper" all spell `web_scraper`). Matching on
 * token boundaries keeps "kayaking" from matching the tool "Kayak".
 */
export function containsName(text: string, name: string): boolean {
  return spellsName(tokens(text), name);
}

/** `containsName` on text already split by `tokens` (to test many names against one text). */
function spellsName(words: readonly string[], name: string): boolean {
  const target = squash(name);
  if (!target) return false;
  for (let start = 0; start < words.length; start++) {
    let joined = '';
    for (let end = start; end < words.length && joined.length < target.length; end++) {
      joined += words[end];
      if (joined === target) return true;
    }
  }
  return false;
}
