import type { Json } from '../core/records.ts';

/**
 * Is each argument of a call stated in the conversation so far (the user's words, the assistant's
 * earlier turns, earlier results, the conversation's metadata)? ToolTalk's conversations are written
 * so that a model could make each call from what it was told; an argument that comes from nowhere
 * (an invented id, a time nobody said) makes a ground-truth call no model can match.
 */

export interface Grounding {
  param: string;
  value: Json;
  /** `exact`: the value appears; `loose`: a paraphrase was accepted (relative date, most of a text's words); `missing`. */
  how: 'exact' | 'loose' | 'missing';
}

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
const RELATIVE_DAYS = /\b(today|tonight|tomorrow|yesterday|this (morning|afternoon|evening|week|weekend)|next (week|month|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|monday|tuesday|wednesday|thursday|friday|saturday|sunday|in \w+ days|day after)\b/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;
const TIME = /^(\d{2}):(\d{2}):(\d{2})$/;

function normalise(text: string): string {
  return text.toLowerCase().replace(/[“”"‘’`]/g, "'").replace(/\s+/g, ' ');
}

function timeMentioned(hh: string, mm: string, text: string): boolean {
  const h = Number(hh);
  const h12 = ((h + 11) % 12) + 1;
  const suffix = h < 12 ? '(am|a\\.m\\.|in the morning)' : '(pm|p\\.m\\.|in the (afternoon|evening)|tonight)';
  if (text.includes(`${hh}:${mm}`) || new RegExp(`\\b${h}:${mm}\\b`).test(text)) return true;
  if (new RegExp(`\\b${h12}:${mm}\\s*${suffix}`).test(text) || new RegExp(`\\b${h12}:${mm}\\b`).test(text)) return true;
  if (mm === '00' && new RegExp(`\\b${h12}\\s*(${suffix.slice(1, -1)}|o'clock)`).test(text)) return true;
  if (mm === '00' && h === 12 && /\b(noon|midday)\b/.test(text)) return true;
  return mm === '30' && new RegExp(`\\bhalf past ${h12}\\b`).test(text);
}

function dateMention(year: string, month: string, day: string, text: string): 'exact' | 'loose' | 'missing' {
  if (text.includes(`${year}-${month}-${day}`)) return 'exact';
  const name = MONTHS[Number(month) - 1];
  const d = Number(day);
  if (new RegExp(`\\b(${name}|${name.slice(0, 3)})\\.? ${d}(st|nd|rd|th)?\\b|\\b${d}(st|nd|rd|th)? (of )?(${name}|${name.slice(0, 3)})\\b`).test(text)) return 'exact';
  if (new RegExp(`\\b${Number(month)}/${d}\\b`).test(text)) return 'exact';
  return RELATIVE_DAYS.test(text) ? 'loose' : 'missing';
}

const STOP = new Set(['the', 'a', 'an', 'and', 'or', 'to', 'of', 'for', 'in', 'on', 'at', 'is', 'are', 'be', 'i', 'you', 'we', 'it', 'my', 'your', 'that', 'this', 'with']);

function words(text: string): string[] {
  return normalise(text).split(/[^a-z0-9']+/).filter((w) => w && !STOP.has(w));
}

/** How one string value is stated in `context` (lower-cased, whitespace folded). */
export function groundString(value: string, context: string): Grounding['how'] {
  const text = normalise(value);
  if (context.includes(text)) return 'exact';
  const dateTime = DATE_TIME.exec(value);
  if (dateTime) {
    const [, y, mo, d, hh, mm, ss] = dateTime;
    const date = dateMention(y, mo, d, context);
    const wholeDay = (hh === '00' && mm === '00' && ss === '00') || (hh === '23' && mm === '59' && ss === '59');
    const time = wholeDay || timeMentioned(hh, mm, context);
    return date === 'missing' || !time ? 'missing' : date;
  }
  const time = TIME.exec(value);
  if (time) return timeMentioned(time[1], time[2], context) ? 'exact' : 'missing';
  const tokens = words(value);
  if (tokens.length >= 4) {
    const seen = new Set(words(context));
    const share = tokens.filter((w) => seen.has(w)).length / tokens.length;
    return share === 1 ? 'exact' : share >= 0.6 ? 'loose' : 'missing';
  }
  return 'missing';
}

/** Every leaf argument with how it is stated; `skip` names parameters that take a choice from an enum. */
export function groundCall(args: Record<string, Json>, context: string, skip: ReadonlySet<string> = new Set()): Grounding[] {
  const out: Grounding[] = [];
  const folded = normalise(context);
  const visit = (param: string, value: Json) => {
    if (Array.isArray(value)) return value.forEach((item) => visit(param, item));
    if (value === null || typeof value === 'boolean' || skip.has(param)) return;
    if (typeof value === 'number') return void out.push({ param, value, how: folded.includes(String(value)) ? 'exact' : 'missing' });
    if (typeof value === 'string') return void out.push({ param, value, how: groundString(value, folded) });
    for (const [key, inner] of Object.entries(value)) visit(`${param}.${key}`, inner);
  };
  for (const [param, value] of Object.entries(args)) visit(param, value);
  return out;
}
