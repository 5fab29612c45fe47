import { isJsonObject, type Json } from './records.ts';

/**
 * Ranges given as two arguments — `start_date` / `end_date`, `from` / `to`, `min_price` /
 * `max_price`, `check_in` / `check_out`, `departure_date` / `return_date`, `begin_time` /
 * `finish_time` — must not end before they start. Pairs are found by their names (the same name
 * with a start word in one and its end word in the other, in any of snake_case, camelCase or
 * kebab-case), their values read as numbers, dates, date-times or times of day in the common
 * formats; a pair whose values are not both of one comparable kind is not judged.
 */

/** A value read as a point on a line: days for dates, milliseconds for date-times, seconds for times of day. */
export interface Point {
  kind: 'number' | 'date' | 'datetime' | 'time';
  value: number;
}

/** Start word → the end words it pairs with, and whether two times of day (no date) are compared. */
interface Marker {
  start: string[];
  ends: string[][];
  /** Times of day are compared: a start/end of one event; not a check-in and check-out, or a departure and return, which fall on different days. */
  timeOfDay: boolean;
}

const MARKERS: Marker[] = [
  { start: ['start'], ends: [['end'], ['finish'], ['stop']], timeOfDay: true },
  { start: ['begin'], ends: [['end'], ['finish']], timeOfDay: true },
  { start: ['from'], ends: [['to'], ['until'], ['till']], timeOfDay: true },
  { start: ['since'], ends: [['until'], ['till']], timeOfDay: true },
  { start: ['earliest'], ends: [['latest']], timeOfDay: true },
  { start: ['min'], ends: [['max']], timeOfDay: true },
  { start: ['minimum'], ends: [['maximum']], timeOfDay: true },
  { start: ['lower'], ends: [['upper']], timeOfDay: false },
  { start: ['check', 'in'], ends: [['check', 'out']], timeOfDay: false },
  { start: ['checkin'], ends: [['checkout']], timeOfDay: false },
  { start: ['departure'], ends: [['return']], timeOfDay: false },
  { start: ['depart'], ends: [['return']], timeOfDay: false },
  { start: ['outbound'], ends: [['return'], ['inbound']], timeOfDay: false },
];

/** `checkInDate`, `check_in_date`, `check-in-date` → `check in date`. */
export function nameWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

/** A pair of argument names of one object that give a range, start first. */
export interface RangePair {
  start: string;
  end: string;
  timeOfDay: boolean;
}

/** The range pairs among an object's keys. */
export function rangePairs(keys: readonly string[]): RangePair[] {
  const byWords = new Map(keys.map((key) => [wordsOf(key).join(' '), key]));
  const pairs: RangePair[] = [];
  const seen = new Set<string>();
  for (const key of keys) {
    const words = wordsOf(key);
    for (const marker of MARKERS) {
      for (let at = indexOfRun(words, marker.start, 0); at !== -1; at = indexOfRun(words, marker.start, at + 1)) {
        for (const end of marker.ends) {
          const other = byWords.get([...words.slice(0, at), ...end, ...words.slice(at + marker.start.length)].join(' '));
          if (!other || other === key || seen.has(`${key}\u0000${other}`)) continue;
          seen.add(`${key}\u0000${other}`);
          pairs.push({ start: key, end: other, timeOfDay: marker.timeOfDay });
        }
      }
    }
  }
  return pairs;
}

/**
 * What is read of argument names, by name: a version's calls use a few hundred names again and
 * again, so each is split once. Bounded: past the limit the memo starts again.
 */
class NameMemo<T> {
  private static readonly LIMIT = 10_000;
  private readonly values = new Map<string, T>();

  constructor(private readonly make: (name: string) => T) {}

  get(name: string): T {
    let value = this.values.get(name);
    if (value === undefined) {
      if (this.values.size >= NameMemo.LIMIT) this.values.clear();
      this.values.set(name, (value = this.make(name)));
    }
    return value;
  }
}

