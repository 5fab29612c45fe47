import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isSimpleArithmetic } from '../stages/toole/arithmetic.ts';
import {
  calculationTools,
  CHATGPT_TAG,
  filterQuery,
  namedTool,
  replaceChatGPT,
  SIMPLE_ARITHMETIC_TAG,
  type FilterContext,
  toolNames,
  type FilterOptions,
} from '../stages/toole/filters.ts';
import type { TooleQuery, TooleTool } from '../stages/toole/records.ts';
import { descriptionProblem } from '../stages/toole/tool-descriptions.ts';

function tool(name: string, nameForHuman: string, description: string): TooleTool {
  return { name, nameForHuman, description, descriptionForModel: description, provenance: { source: 'test' }, checks: [], tags: [] };
}

const TOOLS = [
  tool('web_scraper', 'Scraper Pro', 'Scrape content from webpages by providing a URL.'),
  tool('vio_com', 'Vio.com', 'A better deal on your next hotel, motel or accommodation booking.'),
  tool('KAYAK', 'Kayak', 'Search flights, stays and rental cars.'),
  tool('weather_now', 'Weather', 'Current weather and forecasts for any city.'),
  tool('forecaster', 'Forecaster', 'Hourly weather forecasts; also tells you if you need an umbrella.'),
  tool('calculator', 'Calculator', 'A calculator app that executes a given formula and returns a result.'),
];

const OPTIONS: FilterOptions = {
  maxWords: 30,
  maxChars: 200,
  chatgptReplacement: 'Chatbot',
  calculationPattern: String.raw`\b(calculat\w*|arithmetic|math\w*|formulas?)\b`,
  calculationTools: [],
  simpleArithmetic: 'flag',
};

function context(options: FilterOptions = OPTIONS): FilterContext {
  return { options, names: toolNames(TOOLS), calculation: calculationTools(TOOLS, options) };
}

function query(text: string, label: string): TooleQuery {
  return { text, tool: label, method: 'direct', generatedFor: label, checks: [], tags: [], lineage: [] };
}

function outcome(text: string, label: string, options?: FilterOptions) {
  return filterQuery(query(text, label), context(options));
}

