import { resolve } from 'node:path';
import { formatStageTable } from '../../core/table.ts';
import { readConfigFile, readRunSpec, runPipeline } from '../../core/run.ts';
import { UserError } from '../../core/errors.ts';
import { PROJECT_DIR } from '../../core/project-dir.ts';
import { loadRecipe } from '../../pipelines/catalog.ts';
import type { Command } from '../command.ts';
import { intFlag, needPositionals, numberFlag, stringFlag } from '../flags.ts';
import { gatewayFromFlags } from '../gateway.ts';
import { BatchFileWritten, formatBatchCounts, formatUsage, type BatchCounts } from '../../core/llm/index.ts';
import type { SharedPermit } from '../../core/llm/limiter.ts';
import type { LlmGateway } from '../../core/llm/types.ts';
import { DEFAULT_SEED, SEED_RANGE } from '../../core/seed.ts';
import { DISTRIBUTED_IN_FLIGHT, RUN } from '../command-specs.ts';

export const runCommand: Command = {
  ...RUN,
  async run(positionals, values, io) {
    needPositionals(positionals, 1, this.usage);
    const pipeline = await loadRecipe(positionals[0]);
    const configFile = stringFlag(values, 'config');
    const resume = stringFlag(values, 'resume');
    const limit = intFlag(values, 'limit', { min: 1 });
    let seed = intFlag(values, 'seed', SEED_RANGE) ?? DEFAULT_SEED;
    if (resume) {
      // A resumed run continues with the settings it started with; the gateway needs its seed too.
      const given = ['config', 'seed', 'limit', 'name'].filter((flag) => values[flag] !== undefined);
      if (given.length) throw new UserError(`a resumed run keeps the settings it started with: drop ${given.map((f) => `--${f}`).join(', ')} (or start a new run)`);
      seed = readRunSpec(io.home, resume).seed;
    }
    const concurrency = intFlag(values, 'concurrency', { min: 1, max: 4096 });
    const threads = intFlag(values, 'threads', { min: 0, max: 64 });
    const redisUrl = stringFlag(values, 'redis');
    if (redisUrl !== undefined) {
      const alone = ['batch', 'batch-file', 'batch-results', 'dry-run'].filter((flag) => values[flag] !== undefined);
      if (alone.length) throw new UserError(`--redis sends records to workers, which answer them at once: it does not combine with ${alone.map((f) => `--${f}`).join(', ')}`);
    }
    // Loaded only with --redis: BullMQ is not needed otherwise.
    const distributed = redisUrl === undefined ? undefined : await import('../../core/distributed.ts');
    const redisWait = intFlag(values, 'redis-wait', { min: 1 });
    if (redisWait !== undefined && redisUrl === undefined) throw new UserError('--redis-wait says how long a run with workers waits for a lost Redis: it needs --redis');
    const coordinator = redisUrl === undefined ? undefined : await distributed!.Coordinator.open(redisUrl, io.err, { maxDownMs: redisWait === undefined ? undefined : redisWait * 1000 });
    let llm: LlmGateway;
    try {
      // The coordinator's own requests (whole-set stages) count against the budget the workers share.
      let shared: SharedPermit | undefined;
      const sharedPermit = coordinator && ((request: Parameters<SharedPermit>[0]) => (shared ??= coordinator.sharedRate(distributed!.rateScope(llm.model)))(request));
      llm = gatewayFromFlags(values, io.env, io.home, seed, io.err, io.cwd, sharedPermit);
    } catch (error) {
      await coordinator?.close();
      throw error;
    }
    try {
      const result = await runPipeline({
        pipeline,
        configOverrides: configFile ? readConfigFile(resolve(io.cwd, configFile), configFile) : undefined,
        configFile,
        name: stringFlag(values, 'name'),
        seed,
        limit,
        llm,
        home: io.home,
        projectDir: PROJECT_DIR,
        cwd: io.cwd,
        resume,
        force: values.force === true,
        dryRun: values['dry-run'] === true,
        // With workers, records in flight are bounded by what all workers take at once, not by this process.
        concurrency: concurrency ?? (coordinator ? DISTRIBUTED_IN_FLIGHT : undefined),
        threads: threads === undefined ? undefined : { count: threads },
        pruneStageFiles: values['prune-stages'] === true,
        maxTransportRejects: numberFlag(values, 'max-transport-rejects', { min: 0, max: 1 }),
        minYield: numberFlag(values, 'min-yield', { min: 0 }),
        allowEmpty: values['allow-empty'] === true,
        log: io.err,
        progress: { quiet: values.quiet === true },
        distribute: coordinator,
      }).catch((error) => {
        if (!(error instanceof BatchFileWritten)) throw error;
        if (io.json) io.out(JSON.stringify({ status: 'batch-file', file: error.file, requests: error.requests, next: error.message }));
        else io.out(error.message);
        return null;
      });
      if (!result) return 0;
      const batch = (result.manifest?.stats.batch ?? null) as BatchCounts | null;
      // With --redis the manifest also counts what the workers sent.
      const usage = result.manifest?.usage ?? llm.usage();
      if (io.json) {
        io.out(
          JSON.stringify({
            status: result.status,
            runId: result.runId,
            fingerprint: result.fingerprint,
            dataset: result.ref ? `${result.ref.name}@${result.ref.version}` : null,
            path: result.ref?.dir ?? null,
            stages: result.stats,
            counts: result.manifest?.counts ?? null,
            usage,
            batch,
          }),
        );
      } else if (result.status === 'existing') {
        // Nothing ran: the stored version's stage table would read as if it had.
        io.out(`unchanged: ${result.ref!.name}@${result.ref!.version} (${result.ref!.dir}) has the same fingerprint; nothing published (--force to publish anyway)`);
      } else {
        io.out(formatStageTable(result.stats));
        io.out(llm.backend === 'offline' ? `\nllm: offline templates answered ${usage.total.requests} prompts (no tokens, no cost)` : `\nllm (${llm.backend} ${llm.model}): ${formatUsage(usage.total)}`);
        if (batch) io.out(formatBatchCounts(batch));
        const where = result.ref ? `${result.ref.name}@${result.ref.version} (${result.ref.dir})` : '';
        if (result.status === 'published') {
          const c = result.manifest!.counts;
          io.out(`\npublished ${where}: ${c.samples} samples (${Object.entries(c.bySplit).map(([s, n]) => `${s} ${n}`).join(', ')}), ${c.tools} tools, ${c.rejects} rejects`);
        } else {
          io.out(`dry run ${result.runId}: nothing sent, nothing published; the requests above are what the run would send`);
        }
      }
      return 0;
    } finally {
      await llm.close();
      await coordinator?.close();
    }
  },
};
