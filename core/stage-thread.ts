import { parentPort, workerData } from 'node:worker_threads';
import { messageOf, UserError } from './errors.ts';
import { Rng } from './rng.ts';
import { entryOf } from './stage-records.ts';
import { stageContextMethods, type MapStage, type StageContext } from './stage.ts';
import type { StageThreadData, ThreadError, ThreadOutcome } from './stage-threads.ts';

/**
 * One worker thread of a pure-computation stage (see stage-threads.ts): makes the stage again from
 * its module and factory, then runs the records it is sent, answering each with its checked,
 * serialised outputs or its reject.
 */

const data = workerData as StageThreadData;
const port = parentPort!;

async function start(): Promise<void> {
  const made = (await import(data.module))[data.factory]?.(data.options) as MapStage<unknown, unknown> | undefined;
  if (!made || made.kind !== 'map' || made.name !== data.name || made.version !== data.version) {
    throw new Error(`${data.module} ${data.factory}(…) does not make stage ${data.name} v${data.version}`);
  }
  const stage = made;
  const unavailable = (what: string) => () => {
    throw new Error(`stage ${stage.name}: ${what} is not available to a stage run on a worker thread (it declares threads: pure computation only)`);
  };
  const ctx: StageContext = {
    ...stageContextMethods,
    stage: { name: stage.name, version: stage.version, prompts: stage.prompts },
    seed: data.seed,
    rng: (...keys) => Rng.derive(data.seed, stage.name, ...keys),
    llm: new Proxy({} as StageContext['llm'], { get: unavailable('the LLM') }),
    config: data.config,
    runDir: data.runDir,
    resolvePath: unavailable('resolvePath'),
    log: (message) => port.postMessage({ log: message }),
    report: unavailable('ctx.report'),
    reported: unavailable('ctx.reported'),
    attach: unavailable('ctx.attach'),
  };
  port.on('message', async ({ id, record, key }: { id: number; record: unknown; key: string }) => {
    try {
      const result = await stage.run(record, { ...ctx, key, rng: (...keys) => ctx.rng(key, ...keys) });
      const entry = entryOf(stage, 0, key, result);
      const outcome: ThreadOutcome = entry.reject ? { reject: entry.reject } : { outputs: (entry.out ?? []).map((output) => JSON.stringify(output)) };
      port.postMessage({ id, outcome });
    } catch (error) {
      const sent: ThreadError = error instanceof UserError ? { message: error.message, userExitCode: error.exitCode } : { message: messageOf(error) };
      port.postMessage({ id, error: sent });
    }
  });
  port.postMessage({ ready: true });
}

start().catch((error) => port.postMessage({ failed: messageOf(error) }));
