import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { reviewCommands } from '../../bin/commands/review.ts';
import { commonOptions } from '../../bin/flags.ts';

/** `toolkiln review …` in this process, as bin/cli.ts runs it (parse the flags, call the command); human output on `out`, messages on `err`. */
export async function review(home: string, ...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const command = reviewCommands.find((c) => c.path[1] === argv[0]);
  if (!command) throw new Error(`no review command ${argv[0]}`);
  const parsed = parseArgs({ args: ['review', ...argv], options: { ...commonOptions, ...command.options }, allowPositionals: true, strict: true });
  const out: string[] = [];
  const err: string[] = [];
  const io = { out: (t: string) => out.push(t), err: (t: string) => err.push(t), json: parsed.values.json === true, home, cwd: home, env: {} };
  const code = await command.run(parsed.positionals.slice(2), parsed.values, io);
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** Real `toolkiln` processes for the review commands, run with TOOLKILN_HOME=home in that folder. */

export const TOOLKILN_BIN = fileURLToPath(new URL('../../bin/toolkiln.js', import.meta.url));

export interface ServeInfo {
  url: string;
  files: string[];
  queueFile: string;
  items: number;
  decided: number;
}

export function toolkiln(home: string, ...args: string[]): { code: number | null; out: string; err: string } {
  const result = spawnSync(process.execPath, [TOOLKILN_BIN, ...args], { cwd: home, encoding: 'utf8', env: { ...process.env, TOOLKILN_HOME: home } });
  return { code: result.status, out: result.stdout, err: result.stderr };
}

/** Starts `toolkiln review serve … --json` and resolves with its one JSON line (url, files, counts); rejects with its stderr if it exits first. */
export function startServe(home: string, ...args: string[]): Promise<{ process: ChildProcess; info: ServeInfo }> {
  const child = spawn(process.execPath, [TOOLKILN_BIN, 'review', 'serve', ...args, '--json'], { cwd: home, env: { ...process.env, TOOLKILN_HOME: home }, stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stdout!.on('data', (chunk) => {
      out += chunk;
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (!line || !out.includes('\n')) return;
      const info = JSON.parse(line);
      if (info.error) reject(new Error(`review serve refused: ${info.error}`));
      else resolve({ process: child, info });
    });
    child.stderr!.on('data', (chunk) => (err += chunk));
    child.on('exit', (code) => reject(new Error(`review serve exited (${code}) before it printed its address: ${err}`)));
  });
}

/** Resolves with the exit code once the process has exited. */
export function stopped(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode);
    else child.on('exit', (code) => resolve(code));
  });
}
