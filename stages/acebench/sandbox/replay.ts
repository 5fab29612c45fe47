import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { UserError, messageOf } from '../../../core/errors.ts';
import type { Json } from '../../../core/records.ts';
import { ACE_AGENT_CATEGORIES, ACE_LANGUAGES, aceFileName, type AceCategory, type AceLanguage, type AceRecord } from '../record.ts';
import { SandboxSession, type CallOutcome } from './execute.ts';
import { readSourceText } from '../../../core/source-files.ts';

/**
 * Replays the released agent records: each record's mile_stone runs from its initial_config and
 * the final state is compared with its possible_answer ground_truth, class by class.
 */

/**
 * Class names the released answers misspell, read as the class they mean. ACEBench's own checker
 * matches classes by exact name, so under it these entries are never compared.
 */
export const ANSWER_CLASS_TYPOS: Record<string, string> = { ReminderAPI: 'ReminderApi', Reminderpi: 'ReminderApi', BaseAPI: 'BaseApi' };

export interface ClassDifference {
  className: string;
  /** The first differing path inside the class state, e.g. `users.Eve.balance`. */
  path: string;
  expected: Json | undefined;
  actual: Json | undefined;
}

/** One mile_stone path's replay (a record whose mile_stone lists alternatives has several). */
export interface PathOutcome {
  reproduced: boolean;
  differences: ClassDifference[];
  /** Calls the sandbox rejected (the harness would have answered them with an error too). */
  rejected: CallOutcome[];
  repairedQuotes: number;
}

export interface RecordOutcome {
  language: AceLanguage;
  category: AceCategory;
  id: string;
  /** True when some mile_stone path reaches the ground_truth exactly. */
  reproduced: boolean;
  paths: PathOutcome[];
  /** Answer class names read through ANSWER_CLASS_TYPOS. */
  classTypos: string[];
  ignoredConfigKeys: readonly string[];
  calls: number;
}

export interface ReleasedReplay {
  records: RecordOutcome[];
  reproduced: number;
  total: number;
  calls: number;
}

function readJsonLines(path: string): Record<string, Json>[] {
  if (!existsSync(path)) throw new UserError(`${path}: cannot read the released ACEBench file (no such file); point the replay at the folder holding data_en/ and data_zh/`);
  const text = readSourceText(path);
  return text.split('\n').flatMap((line, index) => {
    if (!line.trim()) return [];
    try {
      return [JSON.parse(line) as Record<string, Json>];
    } catch (error) {
      throw new UserError(`${path}:${index + 1}: not a JSON line (${messageOf(error)})`);
    }
  });
}

/** The path of the first place two JSON values differ ('' for the values themselves), or null when they are equal. */
function firstDifference(expected: Json | undefined, actual: Json | undefined, path: string): ClassDifference['path'] | null {
  if (expected === actual) return null;
  if (typeof expected !== 'object' || typeof actual !== 'object' || expected === null || actual === null || Array.isArray(expected) !== Array.isArray(actual)) return path;
  if (Array.isArray(expected) && Array.isArray(actual)) {
    if (expected.length !== actual.length) return `${path}.length`;
    for (let i = 0; i < expected.length; i++) {
      const found = firstDifference(expected[i], actual[i], `${path}[${i}]`);
      if (found !== null) return found;
    }
    return null;
  }
  const e = expected as Record<string, Json>;
  const a = actual as Record<string, Json>;
  for (const key of new Set([...Object.keys(e), ...Object.keys(a)])) {
    const found = firstDifference(e[key], a[key], path ? `${path}.${key}` : key);
    if (found !== null) return found;
  }
  return null;
}

function valueAt(value: Json | undefined, path: string): Json | undefined {
  let current: Json | undefined = value;
  for (const part of path.split(/\.|\[(\d+)\]/).filter((p) => p !== undefined && p !== '')) {
    if (part === 'length' && Array.isArray(current)) return current.length;
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, Json>)[part];
  }
  return current;
}

