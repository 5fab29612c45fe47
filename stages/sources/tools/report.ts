import type { ToolSpec } from '../../../core/records.ts';
import { openAiProblem, type ReportLine } from './convert.ts';

/**
 * The import report: every tool counted by outcome and reason (imported tools by each change or
 * flag noted on the way), every source that gave no tool, and the share of the library OpenAI's
 * function schema accepts.
 */

export interface ImportSummary {
  servers: number;
  serversWithoutTools: number;
  toolsSeen: number;
  imported: number;
  refused: number;
  /** Refused tools and tool-less sources by reason. */
  refusedBy: Record<string, number>;
  noToolsBy: Record<string, number>;
  /** Imported tools by each note (a tool may have several). */
  notes: Record<string, number>;
  /** Imported tools with no note at all: taken exactly as given. */
  unchanged: number;
  openAiAccepted: number;
  openAiShare: number | null;
}

function countBy(values: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return Object.fromEntries(Object.entries(counts).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])));
}

export function summariseImport(lines: ReportLine[], tools: ToolSpec[]): ImportSummary {
  const toolLines = lines.filter((line) => line.outcome !== 'no-tools');
  const imported = toolLines.filter((line) => line.outcome === 'imported');
  const refused = toolLines.filter((line) => line.outcome === 'refused');
  const accepted = tools.filter((tool) => openAiProblem(tool) === null).length;
  return {
    servers: new Set(lines.map((line) => line.server)).size,
    serversWithoutTools: lines.filter((line) => line.outcome === 'no-tools').length,
    toolsSeen: toolLines.length,
    imported: imported.length,
    refused: refused.length,
    refusedBy: countBy(refused.map((line) => line.reason ?? 'unknown')),
    noToolsBy: countBy(lines.filter((line) => line.outcome === 'no-tools').map((line) => line.reason ?? 'unknown')),
    notes: countBy(imported.flatMap((line) => line.notes)),
    unchanged: imported.filter((line) => !line.notes.length).length,
    openAiAccepted: accepted,
    openAiShare: tools.length ? accepted / tools.length : null,
  };
}

/** The summary as a Markdown table: outcome, reason, count. */
export function importTable(summary: ImportSummary): string {
  const rows: [string, string, number][] = [
    ['sources without tools', '(all)', summary.serversWithoutTools],
    ...Object.entries(summary.noToolsBy).map(([reason, n]): [string, string, number] => ['sources without tools', reason, n]),
    ['tools seen', '(all)', summary.toolsSeen],
    ['imported', '(all)', summary.imported],
    ['imported', 'unchanged', summary.unchanged],
    ...Object.entries(summary.notes).map(([note, n]): [string, string, number] => ['imported', note, n]),
    ['refused', '(all)', summary.refused],
    ...Object.entries(summary.refusedBy).map(([reason, n]): [string, string, number] => ['refused', reason, n]),
  ];
  const share = summary.openAiShare === null ? 'n/a' : `${(summary.openAiShare * 100).toFixed(1)} %`;
  return [
    '| outcome | reason or note | tools |',
    '|---|---|---:|',
    ...rows.map(([outcome, reason, n]) => `| ${outcome} | ${reason} | ${n} |`),
    '',
    `OpenAI's function schema accepts ${summary.openAiAccepted} of ${summary.imported} imported tools (${share}).`,
  ].join('\n');
}
