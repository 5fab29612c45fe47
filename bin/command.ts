import type { ParseArgsConfig } from 'node:util';

/**
 * One flag of a command, declared once: the parser reads `type` / `short` / `multiple`, and help
 * prints `--name <value>`, the line of `help` and what applies when the flag is not given.
 */
export type Flag =
  | { type: 'boolean'; short?: string; help: string }
  | {
      type: 'string';
      short?: string;
      multiple?: boolean;
      /** The value's name in help: `--limit <n>`. */
      value: string;
      /** What applies when the flag is not given, in words: `42`, `all records`, `none: the recipe's defaults`. */
      byDefault: string;
      help: string;
    };

export type Options = Record<string, Flag>;
export type Values = Record<string, string | boolean | (string | boolean)[] | undefined>;

/** The flags as node's parseArgs takes them. */
export function parserOptions(options: Options): NonNullable<ParseArgsConfig['options']> {
  return Object.fromEntries(Object.entries(options).map(([name, flag]) => [name, { type: flag.type, ...(flag.short ? { short: flag.short } : {}), ...(flag.type === 'string' && flag.multiple ? { multiple: true } : {}) }]));
}

export interface Io {
  /** Human text or the one JSON document. */
  out: (text: string) => void;
  /** Progress and logs. */
  err: (text: string) => void;
  json: boolean;
  /** The folder datasets/ and .toolkiln/ live in (TOOLKILN_HOME, default: the current folder). */
  home: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
}

/**
 * What help needs of a command, and the parser: its words, usage line, summary and flags. Kept
 * apart from the command's code (bin/command-specs.ts) so that help loads none of it.
 */
export interface CommandSpec {
  path: string[];
  usage: string;
  summary: string;
  options: Options;
  /** More help after the flags, given the positionals (`run <pipeline> --help`: that recipe's config keys). */
  moreHelp?: (positionals: string[]) => Promise<string>;
}

/**
 * One CLI command. `path` is its words (`['datasets', 'list']`); `run` gets the positionals after
 * them and the parsed flags, prints through `io`, and returns the exit code. A `UserError` thrown
 * anywhere becomes one line on stderr and its exit code.
 */
export interface Command extends CommandSpec {
  run: (positionals: string[], values: Values, io: Io) => Promise<number>;
}
