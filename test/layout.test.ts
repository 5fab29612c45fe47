import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The import rules of ARCHITECTURE.md, checked on the source tree: imports run one way
 * (bin → review / pipelines / eval → stages → prompts → core), a shared stage (stages/*.ts) never imports
 * from a recipe's folder (stages/<recipe>/), review/ and eval/ reach a recipe only through what its
 * pipeline declares, bench/ runs on the project and its own modules (never on test code), and no
 * module reaches itself through its imports.
 */

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const FOLDERS = ['core', 'prompts', 'stages', 'pipelines', 'review', 'eval', 'bin'] as const;
type Folder = (typeof FOLDERS)[number];

/** Lower runs under higher: a module may import its own folder or a folder of a lower rank. */
const RANK: Record<Folder, number> = { core: 0, prompts: 1, stages: 2, pipelines: 3, review: 3, eval: 3, bin: 4 };
/** Same-rank imports that the architecture allows: review and eval reach a recipe through its pipeline. */
const ALLOWED_ACROSS: readonly string[] = ['review→pipelines', 'eval→pipelines'];

/** Module → the project modules it imports (root-relative, `/`-separated). */
type ImportGraph = Map<string, string[]>;

function sourceFiles(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => posix.join(folder, file.split(/[\\/]/).join('/')))
    .sort();
}

/** Every relative import, re-export and dynamic import of a file, as root-relative paths. */
function importsOf(file: string): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(join(ROOT, file), 'utf8'), true, true);
  return importedFiles.map((ref) => ref.fileName).filter((spec) => spec.startsWith('.')).map((spec) => posix.normalize(posix.join(posix.dirname(file), spec)));
}

function projectGraph(folders: readonly string[] = FOLDERS): ImportGraph {
  return new Map(folders.flatMap((folder) => sourceFiles(folder)).map((file) => [file, importsOf(file)]));
}

function folderOf(path: string): Folder | undefined {
  const top = path.split('/')[0];
  return (FOLDERS as readonly string[]).includes(top) ? (top as Folder) : undefined;
}

/** Recipes are what pipelines/ defines (index.ts and catalog.ts list them, summaries.ts says what each makes); their stages live in stages/<recipe>/. */
function recipesOf(graph: ImportGraph): Set<string> {
  return new Set([...graph.keys()].filter((file) => /^pipelines\/[^/]+\.ts$/.test(file)).map((file) => posix.basename(file, '.ts')).filter((name) => !['index', 'catalog', 'summaries'].includes(name)));
}

/** Imports against bin → review / pipelines → stages → prompts → core, as `from → to (why)`. */
function directionProblems(graph: ImportGraph): string[] {
  const problems: string[] = [];
  for (const [from, targets] of graph) {
    const source = folderOf(from)!;
    for (const to of targets) {
      const target = folderOf(to);
      if (!target) problems.push(`${from} → ${to} (outside ${FOLDERS.join(', ')})`);
      else if (target !== source && RANK[target] >= RANK[source] && !ALLOWED_ACROSS.includes(`${source}→${target}`)) problems.push(`${from} → ${to} (${source} may not import ${target})`);
    }
  }
  return problems;
}

/** Shared stages (stages/*.ts) that import from a recipe's folder. */
function sharedStageProblems(graph: ImportGraph, recipes: Set<string>): string[] {
  const problems: string[] = [];
  for (const [from, targets] of graph) {
    if (!/^stages\/[^/]+\.ts$/.test(from)) continue;
    for (const to of targets) {
      const folder = /^stages\/([^/]+)\//.exec(to)?.[1];
      if (folder && recipes.has(folder)) problems.push(`${from} → ${to} (a shared stage imports from the ${folder} recipe)`);
    }
  }
  return problems;
}

