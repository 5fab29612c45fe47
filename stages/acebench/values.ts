import { isJsonObject } from '../../core/records.ts';
import { ArgumentValidator, jsonTypeOf } from '../../core/json-schema.ts';
import type { Json } from '../../core/records.ts';
import type { Rng } from '../../core/rng.ts';
import type { AceFunction, AceLanguage } from './record.ts';
import { unorderedPairs } from '../../core/value-ranges.ts';
import { matchesPattern as matches, stringForPattern } from '../../core/schema-values.ts';

export { stringForPattern };


/**
 * Offline argument values for ACEBench functions, from their JSON Schemas: what a template dialogue
 * asks for when no model writes it, and the wrong values `special_error_param` plants. Seeded, so
 * the same function and rng give the same values.
 *
 * Rules the values keep besides their schema (docs/acebench.md, "ACEBench format"):
 * - ranges are ordered: of two properties of one object that bound a range (`start`/`end`,
 *   `startTime`/`endTime`, `min_x`/`max_x`, …), the start is not after the end (dates, date-times
 *   and times compared as such, numbers as numbers);
 * - no whitespace in a string that ACEBench's checker compares without normalising it: its
 *   eval_main.py removes every whitespace character from a model's answer before reading it, then
 *   compares strings inside a list that sits in an object (or in a list) as they are, so a gold
 *   `['machine learning']` there can never match `['machinelearning']` (see `Place`).
 */

export interface ValueOptions {
  language: AceLanguage;
  /** The dialogue's date (YYYY-MM-DD): dates are drawn from the weeks after it. */
  today: string;
  /** Share of optional properties filled (default 0.5). */
  optionalShare?: number;
}

type Schema = Record<string, Json>;

/**
 * Where a value sits, as ACEBench's checker (model_eval/checker.py) compares it: `argument`, a
 * function's argument (strings and the strings of a list are normalised, an object is checked key by
 * key, a list of objects object by object); `object`, a property of an object (checked key by key:
 * strings normalised, a nested object recursed into, anything else compared as Python prints it);
 * `verbatim`, inside a list within an object or within a list: compared as printed, so its strings
 * must hold no whitespace.
 */
type Place = 'argument' | 'object' | 'verbatim';

function asSchema(value: Json | undefined): Schema {
  return isJsonObject(value) ? value : {};
}

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

function shiftDate(day: string, days: number): string {
  const date = new Date(`${day}T00:00:00Z`);
  date.setUTCDate(date.getUTCDate() + days);
  return date.toISOString().slice(0, 10);
}

// ------------------------------------------------------------------ strings by parameter name

const WORDS: Record<AceLanguage, Record<string, string[]>> = {
  en: {
    person: ['Alice Johnson', 'David Chen', 'Maria Garcia', 'Tom Becker', 'Priya Patel'],
    city: ['Chicago', 'Berlin', 'Tokyo', 'Toronto', 'Lisbon', 'Seattle'],
    country: ['France', 'Japan', 'Canada', 'Brazil', 'Kenya'],
    language: ['English', 'Spanish', 'French', 'German'],
    title: ['Quarterly Review', 'Spring Launch', 'Team Offsite', 'Product Update'],
    text: ['Please keep it short and clear.', 'Focus on the key points.', 'Include a brief summary.'],
    topic: ['renewable energy', 'urban gardening', 'machine learning', 'medieval history', 'jazz piano'],
    category: ['electronics', 'books', 'outdoor', 'fitness', 'travel'],
    company: ['Northwind Traders', 'Blue Harbor Labs', 'Greenfield Foods'],
  },
  zh: {
    person: ['张伟', '李娜', '王芳', '刘洋', '陈静'],
    city: ['北京', '上海', '杭州', '成都', '深圳', '西安'],
    country: ['法国', '日本', '加拿大', '巴西', '泰国'],
    language: ['中文', '英语', '日语', '法语'],
    title: ['季度总结', '春季发布会', '团队建设', '产品更新'],
    text: ['请简明扼要。', '重点说明关键内容。', '附上简短的总结。'],
    topic: ['可再生能源', '城市园艺', '机器学习', '宋代历史', '古典音乐'],
    category: ['电子产品', '图书', '户外用品', '健身', '旅游'],
    company: ['华远科技', '青禾食品', '蓝海物流'],
  },
};

/** Words that, beside `name`, make a parameter a person's name. */
const PERSON_NAME = /(user|author|owner|person|customer|patient|student|instructor|contact|first|last|full)/;