describe('ToolE query filters (Appendix A.3)', () => {
  it('replaces "ChatGPT" in all its spellings with "Chatbot" and tags the query', () => {
    expect(replaceChatGPT('Hi ChatGPT, can chatgpt or Chat GPT or chat-gpt help?', 'Chatbot')).toBe('Hi Chatbot, can Chatbot or Chatbot or Chatbot help?');
    const result = outcome('Hey ChatGPT, find me a hotel in Porto.', 'vio_com');
    expect(result).toEqual({ query: expect.objectContaining({ text: 'Hey Chatbot, find me a hotel in Porto.', tags: [CHATGPT_TAG] }) });
    expect(outcome('Find me a hotel in Porto.', 'vio_com')).toEqual({ query: expect.objectContaining({ tags: [] }) });
  });

  it('rejects empty queries, blank or punctuation-only', () => {
    for (const text of ['', '   ', '?!', '""']) expect(outcome(text, 'vio_com')).toEqual({ reject: expect.objectContaining({ reason: 'empty_query' }) });
  });

  it('rejects overlong queries by words or by characters', () => {
    expect(outcome(Array.from({ length: 31 }, () => 'word').join(' '), 'vio_com')).toEqual({ reject: expect.objectContaining({ reason: 'overlong_query' }) });
    expect(outcome('x'.repeat(201), 'vio_com')).toEqual({ reject: expect.objectContaining({ reason: 'overlong_query' }) });
    expect('query' in outcome(Array.from({ length: 30 }, () => 'word').join(' '), 'vio_com')).toBe(true);
  });

  it('rejects queries that name their tool by model or human name, whatever the case and spacing', () => {
    for (const text of ['Use web scraper to read this page.', 'Can WebScraper fetch example.org?', 'Ask web-scraper for the article.', 'Open scraper pro and read the page', 'Book a room on VIO.COM', 'Any deals on vio com this week?', 'search kayak for flights to Oslo']) {
      const label = /scrap/i.test(text) ? 'web_scraper' : /vio/i.test(text) ? 'vio_com' : 'KAYAK';
      expect(outcome(text, label), text).toEqual({ reject: expect.objectContaining({ reason: 'names_tool' }) });
    }
  });

  it('matches names on word boundaries and leaves other tools\' names alone', () => {
    expect(outcome('We went kayaking last summer; find flights to Bergen.', 'KAYAK')).toHaveProperty('query');
    // Naming another tool is no hint for this one.
    expect(outcome('Is Kayak cheaper than a hotel booking?', 'vio_com')).toHaveProperty('query');
    expect(namedTool('Try the scraper', ['web_scraper'])).toBeUndefined();
  });

  it('rejects a query naming its tool even when the name is an ordinary word other tools use', () => {
    // "Weather" is also in the forecaster's description: a query saying "weather" still names the tool.
    expect(toolNames(TOOLS).get('weather_now')).toEqual(['weather_now', 'Weather']);
    expect(outcome('What is the weather in Quito?', 'weather_now')).toEqual({ reject: expect.objectContaining({ reason: 'names_tool', detail: expect.stringContaining('"Weather"') }) });
    expect(outcome('Ask weather_now about Quito', 'weather_now')).toEqual({ reject: expect.objectContaining({ reason: 'names_tool' }) });
    // The same word is no hint for another tool.
    expect(outcome('What is the weather in Quito?', 'forecaster')).toHaveProperty('query');
  });

  it('on the real plugin list: every query that spells its tool\'s model or human name is rejected, in any case or punctuation', () => {
    const plugins = JSON.parse(readFileSync(new URL('../../shared/data/sources/metatool/plugin_info.json', import.meta.url), 'utf8')) as { name_for_model: string; name_for_human: string; description_for_human: string }[];
    const tools = plugins.map((p) => tool(p.name_for_model, p.name_for_human, p.description_for_human));
    const ctx: FilterContext = { options: OPTIONS, names: toolNames(tools), calculation: new Set() };
    const spellings = (name: string) => [name, name.toLowerCase(), name.toUpperCase(), name.replace(/[^A-Za-z0-9]+/g, ' ').trim(), `"${name}"`];
    const missed: string[] = [];
    for (const t of tools) {
      for (const name of [t.name, t.nameForHuman]) {
        for (const spelled of spellings(name)) {
          const text = `Find me something good this weekend using ${spelled}.`;
          if (!('reject' in filterQuery(query(text, t.name), ctx))) missed.push(`${t.name}: ${text}`);
        }
      }
    }
    expect(missed).toEqual([]);
    // Whole words only: a name inside a longer word is no hint ("Now" in "knowledge", "maps" in "roadmaps").
    expect(filterQuery(query('Share some knowledge about roadmaps.', 'Now'), ctx)).toHaveProperty('query');
    expect(filterQuery(query('Share some knowledge about roadmaps.', 'maps'), ctx)).toHaveProperty('query');
    for (const [text, label] of [['What is trending right now?', 'Now'], ['Show the route to Lima using maps', 'maps'], ['Any quakes today? Check with Earthquake.', 'earthquake']]) {
      expect(filterQuery(query(text, label), ctx), text).toEqual({ reject: expect.objectContaining({ reason: 'names_tool' }) });
    }
  });

  it('flags simple arithmetic for a calculation tool with a soft check and a tag, keeps complex calculations', () => {
    const flagged = outcome('What is 7 * 9?', 'calculator');
    expect(flagged).toEqual({
      query: expect.objectContaining({ tags: [SIMPLE_ARITHMETIC_TAG], checks: [expect.objectContaining({ name: 'simple_arithmetic', pass: false, soft: true })] }),
    });
    expect(outcome('What is the result of 3.0117 ^ 3.82488?', 'calculator')).toEqual({ query: expect.objectContaining({ tags: [], checks: [] }) });
    // The same question for a tool that is not about calculation is not flagged.
    expect(outcome('What is 7 * 9?', 'vio_com')).toEqual({ query: expect.objectContaining({ tags: [] }) });
    expect(outcome('What is 7 * 9?', 'calculator', { ...OPTIONS, simpleArithmetic: 'reject' })).toEqual({ reject: expect.objectContaining({ reason: 'simple_arithmetic' }) });
    expect([...calculationTools(TOOLS, OPTIONS)]).toEqual(['calculator']);
    expect([...calculationTools(TOOLS, { ...OPTIONS, calculationTools: ['forecaster'] })].sort()).toEqual(['calculator', 'forecaster']);
  });

  it('tells simple arithmetic from harder problems', () => {
    for (const q of ['What is 7 * 9?', '7 * 9 = ?', 'What is the value of sin 30 degrees?', 'What is 15% of 80?', 'Calculate 12 + 30 - 4.', 'What is the square root of 144?', 'what is 120 divided by 8'])
      expect(isSimpleArithmetic(q), q).toBe(true);
    for (const q of ['What is the result of 3.0117^3.82488?', 'Solve 2x + 3 = 7', 'Compute the integral of x^2 from 0 to 3', 'Calculate the monthly payment on a 300000 loan at 5%', 'Book a table for 4 people', 'Multiply 48213 by 99731', 'Find the four smallest perfect numbers.'])
      expect(isSimpleArithmetic(q), q).toBe(false);
  });

  it('checks both labels of a multi-tool query', () => {
    const multi: TooleQuery = { ...query('Scrape this page with web_scraper, then book a room.', 'vio_com'), tools: ['vio_com', 'web_scraper'], method: 'multi-tool' };
    expect(filterQuery(multi, context())).toEqual({ reject: expect.objectContaining({ reason: 'names_tool', detail: expect.stringContaining('web_scraper') }) });
  });
});

describe('tool descriptions', () => {
  it('rejects empty, placeholder, name-only and too-short descriptions with their reasons', () => {
    expect(descriptionProblem('   ', ['x'], 2)?.reason).toBe('empty_description');
    expect(descriptionProblem('TODO', ['x'], 2)?.reason).toBe('unusable_description');
    expect(descriptionProblem('Vio.com', ['vio_com', 'Vio.com'], 2)?.reason).toBe('unusable_description');
    expect(descriptionProblem('Weather.', ['w'], 2)?.reason).toBe('unusable_description');
    expect(descriptionProblem('Get latest earthquake information.', ['earthquake'], 2)).toBeNull();
  });
});
