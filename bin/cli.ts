import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import { UserError, fileSystemMessage, messageOf } from '../core/errors.ts';
import type { Command, Io } from './command.ts';
import { attachNegativeNumbers, commonOptions } from './flags.ts';

export interface CommandEntry {
  path: string[];
  load: () => Promise<Command>;
}

/**
 * Every command, loaded only when called: a quick `check nestools` does not pay for the recipes,
 * the LLM client or the review code. Help (top level and per group) is built from this list.
 */
export const registry: CommandEntry[] = [
  { path: ['run'], load: async () => (await import('./commands/run.ts')).runCommand },
  { path: ['worker'], load: async () => (await import('./commands/worker.ts')).workerCommand },
  { path: ['datasets', 'list'], load: async () => (await import('./commands/datasets.ts')).datasetsListCommand },
  { path: ['datasets', 'show'], load: async () => (await import('./commands/datasets.ts')).datasetsShowCommand },
  { path: ['datasets', 'diff'], load: async () => (await import('./commands/datasets.ts')).datasetsDiffCommand },
  { path: ['datasets', 'verify'], load: async () => (await import('./commands/datasets.ts')).datasetsVerifyCommand },
  { path: ['datasets', 'audit'], load: async () => (await import('./commands/audit.ts')).datasetsAuditCommand },
  { path: ['runs', 'list'], load: async () => (await import('./commands/runs.ts')).runsListCommand },
  { path: ['runs', 'clean'], load: async () => (await import('./commands/runs.ts')).runsCleanCommand },
  { path: ['export'], load: async () => (await import('./commands/export.ts')).exportCommand },
  { path: ['eval'], load: async () => (await import('./commands/eval.ts')).evalCommand },
  { path: ['eval', 'compare'], load: async () => (await import('./commands/eval.ts')).evalCompareCommand },
  { path: ['review', 'export'], load: async () => (await import('./commands/review.ts')).reviewExportCommand },
  { path: ['review', 'import'], load: async () => (await import('./commands/review.ts')).reviewImportCommand },
  { path: ['review', 'agreement'], load: async () => (await import('./commands/review.ts')).reviewAgreementCommand },
  { path: ['review', 'serve'], load: async () => (await import('./commands/review.ts')).reviewServeCommand },
  { path: ['check', 'nestools'], load: async () => (await import('./commands/check.ts')).checkNestoolsCommand },
  { path: ['tools', 'cluster'], load: async () => (await import('./commands/tools.ts')).toolsClusterCommand },
  { path: ['config', 'show'], load: async () => (await import('./commands/config.ts')).configShowCommand },
];

export function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

function describe(command: Command): string {
  return `  ${command.usage}\n      ${command.summary}`;
}

async function helpText(): Promise<string> {
  const commands = await Promise.all(registry.map((entry) => entry.load()));
  // Loaded only for help: the recipes are the heaviest import of all.
  const { pipelines } = await import('../pipelines/index.ts');
  const width = Math.max(...Object.keys(pipelines).map((name) => name.length));
  return [
    `toolkiln ${packageVersion()}: regenerate tool-use benchmark datasets`,
    '',
    'Commands (toolkiln <command> --help for one, toolkiln <group> --help for a group such as datasets):',
    ...commands.map(describe),
    '',
    'Pipelines (toolkiln run <pipeline>) and the formats their datasets export to (toolkiln export --format):',
    ...Object.entries(pipelines).map(([name, p]) => `  ${name.padEnd(width)}  ${p.description}\n  ${''.padEnd(width)}  export formats: ${Object.keys(p.exports).join(', ')}`),
    '',
    'Every command takes --json (one JSON document on stdout) and --help. toolkiln --version prints the version.',
    'Environment: OPENAI_API_KEY, OPENAI_BASE_URL, TOOLKILN_MODEL, TOOLKILN_HOME (root of datasets/ and .toolkiln/).',
  ].join('\n');
}

/** The subcommands of a group (`datasets` → list, show, diff, …), or none when `word` is no group. */
function groupOf(word: string | undefined): CommandEntry[] {
  return registry.filter((entry) => entry.path.length > 1 && entry.path[0] === word);
}

async function groupHelp(group: string, entries: CommandEntry[]): Promise<string> {
  const commands = await Promise.all(entries.map((entry) => entry.load()));
  return [`toolkiln ${group}: ${commands.map((c) => c.path.at(-1)).join(', ')}`, '', ...commands.map(describe)].join('\n');
}

/** The longest command path the arguments start with. */
function findCommand(words: string[]): CommandEntry | undefined {
  return registry.filter((c) => c.path.every((w, i) => words[i] === w)).sort((a, b) => b.path.length - a.path.length)[0];
}

export async function main(argv: string[], io: Partial<Io> = {}): Promise<number> {
  const fullIo: Io = {
    out: io.out ?? ((text) => process.stdout.write(text + '\n')),
    err: io.err ?? ((text) => process.stderr.write(text + '\n')),
    json: false,
    env: io.env ?? process.env,
    cwd: io.cwd ?? process.cwd(),
    home: io.home ?? resolve(io.cwd ?? process.cwd(), (io.env ?? process.env).TOOLKILN_HOME || '.'),
  };
  if (argv[0] === 'help') argv = [...argv.slice(1), '--help'];
  if (argv[0] === '--version') {
    fullIo.out(packageVersion());
    return 0;
  }
  const wantsHelp = argv.includes('--help') || argv.includes('-h');
  const words = argv.filter((a) => !a.startsWith('-'));
  if (!words.length) {
    fullIo.out(await helpText());
    return wantsHelp ? 0 : 2;
  }
  const entry = findCommand(words);
  if (!entry) {
    const group = groupOf(words[0]);
    if (group.length && (wantsHelp || words.length === 1)) {
      fullIo.out(await groupHelp(words[0], group));
      return wantsHelp ? 0 : 2;
    }
    const known = group.length ? `: ${words[0]} has ${group.map((e) => e.path[1]).join(', ')} (see toolkiln ${words[0]} --help)` : ' (see toolkiln --help)';
    fullIo.err(`toolkiln: unknown command "${words.slice(0, 2).join(' ')}"${known}`);
    return 2;
  }
  try {
    const command = await entry.load();
    const options = { ...commonOptions, ...command.options };
    let parsed;
    try {
      parsed = parseArgs({ args: attachNegativeNumbers(argv, options), options, allowPositionals: true, strict: true });
    } catch (error) {
      throw new UserError(`${messageOf(error).replace(/\. To specify a positional argument.*$/s, '')} (usage: ${command.usage})`);
    }
    const positionals = parsed.positionals.slice(command.path.length);
    fullIo.json = parsed.values.json === true;
    if (parsed.values.help) {
      // A command that also heads a group (`eval`, `eval compare`) lists the group's commands too.
      const subcommands = entry.path.length === 1 ? await Promise.all(groupOf(entry.path[0]).map((e) => e.load())) : [];
      fullIo.out([describe(command).trimStart(), ...subcommands.map(describe)].join('\n'));
      return 0;
    }
    return await command.run(positionals, parsed.values, fullIo);
  } catch (error) {
    const code = error instanceof UserError ? error.exitCode : 1;
    const message = error instanceof UserError ? messageOf(error) : (fileSystemMessage(error) ?? messageOf(error).split('\n')[0]);
    if (fullIo.json) fullIo.out(JSON.stringify({ error: message }));
    fullIo.err(`toolkiln: ${message}`);
    if (!(error instanceof UserError) && fullIo.env.TOOLKILN_DEBUG) fullIo.err(String((error as Error).stack));
    return code;
  }
}
