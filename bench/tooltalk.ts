// `npm run bench -- tooltalk [--runs n]`: replaying every ground-truth call of the 78 released
// conversations with the simulated tools, against the floor of only reading and JSON-parsing the same
// files (median of n runs); then a full offline `toolkiln run tooltalk` in a fresh process (samples, wall).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { conversationFiles } from '../stages/tooltalk/conversation-files.ts';
import { loadDatabases } from '../stages/tooltalk/databases.ts';
import { replayReleased } from '../stages/tooltalk/replay.ts';
import { timeSync } from './lib/timing.ts';

const projectDir = fileURLToPath(new URL('..', import.meta.url));
const RELEASED = fileURLToPath(new URL('../../shared/data/reference/tooltalk', import.meta.url));

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { runs: { type: 'string', default: '9' } } });
  const runs = Number(values.runs);
  const databases = loadDatabases();
  const files = conversationFiles(RELEASED);
  let report = replayReleased(RELEASED, { databases });
  const floor = timeSync(runs, () => files.map((file) => JSON.parse(readFileSync(join(RELEASED, file), 'utf8'))));
  const replay = timeSync(runs, () => (report = replayReleased(RELEASED, { databases })));
  process.stdout.write(`median of ${runs} runs; floor = reading and JSON-parsing the same ${files.length} files\n\n`);
  process.stdout.write('| step | conversations | calls | reproduced | ms | floor ms | ratio |\n|---|---:|---:|---:|---:|---:|---:|\n');
  process.stdout.write(`| replay released calls | ${report.conversations} | ${report.total} | ${report.reproduced} | ${replay.toFixed(1)} | ${floor.toFixed(1)} | ${(replay / floor).toFixed(1)}× |\n\n`);

  const home = mkdtempSync(join(tmpdir(), 'tk-bench-tooltalk-'));
  try {
    const started = performance.now();
    const child = spawnSync(process.execPath, ['bin/toolkiln.js', 'run', 'tooltalk', '--llm', 'offline', '--json', '--quiet'], { cwd: projectDir, encoding: 'utf8', env: { ...process.env, TOOLKILN_HOME: home } });
    const wall = (performance.now() - started) / 1000;
    if (child.status !== 0) throw new Error(`toolkiln run tooltalk failed: ${child.stderr}`);
    const manifest = JSON.parse(readFileSync(join(home, 'datasets', 'tooltalk', 'v1', 'manifest.json'), 'utf8'));
    process.stdout.write('| full offline run (fresh process) | samples | easy | tooltalk | rejects | wall s |\n|---|---:|---:|---:|---:|---:|\n');
    process.stdout.write(`| toolkiln run tooltalk --llm offline | ${manifest.counts.samples} | ${manifest.counts.byCategory.easy ?? 0} | ${manifest.counts.byCategory.tooltalk ?? 0} | ${manifest.counts.rejects} | ${wall.toFixed(1)} |\n`);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}
