import { UserError } from '../../core/errors.ts';
import { formatTable } from '../../core/table.ts';
import { cleanRuns, listRuns, parseDuration, runsDir, type RunEntry } from '../../core/runs.ts';
import type { Command } from '../command.ts';
import { intFlag, needPositionals, stringFlag } from '../flags.ts';
import { RUNS_CLEAN, RUNS_LIST } from '../command-specs.ts';

function megabytes(bytes: number): string {
  return `${(bytes / 1_048_576).toFixed(1)} MB`;
}

function rowsOf(runs: RunEntry[]): string[][] {
  return runs.map((r) => [r.id, r.state, r.dataset ?? '-', r.lastActivity.toISOString().replace(/\.\d+Z$/, 'Z'), megabytes(r.bytes)]);
}

const HEADER = ['run', 'state', 'dataset', 'last activity', 'size'];

function asJson(runs: RunEntry[]) {
  return runs.map(({ dir: _dir, lastActivity, ...rest }) => ({ ...rest, lastActivity: lastActivity.toISOString() }));
}

export const runsListCommand: Command = {
  ...RUNS_LIST,
  async run(positionals, _values, io) {
    needPositionals(positionals, 0, this.usage);
    const runs = listRuns(io.home);
    if (io.json) io.out(JSON.stringify({ runs: asJson(runs) }));
    else if (!runs.length) io.out(`no runs in ${runsDir(io.home)}`);
    else {
      io.out(formatTable(HEADER, rowsOf(runs)));
      io.out(`\n${runs.length} run(s), ${megabytes(runs.reduce((sum, r) => sum + r.bytes, 0))}; an unfinished run continues with: toolkiln run <pipeline> --resume <run>`);
    }
    return 0;
  },
};

export const runsCleanCommand: Command = {
  ...RUNS_CLEAN,
  async run(positionals, values, io) {
    needPositionals(positionals, 0, this.usage);
    const olderThan = stringFlag(values, 'older-than');
    const olderThanMs = olderThan === undefined ? undefined : parseDuration(olderThan);
    if (olderThanMs === null) throw new UserError(`--older-than takes a duration such as 7d, 12h, 30m or 2w, not "${olderThan}"`);
    const keep = intFlag(values, 'keep', { min: 0 });
    if (olderThanMs === undefined && keep === undefined) throw new UserError('say which runs to remove: --older-than <duration> and/or --keep <n> (add --dry-run to see them first)');
    const dryRun = values['dry-run'] === true;
    const { removed, kept } = cleanRuns(io.home, { olderThanMs, keep, dryRun });
    const freed = removed.reduce((sum, r) => sum + r.bytes, 0);
    if (io.json) {
      io.out(JSON.stringify({ dryRun, removed: asJson(removed), kept: kept.length, freedBytes: freed }));
      return 0;
    }
    if (removed.length) io.out(formatTable(HEADER, rowsOf(removed)) + '\n');
    const unfinished = removed.filter((r) => r.state === 'unfinished').length;
    io.out(`${dryRun ? 'would remove' : 'removed'} ${removed.length} run(s), ${megabytes(freed)}${unfinished ? ` (${unfinished} unfinished, no longer resumable)` : ''}; kept ${kept.length}`);
    return 0;
  },
};
