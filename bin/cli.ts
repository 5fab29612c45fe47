import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import { UserError, fileSystemMessage, messageOf } from '../core/errors.ts';
import type { Command, Io } from './command.ts';
import { commonOptions } from './flags.ts';

/**
 * Every command, loaded only when called: a quick `check nestools` does not pay for the recipes,
 * the LLM client or the review code.
 */
const registry: { path: string[]; load: () => Promise<Command> }[] = [
  { path: ['run'], load: async () => (await import('./commands/run.ts')).runCommand },
  { path: ['datasets', 'list'], load: async () => (await import('./commands/datasets.ts')).datasetsListCommand },
  { path: ['datasets', 'show'], load: async () => (await import('./commands/datasets.ts')).datasetsShowCommand },
  { path: ['datasets', 'diff'], load: async () => (await import('./commands/datasets.ts')).datasetsDiffCommand },
  { path: ['datasets', 'verify'], load: async () => (await import('./commands/datasets.ts')).datasetsVerifyCommand },
  { path: ['runs', 'list'], load: async () => (await import('./commands/runs.ts')).runsListCommand },
  { path: ['runs', 'clean'], load: async () => (await import('./commands/runs.ts')).runsCleanCommand },
  { path: ['export'], load: async () => (await import('./commands/export.ts')).exportCommand },
  { path: ['review', 'export'], load: async () => (await import('./commands/review.ts')).reviewExportCommand },
  { path: ['review', 'import'], load: async () => (await import('./commands/review.ts')).reviewImportCommand },
  { path: ['review', 'agreement'], load: async () => (await import('./commands/review.ts')).reviewAgreementCommand },
  { path: ['check', 'nestools'], load: async () => (await import('./commands/check.ts')).checkNestoolsCommand },
  { path: ['tools', 'cluster'], load: async () => (await import('./commands/tools.ts')).toolsClusterCommand },
];

async function helpText(): Promise<string> {
  const commands = await Promise.all(registry.map((entry) => entry.load()));
  return ['toolkiln: regenerate tool-use benchmark datasets', '', ...commands.map((c) => `  ${c.usage}\n      ${c.summary}`), '', 'Every command takes --json (one JSON document on stdout).'].join('\n');
}

/** The longest command path the arguments start with. */
function findCommand(argv: string[]): (typeof registry)[number] | undefined {
  const words = argv.filter((a) => !a.startsWith('-'));
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
  if (!argv.length || argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
    fullIo.out(await helpText());
    return argv.length ? 0 : 2;
  }
  const entry = findCommand(argv);
  if (!entry) {
    fullIo.err(`toolkiln: unknown command "${argv.filter((a) => !a.startsWith('-')).slice(0, 2).join(' ')}" (see toolkiln --help)`);
    return 2;
  }
  try {
    const command = await entry.load();
    let parsed;
    try {
      parsed = parseArgs({ args: argv, options: { ...commonOptions, ...command.options }, allowPositionals: true, strict: true });
    } catch (error) {
      throw new UserError(`${messageOf(error).replace(/\. To specify a positional argument.*$/s, '')} (usage: ${command.usage})`);
    }
    const positionals = parsed.positionals.slice(command.path.length);
    fullIo.json = parsed.values.json === true;
    if (parsed.values.help) {
      fullIo.out(`${command.usage}\n  ${command.summary}`);
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
