import { copyFileSync, cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { eachAtisUtterance, loadAtis } from '../stages/sources/atis.ts';
import { parseGenericDialogues } from '../stages/sources/generic-dialogue.ts';
import { loadMultiwoz, multiwozSchemas, loadMultiwozDb } from '../stages/sources/multiwoz.ts';
import { eachSgdDialogue, loadSgd, parseDialogueFile, parseSchemaFile, sgdTopic } from '../stages/sources/sgd.ts';
import { eachSnipsUtterance, loadSnips } from '../stages/sources/snips.ts';
import { fromData, fromFixtures } from './fixtures/mtu/paths.ts';
import { tempDirs, userErrorOf as thrown } from './helpers/files.ts';

const id = (p: string) => p;

describe('SNIPS loader', () => {
  it('reads every utterance of both splits with exact slot spans', () => {
    const utterances = loadSnips({ dir: fromData('sources/snips'), splits: ['train', 'validate'] }, id);
    expect(utterances).toHaveLength(2800);
    expect(utterances.filter((u) => u.split === 'validate')).toHaveLength(700);
    const spans = utterances.flatMap((u) => u.slots.map((s) => [u.text.slice(s.start, s.end), s.value]));
    expect(spans.length).toBeGreaterThan(5000);
    for (const [sliced, value] of spans) expect(sliced).toBe(value);
  });

  it('fails naming the file and utterance of a malformed segment', () => {
    expect(thrown(() => loadSnips({ dir: fromFixtures('snips-broken'), splits: ['train'] }, id))).toMatch(/snips-broken\/train_PlayMusic\.json: not SNIPS segment JSON at PlayMusic\.1\.data\.1\.text/);
  });

  it('names the folder when it holds no files of a split', () => {
    expect(thrown(() => loadSnips({ dir: fromFixtures('generic'), splits: ['train'] }, id))).toMatch(/no SNIPS files for splits train/);
  });
});

describe('ATIS loader', () => {
  it('reads the three splits, keeps multi-intent labels and decodes spans exactly', () => {
    const utterances = loadAtis({ dir: fromData('sources/atis'), splits: ['train', 'valid', 'test'] }, id);
    expect(utterances.map((u) => u.split).filter((s) => s === 'train')).toHaveLength(4478);
    expect(utterances.filter((u) => u.split === 'valid')).toHaveLength(500);
    expect(utterances.filter((u) => u.split === 'test')).toHaveLength(893);
    const multi = utterances.filter((u) => u.intents.length > 1);
    expect(multi.length).toBe(41);
    expect(multi[0].intents.every((i) => i.startsWith('atis_'))).toBe(true);
    for (const u of utterances) for (const s of u.slots) expect(u.text.slice(s.start, s.end)).toBe(s.value);
    expect(utterances[0]).toMatchObject({ id: 'train/1', text: 'i want to fly from baltimore to dallas round trip' });
    expect(utterances[0].slots.map((s) => [s.name, s.value])).toEqual([
      ['fromloc.city_name', 'baltimore'],
      ['toloc.city_name', 'dallas'],
      ['round_trip', 'round trip'],
    ]);
  });

  it('fails on a token / tag count mismatch with the file and line', () => {
    const message = thrown(() => loadAtis({ dir: fromFixtures('atis-mismatch'), splits: ['train'] }, id));
    expect(message).toMatch(/atis-mismatch\/train\/seq\.out:2: 4 tags for 5 tokens/);
  });

  it('fails on a tag that is not BIO, and on a missing split folder', () => {
    expect(thrown(() => loadAtis({ dir: fromFixtures('atis-badtag'), splits: ['train'] }, id))).toMatch(/seq\.out:2: tag 3 "X-toloc\.city_name" is not BIO/);
    expect(thrown(() => loadAtis({ dir: fromFixtures('atis-badtag'), splits: ['test'] }, id))).toMatch(/ATIS file missing: .*atis-badtag\/test\/seq\.in/);
  });
});

describe('SGD loader', () => {
  it('reads schemas and dialogues, keeping system service calls with their results', () => {
    const dialogues = loadSgd({ dir: fromData('sources/sgd'), splits: ['dev'] }, id);
    expect(dialogues).toHaveLength(128);
    const first = dialogues[0];
    expect(first).toMatchObject({ source: 'sgd', id: 'dev/1_00000', split: 'dev', services: ['Restaurants_2'], domains: ['Restaurants'] });
    expect(first.schema.map((i) => i.name).sort()).toEqual(['FindRestaurants', 'ReserveRestaurant']);
    const calls = dialogues.flatMap((d) => d.turns.flatMap((t) => t.serviceCalls ?? []));
    expect(calls.length).toBeGreaterThan(100);
    expect(calls.every((c) => Array.isArray(c.results))).toBe(true);
    const user = first.turns[0];
    expect(user.speaker).toBe('user');
    expect(user.frames?.[0]).toMatchObject({ service: 'Restaurants_2', intent: 'ReserveRestaurant' });
  });

  it('fails naming the file, the dialogue and the turn when a service call names no intent of the schema', () => {
    const schemas = parseSchemaFile(fromFixtures('sgd-broken/dev/schema.json'));
    const message = thrown(() => parseDialogueFile(fromFixtures('sgd-broken/dev/dialogues_001.json'), { source: 'sgd', split: 'dev', schemas, topicOf: sgdTopic }));
    expect(message).toMatch(/sgd-broken\/dev\/dialogues_001\.json: dialogue 1 \(9_00001\) turn 1: service_call method "GetForecast" is not an intent of Weather_1/);
  });

  it('fails on a schema that is not SGD schema JSON', () => {
    expect(thrown(() => parseSchemaFile(fromFixtures('generic/dialogues.jsonl')))).toMatch(/not valid JSON/);
    expect(thrown(() => parseSchemaFile(fromFixtures('multiwoz/dialogues/test/dialogues_001.json')))).toMatch(/service 0 is not SGD schema JSON at 0\.service_name/);
  });
});

describe('MultiWOZ loader', () => {
  it('fills result slots from the databases', () => {
    const dir = fromData('sources/multiwoz');
    const schemas = multiwozSchemas(dir, loadMultiwozDb(dir));
    const findHotel = schemas.get('hotel')!.find((i) => i.name === 'find_hotel')!;
    expect(findHotel.result).toEqual(expect.arrayContaining(['name', 'address', 'phone', 'pricerange', 'area']));
    expect(findHotel.result).not.toContain('location');
    expect(schemas.get('hotel')!.find((i) => i.name === 'book_hotel')!.result).toContain('reference');
  });

  it('reads SGD-format dialogues when given, none otherwise', () => {
    const dir = fromData('sources/multiwoz');
    expect(loadMultiwoz({ dir, splits: ['test'] }, id)).toEqual([]);
    const dialogues = loadMultiwoz({ dir, dialogues: fromFixtures('multiwoz/dialogues'), splits: ['train', 'test'] }, id);
    expect(dialogues.map((d) => d.id)).toEqual(['test/FIX0001.json', 'test/FIX0002.json']);
    expect(dialogues[0]).toMatchObject({ source: 'multiwoz', database: 'multiwoz', domains: ['Hotels', 'Restaurants'] });
    expect(dialogues[0].turns[0].frames?.find((f) => f.service === 'hotel')).toMatchObject({ intent: 'find_hotel', slotValues: { 'hotel-area': ['north'] } });
  });

  it('fails naming the file and dialogue of a service the schema lacks', () => {
    const message = thrown(() => loadMultiwoz({ dir: fromData('sources/multiwoz'), dialogues: fromFixtures('multiwoz-broken'), splits: ['test'] }, id));
    expect(message).toMatch(/multiwoz-broken\/test\/dialogues_001\.json: dialogue 0 \(BAD0001\.json\): service "spaceship" is not in the split's schema\.json/);
  });
});

describe('generic dialogue loader', () => {
  it('reads plain dialogues, merging consecutive turns of one speaker', () => {
    const dialogues = parseGenericDialogues(fromFixtures('generic/dialogues.jsonl'), { name: 'shop', split: 'train' });
    expect(dialogues.map((d) => d.id)).toEqual(['shop-1', 'shop-2', 'shop-3']);
    expect(dialogues[1].turns).toHaveLength(2);
    expect(dialogues[1].turns[0].text).toBe('Play some jazz in the kitchen and add it to my evening playlist');
    expect(dialogues[0]).toMatchObject({ source: 'shop', services: ['shop'], domains: ['Restaurants'], schema: [] });
  });

  it('fails naming the file and line of a malformed dialogue', () => {
    const message = thrown(() => parseGenericDialogues(fromFixtures('generic/broken.jsonl'), { name: 'x', split: 'train' }));
    expect(message).toMatch(/generic\/broken\.jsonl:2: turns\.0\.role/);
  });
});

describe('sources read one record at a time', () => {
  const tempDir = tempDirs('tk-sources-');
  /** The first record of `records`, then the message of the error the rest ends in. */
  const firstThenError = <T>(records: Iterator<T>): [T, string] => {
    const first = records.next();
    expect(first.done).toBe(false);
    const rest = () => {
      while (!records.next().done);
    };
    return [first.value as T, thrown(rest)];
  };

  it('SGD: a split is read a dialogues file at a time, so the dialogues before a broken file come first', () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'dev'));
    cpSync(fromData('sources/sgd/dev/schema.json'), join(dir, 'dev/schema.json'));
    copyFileSync(fromData('sources/sgd/dev/dialogues_001.json'), join(dir, 'dev/dialogues_001.json'));
    writeFileSync(join(dir, 'dev/dialogues_002.json'), '[{"dialogue_id": ');
    const [first, message] = firstThenError(eachSgdDialogue({ dir, splits: ['dev'] }, id));
    expect(first.id).toBe('dev/1_00000');
    expect(message).toMatch(/dialogues_002\.json/);
  });

  it('ATIS: the three files are read in step, line by line', () => {
    const [first, message] = firstThenError(eachAtisUtterance({ dir: fromFixtures('atis-mismatch'), splits: ['train'] }, id));
    expect(first.id).toBe('train/1');
    expect(message).toMatch(/atis-mismatch\/train\/seq\.out:2: 4 tags for 5 tokens/);
  });

  it('SNIPS: one file at a time', () => {
    const dir = tempDir();
    copyFileSync(fromData('sources/snips/train_AddToPlaylist.json'), join(dir, 'train_AddToPlaylist.json'));
    copyFileSync(fromFixtures('snips-broken/train_PlayMusic.json'), join(dir, 'train_PlayMusic.json'));
    const [first, message] = firstThenError(eachSnipsUtterance({ dir, splits: ['train'] }, id));
    expect(first.file).toBe('train_AddToPlaylist.json');
    expect(message).toMatch(/train_PlayMusic\.json: not SNIPS segment JSON/);
  });
});
