import type { CommandSpec, Options } from './command.ts';

/** A command as the command lists show it: its usage, and its summary under it. */
export function commandEntry(spec: CommandSpec): string {
  return `  ${spec.usage}\n      ${spec.summary}`;
}

/** One line per flag: `--name <value>`, what it does, and what applies when it is not given. */
export function flagLines(options: Options): string[] {
  const entries = Object.entries(options);
  const heads = entries.map(([name, flag]) => `${flag.short ? `-${flag.short}, ` : ''}--${name}${flag.type === 'string' ? ` <${flag.value}>` : ''}`);
  const width = Math.max(...heads.map((head) => head.length));
  return entries.map(([, flag], i) => `  ${heads[i].padEnd(width)}  ${flag.help} (default: ${flag.type === 'string' ? flag.byDefault : 'off'})`);
}

/** `toolkiln <command> --help`: usage and summary, every flag it takes, and the commands of its group if it heads one. */
export function commandHelp(spec: CommandSpec, options: Options, subcommands: CommandSpec[]): string {
  return [
    commandEntry(spec).trimStart(),
    '',
    'Flags:',
    ...flagLines(options),
    ...(subcommands.length ? ['', `Commands of ${spec.path.join(' ')} (toolkiln <command> --help for one):`, ...subcommands.map(commandEntry)] : []),
  ].join('\n');
}
