import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const dir = new URL('../review/', import.meta.url);

/** review/ module → the review/ modules it imports (type-only imports count: they are edges too). */
function reviewImports(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
    const text = readFileSync(new URL(file, dir), 'utf8');
    const targets = [...text.matchAll(/^(?:import|export)\b[^;]*?from '\.\/([\w-]+\.ts)'/gms)].map((m) => m[1]);
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** Every import cycle, as the list of modules on it (each reported once, from its first module). */
function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const walk = (start: string, at: string, path: string[]) => {
    for (const next of graph.get(at) ?? []) {
      if (next === start) found.push([...path, start]);
      else if (!path.includes(next) && next > start) walk(start, next, [...path, next]);
    }
  };
  for (const start of graph.keys()) walk(start, start, [start]);
  return found;
}

describe('review/ modules', () => {
  it('import one way: no module imports one that imports it back', () => {
    const graph = reviewImports();
    expect(graph.get('sources.ts')).toContain('labelstudio.ts'); // the parser sees real imports
    expect(cycles(graph)).toEqual([]);
  });
});
