import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { UserError } from '../errors.ts';
import { sampleFromLine } from '../line-form.ts';
import type { ReleasedSamples } from '../pipeline.ts';
import { formatZodError, Sample } from '../records.ts';
import { samplesInFiles } from '../sample-source.ts';
import type { ReleasedReads } from '../released-reads.ts';
import type { DatasetStore } from '../store.ts';
import type { ReferenceSet } from './reference-index.ts';

/**
 * What overlap is measured against, from the words a user gives (`--against`, a config's
 * `testOverlap.against`):
 *
 *   - `released`: every released set the readers know;
 *   - a released set's name (`mtu-bench`): read from its place beside the project, and
 *     `<name>=<folder>`: read from that folder by the same reader;
 *   - `<dataset>@<version>` (or a dataset's name: its latest version), from the store;
 *   - a JSONL file of canonical samples (a version's split file, `export --format canonical`), or a
 *     folder of them.
 */

export interface ReferenceSources {
  /** The released sets that can be named (the CLI: every recipe's; publishing: the recipe's own). */
  released: readonly ReleasedSamples[];
  /** Versions, when they can be named. */
  store?: DatasetStore;
  /** A released set's default place → a path (relative to the current folder, then the project folder). */
  resolvePath: (path: string) => string;
  /** What file and folder references are relative to. */
  cwd: string;
  /** A run's reads of released sets, shared with its statistics stage (otherwise a set is read on its own). */
  reads?: ReleasedReads;
}

/** A released set read from `dir`, as a reference. */
export function releasedReference(entry: ReleasedSamples, dir: string, sources: Pick<ReferenceSources, 'resolvePath' | 'reads'>, shownPath = dir): ReferenceSet {
  if (!existsSync(dir)) throw new UserError(`released ${entry.name} not found at ${dir}; put its files (${entry.files}) there or name another folder: ${entry.name}=<folder>`);
  const { reads, resolvePath } = sources;
  return { name: entry.name, kind: 'released', path: shownPath, samples: () => (reads ? reads.samples(entry, dir, resolvePath) : entry.read(dir, resolvePath).samples()) };
}

/** A line of a reference file as a sample: the line form the store and the canonical export write, or a plain Sample. */
function referenceSample(line: unknown, where: string): Sample {
  const record = line as Record<string, unknown> | null;
  if (record && typeof record === 'object' && typeof record.expected === 'string') return sampleFromLine(line, where);
  const parsed = Sample.safeParse(line);
  if (!parsed.success) throw new UserError(`${where}: not a canonical sample (${formatZodError(parsed.error)}); a reference file holds one sample a line, as a version's data/<split>.jsonl or export --format canonical writes them (a released benchmark's folder: <name>=<folder>)`);
  return parsed.data;
}

/** The JSONL files a file reference names: the file, or a folder's *.jsonl but its tool library. */
function referenceFiles(path: string, shown: string): { split: string; path: string }[] {
  if (!statSync(path).isDirectory()) return [{ split: shown, path }];
  const files = readdirSync(path)
    .filter((file) => file.endsWith('.jsonl') && file !== 'tools.jsonl')
    .sort();
  if (!files.length) throw new UserError(`${shown}: a folder without .jsonl files of samples; name a file of canonical samples, or a released benchmark's folder as <name>=<folder>`);
  return files.map((file) => ({ split: file, path: join(path, file) }));
}

/** The reference sets `specs` name (see the module comment), each once, in the order given. */
export function referenceSets(specs: readonly string[], sources: ReferenceSources): ReferenceSet[] {
  const sets: ReferenceSet[] = [];
  const known = sources.released.map((entry) => entry.name);
  for (const spec of specs) {
    if (spec === 'released') {
      if (!sources.released.length) throw new UserError('no released set is known here to compare with; name one, a version or a file');
      sets.push(...sources.released.map((entry) => releasedReference(entry, sources.resolvePath(entry.path), sources, entry.path)));
      continue;
    }
    const eq = spec.indexOf('=');
    const named = sources.released.find((entry) => entry.name === (eq > 0 ? spec.slice(0, eq) : spec));
    if (named) {
      sets.push(eq > 0 ? releasedReference(named, resolve(sources.cwd, spec.slice(eq + 1)), sources, spec.slice(eq + 1)) : releasedReference(named, sources.resolvePath(named.path), sources, named.path));
      continue;
    }
    if (eq > 0) throw new UserError(`${spec}: ${spec.slice(0, eq)} is not a released set known here (${known.join(', ') || 'none'})`);
    const path = resolve(sources.cwd, spec);
    if (existsSync(path)) {
      const files = referenceFiles(path, spec);
      sets.push({ name: spec, kind: 'file', path: spec, samples: () => samplesInFiles(files, referenceSample).all() });
      continue;
    }
    const store = sources.store;
    const isVersion = store && (spec.includes('@') || store.names().includes(spec));
    if (!store || !isVersion) {
      throw new UserError(`"${spec}" is neither a released set (${['released', ...known].join(', ')}), a dataset version (<name>@<version>) nor an existing file`);
    }
    const ref = store.resolve(spec);
    store.assertIntact(ref);
    const source = store.sampleSource(ref);
    sets.push({ name: `${ref.name}@${ref.version}`, kind: 'version', path: ref.dir, samples: () => source.all() });
  }
  const names = new Set<string>();
  return sets.filter((set) => !names.has(set.name) && names.add(set.name));
}
