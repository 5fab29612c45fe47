import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_MAX_SOURCE_BYTES, maxSourceBytes, readLineFile, readSourceFile } from '../core/source-files.ts';
import { UserError } from '../core/errors.ts';

/**
 * Inputs an attacker (or a slip of the hand) gives: a device that never ends, a file of 10 GB, a
 * pipe. Each is refused naming the file, before it is read, by the real CLI in a child process (a
 * time-out of the child would be the failure this guards against).
 */
const bin = new URL('../bin/toolkiln.js', import.meta.url).pathname;
const PROJECT = new URL('..', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'tk-bounded-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(pipeline: string, config: object, env: Record<string, string> = {}) {
  const configFile = join(dir, `config-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(configFile, JSON.stringify(config));
  const result = spawnSync(process.execPath, [bin, 'run', pipeline, '--config', configFile, '--quiet'], {
    cwd: PROJECT,
    env: { ...process.env, TOOLKILN_HOME: join(dir, 'home'), OPENAI_API_KEY: '', OPENAI_BASE_URL: '', ...env },
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { code: result.status, signal: result.signal, stderr: result.stderr };
}

describe('bounded inputs', () => {
  it('an ACEBench document that is /dev/zero is refused by name instead of read for ever', () => {
    const { code, signal, stderr } = run('acebench', { documents: ['/dev/zero'] });
    expect(signal).toBeNull();
    expect(code).toBe(2);
    expect(stderr).toMatch(/\/dev\/zero: not a regular file \(a device, pipe or socket\)/);
  }, 130_000);

  it('a 10 GB document is refused by name, before it is hashed or read', () => {
    const big = join(dir, 'docs', 'huge.md');
    mkdirSync(join(dir, 'docs'), { recursive: true });
    writeFileSync(big, '# Payments\n');
    truncateSync(big, 10 * 1024 ** 3); // sparse: takes no disk
    const { code, signal, stderr } = run('acebench', { documents: [big] });
    expect(signal).toBeNull();
    expect(code).toBe(2);
    expect(stderr).toContain(`${big}: larger than ${DEFAULT_MAX_SOURCE_BYTES.toLocaleString('en-US')} bytes, the most a source file may hold`);
  }, 130_000);

  it('the limit is configurable: a document over TOOLKILN_MAX_SOURCE_BYTES is refused, a bad value names the variable', () => {
    const doc = join(dir, 'docs-small', 'guide.md');
    mkdirSync(join(dir, 'docs-small'), { recursive: true });
    writeFileSync(doc, `# Guide\n${'Pay the invoice. '.repeat(400_000)}\n`); // 6.4 MB, above every shipped source
    const refused = run('acebench', { documents: [doc] }, { TOOLKILN_MAX_SOURCE_BYTES: '4M' });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`${doc}: larger than 4,194,304 bytes`);
    const bad = run('acebench', { documents: [doc] }, { TOOLKILN_MAX_SOURCE_BYTES: 'lots' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/TOOLKILN_MAX_SOURCE_BYTES=lots: give a size in bytes/);
    expect(maxSourceBytes({ TOOLKILN_MAX_SOURCE_BYTES: '2G' })).toBe(2 * 1024 ** 3);
    expect(maxSourceBytes({})).toBe(DEFAULT_MAX_SOURCE_BYTES);
  }, 130_000);

  it('a ToolTalk database that is a named pipe is refused by name instead of waited on', () => {
    const databases = join(dir, 'databases');
    cpSync(join(PROJECT, '../shared/data/sources/tooltalk/databases'), databases, { recursive: true });
    rmSync(join(databases, 'Alarm.json'), { force: true });
    expect(spawnSync('mkfifo', [join(databases, 'Alarm.json')]).status).toBe(0);
    const { code, signal, stderr } = run('tooltalk', { databasesDir: databases });
    expect(signal).toBeNull();
    expect(code).toBe(2);
    expect(stderr).toMatch(/Alarm\.json: not a regular file \(a device, pipe or socket\)/);
  }, 130_000);

  it('reads a file whole only up to the limit, and a line file as a stream of any size', () => {
    const file = join(dir, 'data.json');
    writeFileSync(file, JSON.stringify({ a: 'x'.repeat(1000) }));
    expect(readSourceFile(file, { maxBytes: 2000 }).length).toBe(1008);
    expect(() => readSourceFile(file, { maxBytes: 1007 })).toThrow(UserError);
    expect(() => readSourceFile(file, { maxBytes: 1007 })).toThrow(`${file}: larger than 1,007 bytes`);
    expect(() => readSourceFile('/dev/zero')).toThrow('/dev/zero: not a regular file');
    expect(() => readSourceFile(dir)).toThrow(`${dir}: not a regular file (a folder)`);
    const lines = join(dir, 'lines.txt');
    writeFileSync(lines, 'a\nb\n');
    expect(readLineFile(lines)).toEqual(['a', 'b']);
    expect(() => readLineFile('/dev/zero')).toThrow('/dev/zero: not a regular file');
  });
});
