import { RecordWorker, shownUrl } from '../../core/distributed.ts';
import { pathResolver } from '../../core/run.ts';
import { UserError } from '../../core/errors.ts';
import { getPipeline } from '../../pipelines/index.ts';
import type { Command } from '../command.ts';
import { intFlag, needPositionals, stringFlag } from '../flags.ts';
import { gatewayFromFlags } from '../gateway.ts';
import { PROJECT_DIR } from '../../core/project-dir.ts';
import { WORKER, WORKER_CONCURRENCY } from '../command-specs.ts';

export const workerCommand: Command = {
  ...WORKER,
  async run(positionals, values, io) {
    needPositionals(positionals, 0, this.usage);
    const redisUrl = stringFlag(values, 'redis');
    if (redisUrl === undefined) throw new UserError(`missing --redis <url> (the Redis the coordinator enqueues to, e.g. redis://10.0.0.5:6379): usage: ${this.usage}`);
    // Records at once, and the gateway's requests in flight: a record makes its requests one after another.
    const concurrency = intFlag(values, 'concurrency', { min: 1, max: 4096 }) ?? WORKER_CONCURRENCY;
    const worker = await RecordWorker.start({
      redisUrl,
      home: io.home,
      concurrency,
      pipelineOf: getPipeline,
      // Backend, model and seed are the run's; endpoint, key and limits are this machine's.
      gatewayFor: (spec, sharedPermit) => gatewayFromFlags({ ...values, llm: spec.backend, model: spec.model, concurrency: String(concurrency) }, io.env, io.home, spec.seed, io.err, io.cwd, sharedPermit),
      resolvePath: pathResolver(io.cwd, PROJECT_DIR),
      log: io.err,
    });
    io.err(`worker: taking jobs from ${shownUrl(redisUrl)}, ${concurrency} at once (Ctrl-C stops after the jobs in hand)`);
    await new Promise<void>((resolve) => {
      const stop = () => resolve();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
    await worker.close();
    io.err(`worker: stopped after ${worker.processed} records`);
    if (io.json) io.out(JSON.stringify({ processed: worker.processed }));
    return 0;
  },
};