const WORDS = new NameMemo((name) => Object.freeze(nameWords(name)) as string[]);
/** Whether a name holds a start word of a range (`start`, `check in`, …): an object without one has no range pair. */
const STARTS_RANGE = new NameMemo((name) => {
  const words = WORDS.get(name);
  return MARKERS.some((marker) => indexOfRun(words, marker.start, 0) !== -1);
});
/** The range pairs of a set of keys (joined by NUL), made once. */
const PAIRS = new NameMemo((joined) => Object.freeze(rangePairs(joined.split('\u0000'))) as readonly RangePair[]);
const NO_PAIRS: readonly RangePair[] = Object.freeze([]);

/** A name's words (`nameWords`), shared: not to be edited. */
function wordsOf(name: string): readonly string[] {
  return WORDS.get(name);
}

/** The range pairs among an object's own keys; nothing made when none of its keys starts a range (the common case). */
function pairsOf(object: Record<string, Json>): readonly RangePair[] {
  // An inherited key only sends the object to the exact reading below.
  let starts = false;
  for (const key in object) {
    if (STARTS_RANGE.get(key)) {
      starts = true;
      break;
    }
  }
  if (!starts) return NO_PAIRS;
  const keys = Object.keys(object);
  return keys.some((key) => key.includes('\u0000')) ? rangePairs(keys) : PAIRS.get(keys.join('\u0000'));
}

function indexOfRun(words: readonly string[], run: readonly string[], from: number): number {
  for (let i = from; i + run.length <= words.length; i++) if (run.every((w, k) => words[i + k] === w)) return i;
  return -1;
}

// ---------------------------------------------------------------- reading values

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const MONTH = String.raw`(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?`;
const ORDINAL = String.raw`(\d{1,2})(?:st|nd|rd|th)?`;
const MONTH_FIRST = new RegExp(String.raw`^(?:[a-z]+,?\s+)?${MONTH}\s+${ORDINAL},?\s+(\d{4})$`, 'i');
const DAY_FIRST = new RegExp(String.raw`^(?:[a-z]+,?\s+)?${ORDINAL}\s+(?:of\s+)?${MONTH},?\s+(\d{4})$`, 'i');
const TIME = /^(\d{1,2})(?::(\d{2})(?::(\d{2})(?:\.\d+)?)?)?\s*([ap])?\.?(?:m\.?)?$/i;
const ZONE = /(?:\s*(Z|[+-]\d{2}:?\d{2}))$/i;

/** Days since 1970-01-01 of a calendar date, or null for a day the month does not have. */
function dayNumber(year: number, month: number, day: number): number | null {
  if (month < 1 || month > 12 || day < 1 || day > 31) return null;
  const ms = Date.UTC(year, month - 1, day);
  const date = new Date(ms);
  if (date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return null;
  return ms / 86_400_000;
}

/** The days a date text may mean (two for `03/04/2024`, read month first or day first), none when it is no date. */
function readDate(text: string): number[] {
  let m = /^(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})$/.exec(text) ?? /^(\d{4})年(\d{1,2})月(\d{1,2})[日号]$/.exec(text);
  if (m) return present([dayNumber(+m[1], +m[2], +m[3])]);
  m = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/.exec(text);
  if (m) return present([dayNumber(+m[3], +m[1], +m[2]), dayNumber(+m[3], +m[2], +m[1])]);
  m = /^(\d{1,2})[.-](\d{1,2})[.-](\d{4})$/.exec(text);
  if (m) return present([dayNumber(+m[3], +m[2], +m[1])]);
  m = MONTH_FIRST.exec(text);
  if (m) return present([dayNumber(+m[3], monthIndex(m[1]), +m[2])]);
  m = DAY_FIRST.exec(text);
  if (m) return present([dayNumber(+m[3], monthIndex(m[2]), +m[1])]);
  return [];
}

function monthIndex(name: string): number {
  return MONTHS.indexOf(name.slice(0, 3).toLowerCase()) + 1;
}

function present(values: (number | null)[]): number[] {
  return [...new Set(values.filter((v): v is number => v !== null))];
}

