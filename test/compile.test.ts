import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * bin/compile.js and bin/toolkiln.js on a small project of their own (the real bin/toolkiln.js and
 * bin/compile.js, a bin/cli.ts printing where it runs from and what it imported), so that edits,
 * broken files and locks do not touch the project's own dist/.
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url));

function project(): string {
  const root = mkdtempSync(join(tmpdir(), 'tk-compile-'));
  mkdirSync(join(root, 'bin'));
  mkdirSync(join(root, 'core'));
  for (const file of ['bin/toolkiln.js', 'bin/compile.js']) copyFileSync(join(ROOT, file), join(root, file));
  symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'));
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'compile-test', type: 'module' }));
  writeFileSync(
    join(root, 'bin/cli.ts'),
    [
      "import { stringify } from 'yaml';",
      "import { z } from 'zod';",
      "import { message } from '../core/message.ts';",
      'export async function main(argv: string[]): Promise<number> {',
      "  const where: string = import.meta.url.endsWith('/dist/bin/cli.js') ? 'compiled' : import.meta.url.endsWith('/bin/cli.ts') ? 'source' : import.meta.url;",
      "  process.stdout.write(`${where} ${message} ${stringify(z.string().parse(argv[0] ?? '-')).trim()}\\n`);",
      '  return 0;',
      '}',
      '',
    ].join('\n'),
  );
  writeFileSync(join(root, 'core/message.ts'), "export const message: string = 'first';\n");
  return root;
}

function toolkiln(root: string, env: NodeJS.ProcessEnv = {}): { code: number | null; out: string; err: string } {
  const run = spawnSync(process.execPath, [join(root, 'bin/toolkiln.js'), 'arg'], { cwd: root, encoding: 'utf8', env: { ...process.env, TOOLKILN_FROM_SOURCE: '', ...env } });
  return { code: run.status, out: run.stdout.trim(), err: run.stderr.trim() };
}

/** Rewrites a file with a modification time clearly after the one the last compile recorded. */
function edit(root: string, file: string, text: string, secondsLater = 10): void {
  writeFileSync(join(root, file), text);
  const when = new Date(Date.now() + secondsLater * 1000);
  utimesSync(join(root, file), when, when);
}

