import type { StageStats } from './records.ts';

/** A plain aligned text table (the CLI's and the reports' tables). */
export function formatTable(header: string[], rows: string[][]): string {
  // A loop, not Math.max(...rows): a table of many rows must not overflow the argument stack.
  const widths = header.map((h) => h.length);
  for (const row of rows) for (let c = 0; c < widths.length; c++) widths[c] = Math.max(widths[c], (row[c] ?? '').length);
  const line = (cells: string[]) => cells.map((cell, c) => (cell ?? '').padEnd(widths[c])).join('  ').trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** The stage table printed at the end of a run: in = out + rejected (− fanned) per stage. */
export function formatStageTable(stats: StageStats[]): string {
  const rows = stats.map((s) => [
    s.stage,
    `v${s.version}`,
    String(s.in),
    String(s.out),
    String(s.rejected),
    s.fanned === 0 ? '' : (s.fanned > 0 ? '+' : '') + String(s.fanned),
    Object.entries(s.rejectsByReason).map(([reason, n]) => `${reason} ${n}`).join(', '),
    s.seconds.toFixed(2),
  ]);
  return formatTable(['stage', 'ver', 'in', 'out', 'rejected', 'fanned', 'rejects by reason', 's'], rows);
}
