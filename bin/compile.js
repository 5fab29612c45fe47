// The CLI's TypeScript compiled to JavaScript in dist/ (git-ignored), so that a start of toolkiln pays
// no loader hook and no transpiling (docs/benchmarks.md, "Start-up"). Each file is compiled alone by
// esbuild into the same place under dist/, its relative `.ts` imports rewritten to `.js`; no types
// are checked (npm run typecheck does that).
//
// `node bin/compile.js` (npm run build; the test setup runs it too) compiles the files changed since
// the last compile. bin/toolkiln.js calls `compiledCli()` at every start: it compares each source
// file's modification time and size with those recorded at the last compile (a few hundred stat
// calls, under 2 ms of CPU), compiles again what changed (an edit, a checkout) and
// says where the compiled CLI is; null when it cannot be had (no esbuild, a folder it cannot write,
// a file that does not compile, another process compiling just then), and the source then runs
// through tsx as before. This file is plain JavaScript: it runs before anything is compiled.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The folders the CLI runs from; test/ and bench/ run through vitest and tsx. */
export const SOURCE_FOLDERS = ['bin', 'core', 'eval', 'pipelines', 'prompts', 'review', 'stages'];
export const OUT_FOLDER = 'dist';
/** In dist/: what was compiled, from which state of each source file. */
const STAMP = '.sources.json';
/** In dist/: held while a process compiles. */
const LOCK = '.compiling';
/** A lock older than this was left by a process that died compiling. */
const STALE_LOCK_MS = 60_000;
/** Raised when the way files are compiled changes, so that copies compiled the old way are compiled again. */
const FORMAT = 3;
/**
 * Packages of many module files that commands load, each bundled into one file under dist/packages/
 * that the compiled code imports instead: Node 20 pays for every module file it loads (zod is 95 of
 * them, hyparquet-writer with hyparquet 49, yaml 72, ajv with ajv-formats 70).
 */
export const BUNDLED_PACKAGES = ['zod', 'hyparquet-writer', 'yaml', 'ajv', 'ajv-formats'];
/**
 * Bundled packages bundled together, into one file: ajv-formats reaches into ajv's own modules
 * (its code generator), so bundled apart each would hold a copy of them, and the copies' objects
 * would not be each other's. Each package's own bundle file then exports its names from that file.
 */
const BUNDLED_TOGETHER = [['ajv', 'ajv-formats']];

/**
 * Every TypeScript file of the source folders (root-relative, `/`-separated) and the package.json of
 * each bundled package → `mtime:size`.
 */