describe('compiled CLI', () => {
  it('a checkout without dist/ compiles at its first start and runs compiled; an edited, added or removed file is followed at the next start', () => {
    const root = project();
    expect(existsSync(join(root, 'dist'))).toBe(false);
    expect(toolkiln(root)).toMatchObject({ code: 0, out: 'compiled first arg' });
    // Relative imports point at the compiled files; a bundled package at its one-file bundle.
    const cli = readFileSync(join(root, 'dist/bin/cli.js'), 'utf8');
    expect(cli).toContain('from "../core/message.js"');
    expect(cli).toContain('from "../packages/zod.js"');
    expect(existsSync(join(root, 'dist/packages/zod.js'))).toBe(true);

    edit(root, 'core/message.ts', "export const message: string = 'second';\n");
    expect(toolkiln(root).out).toBe('compiled second arg');

    // A new module, imported by an edited one.
    writeFileSync(join(root, 'core/extra.ts'), "export const extra = 'third';\n");
    edit(root, 'core/message.ts', "import { extra } from './extra.ts';\nexport const message: string = extra;\n", 20);
    expect(toolkiln(root).out).toBe('compiled third arg');
    expect(existsSync(join(root, 'dist/core/extra.js'))).toBe(true);

    edit(root, 'core/message.ts', "export const message: string = 'fourth';\n", 30);
    rmSync(join(root, 'core/extra.ts'));
    expect(toolkiln(root).out).toBe('compiled fourth arg');
    expect(existsSync(join(root, 'dist/core/extra.js'))).toBe(false);

    // Each bundled package exports what the package does, and works as an ES module (yaml is CommonJS);
    // ajv-formats, bundled with ajv, adds keywords whose code it generates with ajv's own generator.
    const same = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `for (const name of ['zod', 'hyparquet-writer', 'yaml', 'ajv', 'ajv-formats']) { const [bundle, real] = [await import('./dist/packages/' + name + '.js'), await import(name)]; if (Object.keys(bundle).join() !== Object.keys(real).join()) throw new Error(name); }
        const ajv = new (await import('./dist/packages/ajv.js')).default();
        (await import('./dist/packages/ajv-formats.js')).default(ajv);
        const check = ajv.compile({ type: 'string', format: 'date', formatMinimum: '2020-01-01' });
        process.stdout.write((await import('./dist/packages/yaml.js')).stringify({ ok: true, dates: ['2021-05-01', '2019-05-01', '2021-13-01'].map((d) => check(d)) }));`,
      ],
      { cwd: root, encoding: 'utf8' },
    );
    expect(same.stderr).toBe('');
    expect(same.stdout).toBe('ok: true\ndates:\n  - true\n  - false\n  - false\n');

    // Nothing changed: nothing compiled.
    const compile = spawnSync(process.execPath, [join(root, 'bin/compile.js')], { cwd: root, encoding: 'utf8' });
    expect(compile.stdout).toBe('dist/ is up to date\n');
    rmSync(root, { recursive: true, force: true });
  });

  it('a file that does not compile, or another process compiling, leaves the source to run through tsx; a lock left by a dead process is taken over', () => {
    const root = project();
    expect(toolkiln(root).out).toBe('compiled first arg');
    // A broken file nothing imports: the source runs as it did before there was a compiled copy.
    writeFileSync(join(root, 'core/broken.ts'), 'export const = ;\n');
    edit(root, 'core/message.ts', "export const message: string = 'edited';\n");
    expect(toolkiln(root)).toMatchObject({ code: 0, out: 'source edited arg', err: '' });
    expect(toolkiln(root, { TOOLKILN_DEBUG: '1' }).err).toMatch(/^toolkiln: running the TypeScript source through tsx: core\/broken\.ts:1:\d+: /);
    const compile = spawnSync(process.execPath, [join(root, 'bin/compile.js')], { cwd: root, encoding: 'utf8' });
    expect(compile.status).toBe(1);
    expect(compile.stderr).toMatch(/^toolkiln compile: .*core\/broken\.ts/m);
    rmSync(join(root, 'core/broken.ts'));
    expect(toolkiln(root).out).toBe('compiled edited arg');
    // A relative import of a file that is not TypeScript has no compiled copy to point at.
    writeFileSync(join(root, 'core/data.json'), '{}');
    writeFileSync(join(root, 'core/reads-json.ts'), "import data from './data.json' with { type: 'json' };\nexport const keys = Object.keys(data);\n");
    const json = spawnSync(process.execPath, [join(root, 'bin/compile.js')], { cwd: root, encoding: 'utf8' });
    expect(json.stderr).toMatch(/^toolkiln compile: core\/reads-json\.ts:1:\d+: "\.\/data\.json" is no TypeScript file/);
    rmSync(join(root, 'core/reads-json.ts'));

    // Another process holds the lock: this one does not wait for it.
    mkdirSync(join(root, 'dist/.compiling'));
    edit(root, 'core/message.ts', "export const message: string = 'locked';\n", 20);
    expect(toolkiln(root).out).toBe('source locked arg');
    // A lock a minute old was left by a process that died compiling.
    const old = new Date(Date.now() - 120_000);
    utimesSync(join(root, 'dist/.compiling'), old, old);
    expect(toolkiln(root).out).toBe('compiled locked arg');
    expect(existsSync(join(root, 'dist/.compiling'))).toBe(false);

    expect(toolkiln(root, { TOOLKILN_FROM_SOURCE: '1' }).out).toBe('source locked arg');
    rmSync(root, { recursive: true, force: true });
  });

  it("the project's compiled code runs a stage's worker thread without tsx", () => {
    // A plain Node process (no loader: a TypeScript file would fail to load) running the NesTools
    // recipe from dist/ with its program checks on a thread; a thread that cannot start says so in the log.
    const script = `
      import { mkdtempSync } from 'node:fs';
      import { join } from 'node:path';
      import { tmpdir } from 'node:os';
      const { runPipeline } = await import('${ROOT}dist/core/run.js');
      const { OfflineGateway } = await import('${ROOT}dist/core/llm/offline.js');
      const { nestoolsPipeline } = await import('${ROOT}dist/pipelines/nestools.js');
      const config = nestoolsPipeline.configSchema.parse({ count: 12 });
      const threaded = nestoolsPipeline.stages(config).filter((stage) => stage.threads).map((stage) => stage.name);
      const logs = [];
      const result = await runPipeline({ pipeline: nestoolsPipeline, configOverrides: { count: 12 }, llm: new OfflineGateway(42), home: mkdtempSync(join(tmpdir(), 'tk-compiled-threads-')), projectDir: process.cwd(), cwd: process.cwd(), progress: { quiet: true }, threads: { count: 1, from: 0 }, log: (line) => logs.push(line) });
      process.stdout.write(JSON.stringify({ status: result.status, threaded, threadLogs: logs.filter((line) => /thread/i.test(line)) }));
    `;
    // A file, not `--input-type=module -e`: a worker thread takes the process's flags, and with that one
    // its CommonJS first code would be read as an ES module.
    const file = join(mkdtempSync(join(tmpdir(), 'tk-compiled-threads-')), 'run.mjs');
    writeFileSync(file, script);
    const child = spawnSync(process.execPath, [file], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, OPENAI_API_KEY: '', OPENAI_BASE_URL: '' } });
    expect(child.stderr).toBe('');
    const outcome = JSON.parse(child.stdout);
    expect(outcome.threaded.length).toBeGreaterThan(0);
    expect(outcome).toMatchObject({ status: 'published', threadLogs: [] });
  }, 120_000);
});