/** A realistic string for a parameter, by what its name says it holds. */
function stringByName(name: string, rng: Rng, options: ValueOptions): string {
  const key = name.toLowerCase();
  const words = WORDS[options.language];
  const id = () => `${name.replace(/[^A-Za-z]/g, '').slice(0, 1).toUpperCase() || 'X'}${rng.int(1000, 99999)}`;
  if (/(^|_)id$|Id$|ID$|identifier|code$|number$/.test(name)) return id();
  if (key.includes('email')) return `${rng.pick(['alice', 'david', 'maria', 'tom', 'priya'])}${rng.int(1, 99)}@example.com`;
  if (key.includes('phone')) return `+1${rng.int(200, 999)}${rng.int(1000000, 9999999)}`;
  if (key.includes('url') || key.includes('link') || key.includes('website')) return `https://example.com/${rng.pick(['reports', 'media', 'docs'])}/${rng.int(100, 999)}`;
  if (key.includes('name') && PERSON_NAME.test(key)) return rng.pick(words.person);
  if (/(city|location|destination|origin|address|place|venue|region)/.test(key)) return rng.pick(words.city);
  if (key.includes('country')) return rng.pick(words.country);
  if (key.includes('language')) return rng.pick(words.language);
  if (/(title|headline|subject)/.test(key)) return rng.pick(words.title);
  if (/(company|organization|organisation|brand|vendor|supplier)/.test(key)) return rng.pick(words.company);
  if (/(description|comment|note|message|content|text|feedback|instruction)/.test(key)) return rng.pick(words.text);
  if (/(category|type|genre|kind)/.test(key)) return rng.pick(words.category);
  if (/(file|path|image|audio|video|document)/.test(key)) return `${rng.pick(['report', 'photo', 'recording', 'draft'])}_${rng.int(1, 99)}.${rng.pick(['pdf', 'jpg', 'mp3', 'docx'])}`;
  if (key.includes('currency')) return rng.pick(['USD', 'EUR', 'JPY', 'CNY']);
  if (key.includes('color') || key.includes('colour')) return rng.pick(['#1E90FF', '#FF6347', '#2E8B57']);
  return rng.pick(words.topic);
}

// ------------------------------------------------------------------ values

/** A value satisfying `schema` for a function's argument; `name` is the parameter's name (it picks realistic strings). */
export function synthesiseValue(schema: Json | undefined, name: string, rng: Rng, options: ValueOptions): Json {
  return valueAt(schema, name, rng, options, 'argument');
}

function valueAt(schema: Json | undefined, name: string, rng: Rng, options: ValueOptions, place: Place): Json {
  const s = asSchema(schema);
  const verbatim = place === 'verbatim';
  if (Array.isArray(s.enum) && s.enum.length) return rng.pick(verbatim ? withoutSpaces(s.enum) : s.enum);
  if (s.default !== undefined && !(verbatim && hasSpace(s.default)) && rng.chance(0.3)) return s.default;
  const type = jsonTypeOf(s.type) ?? (s.properties ? 'object' : s.items ? 'array' : 'string');
  switch (type) {
    case 'boolean':
      return rng.chance(0.5);
    case 'integer':
    case 'number': {
      const min = typeof s.minimum === 'number' ? s.minimum : typeof s.exclusiveMinimum === 'number' ? s.exclusiveMinimum + 1 : 1;
      const max = typeof s.maximum === 'number' ? s.maximum : typeof s.exclusiveMaximum === 'number' ? s.exclusiveMaximum - 1 : Math.max(min, 0) + 100;
      const low = Math.ceil(min);
      const high = Math.floor(max);
      if (type === 'integer') return high >= low ? rng.int(low, high) : low;
      if (high >= low && rng.chance(0.5)) return rng.int(low, high);
      return Math.round((min + rng.next() * (max - min)) * 10) / 10;
    }
    case 'array': {
      const items = asSchema(s.items);
      const min = typeof s.minItems === 'number' ? s.minItems : 1;
      const max = typeof s.maxItems === 'number' ? s.maxItems : Math.max(min, 3);
      const count = rng.int(min, Math.max(min, Math.min(max, min + 2)));
      const singular = singularOf(name);
      // An argument's list of objects is checked object by object; anything else in a list is compared as printed.
      const itemType = jsonTypeOf(items.type) ?? (items.properties ? 'object' : items.items ? 'array' : 'string');
      const itemPlace: Place = place === 'argument' ? (itemType === 'array' ? 'verbatim' : itemType === 'object' ? 'object' : 'argument') : 'verbatim';
      const values: Json[] = [];
      for (let i = 0; i < count * 3 && values.length < count; i++) {
        const value = valueAt(items, singular, rng, options, itemPlace);
        // Distinct items read better ("time savings, cost reduction"), and uniqueItems asks for them.
        if (!values.some((v) => JSON.stringify(v) === JSON.stringify(value))) values.push(value);
      }
      return values;
    }
    case 'object':
      return synthesiseObject(s, rng, options, verbatim ? 'verbatim' : 'object');
    default:
      return synthesiseString(s, name, rng, options, verbatim);
  }
}

