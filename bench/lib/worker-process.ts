import { RecordWorker } from '../../core/distributed.ts';
import { UserError } from '../../core/errors.ts';
import { createGateway } from '../../core/llm/index.ts';
import type { PipelineDefinition } from '../../core/pipeline.ts';

/**
 * The body of a worker process script for in-memory recipes (`<script> <redisUrl> <home> <lockMs>
 * <concurrency>`): takes jobs of the named recipes, prints "ready" once it does, and closes after
 * the jobs in hand on SIGTERM.
 */
export async function runWorkerProcess(pipelines: Record<string, PipelineDefinition>, argv = process.argv.slice(2)): Promise<void> {
  const [redisUrl, home, lockMs, concurrency] = argv;
  const worker = await RecordWorker.start({
    redisUrl,
    home,
    concurrency: Number(concurrency),
    lockDurationMs: Number(lockMs),
    pipelineOf: (name) => {
      if (!(name in pipelines)) throw new UserError(`unknown pipeline ${name} in this worker: it runs ${Object.keys(pipelines).join(', ')}`);
      return pipelines[name];
    },
    gatewayFor: (spec, sharedPermit) => createGateway({ backend: spec.backend, model: spec.model, seed: spec.seed, home, env: process.env, sharedPermit }),
    resolvePath: (path) => path,
    log: (message) => process.stderr.write(message + '\n'),
  });
  process.stdout.write('ready\n');
  process.on('SIGTERM', () => void worker.close().then(() => process.exit(0)));
}
