import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { MAX_LINE_BYTES, parseJsonText, readJsonlLines, readLines } from '../core/source-files.ts';
import { MtuConfig } from '../stages/mtu/config.ts';
import { loadMtuSources } from '../stages/mtu/load-sources.ts';
import { loadAtis } from '../stages/sources/atis.ts';
import { parseGenericDialogues } from '../stages/sources/generic-dialogue.ts';
import { loadMetatoolPlugins } from '../stages/sources/metatool-plugins.ts';
import { loadMultiwozDb } from '../stages/sources/multiwoz.ts';
import { loadDomainFields, loadNesToolsSamples } from '../stages/sources/nestools.ts';
import { loadSealToolsLibrary } from '../stages/sources/seal-tools.ts';
import { parseSchemaFile } from '../stages/sources/sgd.ts';
import { loadSnips } from '../stages/sources/snips.ts';
import { tempDirs, userErrorOf as thrown } from './helpers/files.ts';

const projectDir = fileURLToPath(new URL('..', import.meta.url));
const fixture = (path: string) => fileURLToPath(new URL(`./fixtures/sources/${path}`, import.meta.url));
const id = (path: string) => path;
const tempDir = tempDirs('source-files-');

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('JSON syntax errors in source files', () => {
  it('gives the line and column of errors V8 reports with and without a position', () => {
    expect(parseJsonText('{\n  "a": [1,\n  2,\n  oops]\n}')).toEqual({ error: { line: 4, column: 3, message: "Unexpected token 'o'" } });
    expect(parseJsonText('{"a": 1,}')).toEqual({ error: { line: 1, column: 9, message: 'Expected double-quoted property name' } });
    expect(parseJsonText('[1, 2]\n]')).toEqual({ error: { line: 2, column: 1, message: 'Unexpected non-whitespace character after JSON' } });
    expect(parseJsonText('[\n"x\\q"]')).toEqual({ error: { line: 2, column: 4, message: 'Bad escaped character' } });
    expect(parseJsonText('{"a": [1,\n')).toEqual({ error: { line: 2, column: 1, message: 'Unexpected end of JSON input' } });
    expect(parseJsonText('[1, {"b": [true, nul]}]')).toMatchObject({ error: { line: 1, column: 21 } });
    expect(parseJsonText('{"a": [1, 2]}')).toEqual({ value: { a: [1, 2] } });
  });

  it.each([
    ['SNIPS', 'snips-syntax/train_PlayMusic.json', 4, 83, () => loadSnips({ dir: fixture('snips-syntax'), splits: ['train'] }, id)],
    ['SGD schema', 'sgd-syntax/dev/schema.json', 9, 58, () => parseSchemaFile(fixture('sgd-syntax/dev/schema.json'))],
    ['MultiWOZ database', 'multiwoz-syntax/db/hotel_db.json', 3, 50, () => loadMultiwozDb(fixture('multiwoz-syntax'))],
    ['MetaTool plugins', 'plugins-syntax.json', 6, 40, () => loadMetatoolPlugins(fixture('plugins-syntax.json'))],
    ['NesTools domain list', 'fields-syntax.json', 4, 3, () => loadDomainFields(fixture('fields-syntax.json'))],
  ])('%s: names file:line:column and what to do', (_name, file, line, column, load) => {
    expect(thrown(load)).toMatch(new RegExp(`^${escape(fixture(file))}:${line}:${column}: not valid JSON \\(.+\\); fix the JSON there \\(expected .+\\)$`));
  });

  it.each([
    ['generic dialogues', 'dialogues-syntax.jsonl', 3, 79, () => parseGenericDialogues(fixture('dialogues-syntax.jsonl'), { name: 'x', split: 'train' })],
    ['NesTools records', 'nestools-syntax.jsonl', 2, 37, () => loadNesToolsSamples(fixture('nestools-syntax.jsonl'))],
    ['Seal-Tools library', 'seal-tools-syntax.jsonl', 3, 72, () => loadSealToolsLibrary(fixture('seal-tools-syntax.jsonl'))],
  ])('%s (JSONL): names file:line:column and what to do', (_name, file, line, column, load) => {
    expect(thrown(load)).toMatch(new RegExp(`^${escape(fixture(file))}:${line}:${column}: not valid JSON \\(.+\\); fix or remove that line`));
  });
});

describe('ATIS splits and BIO tags', () => {
  it('refuses a split whose files are empty', () => {
    expect(thrown(() => loadAtis({ dir: fixture('atis-empty'), splits: ['train'] }, id))).toMatch(/atis-empty\/train: seq\.in, seq\.out and label are empty; an ATIS split needs one utterance per line/);
  });

  it('refuses an I- tag with no B- of its slot before it, naming file and line', () => {
    const message = thrown(() => loadAtis({ dir: fixture('atis-orphan'), splits: ['train'] }, id));
    expect(message).toMatch(/atis-orphan\/train\/seq\.out:2: tag 3 "I-fromloc\.city_name" continues no fromloc\.city_name slot \(no B-fromloc\.city_name before it\)/);
    expect(message).toMatch(/set sources\.atis\.lenientBio to true/);
  });

  it('reads such a tag as B- when the MTU config says sources.atis.lenientBio', () => {
    expect(MtuConfig.parse({}).sources.atis.lenientBio).toBeFalsy();
    const only = (atis: object) => MtuConfig.parse({ sources: { snips: { enabled: false }, sgd: { enabled: false }, multiwoz: { enabled: false }, atis: { dir: fixture('atis-orphan'), splits: ['train'], ...atis } } });
    expect(thrown(() => [...loadMtuSources(only({}), id)])).toMatch(/seq\.out:2: tag 3/);
    const dialogues = [...loadMtuSources(only({ lenientBio: true }), id)];
    expect(dialogues).toHaveLength(2);
    expect(dialogues[1].turns[0].slots).toEqual([
      { name: 'fromloc.city_name', value: 'new york', start: 13, end: 21 },
      { name: 'toloc.city_name', value: 'san francisco', start: 25, end: 38 },
    ]);
  });
});

