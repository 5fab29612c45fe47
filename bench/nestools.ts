// `npm run bench -- nestools [--runs n]`: the NesTools consistency checker on the 1,000 released
// records (target: under 1 s), against the floor of only reading and JSON-parsing the same file, and
// as a whole process started cold (beside an empty tsx process, the start-up floor); plus the
// Python-program path on the same chains written as programs.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { renderProgram } from '../prompts/nestools-render-program.ts';
import { checkNesToolsFiles } from '../stages/nestools/check-files.ts';
import { loadNesToolsSamples } from '../stages/sources/nestools.ts';
import { median, timeAsync } from './lib/timing.ts';

const projectDir = fileURLToPath(new URL('..', import.meta.url));
const REFERENCE = fileURLToPath(new URL('../../shared/data/reference/nestools/test_data.jsonl', import.meta.url));
const BUDGET_MS = 1000;

/** Wall time of a fresh `node --import tsx` process running `script` (tsx start-up included). */
function processTime(runs: number, script: string): { ms: number; ok: boolean } {
  let ok = true;
  const times = Array.from({ length: runs }, () => {
    const started = performance.now();
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: projectDir, encoding: 'utf8' });
    if (child.status !== 0) ok = false;
    return performance.now() - started;
  });
  return { ms: median(times), ok };
}

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { runs: { type: 'string', default: '5' } } });
  const runs = Math.max(1, Number(values.runs));

  let checked = 0;
  let passed = 0;
  const floor = await timeAsync(runs, () => {
    readFileSync(REFERENCE, 'utf8').split('\n').filter(Boolean).forEach((line) => JSON.parse(line));
  });
  const records = await timeAsync(runs, async () => {
    const report = await checkNesToolsFiles([REFERENCE]);
    checked = report.checked;
    passed = report.passed;
  });
  const command = `const { checkNestoolsCommand } = await import(${JSON.stringify(join(projectDir, 'bin/commands/check.ts'))});
const code = await checkNestoolsCommand.run([${JSON.stringify(REFERENCE)}], {}, { out: () => {}, err: () => {}, json: true, home: '.', cwd: process.cwd(), env: {} });
process.exit(code);`;
  const startup = processTime(Math.min(runs, 3), 'process.exit(0)');
  const cold = processTime(Math.min(runs, 3), command);

  // The same chains as Python programs, one file each (the few whose names are not Python names are skipped).
  const dir = mkdtempSync(join(tmpdir(), 'nestools-bench-'));
  let programs = 0;
  let programsPassed = 0;
  let programMs = 0;
  try {
    for (const sample of loadNesToolsSamples(REFERENCE)) {
      try {
        const code = renderProgram({ tools: sample.tools, calls: sample.expected.calls ?? [], task: sample.dialogue[0].content });
        writeFileSync(join(dir, `${String(sample.meta.source?.id).padStart(4, '0')}.py`), code);
        programs++;
      } catch {
        // a parameter such as `class` or `A/B_test_results` cannot be written as Python
      }
    }
    programMs = await timeAsync(runs, async () => {
      programsPassed = (await checkNesToolsFiles([dir])).passed;
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  const row = (what: string, items: string, ms: number, budget?: number) =>
    `| ${what} | ${items} | ${ms.toFixed(0)} | ${budget ? `${budget}` : '–'} | ${budget ? `${(ms / budget).toFixed(2)}×` : '–'} | ${(ms / floor).toFixed(1)}× |`;
  const lines = [
    `median of ${runs} runs; floor = reading and JSON-parsing the same file`,
    '',
    '| what | items (passed) | ms | budget ms | of budget | of floor |',
    '|---|---:|---:|---:|---:|---:|',
    row('read + JSON.parse only (floor)', '1000', floor),
    row('check records, in-process', `${checked} (${passed})`, records, BUDGET_MS),
    row('empty `node --import tsx` process (start-up floor)', '–', startup.ms),
    row(`check command, fresh process${cold.ok ? '' : ' (FAILED)'}`, '1000', cold.ms, BUDGET_MS),
    row('  of which the command itself (process − start-up floor)', '1000', cold.ms - startup.ms, BUDGET_MS),
    row('check same chains as .py programs, in-process', `${programs} (${programsPassed})`, programMs),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

if (import.meta.url === `file://${process.argv[1]}`) await run(process.argv.slice(2));
