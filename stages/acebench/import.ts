import { closeSync, existsSync, fstatSync, openSync, readSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { UserError, messageOf } from '../../core/errors.ts';
import { JsonValue, Sample, formatZodError } from '../../core/records.ts';
import { parseJsonText, jsonErrorMessage, readLines } from '../../core/source-files.ts';
import { sourceStage, type SourceStage } from '../../core/stage.ts';
import { aceRecordToSample, type AceRecordText } from './format.ts';
import { ACE_CATEGORIES, ACE_LANGUAGES, aceFileName, type AceCategory, type AceLanguage, type AceRecord } from './record.ts';

/**
 * Reads a folder laid out like the ACEBench release: `data_<lang>/data_<category>.json` (JSON Lines)
 * and `data_<lang>/possible_answer/data_<category>.json`, for each language folder present and each
 * category file found. Answers are matched to records by id; a record without one is kept (flagged
 * for review), an answer without a record, a repeated id, an unknown category file or a line that is
 * not a record stops the import with the file and line.
 */

const DataLine = z
  .object({
    id: z.string().min(1),
    question: z.string(),
    function: z.array(z.object({ name: z.string().min(1) }).passthrough()),
  })
  .passthrough();

const AnswerLine = z.object({ id: z.string().min(1), ground_truth: JsonValue }).passthrough();

/** One record read from the files, with its lines' text and where they are. */
export interface AceSourceRecord {
  record: AceRecord;
  text: AceRecordText;
  /** `file:line` of the data line and of the answer line (null without one). */
  at: { data: string; answer: string | null };
}

export function* readAceFolder(dir: string): Generator<AceSourceRecord> {
  const languages = ACE_LANGUAGES.filter((language) => existsSync(join(dir, `data_${language}`)));
  if (!languages.length) throw new UserError(`${dir}: no data_en/ or data_zh/ folder; point importDir at a folder laid out like the ACEBench release`);
  for (const language of languages) {
    for (const category of categoriesIn(dir, language)) yield* readCategory(dir, language, category);
  }
}

/** The categories a language folder has files for, in ACEBench's order; an unknown `data_*.json` is an error. */
function categoriesIn(dir: string, language: AceLanguage): AceCategory[] {
  const found = new Set<string>();
  for (const folder of [`data_${language}`, `data_${language}/possible_answer`]) {
    if (!existsSync(join(dir, folder))) continue;
    for (const name of readdirSync(join(dir, folder))) {
      const match = /^data_(.+)\.json$/.exec(name);
      if (!match) continue;
      if (!(ACE_CATEGORIES as readonly string[]).includes(match[1])) {
        throw new UserError(`${join(dir, folder, name)}: "${match[1]}" is not an ACEBench category (${ACE_CATEGORIES.join(', ')}); rename or remove the file`);
      }
      found.add(match[1]);
    }
  }
  return ACE_CATEGORIES.filter((category) => found.has(category));
}

function* readCategory(dir: string, language: AceLanguage, category: AceCategory): Generator<AceSourceRecord> {
  const dataPath = join(dir, `data_${language}`, aceFileName(category));
  const answerPath = join(dir, `data_${language}`, 'possible_answer', aceFileName(category));
  if (!existsSync(dataPath)) throw new UserError(`${answerPath}: answers without their records (${dataPath} is missing); add the data file or remove the answers`);
  const answers = existsSync(answerPath) ? readAnswers(answerPath) : new Map<string, AnswerEntry>();
  const dataUnterminated = lastLineUnterminated(dataPath);
  const seen = new Set<string>();
  // One record is held back: only the last line of a file can lack its line break.
  let pending: AceSourceRecord | null = null;
  for (const { line, text } of readLines(dataPath)) {
    if (pending) yield pending;
    const at = `${dataPath}:${line}`;
    const data = parseLine(dataPath, line, text, DataLine, 'an ACEBench record (id, question, function)');
    if (seen.has(data.id)) throw new UserError(`${at}: id ${data.id} appears twice in the file; give each record its own id`);
    seen.add(data.id);
    const answer = answers.get(data.id) ?? null;
    answers.delete(data.id);
    const record: AceRecord = { category, language, data: data as AceRecord['data'], answer: (answer?.value ?? null) as AceRecord['answer'] };
    pending = { record, text: { data: text, answer: answer?.text ?? null, answerUnterminated: answer?.unterminated }, at: { data: at, answer: answer ? answer.at : null } };
  }
  if (pending) yield { ...pending, text: { ...pending.text, dataUnterminated } };
  const orphan = answers.values().next().value;
  if (orphan) throw new UserError(`${orphan.at}: answer for id ${orphan.value.id} has no record in ${dataPath}; add the record or remove the answer`);
}

interface AnswerEntry {
  value: z.infer<typeof AnswerLine>;
  text: string;
  at: string;
  unterminated: boolean;
}

function readAnswers(path: string): Map<string, AnswerEntry> {
  const answers = new Map<string, AnswerEntry>();
  let last: AnswerEntry | undefined;
  for (const { line, text } of readLines(path)) {
    const value = parseLine(path, line, text, AnswerLine, 'an ACEBench answer (id, ground_truth)');
    const first = answers.get(value.id);
    if (first) throw new UserError(`${path}:${line}: a second answer for id ${value.id} (the first is ${first.at}); keep one`);
    last = { value, text, at: `${path}:${line}`, unterminated: false };
    answers.set(value.id, last);
  }
  if (last) last.unterminated = lastLineUnterminated(path);
  return answers;
}

function parseLine<T>(path: string, line: number, text: string, schema: z.ZodType<T>, expected: string): T {
  if (!text.trim()) throw new UserError(`${path}:${line}: empty line; remove it (each line holds ${expected})`);
  const parsed = parseJsonText(text);
  if ('error' in parsed) throw new UserError(jsonErrorMessage(path, { ...parsed.error, line }, { todo: 'fix that line', expected }));
  const checked = schema.safeParse(parsed.value);
  if (!checked.success) throw new UserError(`${path}:${line}: not ${expected}: ${formatZodError(checked.error)}; fix that line`);
  // The parsed value, not zod's copy: that one puts the schema's keys first, and key order is part of the line.
  return parsed.value as T;
}

/** The file's last line has no line break after it. */
function lastLineUnterminated(path: string): boolean {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    if (!size) return false;
    const last = Buffer.alloc(1);
    readSync(fd, last, 0, 1, size - 1);
    return last[0] !== 10;
  } finally {
    closeSync(fd);
  }
}

/** Each record of a released-layout folder as a canonical Sample (a bad record: file:line and what is wrong). */
export function importAceFolder(dir: string): Generator<Sample> {
  return (function* () {
    for (const { record, text, at } of readAceFolder(dir)) {
      try {
        yield aceRecordToSample(record, text);
      } catch (error) {
        if (!(error instanceof UserError)) throw error;
        throw new UserError(`${at.data}${at.answer ? ` (answer ${at.answer})` : ''}: ${messageOf(error)}`);
      }
    }
  })();
}

export interface ImportOptions {
  /** A folder laid out like the release (`data_en/`, `data_zh/`). */
  importDir: string;
}

/** The source stage: released ACEBench files → canonical samples. */
export function importStage(options: ImportOptions): SourceStage<Sample> {
  return sourceStage({
    name: 'import-acebench',
    version: 1,
    output: Sample,
    load: (ctx) => importAceFolder(ctx.resolvePath(options.importDir)),
  });
}
