import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/** The project's modules import one way: no module reaches itself again through its imports. */

const projectDir = new URL('..', import.meta.url).pathname;
const FOLDERS = ['core', 'stages', 'pipelines', 'prompts', 'review'];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Relative imports that run code (`import type` and `export type` are erased, so they cannot loop). */
function runtimeImports(path: string): string[] {
  const text = readFileSync(path, 'utf8');
  return [...text.matchAll(/^(?:import|export)\s+(?!type\b)[^'";]*?\bfrom\s+'(\.[^']+)'/gm)].map((m) => resolve(dirname(path), m[1]));
}

function importCycles(files: string[]): string[] {
  const known = new Set(files);
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const cycles: string[] = [];
  const visit = (file: string) => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of runtimeImports(file).filter((dep) => known.has(dep))) {
      if (state.get(next) === 'open') cycles.push([...stack.slice(stack.indexOf(next)), next].map((f) => relative(projectDir, f)).join(' → '));
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of files) if (!state.has(file)) visit(file);
  return cycles;
}

describe('import graph', () => {
  it('has no import circles', () => {
    const files = FOLDERS.flatMap((folder) => sourceFiles(join(projectDir, folder)));
    expect(files.length).toBeGreaterThan(50);
    expect(importCycles(files)).toEqual([]);
  });
});
