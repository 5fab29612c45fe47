import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { UserError, messageOf, withPath } from './errors.ts';
import { mapIterable } from './collections.ts';
import { makeFolder } from './folders.ts';
import { hashFileSync, hashOf, sha256 } from './hash.ts';
import { eachJsonl, JsonlWriter, writeFileAtomic, writeJsonlAtomic, type LineText } from './jsonl.ts';
import { LINE_FORM, lineDecoders, rejectionToLine, SampleLineTexts, sampleTextToLineText, sampleToLine, toolToLine, type LineDecoders, type LineWhere } from './line-form.ts';
import { describeOwner, waitForLock } from './lock.ts';
import { Manifest, Rejection, Sample, ToolSpec, formatZodError } from './records.ts';
import { samplesInFiles, type SampleSource } from './sample-source.ts';

export const TOOLKILN_VERSION = '0.2.0';

/** Longest dataset name: it becomes a folder name, and must leave room for the version and its derived folder. */
export const MAX_NAME_LENGTH = 100;

export interface VersionRef {
  name: string;
  version: string;
  dir: string;
}

/** What a publisher supplies; the store adds version, files, counts and created-at. */
export type ManifestDraft = Omit<Manifest, 'name' | 'version' | 'files' | 'counts' | 'createdAt' | 'toolkilnVersion'>;

/** A sample as the line of JSON text it was written as (by JSON.stringify), with what the store files it by; published in the line form. */
export interface SampleLine {
  id: string;
  split: string;
  category: string;
  text: string;
}

export interface PublishInput {
  name: string;
  manifest: ManifestDraft;
  /** Read once, as a stream (a run's samples come from its last stage's file, with their text); or `prepared`. */
  samples?: Iterable<Sample | SampleLine>;
  /** The data files written beforehand (a run's publish gate writes them as it checks the samples): moved into the version. */
  prepared?: PreparedSamples;
  /** Read once, after the samples. */
  tools: Iterable<ToolSpec>;
  /** Read once, as a stream, after the samples (the rejects of a review gather while its samples are read). */
  rejects: Iterable<Rejection>;
  /** Extra files written into the version before it is published (e.g. a review report), relative path → text. */
  extraFiles?: Record<string, string>;
  /**
   * Publish even when a version with the same fingerprint exists. Without it the check is made
   * again under the publishing lock, so two identical runs finishing together publish once.
   */
  force?: boolean;
  /** Called after every file is written and before the rename (tests use it to simulate a crash). */
  beforeRename?: (tmpDir: string) => void;
  /** How long to wait for another process publishing the same dataset (default 10 minutes). */
  lockTimeoutMs?: number;
}

export interface PublishResult {
  /** `existing`: a version with the same fingerprint was there (or appeared while this one was written). */
  status: 'published' | 'existing';
  ref: VersionRef;
  manifest: Manifest;
}

export interface DatasetDiff {
  a: string;
  b: string;
  added: string[];
  removed: string[];
  changed: string[];
  unchanged: number;
}

/** A file of a version that does not match the manifest's checksum, is missing, or is not in the manifest at all. */
export interface VerifyProblem {
  file: string;
  problem: 'missing' | 'changed' | 'unlisted';
}

export interface DatasetStoreOptions {
  /** Told about folders that look like versions but are not (no valid manifest, a link). */
  warn?: (message: string) => void;
}

const TMP_PREFIX = '.tmp-';
/**
 * The highest version number the store accepts. A `vN` folder beyond it (a stray
 * `v99999999999999999999`) would make the next number lose precision and every later publish
 * collide with it; it is reported and skipped like any other non-version.
 */
export const MAX_VERSION = 1_000_000;
const SPLIT_NAME = /^[\w.-]+$/;
const LEGACY_DERIVED = ['export', 'review', 'eval'];

/**
 * Versioned datasets under `<home>/datasets/<name>/vN`. A version is written to a hidden
 * temporary folder and renamed into place, so a crash never leaves half a version; its files are
 * checksummed in its manifest, made read-only, and nothing here ever rewrites them. Publishing is
 * serialised per dataset by a lock file, under which the store also repairs what a killed publish
 * can leave behind (temporary folders, modes, `LATEST`). Files made later from a version (exports,
 * review sheets, evaluations) go beside it, in `<version>.derived/`.
 */
export class DatasetStore {
  readonly root: string;
  private readonly warn: (message: string) => void;
  private readonly warned = new Set<string>();
  private readonly verified = new Set<string>();

