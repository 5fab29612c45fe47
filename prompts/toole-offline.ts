import type { Rng } from '../core/rng.ts';

/**
 * Pieces the offline renderers of ToolE's prompts build their template text from: a task phrase
 * and content words taken from a tool description, and fillers that vary a query. The text is
 * plainly template text (for running the pipeline without a model), but it is shaped like real
 * answers — including the faults the filters must catch (tool names, "ChatGPT", bare arithmetic).
 */

const STOP = new Set(
  'a an the and or but of for to in on at by with from into your you our my this that these those is are be can will it its as any all more most get lets let just about use using over via than then their them they we us who what when where which how also best easily instantly right away new now'.split(' '),
);

/** The first sentence of a description as a lower-case phrase: "Find the best flights." → "find the best flights". */
export function taskPhrase(description: string): string {
  const first = description.replace(/\s+/g, ' ').trim().split(/(?<=[.!?])\s/)[0] ?? '';
  const phrase = first.replace(/[.!?]+$/, '').trim();
  if (!phrase) return 'this task';
  // "Find …" → "find …", "A better deal …" → "a better deal …"; acronyms ("AI …", "NASA …") stay.
  return /^[A-Z](?![A-Z])/.test(phrase) ? phrase[0].toLowerCase() + phrase.slice(1) : phrase;
}

