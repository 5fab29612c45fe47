import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import { UserError, fileSystemMessage, messageOf } from '../core/errors.ts';
import { projectFile } from '../core/project-dir.ts';
import { RECIPE_NAMES, recipeSummary } from '../pipelines/catalog.ts';
import * as specs from './command-specs.ts';
import { parserOptions, type Command, type CommandSpec, type Io } from './command.ts';
import { attachNegativeNumbers, commonOptions } from './flags.ts';
import { commandEntry, commandHelp } from './help.ts';

export interface CommandEntry extends CommandSpec {
  load: () => Promise<Command>;
}

const entry = (spec: CommandSpec, load: () => Promise<Command>): CommandEntry => ({ ...spec, load });

/**
 * Every command: its spec (words, usage, flags) at hand, its code loaded only when it runs. A quick
 * `check nestools` does not pay for the recipes, the LLM client or the review code, and help
 * (top level, per group, per command) loads no command's code at all.
 */
export const registry: CommandEntry[] = [
  entry(specs.RUN, async () => (await import('./commands/run.ts')).runCommand),
  entry(specs.WORKER, async () => (await import('./commands/worker.ts')).workerCommand),
  entry(specs.DATASETS_LIST, async () => (await import('./commands/datasets.ts')).datasetsListCommand),
  entry(specs.DATASETS_SHOW, async () => (await import('./commands/datasets.ts')).datasetsShowCommand),
  entry(specs.DATASETS_DIFF, async () => (await import('./commands/datasets.ts')).datasetsDiffCommand),
  entry(specs.DATASETS_VERIFY, async () => (await import('./commands/datasets.ts')).datasetsVerifyCommand),
  entry(specs.DATASETS_AUDIT, async () => (await import('./commands/audit.ts')).datasetsAuditCommand),
  entry(specs.DATASETS_OVERLAP, async () => (await import('./commands/overlap.ts')).datasetsOverlapCommand),
  entry(specs.RUNS_LIST, async () => (await import('./commands/runs.ts')).runsListCommand),
  entry(specs.RUNS_CLEAN, async () => (await import('./commands/runs.ts')).runsCleanCommand),
  entry(specs.EXPORT, async () => (await import('./commands/export.ts')).exportCommand),
  entry(specs.EVAL, async () => (await import('./commands/eval.ts')).evalCommand),
  entry(specs.EVAL_COMPARE, async () => (await import('./commands/eval.ts')).evalCompareCommand),
  entry(specs.REVIEW_EXPORT, async () => (await import('./commands/review.ts')).reviewExportCommand),
  entry(specs.REVIEW_IMPORT, async () => (await import('./commands/review.ts')).reviewImportCommand),
  entry(specs.REVIEW_AGREEMENT, async () => (await import('./commands/review.ts')).reviewAgreementCommand),
  entry(specs.REVIEW_SERVE, async () => (await import('./commands/review.ts')).reviewServeCommand),
  entry(specs.CHECK_NESTOOLS, async () => (await import('./commands/check.ts')).checkNestoolsCommand),
  entry(specs.TOOLS_CLUSTER, async () => (await import('./commands/tools.ts')).toolsClusterCommand),
  entry(specs.TOOLS_IMPORT, async () => (await import('./commands/tools-import.ts')).toolsImportCommand),
  entry(specs.CONFIG_SHOW, async () => (await import('./commands/config.ts')).configShowCommand),
];

export function packageVersion(): string {
  return (JSON.parse(readFileSync(projectFile('package.json'), 'utf8')) as { version: string }).version;
}

function helpText(): string {
  // The recipes' summaries, not the recipes: those are the heaviest import of all.
  const width = Math.max(...RECIPE_NAMES.map((name) => name.length));
  return [
    `toolkiln ${packageVersion()}: regenerate tool-use benchmark datasets`,
    '',
    'Commands (toolkiln <command> --help: its flags and their defaults; toolkiln <group> --help: a group such as datasets;',
    'toolkiln run <pipeline> --help: the config keys of a pipeline and their defaults):',
    ...registry.map(commandEntry),
    '',
    'Pipelines (toolkiln run <pipeline>) and the formats their datasets export to (toolkiln export --format):',
    ...RECIPE_NAMES.map((name) => ({ name, ...recipeSummary(name) })).map(({ name, description, exportFormats }) => `  ${name.padEnd(width)}  ${description}\n  ${''.padEnd(width)}  export formats: ${exportFormats.join(', ')}`),
    '',
    'Every command takes --json (one JSON document on stdout) and --help. toolkiln --version prints the version.',
    'Environment: OPENAI_API_KEY, OPENAI_BASE_URL, TOOLKILN_MODEL, TOOLKILN_HOME (root of datasets/ and .toolkiln/).',
  ].join('\n');
}

/** The subcommands of a group (`datasets` → list, show, diff, …), or none when `word` is no group. */
function groupOf(word: string | undefined): CommandEntry[] {
  return registry.filter((entry) => entry.path.length > 1 && entry.path[0] === word);
}

function groupHelp(group: string, entries: CommandEntry[]): string {
  return [`toolkiln ${group}: ${entries.map((e) => e.path.at(-1)).join(', ')}`, '', ...entries.map(commandEntry)].join('\n');
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
    fullIo.out(helpText());
    return wantsHelp ? 0 : 2;
  }
  const entry = findCommand(words);
  if (!entry) {
    const group = groupOf(words[0]);
    if (group.length && (wantsHelp || words.length === 1)) {
      fullIo.out(groupHelp(words[0], group));
      return wantsHelp ? 0 : 2;
    }
    const known = group.length ? `: ${words[0]} has ${group.map((e) => e.path[1]).join(', ')} (see toolkiln ${words[0]} --help)` : ' (see toolkiln --help)';
    fullIo.err(`toolkiln: unknown command "${words.slice(0, 2).join(' ')}"${known}`);
    return 2;
  }
  try {
    // The command's own flags first in its help, then those every command takes.
    const options = { ...entry.options, ...commonOptions };
    let parsed;
    try {
      parsed = parseArgs({ args: attachNegativeNumbers(argv, options), options: parserOptions(options), allowPositionals: true, strict: true });
    } catch (error) {
      throw new UserError(`${messageOf(error).replace(/\. To specify a positional argument.*$/s, '')} (usage: ${entry.usage})`);
    }
    const positionals = parsed.positionals.slice(entry.path.length);
    fullIo.json = parsed.values.json === true;
    if (parsed.values.help) {
      // A command that also heads a group (`eval`, `eval compare`) lists the group's commands too.
      const subcommands = entry.path.length === 1 ? groupOf(entry.path[0]) : [];
      const more = await entry.moreHelp?.(positionals);
      fullIo.out([commandHelp(entry, options, subcommands), ...(more ? ['', more] : [])].join('\n'));
      return 0;
    }
    const command = await entry.load();
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
