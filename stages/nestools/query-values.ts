import { isRef, type ArgValue, type Call, type Json } from '../../core/records.ts';

/**
 * Whether the literal argument values of a chain appear in its task text, compared normalised:
 * case and punctuation, numbers however written (`1,000`, `1000.0`, `five`, `5%` for 0.05), dates
 * however written (`2023-10-08`, `October 8th, 2023`, `8 Oct 2023`, `10/08/2023`). Booleans and
 * nulls are left out: a task implies them rather than states them.
 */

/** `exact`: verbatim (any case); `normalised`: same after normalising; `loose`: most of its words. */
export type Presence = 'exact' | 'normalised' | 'loose' | 'missing';

export interface ValueMention {
  callId: string;
  param: string;
  value: Json;
  presence: Presence;
}

const NUMBER_WORDS: Record<string, number> = {
  zero: 0, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10, eleven: 11, twelve: 12,
  thirteen: 13, fourteen: 14, fifteen: 15, sixteen: 16, seventeen: 17, eighteen: 18, nineteen: 19, twenty: 20, thirty: 30,
  forty: 40, fifty: 50, sixty: 60, seventy: 70, eighty: 80, ninety: 90, hundred: 100, dozen: 12, single: 1, double: 2, twice: 2,
  first: 1, second: 2, third: 3, fourth: 4, fifth: 5, half: 0.5, once: 1, triple: 3, pair: 2, couple: 2,
};
const SCALES: Record<string, number> = { thousand: 1e3, k: 1e3, million: 1e6, m: 1e6, billion: 1e9, bn: 1e9, b: 1e9 };

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];

const STOPWORDS = new Set('a an the of for to in on at by with and or from into per as is are be this that its it'.split(' '));

