import { existsSync, readFileSync, statSync } from 'node:fs';
import { extname, resolve, sep } from 'node:path';
import { UserError } from '../../core/errors.ts';
import { checkNesToolsFiles } from '../../stages/nestools/check-files.ts';
import { formatIssue } from '../../stages/nestools/issues.ts';
import type { Command } from '../command.ts';
import { stringFlag } from '../flags.ts';
import { CHECK_NESTOOLS } from '../command-specs.ts';

const ANSWER_EXTENSIONS = new Set(['.md', '.txt']);

/**
 * A named program file must hold a program: an empty .py, or a .md / .txt (read as an LLM answer)
 * with no Python function in its code, is bad input (exit 2), not a failed check of a Markdown page
 * parsed as Python.
 */
async function refuseFilesWithoutProgram(paths: string[]): Promise<void> {
  for (const path of paths) {
    const extension = extname(path);
    if (extension !== '.py' && !ANSWER_EXTENSIONS.has(extension)) continue;
    let text: string;
    try {
      if (!statSync(path).isFile()) continue;
      text = readFileSync(path, 'utf8');
    } catch {
      continue; // the checker names a missing or unreadable file
    }
    if (!text.trim()) throw new UserError(`${path}: empty file, nothing to check`);
    if (!ANSWER_EXTENSIONS.has(extension)) continue;
    // Loaded only for answers: the Python parser is the slow part of starting the check.
    const { extractCode } = await import('../../stages/nestools/parse-program.ts');
    if (!/^\s*(async\s+)?def\s/m.test(extractCode(text).code)) {
      throw new UserError(`${path}: no Python program in it (a ${extension} file is read as an LLM answer whose code block defines the functions and main()); give .py programs or NesTools records (.jsonl, .json)`);
    }
  }
}

/** Every input must give at least one record or program: an empty one checks nothing and must not pass. */
function refuseInputsThatGaveNothing(paths: string[], results: { file: string }[]): void {
  for (const path of paths) {
    if (!results.some((r) => r.file === path || r.file.startsWith(path + sep))) throw new UserError(`${path}: no records or programs in it, nothing to check`);
  }
}

export const checkNestoolsCommand: Command = {
  ...CHECK_NESTOOLS,
  async run(positionals, values, io) {
    if (!positionals.length) throw new UserError(`missing argument: usage: ${this.usage}`);
    const paths = positionals.map((p) => resolve(io.cwd, p));
    const wantStats = values.stats === true;
    await refuseFilesWithoutProgram(paths);
    const report = await checkNesToolsFiles(paths, { strict: values.strict === true, collectChains: wantStats });
    refuseInputsThatGaveNothing(paths, report.results);

    let statistics: { table: string; sets: Record<string, unknown> } | undefined;
    if (wantStats) {
      // Loaded only when asked: the plain check stays light to start.
      const { computeStatistics, formatStatistics, viewOfSample } = await import('../../stages/nestools/statistics.ts');
      const [{ loadRecipe }, { pathResolver }, { PROJECT_DIR }] = await Promise.all([import('../../pipelines/catalog.ts'), import('../../core/run.ts'), import('../../core/project-dir.ts')]);
      // The released set as the NesTools recipe declares it (its place, and how it is read).
      const released = (await loadRecipe('nestools')).released!.find((set) => set.name === 'nestools')!;
      const resolvePath = pathResolver(io.cwd, PROJECT_DIR);
      const sets = [{ name: 'checked', stats: computeStatistics(report.chains) }];
      const given = stringFlag(values, 'reference');
      const reference = given ? resolve(io.cwd, given) : resolvePath(released.path);
      if (given && !existsSync(reference)) throw new UserError(`reference file not found: ${reference}`);
      if (existsSync(reference)) sets.push({ name: 'reference', stats: computeStatistics(Array.from(released.read(reference, resolvePath).samples(), viewOfSample)) });
      statistics = { table: formatStatistics(sets), sets: Object.fromEntries(sets.map((s) => [s.name, s.stats])) };
    }

    if (io.json) {
      const results = report.results.map((r) => ({
        id: r.id,
        ok: r.ok,
        errors: r.errors.map((e) => ({ code: e.code, message: e.message, ...(e.line !== undefined ? { line: e.line } : {}) })),
        warnings: r.warnings.map((w) => ({ code: w.code, message: w.message, ...(w.line !== undefined ? { line: w.line } : {}) })),
      }));
      io.out(JSON.stringify({ checked: report.checked, passed: report.passed, failed: report.failed, results, ...(statistics ? { statistics: statistics.sets } : {}) }));
    } else {
      for (const result of report.results) {
        if (result.ok && !result.warnings.length) continue;
        io.out(`${result.ok ? 'ok  ' : 'FAIL'} ${result.id}${paths.length > 1 ? `  (${result.file})` : ''}`);
        for (const issue of result.errors) io.out(`  error ${formatIssue(issue)}`);
        for (const issue of result.warnings) io.out(`  warn  ${formatIssue(issue)}`);
      }
      const warnings = report.results.reduce((n, r) => n + r.warnings.length, 0);
      io.out(`checked ${report.checked}: ${report.passed} passed, ${report.failed} failed${warnings ? `, ${warnings} warning${warnings === 1 ? '' : 's'}` : ''}`);
      if (statistics) io.out(`\n${statistics.table}`);
    }
    return report.failed ? 1 : 0;
  },
};

export default checkNestoolsCommand;