/** `categories` → `category`, `tags` → `tag`: the name one item of a list goes by. */
function singularOf(name: string): string {
  return name.replace(/ies$/, 'y').replace(/([^s])s$/, '$1');
}

function hasSpace(value: Json): boolean {
  return typeof value === 'string' && /\s/.test(value);
}

/** The values without whitespace, or all of them when each has some (an enum is what it is). */
function withoutSpaces<T extends Json>(values: T[]): T[] {
  const plain = values.filter((value) => !hasSpace(value));
  return plain.length ? plain : values;
}

function synthesiseString(s: Schema, name: string, rng: Rng, options: ValueOptions, verbatim = false): string {
  const day = shiftDate(options.today, rng.int(1, 45));
  const time = `${pad(rng.int(8, 20))}:${pad(rng.pick([0, 15, 30, 45]))}`;
  switch (s.format) {
    case 'date':
      return day;
    case 'date-time':
      return `${day}T${time}:00`;
    case 'time':
      return time;
    case 'email':
      return stringByName('email', rng, options);
    case 'uri':
      return stringByName('url', rng, options);
    case 'ipv4':
      return `192.168.${rng.int(0, 255)}.${rng.int(1, 254)}`;
    case 'hostname':
      return `${rng.pick(['api', 'files', 'mail'])}.example.com`;
    case 'uuid':
      return stringForPattern('^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$', rng)!;
  }
  const minLength = typeof s.minLength === 'number' ? s.minLength : 0;
  const maxLength = typeof s.maxLength === 'number' ? s.maxLength : Infinity;
  if (typeof s.pattern === 'string') {
    // A realistic value that already fits reads better than one drawn from the pattern ("2024-03-12", not "4013-57-87").
    const pattern = s.pattern;
    const fits = (value: string) => value.length >= minLength && value.length <= maxLength && matches(pattern, value) && !(verbatim && /\s/.test(value));
    const natural = [day, time, `${day}T${time}:00Z`, `${day}T${time}:00`, stringByName(name, rng, options)].find(fits);
    if (natural) return natural;
    let drawn: string | undefined;
    for (let tries = 0; tries < 10; tries++) {
      const value = stringForPattern(s.pattern, rng, { min: minLength, max: maxLength });
      if (value === undefined || value.length < minLength || value.length > maxLength) continue;
      drawn ??= value;
      if (fits(value)) return value;
    }
    if (drawn !== undefined) return drawn;
  }
  let value = stringByName(name, rng, options);
  if (/date/i.test(name) && !/update/i.test(name)) value = day;
  else if (/time$/i.test(name) && !/timezone/i.test(name)) value = time;
  // One word where the checker compares as printed: a person's first name, else the words hyphenated ("jazz-piano").
  if (verbatim && /\s/.test(value.trim())) {
    const words = value.trim().split(/\s+/);
    const key = name.toLowerCase();
    value = key.includes('name') && PERSON_NAME.test(key) ? words[0] : words.join('-');
  }
  while (value.length < minLength) value += options.language === 'zh' ? '，请尽快处理' : verbatim ? '-and-more' : ' and more';
  return value.slice(0, maxLength);
}

function synthesiseObject(s: Schema, rng: Rng, options: ValueOptions, place: Place): Record<string, Json> {
  const properties = asSchema(s.properties);
  const required = new Set(Array.isArray(s.required) ? s.required.filter((r): r is string => typeof r === 'string') : []);
  const share = options.optionalShare ?? 0.5;
  const out: Record<string, Json> = {};
  for (const [name, property] of Object.entries(properties)) {
    if (required.has(name) || rng.chance(share)) out[name] = valueAt(property, name, rng, options, place);
  }
  orderRanges(out, properties, (name) => valueAt(properties[name], name, rng, options, place));
  return out;
}

/** Arguments for a whole function: every required parameter and a share of the optional ones. */
export function synthesiseArguments(fn: AceFunction, rng: Rng, options: ValueOptions): Record<string, Json> {
  return synthesiseObject(asSchema(fn.parameters), rng, options, 'argument');
}

// ------------------------------------------------------------------ ranges

/** The schema without what only annotates it: two bounds with equal schemas may trade values and stay valid. */
function constraintsOf(schema: Json | undefined): string {
  const { description: _d, title: _t, default: _v, examples: _e, example: _x, ...rest } = asSchema(schema);
  return JSON.stringify(rest);
}

/**
 * Puts every range of `out` in order: the two values trade places when the bounds have one schema
 * (both stay valid), else the end is drawn again (`draw`) until it is not before the start, up to a
 * few times.
 */
