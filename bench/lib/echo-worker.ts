// A worker process for the echo recipe: `echo-worker.ts <redisUrl> <home> <lockMs> <concurrency>` (see worker-process.ts).
import { echoPipeline } from './echo-pipeline.ts';
import { runWorkerProcess } from './worker-process.ts';

await runWorkerProcess({ echo: echoPipeline });