  constructor(home: string, options: DatasetStoreOptions = {}) {
    this.root = join(home, 'datasets');
    this.warn = options.warn ?? (() => {});
  }

  static checkName(name: string): string {
    if (!name || /[\/\\]/.test(name) || name.includes('..') || name.startsWith('.') || /[\u0000-\u001f]/.test(name)) {
      throw new UserError(`invalid dataset name "${name}": use letters, digits, '-', '_' or '.', without '/', '\\' or '..'`);
    }
    if (name.length > MAX_NAME_LENGTH) throw new UserError(`dataset name is ${name.length} characters long; use at most ${MAX_NAME_LENGTH}`);
    return name;
  }

  names(): string[] {
    if (!existsSync(this.root)) return [];
    return readdirSync(this.root, { withFileTypes: true })
      .filter((d) => d.isDirectory() && !d.name.startsWith('.') && d.name.length <= MAX_NAME_LENGTH && this.versions(d.name).length > 0)
      .map((d) => d.name)
      .sort();
  }

  /**
   * Published versions, oldest first. A `vN` entry that is a link, or has no valid manifest of that
   * name and version, is not a version: it is reported through `warn` and skipped (its number too).
   */
  versions(name: string): string[] {
    return this.scan(name).valid;
  }

  latest(name: string): string | null {
    const versions = this.versions(name);
    return versions.length ? versions[versions.length - 1] : null;
  }

  /** The `vN` entries of a dataset folder, split into real versions and the highest number taken by any. */
  private scan(name: string): { valid: string[]; highest: number } {
    const dir = join(this.root, DatasetStore.checkName(name));
    if (!existsSync(dir)) return { valid: [], highest: 0 };
    const valid: string[] = [];
    let highest = 0;
    for (const entry of readdirSync(dir)) {
      if (!/^v\d+$/.test(entry)) continue;
      const number = Number.parseInt(entry.slice(1), 10);
      if (number > MAX_VERSION) {
        this.warnOnce(`${join(dir, entry)}: a version number beyond v${MAX_VERSION} is not one the store writes; it is not treated as a version (remove or rename the folder)`);
        continue;
      }
      highest = Math.max(highest, number);
      const problem = this.versionProblem(name, entry);
      if (problem) this.warnOnce(`${join(dir, entry)}: ${problem}; it is not treated as a version (its number is skipped)`);
      else valid.push(entry);
    }
    return { valid: valid.sort((a, b) => Number(a.slice(1)) - Number(b.slice(1))), highest };
  }

  private versionProblem(name: string, version: string): string | null {
    const dir = join(this.root, name, version);
    const stat = lstatSync(dir);
    if (stat.isSymbolicLink()) return 'is a symbolic link, and a version must be a real folder of the store';
    if (!stat.isDirectory()) return 'is not a folder';
    const path = join(dir, 'manifest.json');
    if (!existsSync(path)) return 'has no manifest.json';
    try {
      const manifest = Manifest.parse(JSON.parse(readFileSync(path, 'utf8')));
      if (manifest.name !== name || manifest.version !== version) return `its manifest is for ${manifest.name}@${manifest.version}`;
    } catch {
      return 'its manifest.json is not a valid toolkiln manifest';
    }
    return null;
  }

  private warnOnce(message: string): void {
    if (this.warned.has(message)) return;
    this.warned.add(message);
    this.warn(message);
  }

  /** `name`, `name@v3` or `name@latest` → an existing version, or a clear error. */
  resolve(ref: string): VersionRef {
    const at = ref.lastIndexOf('@');
    const name = DatasetStore.checkName(at === -1 ? ref : ref.slice(0, at));
    const wanted = at === -1 ? 'latest' : ref.slice(at + 1);
    const versions = this.versions(name);
    const dir = join(this.root, name, wanted);
    if (wanted !== 'latest' && !versions.includes(wanted) && /^v\d+$/.test(wanted) && existsSync(dir)) {
      throw new UserError(`${name}@${wanted} is not a usable version: ${this.versionProblem(name, wanted) ?? 'unreadable'}`);
    }
    if (!versions.length) throw new UserError(`no dataset named "${name}" in ${this.root} (see: toolkiln datasets list)`);
    const version = wanted === 'latest' ? versions[versions.length - 1] : wanted;
    if (!versions.includes(version)) {
      throw new UserError(`${name}@${wanted} not found: ${name} has ${versions.join(', ')} (write name@vN)`);
    }
    return { name, version, dir: join(this.root, name, version) };
  }

