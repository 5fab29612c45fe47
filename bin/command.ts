import type { ParseArgsConfig } from 'node:util';

export type Options = NonNullable<ParseArgsConfig['options']>;
export type Values = Record<string, string | boolean | (string | boolean)[] | undefined>;

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
 * One CLI command. `path` is its words (`['datasets', 'list']`); `run` gets the positionals after
 * them and the parsed flags, prints through `io`, and returns the exit code. A `UserError` thrown
 * anywhere becomes one line on stderr and its exit code.
 */
export interface Command {
  path: string[];
  usage: string;
  summary: string;
  options: Options;
  run: (positionals: string[], values: Values, io: Io) => Promise<number>;
}