/** Seconds since midnight of a time of day (`18:30`, `6:30 pm`, `6pm`, `18:30:00`), or null. */
function readTime(text: string): number | null {
  const t = text.trim().toLowerCase();
  if (t === 'noon' || t === 'midday') return 12 * 3600;
  if (t === 'midnight') return 0;
  const m = TIME.exec(t);
  if (!m) return null;
  // A bare number is a number, not an hour.
  if (m[2] === undefined && m[4] === undefined) return null;
  let hours = +m[1];
  const minutes = m[2] === undefined ? 0 : +m[2];
  const seconds = m[3] === undefined ? 0 : +m[3];
  if (m[4]) {
    if (hours < 1 || hours > 12) return null;
    hours = (hours % 12) + (m[4].toLowerCase() === 'p' ? 12 : 0);
  }
  if (hours > 24 || minutes > 59 || seconds > 59 || (hours === 24 && (minutes || seconds))) return null;
  return hours * 3600 + minutes * 60 + seconds;
}

/** The points a value may mean (none when it is not a number, date, date-time or time of day). */
export function readPoints(value: Json): Point[] {
  if (typeof value === 'number') return Number.isFinite(value) ? [{ kind: 'number', value }] : [];
  if (typeof value !== 'string') return [];
  const text = value.trim();
  if (/^[-+]?\d+(\.\d+)?$/.test(text)) return [{ kind: 'number', value: Number(text) }];
  const dates = readDate(text);
  if (dates.length) return dates.map((days) => ({ kind: 'date', value: days }));
  const time = readTime(text);
  if (time !== null) return [{ kind: 'time', value: time }];
  return readDateTime(text);
}

/** `2024-05-01T10:00:00Z`, `2024-05-01 10:00`, `May 1, 2024 at 6 pm`: a date, then a time, then a zone. */
function readDateTime(text: string): Point[] {
  const zoned = ZONE.exec(text);
  const zone = zoned ? zoneOffsetMinutes(zoned[1]) : 0;
  const rest = zoned ? text.slice(0, zoned.index) : text;
  const split = /^(.*?\d)(?:T|\s+at\s+|,\s*|\s+)(\d{1,2}(?::\d{2}(?::\d{2}(?:\.\d+)?)?)?\s*(?:[ap]\.?m\.?)?)$/i.exec(rest.trim());
  if (!split) return [];
  const days = readDate(split[1].trim());
  const time = readTime(split[2]);
  if (!days.length || time === null) return [];
  return days.map((day) => ({ kind: 'datetime', value: day * 86_400_000 + time * 1000 - zone * 60_000 }));
}

function zoneOffsetMinutes(zone: string): number {
  if (zone.toUpperCase() === 'Z') return 0;
  const m = /^([+-])(\d{2}):?(\d{2})$/.exec(zone)!;
  return (m[1] === '-' ? -1 : 1) * (+m[2] * 60 + +m[3]);
}

// ---------------------------------------------------------------- judging pairs

/** Words by which a text says a time range runs past midnight (`22:00`–`02:00`). */
const OVERNIGHT = /overnight|over night|\bnight|tonight|past midnight|after midnight|into the (next|following) (day|morning)|next morning|following morning|until (the )?morning|red-?eye|通宵|次日|第二天|凌晨|隔夜|跨夜|过夜|夜间|晚上/i;

/** Whether a text says that a range runs overnight. */
export function saysOvernight(text: string): boolean {
  return OVERNIGHT.test(text);
}

/** Whether a range's two values could be compared, and what is wrong with them (null when they are in order). */
function judgeRange(pair: RangePair, start: Json, end: Json, context: { overnight: boolean; spansDays: boolean }): { judged: boolean; problem: string | null } {
  const hours = [pair.start, pair.end].some((name) => wordsOf(name).some((w) => w === 'time' || w === 'hour'));
  const starts = hours ? readHours(start) : readPoints(start);
  const ends = hours ? readHours(end) : readPoints(end);
  let compared = false;
  let kind: Point['kind'] | undefined;
  for (const a of starts) {
    for (const b of ends) {
      const pairKind = comparableKind(a, b);
      if (!pairKind) continue;
      if (pairKind === 'time') {
        // Two times of day: an end at midnight closes the day; past midnight only where the text says the range runs overnight, or another argument gives the days.
        if (!pair.timeOfDay || context.spansDays || b.value === 0 || b.value === 24 * 3600 || context.overnight) continue;
      }
      compared = true;
      kind = pairKind;
      if (valueOf(a, pairKind) <= valueOf(b, pairKind)) return { judged: true, problem: null }; // one reading in order: not wrong
    }
  }
  if (!compared) return { judged: false, problem: null };
  const show = (v: Json) => JSON.stringify(v);
  const what = kind === 'number' ? 'is above' : 'is after';
  const tail = kind === 'time' ? ' (a range past midnight needs the text to say it runs overnight)' : '';
  return { judged: true, problem: `${pair.start} ${show(start)} ${what} ${pair.end} ${show(end)}${tail}` };
}