/** Distinct content words of a text, in order of first appearance. */
export function contentWords(text: string): string[] {
  const seen = new Set<string>();
  for (const word of text.toLowerCase().match(/[a-z][a-z'-]{2,}/g) ?? []) {
    const clean = word.replace(/^'+|'+$/g, '');
    if (!STOP.has(clean) && clean.length > 2) seen.add(clean);
  }
  return [...seen];
}

/** `n` distinct content words of the description (fewer when it has fewer), in a seeded order. */
export function pickWords(text: string, n: number, rng: Rng): string[] {
  const words = contentWords(text);
  return rng.sample(words.length ? words : ['help'], n);
}

const CITIES = ['Lisbon', 'Osaka', 'Denver', 'Nairobi', 'Melbourne', 'Toronto', 'Seville', 'Hanoi', 'Oslo', 'Lima'];
const TIMES = ['this weekend', 'next Tuesday', 'by Friday', 'tonight', 'next month', 'before my exam', 'for our anniversary', 'this afternoon'];
const WHO = ['my sister', 'my team', 'a client', 'my parents', 'my study group', 'our book club', 'my neighbour', 'my manager'];
const CONSTRAINTS = ['on a budget of about $200', 'with a short summary', 'sorted by popularity', 'in plain language', 'with links to sources', 'for a beginner', 'in under ten minutes', 'with at least three options'];

/** A concrete detail (place, time, person or constraint) that makes a query specific. */
export function detail(rng: Rng): string {
  switch (rng.int(0, 3)) {
    case 0:
      return `in ${rng.pick(CITIES)}`;
    case 1:
      return rng.pick(TIMES);
    case 2:
      return `for ${rng.pick(WHO)}`;
    default:
      return rng.pick(CONSTRAINTS);
  }
}

const REQUEST_FRAMES: ((phrase: string, word: string, rng: Rng) => string)[] = [
  (p, _w, r) => `Can you help me ${p} ${detail(r)}?`,
  (p) => `I'd like to ${p}. Where do I start?`,
  (_p, w, r) => `Show me what you can find about ${w} ${detail(r)}.`,
  (p, _w, r) => `Please ${p} ${detail(r)}.`,
  (_p, w) => `What are my options for ${w} right now?`,
  (p, w, r) => `I need some help with ${w}: I want to ${p} ${detail(r)}.`,
  (_p, w, r) => `Give me the latest on ${w} ${detail(r)}.`,
  (p) => `Is there a quick way to ${p}?`,
  (_p, w, r) => `Look up ${w} for me ${detail(r)}, please.`,
  (p, w) => `My question is about ${w}. Could you ${p}?`,
  (_p, w, r) => `Find ${w} ${detail(r)} and tell me which is best.`,
  (p, _w, r) => `Help me ${p}; it is for ${r.pick(WHO)}.`,
];

const VERBS = /^(find|get|search|book|plan|create|make|track|check|convert|compare|learn|discover|explore|translate|summari[sz]e|generate|write|read|analy[sz]e|shop|buy|order|play|chat|ask|manage|monitor|calculate|design|build|send|scan|explain|look|watch|listen|access|stay|turn|keep|connect|save|organi[sz]e|improve|optimi[sz]e|edit|draw|visuali[sz]e|query|retrieve|fetch|browse|extract|detect|identify|recommend|add|upload|download|share|schedule|reserve|rent|sell|invest|trade|estimate|predict|compute|solve|practice|study|test|review|provide|help|enable|allow|offer|bring|give|let|turn|unlock|boost|simplify|automate|transform|enhance)$/i;

/**
 * A verb phrase usable after "help me": the task phrase when it starts with a verb ("find the best
 * flights"), "find a service that …" when it starts with one in the third person ("provides …"),
 * else "find <phrase>" ("find a better deal on …").
 */
export function actionPhrase(description: string): string {
  const phrase = taskPhrase(description);
  const first = phrase.split(' ')[0];
  if (VERBS.test(first)) return phrase;
  if (VERBS.test(first.replace(/ies$/, 'y').replace(/(ch|sh|ss|x)es$/, '$1').replace(/s$/, ''))) return `find a service that ${phrase}`;
  return `find ${phrase}`;
}

/**
 * The description with the tool's own names replaced by "the service": a description often names
 * its tool ("Search Kayak for flights"), and copying that into every query would only feed the
 * names filter. Fault injection below names the tool on purpose, now and then.
 */
export function withoutNames(description: string, names: string[]): string {
  let text = description;
  for (const name of names) {
    const letters = [...name.replace(/[^A-Za-z0-9]+/g, '')];
    if (letters.length < 3) continue;
    // Any spacing or punctuation between the letters: "deepmemory" also matches "Deep Memory".
    const pattern = letters.map((c) => c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[\\s._-]*');
    text = text.replace(new RegExp(`\\b${pattern}\\b`, 'gi'), 'the service');
  }
  return text;
}

/** One request-style user query about a tool, from its description (its names left out). */
export function requestQuery(description: string, rng: Rng, names: string[] = []): string {
  const text = withoutNames(description, names);
  const phrase = actionPhrase(text);
  const word = pickWords(text, 1, rng)[0];
  return rng.pick(REQUEST_FRAMES)(phrase, word, rng);
}

/**
 * Occasionally rewrites a generated query the way real models sometimes answer: addressing
 * "ChatGPT", or naming the tool. The filters of the pipeline must catch both.
 */
export function withTypicalFaults(query: string, names: { name: string; nameForHuman: string }, rng: Rng): string {
  const roll = rng.next();
  if (roll < 0.04) return `Hi ChatGPT, ${query[0].toLowerCase()}${query.slice(1)}`;
  if (roll < 0.08) return `${query.replace(/[.?!]$/, '')} using ${rng.chance(0.5) ? names.nameForHuman : names.name}?`;
  return query;
}

/** Whether a description reads like a calculation tool (its offline queries then include bare arithmetic). */
export function looksLikeCalculator(description: string): boolean {
  return /\b(calculat\w*|arithmetic|math\w*|equations?|formulas?)\b/i.test(description);
}

/** A bare arithmetic question such as "What is 7 * 9?" (LLMs need no tool for it). */
export function simpleArithmetic(rng: Rng): string {
  const a = rng.int(2, 99);
  const b = rng.int(2, 20);
  const op = rng.pick(['+', '-', '*', '/']);
  return rng.pick([`What is ${a} ${op} ${b}?`, `${a} ${op} ${b} = ?`, `Calculate ${a} ${op} ${b}.`, `What is the square root of ${b * b}?`]);
}
