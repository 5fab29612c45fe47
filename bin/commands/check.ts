import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { resolve } from 'node:path';
import { UserError } from '../../core/errors.ts';
import { checkNesToolsFiles } from '../../stages/nestools/check-files.ts';
import { formatIssue } from '../../stages/nestools/issues.ts';
import type { Command } from '../command.ts';
import { stringFlag } from '../flags.ts';

/** Where the released NesTools set lives relative to the toolkiln project folder. */
const DEFAULT_REFERENCE = fileURLToPath(new URL('../../../shared/data/reference/nestools/test_data.jsonl', import.meta.url));

export const checkNestoolsCommand: Command = {
  path: ['check', 'nestools'],
  usage: 'toolkiln check nestools <file.py|file.jsonl|folder>… [--strict] [--stats [--reference file.jsonl]] [--json]',
  summary: 'consistency check of NesTools records or generated Python programs (exit 0 all pass, 1 some fail, 2 unreadable)',
  options: { strict: { type: 'boolean' }, stats: { type: 'boolean' }, reference: { type: 'string' } },
  async run(positionals, values, io) {
    if (!positionals.length) throw new UserError(`missing argument: usage: ${this.usage}`);
    const paths = positionals.map((p) => resolve(io.cwd, p));
    const wantStats = values.stats === true;
    const report = await checkNesToolsFiles(paths, { strict: values.strict === true, collectChains: wantStats });

    let statistics: { table: string; sets: Record<string, unknown> } | undefined;
    if (wantStats) {
      // Loaded only when asked: the plain check stays light to start.
      const { computeStatistics, formatStatistics, viewOfSample } = await import('../../stages/nestools/statistics.ts');
      const { loadNesToolsSamples } = await import('../../stages/sources/nestools.ts');
      const sets = [{ name: 'checked', stats: computeStatistics(report.chains) }];
      const given = stringFlag(values, 'reference');
      const reference = given ? resolve(io.cwd, given) : DEFAULT_REFERENCE;
      if (given && !existsSync(reference)) throw new UserError(`reference file not found: ${reference}`);
      if (existsSync(reference)) sets.push({ name: 'reference', stats: computeStatistics(loadNesToolsSamples(reference).map(viewOfSample)) });
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
