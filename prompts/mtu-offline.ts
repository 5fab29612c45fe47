import type { Json } from '../core/records.ts';
import type { Rng } from '../core/rng.ts';
import type { Situation } from './mtu-situation.ts';

/**
 * Deterministic stand-ins for what the LLM writes in the MTU prompts, used by their offline
 * renderers. The text is plainly template text: enough to run the recipe end to end and to
 * exercise every later step, not data to train on.
 */

const VERB_WORDS = ['find', 'search', 'look', 'book', 'reserve', 'play', 'get', 'check', 'set', 'add', 'send', 'buy', 'order', 'call', 'cancel', 'show', 'schedule', 'make', 'transfer', 'rate', 'share'];
const VERB_OF: Record<string, string> = { look: 'find', show: 'find' };

/** Words of a tool or parameter name: `SearchScreeningEvent` → `search screening event`. */
export function wordsOf(name: string): string {
  let words = wordsOfName.get(name);
  if (words === undefined) {
    words = name
      .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
      .replace(/[_\-.]+/g, ' ')
      .toLowerCase()
      .trim();
    // The names are the tools' and their fields' (a few hundred per run): each is split once, not per record.
    if (wordsOfName.size >= WORDS_CACHE_SIZE) wordsOfName.clear();
    wordsOfName.set(name, words);
  }
  return words;
}

const WORDS_CACHE_SIZE = 4096;
const wordsOfName = new Map<string, string>();

/** The paper's five situations, guessed from the assistant's reply and the user's message. */
export function offlineSituation(user: string, assistant: string, historyHasCalls: boolean): Situation {
  const a = assistant.trim();
  if (/^(you'?re welcome|bye|goodbye|have a (great|good|nice)|glad|my pleasure|no problem)/i.test(a) || (/^(thanks|thank you|bye|that'?s all|no,? thanks)/i.test(user.trim()) && !a.includes('?'))) return 'chit_chat';
  if (a.includes('?') && /\b(confirm|is that (right|correct)|shall i|should i|would you like me to)\b/i.test(a)) return 'confirmation';
  if (a.includes('?')) return 'information_missing';
  if (historyHasCalls && /^(what|which|where|when|how|is|does|do|can you tell)\b/i.test(user.trim())) return 'information_exists';
  return 'api_call';
}

/** API names the user's message asks for: `find_restaurant`, and a second one after "and <verb>". */
export function offlineApiNames(user: string, assistant: string, domain: string): string[] {
  const noun = singular(wordsOf(domain).split(' ').pop() || 'item');
  const text = user.toLowerCase();
  const verbs = [...text.matchAll(/\b([a-z]+)\b/g)].map((m) => m[1]).filter((w) => VERB_WORDS.includes(w));
  const first = verbs[0] ?? (/\b(booked|reserved|confirmed)\b/i.test(assistant) ? 'book' : 'find');
  const names = [`${VERB_OF[first] ?? first}_${noun}`];
  const second = text.match(/\band (?:then |also )?([a-z]+)\b/)?.[1];
  if (second && VERB_WORDS.includes(second) && (VERB_OF[second] ?? second) !== (VERB_OF[first] ?? first)) names.push(`${VERB_OF[second] ?? second}_${noun}`);
  return names;
}

function singular(word: string): string {
  return word.length > 3 && word.endsWith('s') && !word.endsWith('ss') ? word.slice(0, -1) : word;
}

const NUMBER_WORDS = 'one two three four five six seven eight nine ten'.split(' ');
const DAY = '(?:today|tomorrow|tonight|(?:next |this )?(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)|(?:january|february|march|april|may|june|july|august|september|october|november|december) \\d{1,2}(?:st|nd|rd|th)?|the \\d{1,2}(?:st|nd|rd|th))';
const NAME = "([A-Z][\\w'&]*(?: (?:[A-Z][\\w'&]*|of|the|de))*)";