  manifest(ref: VersionRef): Manifest {
    return readManifest(ref.dir);
  }

  /**
   * Every file the manifest lists whose bytes no longer match its checksum, or that is gone, and
   * every entry of the version's folder the manifest does not list (added after publishing).
   */
  verify(ref: VersionRef): VerifyProblem[] {
    const manifest = this.manifest(ref);
    const problems: VerifyProblem[] = [];
    for (const [file, checksum] of Object.entries(manifest.files)) {
      const path = join(ref.dir, file);
      if (!existsSync(path)) problems.push({ file, problem: 'missing' });
      else if (hashFileSync(path) !== checksum) problems.push({ file, problem: 'changed' });
    }
    for (const file of unlistedEntries(ref.dir, new Set(['manifest.json', ...Object.keys(manifest.files)]))) problems.push({ file, problem: 'unlisted' });
    return problems.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  }

  /** Stops with the first file that does not match the manifest (reading commands call this before any work). */
  assertIntact(ref: VersionRef): void {
    if (this.verified.has(ref.dir)) return;
    const [first, ...more] = this.verify(ref);
    if (first) throw new UserError(`${intactMessage(ref, first)}${more.length ? ` (and ${more.length} more file(s); see toolkiln datasets verify ${ref.name}@${ref.version})` : ''}`);
    this.verified.add(ref.dir);
  }

  /**
   * The records of one JSONL file of the version, read line by line as they are asked for (never
   * held together) and checked against the manifest's checksum as they are read: a mismatch is an
   * error once the file is read to its end.
   */
  private *readChecked<T>(ref: VersionRef, file: string, decode: (line: unknown, where: LineWhere) => T): Generator<T> {
    const path = join(ref.dir, file);
    const expected = this.manifest(ref).files[file];
    if (!existsSync(path)) {
      if (expected === undefined) return;
      throw new UserError(intactMessage(ref, { file, problem: 'missing' }));
    }
    const check = expected !== undefined && !this.verified.has(ref.dir);
    const hash = createHash('sha256');
    let number = 0;
    for (const line of eachJsonl(path, check ? (bytes) => hash.update(bytes) : undefined)) yield decode(line, `${path}: record ${++number}`);
    if (check && hash.digest('hex') !== expected) throw new UserError(intactMessage(ref, { file, problem: 'changed' }));
  }

  /** How the version's records are read back: by the line form its manifest records, or as they are (older versions). */
  private decoders(ref: VersionRef): LineDecoders {
    return lineDecoders(this.manifest(ref).lineForm, join(ref.dir, 'manifest.json'));
  }

  /**
   * A version's samples as a stream read from its files on each pass (see `SampleSource`); the files
   * are not checked here: call `assertIntact` first. There is no call that loads a version's samples
   * whole: every command reads them through this, holding what it works on and compact figures only.
   */
  sampleSource(ref: VersionRef): SampleSource {
    const splits = Object.keys(this.manifest(ref).counts.bySplit);
    return samplesInFiles(
      splits.map((split) => ({ split, path: join(ref.dir, 'data', `${split}.jsonl`) })),
      this.decoders(ref).sample,
    );
  }

  /** The version's tool library (none when it has no `tools.jsonl`: an empty library is not written). */
  tools(ref: VersionRef): ToolSpec[] {
    return [...this.readChecked(ref, 'tools.jsonl', this.decoders(ref).tool)];
  }

  /**
   * The version's rejects, read one at a time as they are asked for (a version can have as many as
   * it has samples, each with its whole record); none when it has no `rejects.jsonl`.
   */
  rejects(ref: VersionRef): Iterable<Rejection> {
    return this.readChecked(ref, 'rejects.jsonl', this.decoders(ref).rejection);
  }

  /**
   * The newest version with this fingerprint written in the current line form: a version written in
   * an older form is not reused, so running the same pipeline again republishes it in the new one.
   */
  findByFingerprint(name: string, fingerprint: string): VersionRef | null {
    for (const version of this.versions(name).reverse()) {
      const ref = { name, version, dir: join(this.root, name, version) };
      const manifest = this.manifest(ref);
      if (manifest.fingerprint === fingerprint && manifest.lineForm === LINE_FORM) return ref;
    }
    return null;
  }

