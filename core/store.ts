import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { countBy, groupBy } from './collections.ts';
import { UserError, messageOf } from './errors.ts';
import { hashOf, sha256 } from './hash.ts';
import { readJsonl, toJsonl, writeFileAtomic } from './jsonl.ts';
import { Manifest, Rejection, Sample, ToolSpec, formatZodError } from './records.ts';

export const TOOLKILN_VERSION = '0.1.0';

export interface VersionRef {
  name: string;
  version: string;
  dir: string;
}

/** What a publisher supplies; the store adds version, files, counts and created-at. */
export type ManifestDraft = Omit<Manifest, 'name' | 'version' | 'files' | 'counts' | 'createdAt' | 'toolkilnVersion'>;

export interface PublishInput {
  name: string;
  manifest: ManifestDraft;
  samples: Sample[];
  tools: ToolSpec[];
  rejects: Rejection[];
  /** Extra files written into the version before it is published (e.g. a review report), relative path → text. */
  extraFiles?: Record<string, string>;
  /** Called after every file is written and before the rename (tests use it to simulate a crash). */
  beforeRename?: (tmpDir: string) => void;
}

export interface DatasetDiff {
  a: string;
  b: string;
  added: string[];
  removed: string[];
  changed: string[];
  unchanged: number;
}

/**
 * Versioned datasets under `<home>/datasets/<name>/vN`. A version is written to a hidden
 * temporary folder and renamed into place, so a crash never leaves half a version; its data files
 * are made read-only, and nothing here ever rewrites them.
 */
export class DatasetStore {
  readonly root: string;

  constructor(home: string) {
    this.root = join(home, 'datasets');
  }

  static checkName(name: string): string {
    if (!name || /[\/\\]/.test(name) || name.includes('..') || name.startsWith('.') || /[\u0000-\u001f]/.test(name)) {
      throw new UserError(`invalid dataset name "${name}": use letters, digits, '-', '_' or '.', without '/', '\\' or '..'`);
    }
    return name;
  }

  names(): string[] {
    if (!existsSync(this.root)) return [];
    return readdirSync(this.root, { withFileTypes: true })
      .filter((d) => d.isDirectory() && !d.name.startsWith('.') && this.versions(d.name).length > 0)
      .map((d) => d.name)
      .sort();
  }

  /** Published versions, oldest first (temporary folders are not versions). */
  versions(name: string): string[] {
    const dir = join(this.root, DatasetStore.checkName(name));
    if (!existsSync(dir)) return [];
    return readdirSync(dir)
      .filter((v) => /^v\d+$/.test(v) && existsSync(join(dir, v, 'manifest.json')))
      .sort((a, b) => Number(a.slice(1)) - Number(b.slice(1)));
  }

  latest(name: string): string | null {
    const versions = this.versions(name);
    return versions.length ? versions[versions.length - 1] : null;
  }

  /** `name`, `name@v3` or `name@latest` → an existing version, or a clear error. */
  resolve(ref: string): VersionRef {
    const at = ref.lastIndexOf('@');
    const name = DatasetStore.checkName(at === -1 ? ref : ref.slice(0, at));
    const wanted = at === -1 ? 'latest' : ref.slice(at + 1);
    const versions = this.versions(name);
    if (!versions.length) throw new UserError(`no dataset named "${name}" in ${this.root} (see: toolkiln datasets list)`);
    const version = wanted === 'latest' ? versions[versions.length - 1] : wanted;
    if (!versions.includes(version)) {
      throw new UserError(`${name}@${wanted} not found: ${name} has ${versions.join(', ')} (write name@vN)`);
    }
    return { name, version, dir: join(this.root, name, version) };
  }

  manifest(ref: VersionRef): Manifest {
    const path = join(ref.dir, 'manifest.json');
    let json: unknown;
    try {
      json = JSON.parse(readFileSync(path, 'utf8'));
    } catch (error) {
      throw new UserError(`${path}: not readable JSON (${messageOf(error)}); the version is damaged: restore it from a copy or publish it again`);
    }
    const parsed = Manifest.safeParse(json);
    if (!parsed.success) throw new UserError(`${path}: not a toolkiln manifest (${formatZodError(parsed.error)}); restore it from a copy or publish the version again`);
    return parsed.data;
  }

