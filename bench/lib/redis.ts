import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createServer, connect } from 'node:net';

/** A redis-server of a test's or a benchmark's own, on a free port of 127.0.0.1, with nothing persisted. */
export interface TestRedis {
  url: string;
  /** SIGKILLs the server (and waits for it to exit). */
  stop(): Promise<void>;
  /** A new, empty server on the same port (after `stop`): Redis restarted with nothing kept. */
  restart(): Promise<void>;
}

function redisServerPath(): string {
  try {
    return execFileSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' }).trim();
  } catch {
    throw new Error('redis-server is not installed, and the worker tests and benchmarks need a real one: install it (Debian/Ubuntu: apt-get install -y redis-server; macOS: brew install redis), as .ci/run does');
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => (socket.end(), resolve(true)));
    socket.on('error', () => resolve(false));
  });
}

export async function startRedis(): Promise<TestRedis> {
  const path = redisServerPath();
  const port = await freePort();
  let server = await listen(path, port);
  return {
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      if (server.child.exitCode === null) server.child.kill('SIGKILL');
      await server.exited;
    },
    async restart() {
      server = await listen(path, port);
    },
  };
}

async function listen(path: string, port: number): Promise<{ child: ChildProcess; exited: Promise<void> }> {
  const child: ChildProcess = spawn(path, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 20_000;
  while (!(await accepts(port))) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with code ${child.exitCode} before listening on port ${port}`);
    if (Date.now() > deadline) throw new Error(`redis-server did not listen on port ${port} within 20 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { child, exited };
}