function sourceState(root) {
  // Paths joined as strings: this runs at every start, and path.join would normalise each one.
  const base = root.endsWith(sep) ? root : root + sep;
  const files = {};
  const add = (path) => {
    const stat = statSync(base + path);
    files[path] = `${stat.mtimeMs}:${stat.size}`;
  };
  const walk = (folder) => {
    for (const entry of readdirSync(base + folder, { withFileTypes: true })) {
      const path = `${folder}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) add(path);
    }
  };
  for (const name of BUNDLED_PACKAGES) add(packageJson(name));
  for (const folder of SOURCE_FOLDERS) if (existsSync(base + folder)) walk(folder);
  return files;
}

function readStamp(outDir) {
  try {
    const stamp = JSON.parse(readFileSync(join(outDir, STAMP), 'utf8'));
    return stamp.format === FORMAT && stamp.files && typeof stamp.files === 'object' ? stamp.files : {};
  } catch {
    return {};
  }
}

/** Source files changed or added since the stamp, and stamped files whose source is gone. */
function changes(now, stamped) {
  return {
    changed: Object.keys(now).filter((file) => stamped[file] !== now[file]),
    removed: Object.keys(stamped).filter((file) => !(file in now)),
  };
}

const compiledPath = (file) => file.replace(/\.ts$/, '.js');
const packageJson = (name) => `node_modules/${name}/package.json`;
/** Where a bundled package goes, root-relative (under dist/). */
const bundledPath = (name) => `packages/${name.replace('/', '+')}.js`;
/** Where the packages bundled together go, root-relative (under dist/). */
const togetherPath = (group) => `packages/together/${group.map((name) => name.replace('/', '+')).join('+')}.js`;

/** Writes `text` to `path` whole or not at all: a process starting meanwhile never reads half a file. */
function writeAtomic(path, text) {
  mkdirSync(dirname(path), { recursive: true });
  const temporary = `${path}.tmp-${process.pid}`;
  writeFileSync(temporary, text);
  renameSync(temporary, path);
}

/**
 * Every import left for Node to resolve at run time, but a relative `.ts` import pointed at the
 * compiled `.js` and a bundled package's at its bundle: the bundler then emits each entry file alone.
 */
function keepImports(root) {
  return {
    name: 'keep-imports',
    setup(build) {
      build.onResolve({ filter: /.*/ }, (args) => {
        if (args.kind === 'entry-point') return undefined;
        if (BUNDLED_PACKAGES.includes(args.path)) {
          const bundle = relative(dirname(args.importer), join(root, bundledPath(args.path))).split('\\').join('/');
          return { path: bundle.startsWith('.') ? bundle : `./${bundle}`, external: true };
        }
        if (!/^\.\.?\//.test(args.path)) return { path: args.path, external: true };
        // Only TypeScript has a compiled copy beside the other compiled files.
        if (!args.path.endsWith('.ts')) return { errors: [{ text: `"${args.path}" is no TypeScript file, so dist/ holds no copy of it for the compiled code to import: read it through core/project-dir.ts instead` }] };
        return { path: compiledPath(args.path), external: true };
      });
    },
  };
}

const COMMON = { bundle: true, format: 'esm', platform: 'node', target: 'node20', sourcemap: 'linked', write: false, logLevel: 'silent' };

async function compileFiles(root, outDir, files) {
  const esbuild = await import('esbuild');
  const sources = files.filter((file) => file.endsWith('.ts'));
  // A package bundled with others is bundled again (with them) when any of them changed.
  const groups = BUNDLED_TOGETHER.filter((group) => group.some((name) => files.includes(packageJson(name))));
  const together = new Set(BUNDLED_TOGETHER.flat());
  const packages = BUNDLED_PACKAGES.filter((name) => !together.has(name) && files.includes(packageJson(name)));
  const bundle = (contents, sourcefile, path) =>
    esbuild.build({
      ...COMMON,
      // An .mjs entry: a CommonJS package's default export is then its module.exports, as Node makes it.
      stdin: { contents, resolveDir: root, sourcefile },
      // A CommonJS package's require() of Node's own modules, which an ES module has no require for.
      banner: { js: "import { createRequire as __createRequire } from 'node:module';\nconst require = __createRequire(import.meta.url);" },
      outfile: join(outDir, path),
    });
  const builds = [
    ...(sources.length ? [esbuild.build({ ...COMMON, absWorkingDir: root, entryPoints: sources, outdir: outDir, outbase: root, plugins: [keepImports(root)] })] : []),
    ...(await Promise.all(packages.map((name) => packageEntry(name)))).map((contents, i) => bundle(contents, `${packages[i]}.mjs`, bundledPath(packages[i]))),
    ...groups.map((group) => bundle(group.map((name, i) => `export * as p${i} from ${JSON.stringify(name)};\n`).join(''), `${group.join('+')}.mjs`, togetherPath(group))),
  ];
  // Each package of a group: its names, from the group's bundle (written as is, nothing to bundle).
  for (const group of groups) {
    for (const [i, name] of group.entries()) {
      const from = relative(dirname(join(outDir, bundledPath(name))), join(outDir, togetherPath(group))).split('\\').join('/');
      writeAtomic(join(outDir, bundledPath(name)), await reexportEntry(name, `p${i}`, from.startsWith('.') ? from : `./${from}`));
    }
  }
  let results;
  try {
    results = await Promise.all(builds);
  } catch (error) {
    throw new Error(oneLine(error));
  }
  for (const result of results) for (const output of result.outputFiles) writeAtomic(output.path, output.contents);
}

/**
 * A bundle's entry: the names Node gives the package's exports when it is imported (a CommonJS
 * package's are the ones Node detects), exported again, so that the bundle exports the same.
 */
async function packageEntry(name) {
  return `export { ${(await exportNames(name)).join(', ')} } from ${JSON.stringify(name)};\n`;
}

/** The names Node gives a package's exports when it is imported (a CommonJS package's: the ones Node detects). */
async function exportNames(name) {
  const names = Object.keys(await import(name));
  const odd = names.filter((n) => !/^[A-Za-z_$][\w$]*$/.test(n));
  if (odd.length) throw new Error(`${name} exports ${odd.join(', ')}, which a bundle cannot name`);
  return names;
}

/** A bundle's entry for a package bundled with others: the names Node gives its exports, from the namespace `ns` of the group's bundle `from`. */
async function reexportEntry(name, ns, from) {
  const names = await exportNames(name);
  const named = names.filter((n) => n !== 'default');
  return [
    `import { ${ns} as ns } from ${JSON.stringify(from)};`,
    ...(names.includes('default') ? ['export default ns.default;'] : []),
    ...(named.length ? [`export const { ${named.join(', ')} } = ns;`] : []),
    '',
  ].join('\n');
}

/** esbuild's errors on one line: `file:line:column: what`, each. */
function oneLine(error) {
  const where = (location) => (location ? `${location.file}:${location.line}:${location.column}: ` : '');
  return Array.isArray(error.errors) && error.errors.length ? error.errors.map((e) => `${where(e.location)}${e.text}`).join('; ') : error.message;
}

/** Takes the compile lock; false when another live process holds it. */
function lock(outDir) {
  const path = join(outDir, LOCK);
  mkdirSync(outDir, { recursive: true });
  try {
    mkdirSync(path);
    return true;
  } catch (error) {
    if (error.code !== 'EEXIST') throw error;
    if (Date.now() - statSync(path).mtimeMs < STALE_LOCK_MS) return false;
    rmSync(path, { recursive: true, force: true });
    mkdirSync(path);
    return true;
  }
}

/**
 * Brings dist/ up to date with the sources: compiles the files changed since the stamp and removes
 * the copies of removed ones. Returns how many files it compiled; throws on a file that does not
 * compile (esbuild's message) and when another process is compiling (`code: 'BUSY'`).
 */
export async function compile(root = ROOT) {
  const outDir = join(root, OUT_FOLDER);
  const before = changes(sourceState(root), readStamp(outDir));
  if (!before.changed.length && !before.removed.length) return 0;
  if (!lock(outDir)) throw Object.assign(new Error(`another process is compiling into ${outDir}`), { code: 'BUSY' });
  try {
    // Taken again under the lock: the state stamped is the one read before compiling, so that an
    // edit made while compiling is compiled at the next start.
    const now = sourceState(root);
    const { changed, removed } = changes(now, readStamp(outDir));
    if (changed.length) await compileFiles(root, outDir, changed);
    for (const file of removed.filter((file) => file.endsWith('.ts'))) for (const suffix of ['', '.map']) rmSync(join(outDir, compiledPath(file) + suffix), { force: true });
    writeAtomic(join(outDir, STAMP), JSON.stringify({ format: FORMAT, files: now }));
    return changed.length;
  } finally {
    rmdirSync(join(outDir, LOCK));
  }
}

/** The compiled CLI's module URL (compiling what changed first), or null when only the source can run (`why` is told why). */
export async function compiledCli(root = ROOT, why = () => {}) {
  try {
    await compile(root);
    return pathToFileURL(join(root, OUT_FOLDER, 'bin', 'cli.js')).href;
  } catch (error) {
    why(error.message);
    return null;
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const started = performance.now();
  try {
    const count = await compile();
    const where = relative(process.cwd(), join(ROOT, OUT_FOLDER)) || '.';
    process.stdout.write(count ? `compiled ${count} file(s) into ${where}/ in ${((performance.now() - started) / 1000).toFixed(1)} s\n` : `${where}/ is up to date\n`);
  } catch (error) {
    process.stderr.write(`toolkiln compile: ${error.message}\n`);
    process.exitCode = 1;
  }
}