  /** All samples of a version, split by split in the order the manifest lists them. */
  samples(ref: VersionRef): Sample[] {
    const manifest = this.manifest(ref);
    return Object.keys(manifest.counts.bySplit).flatMap((split) => readJsonl<Sample>(join(ref.dir, 'data', `${split}.jsonl`)));
  }

  tools(ref: VersionRef): ToolSpec[] {
    return readJsonl<ToolSpec>(join(ref.dir, 'tools.jsonl'));
  }

  rejects(ref: VersionRef): Rejection[] {
    return readJsonl<Rejection>(join(ref.dir, 'rejects.jsonl'));
  }

  findByFingerprint(name: string, fingerprint: string): VersionRef | null {
    for (const version of this.versions(name).reverse()) {
      const ref = { name, version, dir: join(this.root, name, version) };
      if (this.manifest(ref).fingerprint === fingerprint) return ref;
    }
    return null;
  }

  publish(input: PublishInput): { ref: VersionRef; manifest: Manifest } {
    const name = DatasetStore.checkName(input.name);
    const datasetDir = join(this.root, name);
    mkdirSync(datasetDir, { recursive: true });
    const tmpDir = join(datasetDir, `.tmp-${process.pid}-${Date.now()}`);
    mkdirSync(join(tmpDir, 'data'), { recursive: true });
    try {
      const files: Record<string, string> = {};
      const write = (path: string, text: string) => {
        mkdirSync(join(tmpDir, path, '..'), { recursive: true });
        writeFileSync(join(tmpDir, path), text);
        files[path] = sha256(text);
      };

      const bySplit = groupBy(input.samples, (s) => s.split);
      const splits = [...bySplit.keys()].sort();
      for (const split of splits) write(`data/${split}.jsonl`, toJsonl(bySplit.get(split)!));
      write('tools.jsonl', toJsonl(input.tools));
      write('rejects.jsonl', toJsonl(input.rejects));
      for (const [path, text] of Object.entries(input.extraFiles ?? {})) write(path, text);

      const version = `v${Number((this.latest(name) ?? 'v0').slice(1)) + 1}`;
      const manifest = Manifest.parse({
        ...input.manifest,
        name,
        version,
        counts: {
          samples: input.samples.length,
          rejects: input.rejects.length,
          tools: input.tools.length,
          bySplit: Object.fromEntries(splits.map((s) => [s, bySplit.get(s)!.length])),
          byCategory: countBy(input.samples.map((s) => s.category)),
        },
        files,
        createdAt: new Date().toISOString(),
        toolkilnVersion: TOOLKILN_VERSION,
      });
      writeFileSync(join(tmpDir, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
      input.beforeRename?.(tmpDir);

      const target = join(datasetDir, version);
      if (existsSync(target)) throw new UserError(`${name}@${version} appeared while publishing (another run?); run again`);
      renameSync(tmpDir, target);
      makeReadOnly(target, ['manifest.json', ...Object.keys(files)]);
      writeFileAtomic(join(datasetDir, 'LATEST'), version + '\n');
      return { ref: { name, version, dir: target }, manifest };
    } catch (error) {
      rmSync(tmpDir, { recursive: true, force: true });
      throw error;
    }
  }

  /** Sample ids added, removed and changed (same id, other content) from `a` to `b`. */
  diff(a: VersionRef, b: VersionRef): DatasetDiff {
    const index = (ref: VersionRef) => new Map(this.samples(ref).map((s) => [s.id, hashOf(s)]));
    const before = index(a);
    const after = index(b);
    const added = [...after.keys()].filter((id) => !before.has(id)).sort();
    const removed = [...before.keys()].filter((id) => !after.has(id)).sort();
    const changed = [...after.keys()].filter((id) => before.has(id) && before.get(id) !== after.get(id)).sort();
    const unchanged = [...after.keys()].filter((id) => before.get(id) === after.get(id)).length;
    return { a: `${a.name}@${a.version}`, b: `${b.name}@${b.version}`, added, removed, changed, unchanged };
  }

  /** Where derived files of a version go (review sheets, exports): beside, never over, its data. */
  derivedDir(ref: VersionRef, ...parts: string[]): string {
    const dir = join(ref.dir, ...parts);
    mkdirSync(dir, { recursive: true });
    return dir;
  }
}

/** Published data files are read-only: a version is never edited after publishing. */
function makeReadOnly(dir: string, files: string[]): void {
  for (const file of files) {
    const path = join(dir, file);
    if (existsSync(path) && statSync(path).isFile()) chmodSync(path, 0o444);
  }
}
