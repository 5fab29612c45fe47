// `npm run bench -- workers [--records n] [--latency ms]`: a per-record stage (one LLM request per
// record) run by 1, 2 and 4 worker processes (`--redis`, concurrency 8 each) against a local
// OpenAI-compatible server (a child process) answering after a fixed latency, with a redis-server of
// its own. Reports the stage's throughput against the ideal workers × concurrency / latency, and the
// coordinator's cost per job: its CPU time, and the time a job holds a slot beyond the latency.
// Needs redis-server on PATH. About a minute.
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Coordinator } from '../core/distributed.ts';
import { createGateway } from '../core/llm/index.ts';
import { runPipeline } from '../core/run.ts';
import { formatTable } from '../core/table.ts';
import { echoPipeline } from './lib/echo-pipeline.ts';
import { echoChat, startOpenAiServer } from './lib/openai-server.ts';
import { startRedis } from './lib/redis.ts';

const SERVER_ENV = 'TOOLKILN_BENCH_WORKERS_SERVER';
const CONCURRENCY = 8;

if (process.env[SERVER_ENV] && process.send) {
  const server = await startOpenAiServer({ chat: echoChat, latencyMs: Number(process.env[SERVER_ENV]) });
  process.on('disconnect', () => void server.close().then(() => process.exit(0)));
  process.send({ baseURL: server.baseURL });
}

async function startServer(latencyMs: number): Promise<{ baseURL: string; child: ChildProcess }> {
  const child = fork(fileURLToPath(import.meta.url), [], { env: { ...process.env, [SERVER_ENV]: String(latencyMs) }, execArgv: ['--import', 'tsx'] });
  const { baseURL } = await new Promise<{ baseURL: string }>((resolve) => child.once('message', (m) => resolve(m as { baseURL: string })));
  return { baseURL, child };
}

async function startWorker(redisUrl: string, home: string, env: NodeJS.ProcessEnv): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/lib/echo-worker.ts', redisUrl, home, '30000', String(CONCURRENCY)], { env, stdio: ['ignore', 'pipe', 'ignore'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk) => String(chunk).includes('ready') && resolve());
    child.once('exit', (code) => reject(new Error(`worker exited (${code}) before it was ready`)));
  });
  return child;
}

interface Measured {
  seconds: number;
  cpuMs: number;
}

/** The `ask` stage's wall time, and the coordinator's CPU time over the run. */
async function measure(home: string, records: number, env: Record<string, string>, coordinator?: Coordinator): Promise<Measured> {
  const file = join(home, 'lines.txt');
  writeFileSync(file, Array.from({ length: records }, (_, n) => `record ${n}`).join('\n'));
  const llm = createGateway({ backend: 'openai', model: 'bench-model', home, env, concurrency: CONCURRENCY });
  const cpu = process.cpuUsage();
  try {
    const result = await runPipeline({ pipeline: echoPipeline, configOverrides: { file }, llm, home, projectDir: process.cwd(), cwd: home, concurrency: 64, progress: { quiet: true }, distribute: coordinator });
    const used = process.cpuUsage(cpu);
    if (result.manifest!.counts.samples !== records) throw new Error(`expected ${records} samples, got ${result.manifest!.counts.samples}`);
    return { seconds: result.stats.find((s) => s.stage === 'ask')!.seconds, cpuMs: (used.user + used.system) / 1000 };
  } finally {
    await llm.close();
  }
}

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { records: { type: 'string' }, latency: { type: 'string' } } });
  const records = Number(values.records ?? 480);
  const latencyMs = Number(values.latency ?? 200);
  const redis = await startRedis();
  const server = await startServer(latencyMs);
  const env = { OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: 'bench-key' };
  const rows: string[][] = [];
  const row = (label: string, slots: number, m: Measured) => {
    const throughput = records / m.seconds;
    const ideal = (slots * 1000) / latencyMs;
    const heldMs = (m.seconds * 1000 * slots) / records;
    rows.push([label, String(slots), m.seconds.toFixed(2), throughput.toFixed(1), ideal.toFixed(1), `${Math.round((throughput / ideal) * 100)} %`, (m.cpuMs / records).toFixed(2), (heldMs - latencyMs).toFixed(1)]);
  };
  try {
    const home = mkdtempSync(join(tmpdir(), 'tk-bench-workers-'));
    try {
      row('one process, no Redis', CONCURRENCY, await measure(home, records, env));
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
    for (const count of [1, 2, 4]) {
      const home = mkdtempSync(join(tmpdir(), 'tk-bench-workers-'));
      const workers = await Promise.all(Array.from({ length: count }, () => startWorker(redis.url, home, { ...process.env, ...env })));
      const coordinator = await Coordinator.open(redis.url);
      try {
        row(`${count} worker${count > 1 ? 's' : ''} (--redis)`, count * CONCURRENCY, await measure(home, records, env, coordinator));
      } finally {
        await coordinator.close();
        await Promise.all(workers.map((w) => new Promise((resolve) => (w.once('exit', resolve), w.kill('SIGTERM')))));
        rmSync(home, { recursive: true, force: true });
      }
    }
  } finally {
    server.child.disconnect();
    await redis.stop();
  }
  process.stdout.write(`${records} records, one request each, ${latencyMs} ms server latency, concurrency ${CONCURRENCY} per process; cache empty\n\n`);
  process.stdout.write(formatTable(['setup', 'slots', 'stage s', 'records/s', 'ideal/s', 'of ideal', 'coordinator CPU ms/job', 'ms/job beyond latency'], rows) + '\n');
}
