import { spawnSync } from 'node:child_process';

const bin = new URL('../../bin/toolkiln.js', import.meta.url).pathname;

export interface ProcessRun {
  code: number | null;
  out: string;
  err: string;
}

/**
 * The installed `toolkiln` command in a process of its own, in `home` (TOOLKILN_HOME, and the current
 * folder), offline. `fileLimitKb`: no file it writes may grow past that (`ulimit -f`: a write that
 * would fails with EFBIG, a real write failure part way).
 */
export function toolkilnProcess(home: string, args: readonly string[], options: { fileLimitKb?: number; timeoutMs?: number } = {}): ProcessRun {
  const env = { ...process.env, TOOLKILN_HOME: home, OPENAI_API_KEY: '', OPENAI_BASE_URL: '' };
  const command = options.fileLimitKb === undefined ? [process.execPath, bin, ...args] : ['bash', '-c', `ulimit -f ${options.fileLimitKb} && exec "$@"`, 'bash', process.execPath, bin, ...args];
  const run = spawnSync(command[0], command.slice(1), { cwd: home, encoding: 'utf8', env, timeout: options.timeoutMs ?? 120_000 });
  return { code: run.status, out: run.stdout.trim(), err: run.stderr.trim() };
}