/** Lower case, quotes dropped, punctuation to spaces (keeping `.` `,` `:` `/` inside numbers), single spaces. */
export function normaliseText(text: string): string {
  return text
    .toLowerCase()
    .replace(/[\u2018\u2019\u201c\u201d"'`]/g, '')
    .replace(/(\d)[,](\d{3})/g, '$1$2')
    .replace(/[^\p{L}\p{N}.:/%$-]+/gu, ' ')
    .replace(/(?<!\d)[.:/-]|[.:/-](?!\d)/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

function stem(word: string): string {
  return word.replace(/(ies)$/, 'y').replace(/(ing|ed|es|s)$/, '').replace(/(.)\1$/, '$1');
}

function contentWords(text: string): string[] {
  return normaliseText(text)
    .split(' ')
    .filter((word) => word && !STOPWORDS.has(word))
    .map(stem);
}

/**
 * A task's text with the forms the presence checks compare against, each made once on first use:
 * a chain checks every one of its values against the same task.
 */
class TaskText {
  private forms: { lower?: string; normalised?: string; spaced?: string; numbers?: number[]; words?: Set<string> } = {};

  constructor(readonly text: string) {}

  get lower(): string {
    return (this.forms.lower ??= this.text.toLowerCase());
  }

  get normalised(): string {
    return (this.forms.normalised ??= normaliseText(this.text));
  }

  /** Normalised with `_` read as a space. */
  get spaced(): string {
    return (this.forms.spaced ??= normaliseText(this.text.replace(/_/g, ' ')));
  }

  get numbers(): number[] {
    return (this.forms.numbers ??= numbersIn(this.text));
  }

  get contentWords(): Set<string> {
    return (this.forms.words ??= new Set(contentWords(this.text)));
  }
}

/** Every number the text states, in digits or words, with scales and percentages. */
export function numbersIn(text: string): number[] {
  const out: number[] = [];
  const tokens = text
    .toLowerCase()
    .replace(/(\d),(\d{3})/g, '$1$2')
    .replace(/(\d),(\d{3})/g, '$1$2')
    .replace(/(?<=[a-z])-|-(?=[a-z])/g, ' ')
    .split(/[^a-z0-9.%$-]+/)
    .filter(Boolean);
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i].replace(/^\$/, '').replace(/\.$/, '');
    const match = /^-?\d+(\.\d+)?/.exec(token);
    let value: number | undefined = match ? Number(match[0]) : NUMBER_WORDS[token];
    if (value === undefined) continue;
    const rest = match ? token.slice(match[0].length) : '';
    const suffix = rest.replace(/^(st|nd|rd|th)$/, '');
    if (SCALES[suffix]) value *= SCALES[suffix];
    else if (SCALES[tokens[i + 1]] && tokens[i + 1].length > 1) value *= SCALES[tokens[i + 1]];
    if (tokens[i + 1] === 'hundred' && value < 100) value *= 100;
    out.push(value);
    if (rest === '%' || tokens[i + 1] === 'percent' || tokens[i + 1] === '%') out.push(value / 100);
  }
  return out;
}

function sameNumber(a: number, b: number): boolean {
  return Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
}

function numberPresent(value: number, text: TaskText): boolean {
  return text.numbers.some((n) => sameNumber(n, value));
}

/** `2023-10-08`, `2023/10/08`, `2023-10-08T14:00` → year, month, day. */
function parseIsoDate(value: string): { year: number; month: number; day: number; rest: string } | undefined {
  const match = /^(\d{4})[-/](\d{1,2})[-/](\d{1,2})(.*)$/.exec(value.trim());
  if (!match) return undefined;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (month < 1 || month > 12 || day < 1 || day > 31) return undefined;
  return { year, month, day, rest: match[4].replace(/^[T ]/, '').trim() };
}

function monthNamed(word: string, month: string): boolean {
  return word === month || (word.length >= 3 && month.startsWith(word));
}

/** `2024-02` → "February 2024" (or "Feb 2024", "02/2024"). */
function monthPresent(value: string, text: TaskText): boolean {
  const match = /^(\d{4})-(\d{1,2})$/.exec(value.trim());
  const month = match ? MONTHS[Number(match[2]) - 1] : undefined;
  if (!match || !month) return false;
  const lower = text.normalised;
  if (lower.includes(`${match[2]}/${match[1]}`) || lower.includes(`${Number(match[2])}/${match[1]}`)) return true;
  const words = lower.split(' ');
  return words.includes(match[1]) && words.some((word) => monthNamed(word, month));
}

function datePresent(value: string, text: TaskText): boolean {
  if (monthPresent(value, text)) return true;
  const date = parseIsoDate(value);
  if (!date) return false;
  const lower = text.normalised;
  const month = MONTHS[date.month - 1];
  const numeric = [
    `${date.month}/${date.day}/${date.year}`,
    `${String(date.month).padStart(2, '0')}/${String(date.day).padStart(2, '0')}/${date.year}`,
    `${date.day}/${date.month}/${date.year}`,
    `${String(date.day).padStart(2, '0')}/${String(date.month).padStart(2, '0')}/${date.year}`,
    `${date.year}/${String(date.month).padStart(2, '0')}/${String(date.day).padStart(2, '0')}`,
    `${date.day}.${date.month}.${date.year}`,
  ];
  if (numeric.some((form) => lower.includes(form))) return true;
  // "october 8th 2023", "8 oct 2023", "the 8th of october": the month near the day, the year anywhere.
  const words = lower.split(' ');
  const yearStated = words.includes(String(date.year)) || !/\b(19|20)\d{2}\b/.test(lower);
  for (let i = 0; i < words.length; i++) {
    if (!monthNamed(words[i], month)) continue;
    const near = words.slice(Math.max(0, i - 3), i + 3);
    if (near.some((word) => Number.parseInt(word, 10) === date.day && /^\d{1,2}(st|nd|rd|th)?$/.test(word)) && yearStated) return true;
  }
  return false;
}

/** How a string value is present in the text. */
function stringPresence(value: string, text: TaskText): Presence {
  if (text.lower.includes(value.toLowerCase())) return 'exact';
  const normValue = normaliseText(value.replace(/_/g, ' '));
  const normText = text.spaced;
  if (!normValue) return 'exact';
  if (` ${normText} `.includes(` ${normValue} `) || normText.replace(/ /g, '').includes(normValue.replace(/ /g, ''))) return 'normalised';
  if (datePresent(value, text)) return 'normalised';
  const asNumber = Number(value.replace(/,/g, ''));
  if (value.trim() && Number.isFinite(asNumber)) return numberPresent(asNumber, text) ? 'normalised' : 'missing';
  // A date is there in some form or not at all: sharing its year is not a loose match.
  if (parseIsoDate(value) || /^\d{4}-\d{1,2}$/.test(value.trim())) return 'missing';
  const wanted = contentWords(value);
  if (!wanted.length) return 'normalised';
  const have = text.contentWords;
  const alphabetic = (word: string) => /^\p{L}{4,}$/u.test(word);
  const hits = wanted.filter((word) => have.has(word) || (alphabetic(word) && [...have].some((h) => alphabetic(h) && (h.startsWith(word) || word.startsWith(h)))));
  return hits.length / wanted.length >= 0.6 ? 'loose' : 'missing';
}

/** How one leaf value is present in the text (booleans and nulls always count as present). */
export function presenceOf(value: Json, text: string | TaskText): Presence {
  if (typeof text === 'string') return presenceOf(value, new TaskText(text));
  if (value === null || typeof value === 'boolean') return 'exact';
  if (typeof value === 'number') return numberPresent(value, text) ? 'normalised' : 'missing';
  if (typeof value === 'string') return stringPresence(value, text);
  return 'exact';
}

const RANK: Record<Presence, number> = { exact: 0, normalised: 1, loose: 2, missing: 3 };

/** The weakest presence among the leaves of a value (a list is present when all its items are). */
function worstPresence(value: ArgValue, text: TaskText): Presence {
  if (isRef(value)) return 'exact';
  if (Array.isArray(value)) return value.map((item) => worstPresence(item, text)).reduce((a, b) => (RANK[b] > RANK[a] ? b : a), 'exact' as Presence);
  if (value && typeof value === 'object') {
    return Object.values(value).map((item) => worstPresence(item as ArgValue, text)).reduce((a, b) => (RANK[b] > RANK[a] ? b : a), 'exact' as Presence);
  }
  return presenceOf(value as Json, text);
}

function hasLiteral(value: ArgValue): boolean {
  if (isRef(value)) return false;
  if (Array.isArray(value)) return value.some(hasLiteral);
  if (value && typeof value === 'object') return Object.values(value).some((item) => hasLiteral(item as ArgValue));
  return value !== null && typeof value !== 'boolean' && value !== '';
}

/** Every literal argument of the chain and how present it is in the task. */
export function valueMentions(task: string, calls: Call[]): ValueMention[] {
  const text = new TaskText(task);
  const out: ValueMention[] = [];
  for (const call of calls) {
    for (const [param, value] of Object.entries(call.arguments)) {
      if (!hasLiteral(value)) continue;
      out.push({ callId: call.id, param, value: stripRefs(value), presence: worstPresence(value, text) });
    }
  }
  return out;
}

function stripRefs(value: ArgValue): Json {
  if (isRef(value)) return `<${value.$ref}>`;
  if (Array.isArray(value)) return value.map(stripRefs);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, stripRefs(v as ArgValue)]));
  return value;
}