/** Values a message states, under generic parameter names (time, date, people, location, …). */
export function extractArguments(text: string): Record<string, string> {
  const args: Record<string, string> = {};
  const time = text.match(/\b(\d{1,2}(?::\d{2})?\s?(?:am|pm)|\d{1,2}:\d{2})\b/i);
  if (time) args.time = time[1];
  const date = text.match(new RegExp(`\\b${DAY}\\b`, 'i'));
  if (date) args.date = date[0];
  const people = text.match(new RegExp(`\\b(\\d+|${NUMBER_WORDS.join('|')}) (?:people|persons|guests|tickets|seats|adults)\\b`, 'i'));
  if (people) args.number_of_people = people[1];
  const from = text.match(new RegExp(`\\bfrom ${NAME}`));
  if (from) args.origin = from[1];
  const to = text.match(new RegExp(`\\bto ${NAME}`));
  if (to) args.destination = to[1];
  const place = text.match(new RegExp(`\\b(?:in|near|at) ${NAME}`));
  if (place && !Object.values(args).includes(place[1])) args.location = place[1];
  const quoted = text.match(/["“]([^"”]+)["”]/);
  if (quoted) args.name = quoted[1];
  return args;
}

/** A one-line description of a tool from its name and parameters. */
export function describeTool(name: string, parameters: string[]): string {
  const words = wordsOf(name);
  const what = words.charAt(0).toUpperCase() + words.slice(1);
  const shown = parameters.slice(0, 3).map(wordsOf).join(', ');
  return parameters.length ? `${what}, given ${shown}${parameters.length > 3 ? ' and more' : ''}.` : `${what}.`;
}

export function describeParameter(name: string): string {
  return `The ${wordsOf(name)}.`;
}

/** Return fields a tool of this name plausibly has when the data shows none. */
export function proposeReturns(name: string, parameters: string[]): { name: string; type: string; description: string }[] {
  const verb = wordsOf(name).split(' ')[0];
  const lookup = ['find', 'search', 'get', 'lookup', 'check', 'list', 'show'].includes(verb);
  const echoed = parameters.slice(0, 4).map((p) => ({ name: p, type: 'string', description: `The ${wordsOf(p)} the result is for.` }));
  return lookup
    ? [...echoed, { name: 'result', type: 'string', description: 'The best matching result.' }, { name: 'count', type: 'integer', description: 'How many results matched.' }]
    : [...echoed, { name: 'status', type: 'string', description: 'Whether the action succeeded.' }, { name: 'reference', type: 'string', description: 'Reference number of the action.' }];
}

export interface ValueShape {
  type?: string | string[];
  format?: string;
  enum?: Json[];
  pattern?: string;
}

/** What simulated values are drawn from (made once, not per value). */
const REFERENCE_CHARACTERS: readonly string[] = [...'ABCDEFGHJKLMNPQRSTUVWXYZ0123456789'];
const QUARTERS: readonly string[] = ['00', '15', '30', '45'];

/** A value of the documented shape, drawn with the record's seeded rng. */
export function simulateValue(field: string, shape: ValueShape, rng: Rng, today: string): Json {
  if (shape.enum?.length) return rng.pick(shape.enum);
  const type = Array.isArray(shape.type) ? shape.type[0] : shape.type;
  if (shape.format === 'date') {
    const day = new Date(`${today}T00:00:00Z`);
    day.setUTCDate(day.getUTCDate() + rng.int(0, 14));
    return day.toISOString().slice(0, 10);
  }
  if (shape.format === 'time') return `${String(rng.int(8, 21)).padStart(2, '0')}:${rng.pick(QUARTERS)}`;
  if (type === 'integer') return rng.int(1, 10);
  if (type === 'number') return Math.round(rng.next() * 10000) / 100;
  if (type === 'boolean') return rng.chance(0.5);
  if (type === 'array') return [`${wordsOf(field)} ${rng.int(1, 99)}`];
  if (shape.pattern === '^-?\\d+$') return String(rng.int(1, 10));
  if (/phone/.test(field)) return `${rng.int(200, 999)}-${rng.int(200, 999)}-${rng.int(1000, 9999)}`;
  if (/(^|_)(id|reference|code|number)$/.test(field)) return Array.from({ length: 8 }, () => rng.pick(REFERENCE_CHARACTERS)).join('');
  if (/status/.test(field)) return 'success';
  return `${wordsOf(field)} ${rng.int(1, 99)}`;
}

/** Joins independent requests into one message. */
export function joinRequests(parts: string[], rng: Rng): string {
  const connectors = [' Also, ', ' And ', ' Then ', ' After that, '];
  return parts
    .map((p, i) => {
      const text = p.trim().replace(/[.?!]*$/, '');
      if (i === 0) return text.charAt(0).toUpperCase() + text.slice(1);
      return rng.pick(connectors) + text.charAt(0).toLowerCase() + text.slice(1);
    })
    .join('')
    .concat('.');
}