  /**
   * Publishes the next version of `input.name`, or reports the one that already has its fingerprint.
   * Holds the dataset's lock throughout, so concurrent publishers take turns and number correctly.
   */
  publish(input: PublishInput): PublishResult {
    const name = DatasetStore.checkName(input.name);
    const datasetDir = join(this.root, name);
    makeFolder(datasetDir);
    const taken = waitForLock(join(datasetDir, '.lock'), `publish ${name}`, input.lockTimeoutMs);
    if (!('lock' in taken)) throw new UserError(`${name}: another process is publishing it, ${describeOwner(taken.heldBy)}; wait for it to finish, then run again`);
    try {
      this.repair(name);
      if (!input.force) {
        const existing = this.findByFingerprint(name, input.manifest.fingerprint as string);
        if (existing) return { status: 'existing', ref: existing, manifest: this.manifest(existing) };
      }
      return { status: 'published', ...this.writeVersion(name, input) };
    } finally {
      taken.lock.release();
    }
  }

  private writeVersion(name: string, input: PublishInput): { ref: VersionRef; manifest: Manifest } {
    const datasetDir = join(this.root, name);
    const tmpDir = join(datasetDir, `${TMP_PREFIX}${process.pid}-${Date.now()}`);
    mkdirSync(join(tmpDir, 'data'), { recursive: true });
    try {
      const files: Record<string, string> = {};
      const write = (path: string, text: string) => {
        mkdirSync(join(tmpDir, path, '..'), { recursive: true });
        try {
          writeFileSync(join(tmpDir, path), text);
        } catch (error) {
          throw withPath(error, join(tmpDir, path));
        }
        files[path] = sha256(text);
      };
      // Data files are streamed: a version is never built as one string, nor its samples held here.
      // A file with no records is not written (an empty JSONL file breaks loaders such as `datasets`).
      const writeRecords = <T>(path: string, records: Iterable<T>, toLine: (record: T) => unknown) => {
        const { sha256, count } = writeJsonlAtomic(join(tmpDir, path), mapIterable(records, toLine));
        if (count) files[path] = sha256;
        else rmSync(join(tmpDir, path));
        return count;
      };
      let data = input.prepared;
      if (data) {
        for (const split of Object.keys(data.splits)) moveFile(join(data.dir, `${split}.jsonl`), join(tmpDir, 'data', `${split}.jsonl`));
      } else {
        const written = new SampleFiles(join(tmpDir, 'data'));
        try {
          for (const sample of input.samples ?? []) written.add(sample);
        } catch (error) {
          written.discard();
          throw error;
        }
        data = written.close();
      }
      const { splits: bySplit, byCategory, samples: sampleCount } = data;
      const splits = Object.keys(bySplit).sort();
      for (const split of splits) files[`data/${split}.jsonl`] = bySplit[split].sha256;
      const toolCount = writeRecords('tools.jsonl', input.tools, toolToLine);
      const rejectCount = writeRecords('rejects.jsonl', input.rejects, rejectionToLine);
      for (const [path, text] of Object.entries(input.extraFiles ?? {})) write(path, text);

      const next = this.scan(name).highest + 1;
      if (next > MAX_VERSION) throw new UserError(`${datasetDir}: ${name} already has v${MAX_VERSION}, the highest version number the store writes; publish under another --name`);
      const version = `v${next}`;
      const manifest = Manifest.parse({
        ...input.manifest,
        name,
        version,
        counts: {
          samples: sampleCount,
          rejects: rejectCount,
          tools: toolCount,
          bySplit: Object.fromEntries(splits.map((s) => [s, bySplit[s].count])),
          byCategory: Object.fromEntries(Object.keys(byCategory).sort().map((c) => [c, byCategory[c]])),
        },
        files,
        createdAt: new Date().toISOString(),
        toolkilnVersion: TOOLKILN_VERSION,
        lineForm: LINE_FORM,
      });
      writeFileSync(join(tmpDir, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
      input.beforeRename?.(tmpDir);

      const target = join(datasetDir, version);
      renameSync(tmpDir, target);
      makeReadOnly(target, ['manifest.json', ...Object.keys(files)]);
      writeFileAtomic(join(datasetDir, 'LATEST'), version + '\n');
      return { ref: { name, version, dir: target }, manifest };
    } catch (error) {
      rmSync(tmpDir, { recursive: true, force: true });
      throw error;
    }
  }

  /**
   * Mends what a publish killed at the wrong moment leaves: temporary folders (only a lock holder
   * writes them, so under the lock every one is stale), files left writable, a missing or wrong
   * `LATEST`. Called under the dataset's lock.
   */
  private repair(name: string): void {
    const datasetDir = join(this.root, name);
    for (const entry of readdirSync(datasetDir)) if (entry.startsWith(TMP_PREFIX)) rmSync(join(datasetDir, entry), { recursive: true, force: true });
    const versions = this.versions(name);
    for (const version of versions) {
      const ref = { name, version, dir: join(datasetDir, version) };
      makeReadOnly(ref.dir, ['manifest.json', ...Object.keys(this.manifest(ref).files)]);
    }
    const latestPath = join(datasetDir, 'LATEST');
    const latest = versions.at(-1);
    const recorded = existsSync(latestPath) ? readFileSync(latestPath, 'utf8').trim() : null;
    if (latest && recorded !== latest) writeFileAtomic(latestPath, latest + '\n');
    if (!latest && recorded !== null) rmSync(latestPath, { force: true });
  }

  /**
   * Sample ids added, removed and changed (same id, other content) from `a` to `b`. Both versions are
   * streamed: what is kept is each sample id of `a` with a short hash of its content, and the ids listed.
   */
  diff(a: VersionRef, b: VersionRef): DatasetDiff {
    this.assertIntact(a);
    this.assertIntact(b);
    // Id → content hash of `a`; null once the id is met in `b`.
    const before = new Map<string, string | null>();
    for (const sample of this.sampleSource(a).all()) before.set(sample.id, hashOf(sample, 32));
    const added: string[] = [];
    const changed: string[] = [];
    let unchanged = 0;
    for (const sample of this.sampleSource(b).all()) {
      const was = before.get(sample.id);
      if (was === undefined) added.push(sample.id);
      else if (was !== null) {
        if (was === hashOf(sample, 32)) unchanged++;
        else changed.push(sample.id);
        before.set(sample.id, null);
      }
    }
    const removed = [...before].filter(([, hash]) => hash !== null).map(([id]) => id);
    return { a: `${a.name}@${a.version}`, b: `${b.name}@${b.version}`, added: added.sort(), removed: removed.sort(), changed: changed.sort(), unchanged };
  }

  /**
   * Where files made later from a version go (`export`, `review`, `eval`): `<name>/<version>.derived/…`,
   * beside the version and never inside it. Created on demand.
   */
  derivedDir(ref: VersionRef, ...parts: string[]): string {
    return makeFolder(join(this.root, ref.name, `${ref.version}.derived`, ...parts));
  }

  /**
   * The folder holding derived files of `kind` for reading: the `.derived` one, or for versions
   * published before derived files moved out, the one inside the version when only it exists.
   */
  derivedDirForReading(ref: VersionRef, kind: string): string {
    const current = join(this.root, ref.name, `${ref.version}.derived`, kind);
    const legacy = join(ref.dir, kind);
    return !existsSync(current) && LEGACY_DERIVED.includes(kind) && existsSync(legacy) ? legacy : current;
  }

  /**
   * Refuses an output path the user gave (`--out`, `--plot`) that lies inside the store: published
   * data must never be overwritten, and only the store writes under `datasets/`. Call before any work.
   */
  assertOutsideStore(path: string, flag: string, shown = path): void {
    if (isInsideFolder(path, this.root)) {
      throw new UserError(`${flag} ${shown} is inside the dataset store (${this.root}); only toolkiln writes there: give a folder outside it, or leave ${flag} out to use the version's .derived folder`);
    }
  }
}

/** The manifest of the version in `dir`; unreadable or invalid is an error naming the file and what to do. */
export function readManifest(dir: string): Manifest {
  const path = join(dir, 'manifest.json');
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

function intactMessage(ref: VersionRef, problem: VerifyProblem): string {
  const path = join(ref.dir, problem.file);
  if (problem.problem === 'missing') return `${path} is missing from ${ref.name}@${ref.version}, but its manifest lists it; restore the version from a copy or publish it again`;
  if (problem.problem === 'unlisted') return `${path} is in ${ref.name}@${ref.version}, but its manifest does not list it (added after publishing); remove it, or restore the version from a copy`;
  return `${path} does not match its checksum in the manifest of ${ref.name}@${ref.version} (changed after publishing); restore it from a copy or publish the version again`;
}

/**
 * The entries under a version's folder that are not in `listed` (paths relative to it, `/`-separated):
 * files, links, anything but a folder. The folders older versions kept derived files
 * in (`export/`, `review/`, `eval/`) are not part of the version and are not looked into.
 */
function unlistedEntries(dir: string, listed: ReadonlySet<string>): string[] {
  const found: string[] = [];
  const walk = (relative: string) => {
    const entries = readdirSync(join(dir, relative), { withFileTypes: true });
    for (const entry of entries) {
      const path = relative ? `${relative}/${entry.name}` : entry.name;
      if (!relative && LEGACY_DERIVED.includes(entry.name) && entry.isDirectory()) continue;
      if (entry.isDirectory()) walk(path);
      else if (!listed.has(path)) found.push(path);
    }
  };
  walk('');
  return found;
}

/** Whether `path` is `folder` or lies inside it, links resolved (neither needs to exist yet). */
export function isInsideFolder(path: string, folder: string): boolean {
  const real = realPathOfNearest(resolve(path));
  const root = realPathOfNearest(resolve(folder));
  return real === root || real.startsWith(root + sep);
}

/** The real path of `path`, or of its nearest existing ancestor with the rest appended (links resolved). */
function realPathOfNearest(path: string): string {
  let existing = path;
  const rest: string[] = [];
  while (!existsSync(existing) && dirname(existing) !== existing) {
    rest.unshift(basename(existing));
    existing = dirname(existing);
  }
  return join(realpathSync(existing), ...rest);
}

/** Published data files are read-only: a version is never edited after publishing. */
function makeReadOnly(dir: string, files: string[]): void {
  for (const file of files) {
    const path = join(dir, file);
    if (existsSync(path) && statSync(path).isFile() && (statSync(path).mode & 0o222) !== 0) chmodSync(path, 0o444);
  }
}

/** What a version's data files hold once written: where they are (`<split>.jsonl`), their sha256 and counts. */
export interface PreparedSamples {
  dir: string;
  splits: Record<string, { sha256: string; count: number }>;
  byCategory: Record<string, number>;
  samples: number;
}

/**
 * The data files of a version being written: each sample in the line form, appended to the file of
 * its split, hashed and counted as written (one pass, nothing held). The store writes them into a
 * version; a run's publish gate writes them in the run's folder as it checks the samples, and the
 * store then moves them into the version (`PublishInput.prepared`).
 */
export class SampleFiles {
  private readonly writers = new Map<string, JsonlWriter>();
  private readonly byCategory: Record<string, number> = {};
  private samples = 0;

  /** `texts`: what makes each sample's line (it keeps the text of tools the samples share). */
  constructor(
    readonly dir: string,
    private readonly texts = new SampleLineTexts(),
  ) {}

  add(sample: Sample | SampleLine): void {
    this.addLineText(sample, isSampleLine(sample) ? sampleTextToLineText(sample.text) : this.texts.text(sample));
  }

  /** A sample already in the line form, as the text of its line (copied from another version's data file). */
  addLineText(sample: Pick<Sample, 'id' | 'split' | 'category'>, text: LineText): void {
    let writer = this.writers.get(sample.split);
    if (!writer) {
      if (!SPLIT_NAME.test(sample.split)) throw new UserError(`sample ${sample.id} has split "${sample.split}": a split name is letters, digits, '-', '_' or '.'`);
      this.writers.set(sample.split, (writer = new JsonlWriter(join(this.dir, `${sample.split}.jsonl`), { sha256: true })));
    }
    writer.writeText(text);
    this.byCategory[sample.category] = (this.byCategory[sample.category] ?? 0) + 1;
    this.samples++;
  }

  /** Closes the files; what they hold. */
  close(): PreparedSamples {
    for (const writer of this.writers.values()) writer.close();
    const splits = Object.fromEntries([...this.writers].map(([split, writer]) => [split, { sha256: writer.sha256(), count: writer.count }]));
    return { dir: this.dir, splits, byCategory: this.byCategory, samples: this.samples };
  }

  /** Closes and removes the files (after a failure). */
  discard(): void {
    for (const writer of this.writers.values()) {
      try {
        writer.close();
      } catch {
        // Already failing: the file goes either way.
      }
      rmSync(writer.path, { force: true });
    }
  }
}

/** Moves a file (copied when it is on another file system). */
function moveFile(from: string, to: string): void {
  try {
    renameSync(from, to);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw withPath(error, from);
    copyFileSync(from, to);
    rmSync(from);
  }
}

function isSampleLine(item: Sample | SampleLine): item is SampleLine {
  return typeof (item as SampleLine).text === 'string';
}