/** Imports of review/ and eval/ into a recipe's code (stages/<recipe>/, stages/sources/), which they reach only through pipelines/. */
function recipeCodeProblems(graph: ImportGraph, recipes: Set<string>): string[] {
  const problems: string[] = [];
  for (const [from, targets] of graph) {
    if (!/^(review|eval)\//.test(from)) continue;
    for (const to of targets) {
      const folder = /^stages\/([^/]+)\//.exec(to)?.[1];
      if (folder && (recipes.has(folder) || folder === 'sources')) problems.push(`${from} → ${to} (${from.split('/')[0]}/ reaches recipe code only through pipelines/)`);
    }
  }
  return problems;
}

/** Imports of bench/ into test/: a benchmark runs on what the project and bench/lib own. */
function benchProblems(graph: ImportGraph): string[] {
  return [...graph].flatMap(([from, targets]) => (from.startsWith('bench/') ? targets.filter((to) => to.startsWith('test/')).map((to) => `${from} → ${to} (bench/ imports test code)`) : []));
}

/** The import circles: strongly connected groups of modules (Tarjan), each sorted. */
function importCircles(graph: ImportGraph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (node: string) => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue;
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const group: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      group.push(member);
    } while (member !== node);
    if (group.length > 1 || (graph.get(node) ?? []).includes(node)) circles.push(group.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return circles.sort((a, b) => a[0].localeCompare(b[0]));
}


describe('import layout', () => {
  const graph = projectGraph();

  it('reads the whole tree, imports resolving to files', () => {
    expect(graph.size).toBeGreaterThan(100);
    for (const folder of FOLDERS) expect([...graph.keys()].some((file) => file.startsWith(`${folder}/`)), folder).toBe(true);
    const dangling = [...graph].flatMap(([from, targets]) => targets.filter((to) => !existsSync(join(ROOT, to))).map((to) => `${from} → ${to}`));
    expect(dangling).toEqual([]);
  });

  it('imports run bin → review / pipelines → stages → prompts → core', () => {
    expect(directionProblems(graph)).toEqual([]);
  });

  it('no shared stage imports from a recipe folder', () => {
    expect(recipesOf(graph)).toEqual(new Set(['acebench', 'mtu', 'nestools', 'toole', 'tooltalk']));
    expect(sharedStageProblems(graph, recipesOf(graph))).toEqual([]);
  });

  it('review/ and eval/ reach recipe code only through pipelines/', () => {
    expect(recipeCodeProblems(graph, recipesOf(graph))).toEqual([]);
  });

  it('bench/ imports no test code', () => {
    const bench = projectGraph(['bench']);
    expect(bench.size).toBeGreaterThan(5);
    expect(benchProblems(bench)).toEqual([]);
  });

  it('no import circles', () => {
    expect(importCircles(graph)).toEqual([]);
  });

  it('the checks catch each kind of fault', () => {
    const faulty: ImportGraph = new Map([
      ['prompts/p.ts', ['stages/toole/filters.ts', 'core/prompt.ts']],
      ['core/c.ts', ['test/helpers/x.ts']],
      ['pipelines/toole.ts', ['review/queue.ts']],
      ['review/queue.ts', ['pipelines/toole.ts']],
      ['stages/shared.ts', ['stages/toole/records.ts', 'stages/sources/sgd.ts']],
      ['stages/toole/records.ts', ['stages/toole/text.ts']],
      ['stages/toole/text.ts', ['stages/toole/records.ts']],
      ['stages/self.ts', ['stages/self.ts']],
      ['eval/released.ts', ['stages/toole/score.ts', 'stages/sources/nestools.ts', 'stages/dedup-near.ts', 'pipelines/index.ts']],
      ['review/rows.ts', ['pipelines/toole.ts', 'stages/toole/statistics.ts']],
    ]);
    expect(directionProblems(faulty)).toEqual([
      'prompts/p.ts → stages/toole/filters.ts (prompts may not import stages)',
      'core/c.ts → test/helpers/x.ts (outside core, prompts, stages, pipelines, review, eval, bin)',
      'pipelines/toole.ts → review/queue.ts (pipelines may not import review)',
    ]);
    expect(sharedStageProblems(faulty, recipesOf(faulty))).toEqual(['stages/shared.ts → stages/toole/records.ts (a shared stage imports from the toole recipe)']);
    expect(recipeCodeProblems(faulty, recipesOf(faulty))).toEqual([
      'eval/released.ts → stages/toole/score.ts (eval/ reaches recipe code only through pipelines/)',
      'eval/released.ts → stages/sources/nestools.ts (eval/ reaches recipe code only through pipelines/)',
      'review/rows.ts → stages/toole/statistics.ts (review/ reaches recipe code only through pipelines/)',
    ]);
    expect(benchProblems(new Map([['bench/eval.ts', ['test/helpers/openai-server.ts', 'bench/lib/redis.ts', 'core/run.ts']]]))).toEqual(['bench/eval.ts → test/helpers/openai-server.ts (bench/ imports test code)']);
    expect(importCircles(faulty)).toEqual([['pipelines/toole.ts', 'review/queue.ts'], ['stages/self.ts'], ['stages/toole/records.ts', 'stages/toole/text.ts']]);
  });
});