function orderRanges(out: Record<string, Json>, properties: Schema, draw: (name: string) => Json): void {
  for (const { start, end } of unorderedPairs(out)) {
    if (constraintsOf(properties[start]) === constraintsOf(properties[end])) [out[start], out[end]] = [out[end], out[start]];
    else
      for (let tries = 0; tries < 10 && unorderedPairs({ [start]: out[start], [end]: out[end] }).length; tries++) out[end] = draw(end);
  }
}

/**
 * `args` with the argument `name` given a new value (an adjusting user's turn): drawn again, up to a
 * few times, while it is the same as before or puts a range of the arguments out of order.
 */
export function withNewValue(args: Record<string, Json>, name: string, schema: Json | undefined, rng: Rng, options: ValueOptions): Record<string, Json> {
  const next = { ...args };
  for (let tries = 0; tries < 8 && (JSON.stringify(next[name]) === JSON.stringify(args[name]) || unorderedPairs(next).length); tries++) next[name] = synthesiseValue(schema, name, rng, options);
  return next;
}

// ------------------------------------------------------------------ wrong values

export interface WrongValue {
  value: Json;
  /** `format`: the right type in a shape the schema forbids (pattern, format, enum, range); `type`: another type. */
  kind: 'format' | 'type';
}

/**
 * A value the parameter's schema rejects, as `special_error_param` plants them: a string of the wrong
 * shape where the schema constrains it (a pattern, a format, an enum, a length), a number out of
 * range, else a value of the wrong type ("12 units" for a number). Checked with `validator`;
 * undefined when nothing it tries fails (an unconstrained string). The answer line writes the value
 * as the question states it, as text (`statedValue` in dialogue-single.ts).
 */
export function wrongValue(schema: Json | undefined, name: string, rng: Rng, validator: ArgumentValidator, options: ValueOptions): WrongValue | undefined {
  const s = asSchema(schema);
  const type = jsonTypeOf(s.type) ?? 'string';
  const valid = synthesiseValue(s, name, rng, options);
  const rejects = (value: Json) => validator.validate({ type: 'object', properties: { [name]: s } }, { [name]: value }).length > 0;
  const candidates: WrongValue[] = [];
  if (type === 'string') {
    const text = typeof valid === 'string' ? valid : String(valid);
    if (s.format === 'date' || /\\d\{4\}-\\d\{2\}-\\d\{2\}/.test(String(s.pattern ?? ''))) {
      const [y, m, d] = text.slice(0, 10).split('-');
      candidates.push({ value: `${d}/${m}/${y}`, kind: 'format' });
    }
    if (s.format === 'date-time') candidates.push({ value: text.replace(/^(\d{4})-(\d{2})-(\d{2})T/, '$3/$2/$1 '), kind: 'format' });
    if (s.format === 'time' || /:\[0-5\]/.test(String(s.pattern ?? ''))) candidates.push({ value: `${rng.int(25, 39)} o'clock`, kind: 'format' });
    if (s.format === 'email') candidates.push({ value: text.replace('@', ' at '), kind: 'format' });
    if (s.format === 'uri') candidates.push({ value: `www ${text.replace(/^https?:\/\//, '')}`, kind: 'format' });
    candidates.push(
      { value: `${text}@#`, kind: 'format' },
      { value: `#${text.replace(/\s+/g, '_')}!`, kind: 'format' },
      { value: text.slice(0, 1), kind: 'format' },
      { value: `${text}${'x'.repeat(typeof s.maxLength === 'number' ? s.maxLength : 0)}`, kind: 'format' },
      // Digits where the schema asks for something else ("12345" for an id of letters): a string, as
      // the release writes every wrong value; an unconstrained string has no wrong value a user could state.
      { value: String(rng.int(10, 9999)), kind: 'format' },
    );
  } else if (type === 'integer' || type === 'number') {
    const n = typeof valid === 'number' ? valid : 10;
    if (typeof s.minimum === 'number') candidates.push({ value: s.minimum - rng.int(1, 20), kind: 'format' });
    if (typeof s.maximum === 'number') candidates.push({ value: s.maximum + rng.int(1, 20), kind: 'format' });
    if (type === 'integer') candidates.push({ value: n + 0.5, kind: 'format' });
    candidates.push({ value: options.language === 'zh' ? `${n}个` : `${n} units`, kind: 'type' });
  } else if (type === 'boolean') {
    candidates.push({ value: options.language === 'zh' ? '是的' : 'yes', kind: 'type' });
  } else if (type === 'array') {
    candidates.push({ value: Array.isArray(valid) ? valid.map((v) => JSON.stringify(v)).join(', ') : 'a, b', kind: 'type' });
  } else if (type === 'object') {
    candidates.push({ value: JSON.stringify(valid), kind: 'type' });
  }
  return candidates.find((candidate) => rejects(candidate.value));
}