/** A value of a parameter named for a time: a bare number is an hour of the day (`"4"`: 4 am or 4 pm). */
function readHours(value: Json): Point[] {
  const points = readPoints(value);
  if (points.length !== 1 || points[0].kind !== 'number') return points;
  const hour = points[0].value;
  if (!Number.isInteger(hour) || hour < 0 || hour > 24) return points;
  return hour >= 1 && hour <= 12 ? [{ kind: 'time', value: (hour % 12) * 3600 }, { kind: 'time', value: ((hour % 12) + 12) * 3600 }] : [{ kind: 'time', value: hour * 3600 }];
}

function comparableKind(a: Point, b: Point): Point['kind'] | null {
  if (a.kind === b.kind) return a.kind;
  const dates = new Set([a.kind, b.kind]);
  return dates.has('date') && dates.has('datetime') ? 'date' : null;
}

function valueOf(point: Point, kind: Point['kind']): number {
  return kind === 'date' && point.kind === 'datetime' ? Math.floor(point.value / 86_400_000) : point.value;
}

/** The range pairs among `object`'s own keys whose end comes before their start (what a generator puts in order). */
export function unorderedPairs(object: Record<string, Json>, text: { overnight: boolean } = { overnight: false }): RangePair[] {
  const pairs = rangePairs(Object.keys(object));
  const context = { overnight: text.overnight, spansDays: pairs.some((pair) => spansDays(object[pair.start], object[pair.end])) };
  return pairs.filter((pair) => judgeRange(pair, object[pair.start], object[pair.end], context).problem !== null);
}

/** Every out-of-order range in a call's arguments, at any depth: `path` is where the pair's object is (`''` at the top). */
export function rangeProblems(args: Record<string, Json>, text: { readonly overnight: boolean }): { judged: number; problems: { path: string; problem: string; pair: RangePair; start: Json; end: Json }[] } {
  // Made only when a pair is found: most calls have none.
  let pairs: { path: string; pair: RangePair; start: Json; end: Json }[] | undefined;
  const visit = (value: Json, path: string) => {
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) if (typeof value[i] === 'object' && value[i] !== null) visit(value[i], `${path}[${i}]`);
      return;
    }
    if (!isJsonObject(value)) return;
    for (const pair of pairsOf(value)) (pairs ??= []).push({ path, pair, start: value[pair.start], end: value[pair.end] });
    for (const key in value) {
      const inner = value[key];
      if (typeof inner === 'object' && inner !== null && Object.prototype.hasOwnProperty.call(value, key)) visit(inner, path ? `${path}.${key}` : key);
    }
  };
  visit(args, '');
  if (!pairs) return { judged: 0, problems: [] };
  // Times of day of a call whose dates span several days (a start date before its end date) fall on different days.
  // Whether the text says overnight is read only when two times of day are compared (`text` may work it out then).
  const context = { get overnight() { return text.overnight; }, spansDays: pairs.some(({ start, end }) => spansDays(start, end)) };
  let judged = 0;
  const problems = pairs.flatMap(({ path, pair, start, end }) => {
    const verdict = judgeRange(pair, start, end, context);
    if (verdict.judged) judged++;
    return verdict.problem ? [{ path, problem: verdict.problem, pair, start, end }] : [];
  });
  return { judged, problems };
}

/** Whether two values are dates (or date-times) on different days, the first earlier. */
function spansDays(start: Json, end: Json): boolean {
  const day = (p: Point) => (p.kind === 'date' ? p.value : p.kind === 'datetime' ? Math.floor(p.value / 86_400_000) : null);
  return readPoints(start).some((a) => readPoints(end).some((b) => day(a) !== null && day(b) !== null && day(a)! < day(b)!));
}
