import { describe, expect, it } from 'vitest';
import detailsPrompt from '../prompts/toole-details.ts';
import directPrompt from '../prompts/toole-direct.ts';
import keywordQueriesPrompt from '../prompts/toole-keyword-queries.ts';
import keywordsPrompt from '../prompts/toole-keywords.ts';
import multiToolPrompt from '../prompts/toole-multi-tool.ts';
import { cleanItem, parseNumberedList, splitLabelled, splitUsageTag } from '../prompts/toole-numbered-list.ts';

describe('numbered-list parsing of generation answers', () => {
  it('reads the format the prompt asks for, one item per line', () => {
    const answer = '1. User: Find me a hotel in Rome for next weekend.\n2. User: Book two nights near the Colosseum.\n3. User: Are there cheap motels close to Termini station?';
    expect(parseNumberedList(answer)).toEqual(['Find me a hotel in Rome for next weekend.', 'Book two nights near the Colosseum.', 'Are there cheap motels close to Termini station?']);
  });

  it('drops a preamble and a closing remark, and strips quotes and markdown around items', () => {
    const answer = [
      'Sure! Here are 4 examples of what users might say:',
      '',
      '1. **User:** "What is the air quality in Denver tomorrow?"',
      '2) User: “Should I go running in Lyon this afternoon, given the pollution?”',
      '**3.** User: Is it safe to take the kids to the park today?',
      '4 - User: Forecast the smog levels for my zip code 10001.',
      '',
      'I hope these examples help you test the plugin!',
    ].join('\n');
    expect(parseNumberedList(answer)).toEqual([
      'What is the air quality in Denver tomorrow?',
      'Should I go running in Lyon this afternoon, given the pollution?',
      'Is it safe to take the kids to the park today?',
      'Forecast the smog levels for my zip code 10001.',
    ]);
  });

  it('joins an item wrapped over several lines, but not commentary after a blank line', () => {
    const answer = '1. User: I need a summary of this PDF\n   about renewable energy subsidies in Spain.\n2. User: Read the attached contract and list the deadlines.\n\nNote: these are examples.';
    expect(parseNumberedList(answer)).toEqual(['I need a summary of this PDF about renewable energy subsidies in Spain.', 'Read the attached contract and list the deadlines.']);
  });

  it('splits a whole list written on one line, only at markers that count up', () => {
    const answer = '1. User: Convert 100 USD to EUR. 2. User: What was the yen rate in version 3. of the report? 3. User: Show me the pound against the dollar.';
    expect(parseNumberedList(answer)).toEqual(['Convert 100 USD to EUR.', 'What was the yen rate in version 3. of the report?', 'Show me the pound against the dollar.']);
  });

  it('falls back to bullets, then to plain lines without a colon-ended preamble', () => {
    expect(parseNumberedList('Here you go:\n- Find vegan recipes with lentils.\n- What can I cook with leftover rice?')).toEqual(['Find vegan recipes with lentils.', 'What can I cook with leftover rice?']);
    expect(parseNumberedList('Examples:\nFind a plumber in Leeds\nWho repairs boilers near me?')).toEqual(['Find a plumber in Leeds', 'Who repairs boilers near me?']);
    expect(parseNumberedList('Just one query about the weather in Oslo.')).toEqual(['Just one query about the weather in Oslo.']);
  });

  it('cleans single items: speaker prefixes, placeholder brackets, nested quotes', () => {
    expect(cleanItem('User input: "Track my parcel 1Z999."')).toBe('Track my parcel 1Z999.');
    expect(cleanItem('[Find the nearest EV charger]')).toBe('Find the nearest EV charger');
    expect(cleanItem('"Play "Hey Jude" by the Beatles"')).toBe('"Play "Hey Jude" by the Beatles"');
    expect(cleanItem('   ')).toBe('');
  });

  it('splits keyword items into label and query, in the shapes models use', () => {
    expect(splitLabelled('[air quality]: Is the air clean enough to jog today?')).toEqual({ label: 'air quality', text: 'Is the air clean enough to jog today?' });
    expect(splitLabelled('**Pollen**: Will pollen be high tomorrow?')).toEqual({ label: 'Pollen', text: 'Will pollen be high tomorrow?' });
    expect(splitLabelled('Forecast: what is the smog outlook?')).toEqual({ label: 'Forecast', text: 'what is the smog outlook?' });
    expect(splitLabelled('What does it mean: AQI above 150?')).toEqual({ text: 'What does it mean: AQI above 150?' });
  });

  it('reads parallel / causal marks of multi-tool queries wherever they are', () => {
    expect(splitUsageTag('(parallel) Check the weather in Paris and find me a flight there.')).toEqual({ usage: 'parallel', text: 'Check the weather in Paris and find me a flight there.' });
    expect(splitUsageTag('Causal: Find the cheapest flight, then the weather on arrival.')).toEqual({ usage: 'causal', text: 'Find the cheapest flight, then the weather on arrival.' });
    expect(splitUsageTag('Find a flight and a hotel [parallel]')).toEqual({ usage: 'parallel', text: 'Find a flight and a hotel' });
    expect(splitUsageTag('Find a flight and a hotel')).toEqual({ text: 'Find a flight and a hotel' });
  });

  it('each prompt turns a messy free-text answer into a value its schema accepts', () => {
    const direct = directPrompt.schema.parse(directPrompt.parseText!('Here are ten:\n1. User: "Plan a trip to Kyoto."\n2. User: Book a ryokan.\n'));
    expect(direct.queries).toEqual(['Plan a trip to Kyoto.', 'Book a ryokan.']);
    expect(keywordsPrompt.schema.parse(keywordsPrompt.parseText!('1. hotels,\n2. travel deals.\n3) motels')).keywords).toEqual(['hotels', 'travel deals', 'motels']);
    const keyword = keywordQueriesPrompt.schema.parse(keywordQueriesPrompt.parseText!('1. [hotels]: Find a hotel in Lima.\n2. travel deals: Any cheap packages to Peru?'));
    expect(keyword.queries).toEqual([
      { keyword: 'hotels', query: 'Find a hotel in Lima.' },
      { keyword: 'travel deals', query: 'Any cheap packages to Peru?' },
    ]);
    expect(detailsPrompt.schema.parse(detailsPrompt.parseText!('User: "Find a hotel in Lima for 3 nights from 4 May, under $90 a night."')).query).toBe('Find a hotel in Lima for 3 nights from 4 May, under $90 a night.');
    const multi = multiToolPrompt.schema.parse(multiToolPrompt.parseText!('1. (causal) User: Get Apple\'s stock price and then the latest news on it.\n2. (parallel) User: Weather in Oslo, and flights to Rome.\n3. User: Unmarked query.'));
    expect(multi.queries.map((q) => q.usage)).toEqual(['causal', 'parallel', null]);
  });

  it('an answer with nothing usable fails the schema rather than yielding empty queries', () => {
    expect(directPrompt.schema.safeParse(directPrompt.parseText!('1. User: \n2. User: ""')).success).toBe(false);
  });
});
