import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * What the quick commands load (a start is mostly module loading: docs/benchmarks.md, "Start-up"),
 * checked on the module graph, not on timings: no recipe, no stage, and none of the heavy libraries.
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const HEAVY = ['bullmq', 'ioredis', 'hyparquet', 'hyparquet-writer', '@huggingface/transformers', 'openai', 'ajv', 'yaml', 'p-queue'];

type Loaded = { argv: string[]; code: number; files: string[]; packages: string[] };

/** The project files and packages each call loaded (test/helpers/help-loads.mjs: in one process, each call's own). */
function loads(calls: string[][]): { startup: Omit<Loaded, 'argv' | 'code'>; results: Loaded[] } {
  const script = fileURLToPath(new URL('./helpers/help-loads.mjs', import.meta.url));
  const child = spawnSync(process.execPath, [script, JSON.stringify(calls)], { encoding: 'utf8', env: { ...process.env, TOOLKILN_HOME: '' } });
  expect(child.status, child.stderr).toBe(0);
  return JSON.parse(child.stdout);
}

/** The module files a `toolkiln` process loads (a module hook logging every load), with its exit code. */
function processLoads(args: string[], env: NodeJS.ProcessEnv = {}): { code: number | null; out: string; modules: string[] } {
  const scratch = mkdtempSync(join(tmpdir(), 'tk-startup-'));
  const log = join(scratch, 'modules.log');
  const hook = pathToFileURL(fileURLToPath(new URL('./helpers/module-log-hook.mjs', import.meta.url))).href;
  const registerHook = `data:text/javascript,import{register}from"node:module";import{writeFileSync}from"node:fs";writeFileSync(${JSON.stringify(log)},"");register(${JSON.stringify(hook)},{data:{log:${JSON.stringify(log)}}});`;
  const child = spawnSync(process.execPath, ['--import', registerHook, join(ROOT, 'bin/toolkiln.js'), ...args], { cwd: scratch, encoding: 'utf8', env: { ...process.env, TOOLKILN_HOME: scratch, TOOLKILN_FROM_SOURCE: '', ...env } });
  const modules = readFileSync(log, 'utf8').split('\n').filter((url) => url.startsWith('file:')).map((url) => fileURLToPath(url).slice(ROOT.length));
  return { code: child.status, out: child.stdout, modules };
}

describe('cli start-up', () => {
  it('--help, --version, datasets list and runs list load no recipe, no stage and none of the heavy libraries', () => {
    const { startup, results } = loads([['--version'], ['--help'], ['datasets', 'list'], ['runs', 'list']]);
    expect(startup.packages).toEqual([]);
    for (const result of results) {
      const files = [...startup.files, ...result.files];
      expect(result.code, result.argv.join(' ')).toBe(0);
      expect({ argv: result.argv.join(' '), recipesAndStages: files.filter((f) => /^(stages|review|eval)\/|^pipelines\/(?!catalog\.ts|summaries\.ts)/.test(f)) }).toEqual({ argv: result.argv.join(' '), recipesAndStages: [] });
      expect({ argv: result.argv.join(' '), heavy: result.packages.filter((p) => HEAVY.includes(p)) }).toEqual({ argv: result.argv.join(' '), heavy: [] });
    }
    const [version, help, datasetsList, runsList] = results;
    // --version and help load nothing at all beyond the CLI itself; the lists their command and the store.
    expect(version.files).toEqual([]);
    expect(help.files).toEqual([]);
    expect(datasetsList.packages).toEqual(['zod']);
    expect(runsList.packages).toEqual([]);
    expect(runsList.files.filter((f) => f.startsWith('core/'))).not.toContain('core/run.ts');
  });

  it('a run loads neither the MCP SDK (without a live tool server), an exporter, PCA, yaml nor fast-levenshtein: each is loaded where used', () => {
    const run = processLoads(['run', 'mtu', '--dry-run', '--limit', '2', '--quiet']);
    expect(run.code).toBe(0);
    // The modules that start servers and name the exporters are there; what they load when used is not.
    expect(run.modules).toContain('dist/core/tool-server.js');
    expect(run.modules).toContain('dist/stages/export/index.js');
    expect(run.modules.filter((file) => /node_modules\/(@modelcontextprotocol|zod-to-json-schema|zod)\//.test(file))).toEqual([]);
    expect(run.modules.filter((file) => /^dist\/stages\/(export\/(?!index\.js)|mtu\/export\.js)|hyparquet/.test(file))).toEqual([]);
    // Nor PCA, which only the recipes that plot clusters use, yaml (a YAML tool file, a dataset card), nor
    // fast-levenshtein (an unknown config key, near-duplicate texts).
    expect(run.modules.filter((file) => /node_modules\/(ml-pca|ml-matrix|fast-levenshtein)\/|^dist\/packages\/yaml\.js$/.test(file))).toEqual([]);
  });

  it('the installed command runs the compiled JavaScript, and prints what the TypeScript source prints', () => {
    for (const args of [['--version'], ['--help'], ['runs', 'list']]) {
      const compiled = processLoads(args);
      expect(compiled.code).toBe(0);
      expect(compiled.modules).toContain('dist/bin/cli.js');
      expect(compiled.modules.filter((file) => file.endsWith('.ts') || file.includes('node_modules/tsx/'))).toEqual([]);
      const source = processLoads(args, { TOOLKILN_FROM_SOURCE: '1' });
      expect(source.code).toBe(0);
      expect(source.modules).toContain('bin/cli.ts');
      expect(source.modules.filter((file) => file.startsWith('dist/'))).toEqual([]);
      expect(compiled.out.replace(/\/tmp\/\S+/g, '<home>')).toBe(source.out.replace(/\/tmp\/\S+/g, '<home>'));
    }
  });
});
