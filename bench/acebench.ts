// `npm run bench -- acebench [--runs n]`: on the released ACEBench files (both languages), checking
// every function definition and validating every gold call of the normal categories against its
// schema, and executing every agent record's mile_stone in the sandboxes, each against the floor of
// only reading and JSON-parsing the same files (median of n runs); then a full offline
// `toolkiln run acebench` in a fresh process (samples, rejects, wall).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ArgumentValidator, checkFunctionDefinition } from '../core/json-schema.ts';
import { goldCallsOf } from '../stages/acebench/rule-checks.ts';
import { ACE_LANGUAGES, type AceCategory, type AceRecord } from '../stages/acebench/record.ts';
import { replayReleased } from '../stages/acebench/sandbox/replay.ts';
import { timeSync } from './lib/timing.ts';

const projectDir = fileURLToPath(new URL('..', import.meta.url));
const RELEASED = fileURLToPath(new URL('../../shared/data/reference/acebench', import.meta.url));

/** The released files of some categories, as paths of data and answer files. */
function releasedFiles(select: (category: string) => boolean): { category: AceCategory; language: (typeof ACE_LANGUAGES)[number]; data: string; answer: string }[] {
  return ACE_LANGUAGES.flatMap((language) => {
    const dir = join(RELEASED, `data_${language}`);
    return readdirSync(dir)
      .filter((file) => file.endsWith('.json') && select(file.slice(5, -5)))
      .map((file) => ({ category: file.slice(5, -5) as AceCategory, language, data: join(dir, file), answer: join(dir, 'possible_answer', file) }));
  });
}

const parseLines = (path: string) => readFileSync(path, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line));

function readRecords(files: ReturnType<typeof releasedFiles>): AceRecord[] {
  return files.flatMap(({ category, language, data, answer }) => {
    const answers = new Map(parseLines(answer).map((line) => [line.id, line]));
    return parseLines(data).map((line) => ({ category, language, data: line, answer: answers.get(line.id) ?? null }));
  });
}

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { runs: { type: 'string', default: '9' } } });
  const runs = Number(values.runs);

  const normal = releasedFiles((c) => c.startsWith('normal_'));
  const records = readRecords(normal);
  const definitions = records.reduce((n, r) => n + r.data.function.length, 0);
  const calls = records.reduce((n, r) => n + goldCallsOf(r).flat().filter((c) => c.fn).length, 0);
  const floorNormal = timeSync(runs, () => readRecords(normal));
  const validate = timeSync(runs, () => {
    const validator = new ArgumentValidator();
    for (const record of readRecords(normal)) {
      for (const fn of record.data.function) checkFunctionDefinition(fn);
      for (const call of goldCallsOf(record).flat()) if (call.fn) validator.validate(call.fn.parameters ?? call.fn.arguments, call.args);
    }
  });

  const agent = releasedFiles((c) => c.startsWith('agent_'));
  let replay = replayReleased(RELEASED);
  const floorAgent = timeSync(runs, () => readRecords(agent));
  const execute = timeSync(runs, () => (replay = replayReleased(RELEASED)));

  process.stdout.write(`median of ${runs} runs; floor = reading and JSON-parsing the same files\n\n`);
  process.stdout.write('| step | records | work | ms | floor ms | ratio |\n|---|---:|---:|---:|---:|---:|\n');
  process.stdout.write(`| read + check ${definitions} definitions + validate ${calls} gold calls (normal, en + zh) | ${records.length} | ${definitions + calls} checks | ${validate.toFixed(1)} | ${floorNormal.toFixed(1)} | ${(validate / floorNormal).toFixed(1)}× |\n`);
  process.stdout.write(`| read + execute every agent mile_stone in the sandboxes (en + zh) | ${replay.total} | ${replay.calls} calls, ${replay.reproduced} states reproduced | ${execute.toFixed(1)} | ${floorAgent.toFixed(1)} | ${(execute / floorAgent).toFixed(1)}× |\n\n`);

  const home = mkdtempSync(join(tmpdir(), 'tk-bench-acebench-'));
  try {
    const started = performance.now();
    const child = spawnSync(process.execPath, ['bin/toolkiln.js', 'run', 'acebench', '--llm', 'offline', '--json', '--quiet'], { cwd: projectDir, encoding: 'utf8', env: { ...process.env, TOOLKILN_HOME: home } });
    const wall = (performance.now() - started) / 1000;
    if (child.status !== 0) throw new Error(`toolkiln run acebench failed: ${child.stderr}`);
    const manifest = JSON.parse(readFileSync(join(home, 'datasets', 'acebench', 'v1', 'manifest.json'), 'utf8'));
    const categories = Object.keys(manifest.counts.byCategory).length;
    process.stdout.write('| full offline run (fresh process) | samples | categories | rejects | wall s | ms per sample |\n|---|---:|---:|---:|---:|---:|\n');
    process.stdout.write(`| toolkiln run acebench --llm offline | ${manifest.counts.samples} | ${categories} | ${manifest.counts.rejects} | ${wall.toFixed(1)} | ${((wall * 1000) / manifest.counts.samples).toFixed(1)} |\n`);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}
