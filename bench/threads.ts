// `npm run bench -- threads [--domains 2000] [--rounds 2]`: a whole offline NesTools run with its
// program checks on a worker thread against the same run with none (the reference), alternating so
// that a busy moment of a shared machine hits both sides alike. Both must publish the same bytes.
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { OfflineGateway } from '../core/llm/offline.ts';
import { runPipeline } from '../core/run.ts';
import { formatTable } from '../core/table.ts';
import { nestoolsPipeline } from '../pipelines/nestools.ts';

const PROJECT = join(fileURLToPath(import.meta.url), '../..');

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { domains: { type: 'string', default: '2000' }, rounds: { type: 'string', default: '2' } } });
  const domains = Number(values.domains);
  const load = loadavg()[0];
  const seconds: Record<'none' | 'one', number[]> = { none: [], one: [] };
  const files = new Set<string>();
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const side of ['none', 'one'] as const) {
      const home = mkdtempSync(join(tmpdir(), 'toolkiln-bench-threads-'));
      try {
        const started = performance.now();
        const result = await runPipeline({ pipeline: nestoolsPipeline, configOverrides: { count: domains }, llm: new OfflineGateway(42), home, projectDir: PROJECT, cwd: PROJECT, progress: { quiet: true }, threads: side === 'none' ? { count: 0 } : { count: 1, from: 0 } });
        seconds[side].push((performance.now() - started) / 1000);
        files.add(JSON.stringify(result.manifest!.files));
      } finally {
        rmSync(home, { recursive: true, force: true });
      }
    }
  }
  if (files.size !== 1) throw new Error('bench threads: the runs with and without a thread published different bytes');
  const range = (list: number[]) => `${Math.min(...list).toFixed(1)}–${Math.max(...list).toFixed(1)}`;
  const best = (list: number[]) => Math.min(...list);
  process.stdout.write(`\n## threads\n\nWhole offline NesTools run, ${domains.toLocaleString('en-US')} domains, ${values.rounds} rounds alternating; load average at start ${load.toFixed(1)} on 2 cores; both sides published the same bytes.\n\n`);
  process.stdout.write(
    `${formatTable(
      ['program checks', 'wall s', 'best vs reference'],
      [
        ['on the main thread (reference)', range(seconds.none), '1.00×'],
        ['on one worker thread', range(seconds.one), `${(best(seconds.none) / best(seconds.one)).toFixed(2)}× faster`],
      ],
    )}\n`,
  );
}
