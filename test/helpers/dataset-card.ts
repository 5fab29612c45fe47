import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

/** A dataset card's YAML front matter (parsed) and body; throws when it has no front matter. */
export function readDatasetCard(path: string): { header: Record<string, any>; body: string } {
  const match = /^---\n([\s\S]*?)\n---\n([\s\S]*)$/.exec(readFileSync(path, 'utf8'));
  if (!match) throw new Error(`${path}: no YAML front matter between --- lines`);
  return { header: parse(match[1]) as Record<string, any>, body: match[2] };
}
