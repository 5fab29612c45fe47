import { UnusableAnswer } from '../core/llm/structured.ts';
import { opening } from './answer-text.ts';

/**
 * Reading the numbered lists ToolE's generation prompts ask for ("1. User: …  2. User: …"). Models
 * answer them in many shapes: a preamble ("Sure! Here are ten examples:"), one item per line or all
 * on one line, `1.` / `1)` / `**1.**` / `- ` markers, "User:" prefixes, quotes around each item,
 * items wrapped over several lines, a closing remark. These functions take whatever came back and
 * return the items, never the chatter around them.
 */

const MARKER = /^\s*(?:[-*•]\s*)?(?:\*\*|__)?\(?(\d{1,2})(?:\*\*|__)?\s*(?:[.):\]]|\s-)(?:\*\*|__)?\s+/;
const BULLET = /^\s*[-*•]\s+/;
const SPEAKER = /^(?:\*\*|__)?(?:the\s+)?(?:user(?:\s+(?:input|query|request|says))?|query|input|example(?:\s+\d+)?)(?:\*\*|__)?\s*[:：-]\s*(?:\*\*|__)?\s*/i;
const PREAMBLE = /^(?:sure|certainly|of course|here (?:are|is)|okay|ok|absolutely|below (?:are|is))\b/i;
const QUOTES: [string, string][] = [
  ['"', '"'],
  ['“', '”'],
  ["'", "'"],
  ['‘', '’'],
  ['«', '»'],
];

/** Strips a "User:" prefix, placeholder brackets, markdown emphasis and quotes around a whole item. */
export function cleanItem(raw: string): string {
  let text = raw.replace(/\s+/g, ' ').trim();
  for (let pass = 0; pass < 3; pass++) {
    const before = text;
    text = text.replace(SPEAKER, '').trim();
    text = unwrap(text, '**', '**');
    text = unwrap(text, '__', '__');
    for (const [open, close] of QUOTES) text = unwrap(text, open, close);
    // "[Answer]" placeholders filled in with brackets left around them.
    if (/^\[[^\[\]]+\]\.?$/.test(text)) text = text.replace(/^\[|\]\.?$/g, '').trim();
    if (text === before) break;
  }
  return text;
}

function unwrap(text: string, open: string, close: string): string {
  if (text.length < open.length + close.length || !text.startsWith(open)) return text;
  // A quoted item may be followed by the list's own separator: `"…",` or `"…".`
  const trimmed = text.replace(/[.,;]$/, '');
  if (!trimmed.endsWith(close)) return text;
  const inner = trimmed.slice(open.length, trimmed.length - close.length);
  // Only when the quotes enclose the whole item, not a quoted phrase at each end.
  return inner.includes(close) && open === close ? text : inner.trim();
}

/**
 * Splits a line holding several numbered items ("1. User: a. 2. User: b.") at markers that count
 * up from `first`, so a number inside an item ("version 3. Then …") is not taken for a marker.
 */
function splitInline(line: string, first: number): string[] {
  const markers = [...line.matchAll(/(?:^|\s)(?:\*\*)?(\d{1,2})(?:\*\*)?\s*[.)](?:\*\*)?\s+/g)];
  // When the first item opens with "User:", so do the others: a number not followed by it is text.
  const spoken = (m: RegExpMatchArray) => SPEAKER.test(line.slice(m.index! + m[0].length));
  const needSpeaker = markers.length > 0 && Number(markers[0][1]) === first && spoken(markers[0]);
  const cuts: { at: number; end: number }[] = [];
  let expected = first;
  for (const m of markers) {
    if (Number(m[1]) !== expected || (needSpeaker && !spoken(m))) continue;
    cuts.push({ at: m.index!, end: m.index! + m[0].length });
    expected++;
  }
  if (cuts.length < 2) return [line];
  const items = cuts.map((cut, i) => line.slice(cut.end, cuts[i + 1]?.at ?? line.length));
  const head = line.slice(0, cuts[0].at).trim();
  return head ? [head, ...items] : items;
}

/**
 * The items of a numbered (or bulleted, or one-per-line) list. Numbered markers win when present;
 * lines between two markers continue the item above unless a blank line separates them (then they
 * are commentary). Empty items are dropped.
 */
export function parseNumberedList(text: string): string[] {
  return listItems(text).items;
}

