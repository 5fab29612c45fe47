import { crc32 } from 'node:zlib';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { appendJournalLine, isConsistent, rawOutputs, type JournalEntry, type LineAppender } from '../core/journal-line.ts';
import { OfflineGateway } from '../core/llm/offline.ts';
import { runPipeline } from '../core/run.ts';
import { DatasetStore } from '../core/store.ts';
import { echoPipeline, interruption } from './fixtures/core/echo-pipeline.ts';

const LINES = ['a', 'b', 'c', 'd'];

function homeWithLines(): { home: string; file: string } {
  const home = mkdtempSync(join(tmpdir(), 'tk-journal-'));
  const file = join(home, 'lines.txt');
  writeFileSync(file, LINES.join('\n') + '\n');
  return { home, file };
}

function echo(home: string, file: string, resume?: string) {
  return runPipeline({ pipeline: echoPipeline, configOverrides: resume ? undefined : { file }, llm: new OfflineGateway(42), home, projectDir: process.cwd(), cwd: home, progress: { quiet: true }, concurrency: 1, resume });
}

/** A run cut off at line `c`: the `ask` stage has journalled lines a and b. Returns its id and its journal's path. */
async function interruptedRun(home: string, file: string): Promise<{ runId: string; journal: string }> {
  interruption.onText = 'c';
  try {
    await expect(echo(home, file)).rejects.toThrow(/interrupted/);
  } finally {
    interruption.onText = null;
  }
  const [runId] = readdirSync(join(home, '.toolkiln', 'runs'));
  return { runId, journal: join(home, '.toolkiln', 'runs', runId, 'stages', '02-ask', 'journal.jsonl') };
}

/** The published data files of a home's `echo` dataset. */
function dataOf(home: string): Record<string, string> {
  const store = new DatasetStore(home);
  const [version] = store.versions('echo');
  const dir = join(home, 'datasets', 'echo', version, 'data');
  return Object.fromEntries(readdirSync(dir).map((name) => [name, readFileSync(join(dir, name), 'utf8')]));
}

async function uninterruptedData(): Promise<Record<string, string>> {
  const { home, file } = homeWithLines();
  await echo(home, file);
  return dataOf(home);
}

const linesOf = (path: string) => readFileSync(path, 'utf8').split('\n').filter(Boolean);

describe('journal lines of a per-record stage', () => {
  it('hold each output as the JSON text out.jsonl gets, led by its byte length and a checksum', async () => {
    const { home, file } = homeWithLines();
    const { journal } = await interruptedRun(home, file);
    const lines = linesOf(journal);
    expect(lines).toHaveLength(2);
    for (const line of lines) {
      const entry = JSON.parse(line) as JournalEntry & { n: number[]; sum: number };
      expect(entry.out).toHaveLength(1);
      expect(entry.n).toEqual([Buffer.byteLength(JSON.stringify(entry.out![0]))]);
      const bytes = Buffer.from(line);
      expect(rawOutputs(bytes)!.map((raw) => raw.toString())).toEqual([JSON.stringify(entry.out![0])]);
      expect(isConsistent(entry, bytes)).toBe(true);
    }
  });

  /** The journal line of an entry, as appended to a journal. */
  const journalLine = (rest: Omit<JournalEntry, 'out'>, outputs: string[]): string => {
    let line = '';
    const journal: LineAppender = {
      appendWith(most, write) {
        const target = Buffer.alloc(most + 8);
        const length = write(target, 4);
        line = target.toString('utf8', 4, 4 + length);
        return { start: 0, length };
      },
    };
    appendJournalLine(journal, rest, outputs);
    return line;
  };

  it('keep several outputs of one record apart, and a reject as plain JSON', () => {
    const outputs = [JSON.stringify({ text: 'é, "quoted", [1]' }), JSON.stringify({ text: 'second' })];
    const line = journalLine({ i: 7, k: 'key' }, outputs);
    // Byte lengths (é is two bytes), the CRC-32 of the outputs' text as written, the entry's fields, the outputs last.
    const text = outputs.join(',');
    expect(line).toBe(`{"n":[${outputs.map((output) => Buffer.byteLength(output)).join(',')}],"sum":${crc32(text)},"i":7,"k":"key","out":[${text}]}`);
    expect(journalLine({ i: 9, k: 'k', transport: true }, [outputs[1]])).toBe(`{"n":[17],"sum":${crc32(outputs[1])},"i":9,"k":"k","transport":true,"out":[${outputs[1]}]}`);
    const entry = JSON.parse(line) as JournalEntry;
    expect(entry).toMatchObject({ i: 7, k: 'key', out: [{ text: 'é, "quoted", [1]' }, { text: 'second' }] });
    expect(rawOutputs(Buffer.from(line))!.map((raw) => raw.toString())).toEqual(outputs);
    const rejected = journalLine({ i: 8, k: 'other', reject: { reason: 'bad' } }, []);
    expect(JSON.parse(rejected)).toEqual({ i: 8, k: 'other', reject: { reason: 'bad' } });
    expect(rawOutputs(Buffer.from(rejected))).toBeNull();
  });

  it('altered on disk but still JSON are found on resume: the record runs again and the dataset is as if never interrupted', async () => {
    const { home, file } = homeWithLines();
    const { runId, journal } = await interruptedRun(home, file);
    const [first, second] = linesOf(journal);
    // The same length, still JSON: only the checksum tells.
    const altered = first.replace('"content":"a"', '"content":"z"');
    expect(altered).not.toBe(first);
    expect(altered.length).toBe(first.length);
    expect(isConsistent(JSON.parse(altered), Buffer.from(altered))).toBe(false);
    writeFileSync(journal, `${altered}\n${second}\n`);

    expect((await echo(home, file, runId)).status).toBe('published');
    const data = dataOf(home);
    expect(data['test.jsonl']).not.toContain('"content":"z"');
    expect(data).toEqual(await uninterruptedData());
  });

  it('whose lengths no longer fit the line are found on resume too', async () => {
    const { home, file } = homeWithLines();
    const { runId, journal } = await interruptedRun(home, file);
    const [first, second] = linesOf(journal);
    const altered = first.replace('"content":"a"', '"content":"a longer text"');
    expect(isConsistent(JSON.parse(altered), Buffer.from(altered))).toBe(false);
    writeFileSync(journal, `${altered}\n${second}\n`);
    expect((await echo(home, file, runId)).status).toBe('published');
    expect(dataOf(home)).toEqual(await uninterruptedData());
  });

  it('written before outputs were kept as text (entries with `out` only) still resume to the same dataset', async () => {
    const { home, file } = homeWithLines();
    const { runId, journal } = await interruptedRun(home, file);
    const old = linesOf(journal).map((line) => {
      const { n: _n, sum: _sum, ...entry } = JSON.parse(line) as JournalEntry & { n: unknown; sum: unknown };
      return JSON.stringify(entry);
    });
    expect(old.every((line) => !line.includes('"n":') && line.includes('"out":'))).toBe(true);
    writeFileSync(journal, old.join('\n') + '\n');
    expect((await echo(home, file, runId)).status).toBe('published');
    expect(dataOf(home)).toEqual(await uninterruptedData());
  });
});