/** Compares a session's final state with a ground_truth list, class by class. */
export function compareWithAnswer(state: Record<string, Record<string, Json>>, groundTruth: Json): { differences: ClassDifference[]; classTypos: string[] } {
  const expected = Array.isArray(groundTruth) ? groundTruth : [groundTruth];
  const differences: ClassDifference[] = [];
  const classTypos: string[] = [];
  const covered = new Set<string>();
  for (const entry of expected) {
    if (!entry || typeof entry !== 'object' || Array.isArray(entry) || Object.keys(entry).length !== 1) {
      differences.push({ className: '', path: `ground_truth entry ${JSON.stringify(entry)}`, expected: entry, actual: undefined });
      continue;
    }
    const [writtenName, classState] = Object.entries(entry as Record<string, Json>)[0]!;
    const className = ANSWER_CLASS_TYPOS[writtenName] ?? writtenName;
    if (className !== writtenName) classTypos.push(writtenName);
    covered.add(className);
    const path = firstDifference(classState, state[className], '');
    if (path !== null) differences.push({ className, path, expected: valueAt(classState, path), actual: valueAt(state[className], path) });
  }
  for (const className of Object.keys(state)) {
    if (!covered.has(className)) differences.push({ className, path: '', expected: undefined, actual: state[className] });
  }
  return { differences, classTypos };
}

/**
 * Runs an agent record's mile_stone from its initial_config and compares the final state with its
 * ground_truth. Each path runs in a fresh session; a record whose mile_stone lists alternative
 * paths is reproduced when one of them reaches the answer. `where` names the record in messages.
 */
export function replayRecord(record: AceRecord, where: string): RecordOutcome {
  const { category, language, data, answer } = record;
  const mileStone = answer?.mile_stone;
  // No mile_stone, no path: the record is not reproduced (an empty path would compare as if it were).
  const paths = (!Array.isArray(mileStone) || mileStone.length === 0 ? [] : Array.isArray(mileStone[0]) ? mileStone : [mileStone]) as string[][];
  const outcome: RecordOutcome = { language, category, id: data.id, reproduced: false, paths: [], classTypos: [], ignoredConfigKeys: [], calls: 0 };
  for (const path of paths) {
    const session = new SandboxSession({ initialConfig: data.initial_config ?? {}, involvedClasses: (data.involved_classes ?? []) as string[], language, where });
    const results = session.execute(path);
    const { differences, classTypos } = compareWithAnswer(session.state(), answer?.ground_truth ?? []);
    outcome.paths.push({ reproduced: differences.length === 0, differences, rejected: results.filter((r) => !r.ok), repairedQuotes: session.repairedQuotes });
    outcome.classTypos = classTypos;
    outcome.ignoredConfigKeys = session.ignoredConfigKeys;
    outcome.calls += results.length;
  }
  outcome.reproduced = outcome.paths.some((p) => p.reproduced);
  return outcome;
}

/**
 * Replays every released agent record under `dir` (the folder holding data_en/ and data_zh/),
 * both categories and languages. Each mile_stone path runs in a fresh session; a record whose
 * mile_stone lists alternative paths is reproduced when one of them reaches the answer.
 */
export function replayReleased(dir: string): ReleasedReplay {
  const replay: ReleasedReplay = { records: [], reproduced: 0, total: 0, calls: 0 };
  for (const language of ACE_LANGUAGES) {
    for (const category of ACE_AGENT_CATEGORIES) {
      const dataPath = join(dir, `data_${language}`, aceFileName(category));
      const answerPath = join(dir, `data_${language}`, 'possible_answer', aceFileName(category));
      const answers = new Map(readJsonLines(answerPath).map((answer) => [answer.id as string, answer]));
      for (const data of readJsonLines(dataPath)) {
        const id = data.id as string;
        const answer = answers.get(id);
        if (!answer) throw new UserError(`${answerPath}: no answer for record ${id}`);
        const outcome = replayRecord({ category, language, data: data as AceRecord['data'], answer: answer as AceRecord['answer'] }, `${dataPath} ${id} initial_config`);
        replay.records.push(outcome);
        replay.total++;
        replay.calls += outcome.calls;
        if (outcome.reproduced) replay.reproduced++;
      }
    }
  }
  return replay;
}
