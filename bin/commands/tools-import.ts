import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { UserError } from '../../core/errors.ts';
import { writeFileAtomic } from '../../core/jsonl.ts';
import { TOOL_SOURCE_KINDS, type ToolSourceEntry } from '../../core/tool-source.ts';
import { importTools } from '../../stages/sources/tools/import.ts';
import { importTable, summariseImport } from '../../stages/sources/tools/report.ts';
import type { Command } from '../command.ts';
import { TOOLS_IMPORT, TOOLS_IMPORT_DEFAULTS } from '../command-specs.ts';
import { choiceFlag, intFlag, stringFlag } from '../flags.ts';
import { outputFile } from '../output-paths.ts';

/** `tools import`: sources → a tool library (JSONL of ToolSpec) and its report. */
export const toolsImportCommand: Command = {
  ...TOOLS_IMPORT,
  async run(positionals, values, io) {
    const outGiven = stringFlag(values, 'out');
    if (!outGiven) throw new UserError(`--out is required: the tool library to write (usage: ${this.usage})`);
    const out = outputFile(outGiven, '--out', io);
    const reportGiven = stringFlag(values, 'report') ?? (outGiven.endsWith('.jsonl') ? `${outGiven.slice(0, -'.jsonl'.length)}.report.json` : `${outGiven}.report.json`);
    const reportFile = outputFile(reportGiven, '--report', io);
    const kind = choiceFlag(values, 'kind', TOOL_SOURCE_KINDS) ?? TOOLS_IMPORT_DEFAULTS.kind;
    const name = stringFlag(values, 'name');
    const command = stringFlag(values, 'command');
    const args = ((values.arg as string[] | undefined) ?? []).map(String);
    const timeoutMs = intFlag(values, 'timeout', { min: 1 }) ?? TOOLS_IMPORT_DEFAULTS.timeoutMs;
    if (!command && args.length) throw new UserError('--arg is an argument of --command: give --command too');
    if (command && !name) throw new UserError('--command needs --name: the server name its tools are credited to');
    if (!command && !positionals.length) throw new UserError(`give a file or folder of tools, or a live server with --command (usage: ${this.usage})`);
    const sources: ToolSourceEntry[] = [
      ...positionals.map((path) => ({ kind, path, ...(name ? { name } : {}) })),
      ...(command ? [{ kind: 'mcp-stdio' as const, name: name!, command, args, env: {} }] : []),
    ];
    const result = await importTools(sources, { resolvePath: (path) => resolve(io.cwd, path), timeoutMs, log: io.err });
    if (!result.tools.length) {
      const why = result.lines.slice(0, 3).map((line) => `${line.where}: ${line.reason}`).join('; ');
      throw new UserError(`no tool imported from ${sources.length} source(s)${why ? ` (${why}${result.lines.length > 3 ? '; …' : ''})` : ''}; nothing written`);
    }
    const summary = summariseImport(result.lines, result.tools);
    writeFileAtomic(out, result.tools.map((tool) => JSON.stringify(tool)).join('\n') + '\n');
    writeFileSync(reportFile, `${JSON.stringify({ summary, sources: result.sources, lines: result.lines }, null, 2)}\n`);
    for (const line of result.lines.filter((l) => l.outcome === 'refused')) io.err(`refused: ${line.where} (${line.tool || 'no name'}): ${line.reason}: ${line.detail}`);
    if (io.json) {
      io.out(JSON.stringify({ out: outGiven, report: reportGiven, ...summary, sources: result.sources.length }));
      return 0;
    }
    io.out(`${summary.imported} tool(s) from ${result.sources.length} source(s) written to ${outGiven}; report: ${reportGiven}`);
    io.out(importTable(summary));
    return 0;
  },
};
