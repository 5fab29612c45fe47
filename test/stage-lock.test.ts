import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { sha256 } from '../core/hash.ts';
import { pipelines } from '../pipelines/index.ts';
import { defaultRun } from './helpers/default-run.ts';

/**
 * A stage's identity cannot drift from its code. `stages.lock.json` records, per recipe, the code
 * its pipeline runs (every file under pipelines/, stages/ and prompts/ its pipeline file imports,
 * directly or not, hashed without comments and types) and its stages' versions, which the dataset
 * fingerprint holds. When the code changes:
 *
 * - and a stage version changed with it, the fingerprint changes: record the lock again;
 * - and no stage version changed, the same fingerprint would stand for other code. The lock is
 *   recorded only when the recipe's default run still publishes the bytes it published when the
 *   lock was recorded (the change is a refactor); otherwise bump the version of the stage whose
 *   output changed.
 *
 * Record with `UPDATE_STAGE_LOCK=1 npx vitest run test/stage-lock.test.ts`.
 */
const PROJECT = resolve(new URL('..', import.meta.url).pathname);
const LOCK = join(PROJECT, 'stages.lock.json');
const OWN_CODE = ['pipelines/', 'stages/', 'prompts/'];

interface RecipeLock {
  stages: Record<string, number>;
  /** A hash of the default run's published files (their checksums). */
  published: string;
  code: Record<string, string>;
}

/** A file's behaviour as text: its JavaScript without comments or types, so wording and layout edits do not count. */
function codeHash(path: string): string {
  const { outputText } = ts.transpileModule(readFileSync(path, 'utf8'), {
    compilerOptions: { removeComments: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext },
    fileName: path,
  });
  return sha256(outputText).slice(0, 16);
}

/** Every project file under pipelines/, stages/ or prompts/ that `entry` imports, directly or not, with its code hash. */
function codeOf(entry: string): Record<string, string> {
  const seen = new Map<string, string>();
  const visit = (path: string) => {
    const name = relative(PROJECT, path);
    if (seen.has(name) || !OWN_CODE.some((folder) => name.startsWith(folder))) return;
    seen.set(name, codeHash(path));
    for (const { fileName } of ts.preProcessFile(readFileSync(path, 'utf8'), true, true).importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const target = resolve(dirname(path), fileName);
      if (existsSync(target)) visit(target);
    }
  };
  visit(join(PROJECT, entry));
  return Object.fromEntries([...seen].sort(([a], [b]) => a.localeCompare(b)));
}

function current(name: string, publishedFiles: Record<string, string>): RecipeLock {
  const pipeline = pipelines[name];
  const stages = Object.fromEntries(pipeline.stages(pipeline.configSchema.parse({})).map((stage) => [stage.name, stage.version]));
  return { stages, published: sha256(JSON.stringify(publishedFiles)).slice(0, 16), code: codeOf(`pipelines/${name}.ts`) };
}

function changedFiles(then: Record<string, string>, now: Record<string, string>): string[] {
  return [...new Set([...Object.keys(then), ...Object.keys(now)])].filter((file) => then[file] !== now[file]).sort();
}

const lock: Record<string, RecipeLock> = existsSync(LOCK) ? JSON.parse(readFileSync(LOCK, 'utf8')) : {};
const recording = !!process.env.UPDATE_STAGE_LOCK;

for (const name of Object.keys(pipelines)) {
  describe(`${name}: stage identity follows the code (stages.lock.json)`, () => {
    const run = defaultRun(name);
    it(`${name}: the code and stage versions are as locked`, () => {
      const now = current(name, run.manifest.files);
      const then = lock[name] ?? { stages: {}, published: '', code: {} };
      const files = changedFiles(then.code, now.code);
      const versionsChanged = JSON.stringify(then.stages) !== JSON.stringify(now.stages);
      if (!files.length && !versionsChanged && then.published === now.published) return;
      if (files.length && !versionsChanged && then.published !== now.published) {
        throw new Error(
          `${name}: the code changed (${files.join(', ')}) and so did what its default run publishes, but no stage version did: ` +
            `bump the version of each stage whose output changed, re-record the golden bytes, then this lock (UPDATE_STAGE_LOCK=1)`,
        );
      }
      if (recording) {
        lock[name] = now;
        writeFileSync(LOCK, `${JSON.stringify(lock, null, 2)}\n`);
        return;
      }
      throw new Error(
        `${name}: ${files.length ? `the code changed (${files.join(', ')})` : versionsChanged ? 'stage versions changed' : 'what the default run publishes changed'} since stages.lock.json was recorded. ` +
          (versionsChanged ? 'A stage version changed with it: ' : files.length ? 'The default run still publishes the same bytes: ' : '') +
          'if no configuration can publish anything else without a version bump, record the lock: UPDATE_STAGE_LOCK=1 npx vitest run test/stage-lock.test.ts',
      );
    }, 900_000);
  });
}

it('the stage lock names only recipes that exist', () => {
  expect(Object.keys(lock).filter((name) => !(name in pipelines))).toEqual([]);
});