/**
 * The items of an answer that was asked for a list: numbered, bulleted or several numbered items on
 * one line. An answer without any list marker is talk (a refusal, a preamble cut off, prose), not a
 * list: `UnusableAnswer('no_list')`, which the gateway sends back once before rejecting the record.
 */
export function readList(text: string): string[] {
  const { items, marked } = listItems(text);
  if (!marked) throw new UnusableAnswer('no_list', `the answer holds no numbered list ("${opening(text)}")`);
  return items;
}

/** The list's items, and whether list markers set them apart (else they are plain lines). */
function listItems(text: string): { items: string[]; marked: boolean } {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const numbered = lines.filter((line) => MARKER.test(line)).length;
  const items: string[] = [];

  if (numbered >= 1) {
    let current: string[] | null = null;
    let blank = false;
    for (const line of lines) {
      const marker = MARKER.exec(line);
      if (marker) {
        if (current) items.push(current.join(' '));
        current = [line.slice(marker[0].length)];
        blank = false;
      } else if (!line.trim()) {
        blank = true;
      } else if (current && !blank) {
        current.push(line.trim());
      } else if (current && blank) {
        // Text after a blank line: commentary, unless the list goes on with unnumbered items.
        if (BULLET.test(line)) current.push(line.replace(BULLET, ''));
      }
    }
    if (current) items.push(current.join(' '));
    // A single numbered line may hold the whole list.
    const expanded = items.length === 1 ? splitInline(`1. ${items[0]}`, 1) : items;
    return { items: finish(expanded), marked: true };
  }

  const bullets = lines.filter((line) => BULLET.test(line));
  if (bullets.length) return { items: finish(bullets.map((line) => line.replace(BULLET, ''))), marked: true };
  const inline = splitInline(text.replace(/\s+/g, ' ').trim(), 1);
  if (inline.length > 1) return { items: finish(inline.filter((item, i) => i > 0 || !PREAMBLE.test(item.trim()))), marked: true };
  const plain = lines.map((l) => l.trim()).filter(Boolean);
  // A preamble line ending in a colon is not an item.
  return { items: finish(plain.filter((line, i) => !(i === 0 && plain.length > 1 && (line.endsWith(':') || PREAMBLE.test(line))))), marked: false };
}

function finish(items: string[]): string[] {
  return items.map(cleanItem).filter((item) => item.length > 0);
}

/**
 * An item of the form `label: sentence` (or `[label]: sentence`, `**label**: sentence`) split in two;
 * `label` is undefined when the item has no such prefix.
 */
export function splitLabelled(item: string): { label?: string; text: string } {
  const bracketed = /^\[([^\]]{1,80})\]\s*[:：-]?\s*(.+)$/.exec(item);
  if (bracketed) return { label: bracketed[1].trim(), text: cleanItem(bracketed[2]) };
  const bold = /^\*\*([^*]{1,80})\*\*\s*[:：-]?\s*(.+)$/.exec(item);
  if (bold) return { label: bold[1].replace(/[:：]$/, '').trim(), text: cleanItem(bold[2]) };
  const plain = /^([^:："“?!.]{1,60})[:：]\s+(.+)$/.exec(item);
  // A label is a short phrase; "What does it mean: …" or "Please note: …" is part of the query.
  const sentence = /^(?:what|how|why|when|where|who|which|whose|can|could|would|will|should|is|are|do|does|did|please|i|i'm|my|we|hey|hi|hello|note)\b/i;
  if (plain && plain[1].trim().split(/\s+/).length <= 6 && !sentence.test(plain[1].trim())) return { label: plain[1].trim(), text: cleanItem(plain[2]) };
  return { text: item };
}

/** A leading or trailing `(parallel)` / `[causal]` / `Causal:` tag of a multi-tool query, and the query without it. */
export function splitUsageTag(item: string): { usage?: 'parallel' | 'causal'; text: string } {
  const lead = /^[\[(]?\s*(parallel|causal)(?:\s+(?:use|usage))?\s*[\])]?\s*[:：-]?\s+(.+)$/i.exec(item);
  if (lead) return { usage: lead[1].toLowerCase() as 'parallel' | 'causal', text: cleanItem(lead[2]) };
  const tail = /^(.+?)\s*[\[(]\s*(parallel|causal)(?:\s+(?:use|usage))?\s*[\])]\.?$/i.exec(item);
  if (tail) return { usage: tail[2].toLowerCase() as 'parallel' | 'causal', text: cleanItem(tail[1]) };
  return { text: item };
}