describe('line length limit', () => {
  it('reads lines in chunks, keeping numbers, multi-byte characters and a last line without a break', () => {
    const dir = tempDir();
    const wide = 'é'.repeat(50_000); // 100,000 bytes: crosses a chunk boundary mid-character
    writeFileSync(join(dir, 'a.txt'), `one\n\n${wide}\nlast`);
    expect([...readLines(join(dir, 'a.txt'))]).toEqual([
      { line: 1, text: 'one' },
      { line: 2, text: '' },
      { line: 3, text: wide },
      { line: 4, text: 'last' },
    ]);
    writeFileSync(join(dir, 'b.txt'), 'x\ny\n');
    expect([...readLines(join(dir, 'b.txt'))].map((l) => l.text)).toEqual(['x', 'y']);
  });

  it('accepts a line of exactly 1 MB and refuses one byte more, naming file and line', () => {
    const dir = tempDir();
    const line = (bytes: number) => `{"a": "${'x'.repeat(bytes - 9)}"}`;
    writeFileSync(join(dir, 'ok.jsonl'), `{}\n${line(MAX_LINE_BYTES)}\n`);
    expect(readJsonlLines(join(dir, 'ok.jsonl'))).toHaveLength(2);
    writeFileSync(join(dir, 'long.jsonl'), `{}\n${line(MAX_LINE_BYTES + 1)}\n{}\n`);
    expect(thrown(() => readJsonlLines(join(dir, 'long.jsonl')))).toBe(
      `${join(dir, 'long.jsonl')}:2: line is longer than 1,048,576 bytes (1 MB), the most a source line may hold; split that record or check that the file has line breaks`,
    );
  });

  it('is enforced by the line-based loaders', () => {
    const dir = tempDir();
    const long = 'y'.repeat(MAX_LINE_BYTES + 10);
    mkdirSync(join(dir, 'atis/train'), { recursive: true });
    writeFileSync(join(dir, 'atis/train/seq.in'), `flights to boston\n${long}\n`);
    writeFileSync(join(dir, 'atis/train/seq.out'), 'O O B-toloc.city_name\nO\n');
    writeFileSync(join(dir, 'atis/train/label'), 'atis_flight\natis_flight\n');
    expect(thrown(() => loadAtis({ dir: join(dir, 'atis'), splits: ['train'] }, id))).toMatch(/atis\/train\/seq\.in:2: line is longer than 1,048,576 bytes/);
    const jsonl = join(dir, 'big.jsonl');
    writeFileSync(jsonl, `\n\n{"x": "${long}"}\n`);
    expect(thrown(() => parseGenericDialogues(jsonl, { name: 'x', split: 'train' }))).toMatch(/big\.jsonl:3: line is longer/);
    expect(thrown(() => loadNesToolsSamples(jsonl))).toMatch(/big\.jsonl:3: line is longer/);
    expect(thrown(() => loadSealToolsLibrary(jsonl))).toMatch(/big\.jsonl:3: line is longer/);
  });

  it('refuses a 50 MB line without holding it in memory', () => {
    const dir = tempDir();
    const big = join(dir, 'big.jsonl');
    const fd = openSync(big, 'w');
    const block = Buffer.alloc(1 << 20, 'z');
    writeSync(fd, '{"turns": "');
    for (let i = 0; i < 50; i++) writeSync(fd, block);
    writeSync(fd, '"}\n');
    closeSync(fd);
    const small = join(dir, 'small.jsonl');
    writeFileSync(small, `{"turns": "${'z'.repeat(1000)}"}\n`);
    // Each read runs in its own process, so its peak memory can be measured on its own.
    const script = join(dir, 'read.ts');
    writeFileSync(
      script,
      [
        `import { parseGenericDialogues } from ${JSON.stringify(join(projectDir, 'stages/sources/generic-dialogue.ts'))};`,
        `let message = '';`,
        `try { parseGenericDialogues(process.argv[2], { name: 'x', split: 'train' }); } catch (error) { message = error.message; }`,
        `console.log(JSON.stringify({ message, maxRssKb: process.resourceUsage().maxRSS }));`,
      ].join('\n'),
    );
    const read = (file: string) => JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', script, file], { cwd: projectDir, encoding: 'utf8' })) as { message: string; maxRssKb: number };
    const baseline = read(small);
    const result = read(big);
    expect(result.message).toMatch(/big\.jsonl:1: line is longer than 1,048,576 bytes/);
    // Reading the line whole would take its 50 MB twice over (bytes and string).
    expect(result.maxRssKb - baseline.maxRssKb).toBeLessThan(25 * 1024);
  }, 60_000);
});
