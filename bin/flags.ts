import { UserError } from '../core/errors.ts';
import type { Options, Values } from './command.ts';

/** Flags every command accepts. */
export const commonOptions: Options = {
  json: { type: 'boolean', help: 'print one JSON document on stdout instead of text' },
  help: { type: 'boolean', short: 'h', help: 'print this help' },
};

/**
 * parseArgs reads the "-3" of `--limit -3` as a flag of its own ("argument is ambiguous"). A value
 * that looks like a negative number after a flag that takes a value is that flag's value, so that
 * the range check can say what is wrong with it.
 */
export function attachNegativeNumbers(argv: string[], options: Options): string[] {
  const joined: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const name = /^--([^=]+)$/.exec(argv[i])?.[1];
    if (name && options[name]?.type === 'string' && /^-(\d|\.\d)/.test(argv[i + 1] ?? '')) joined.push(`${argv[i]}=${argv[++i]}`);
    else joined.push(argv[i]);
  }
  return joined;
}

export function intFlag(values: Values, name: string, range: { min?: number; max?: number } = {}): number | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (typeof raw !== 'string' || !/^-?\d+$/.test(raw.trim()) || !Number.isSafeInteger(value)) {
    throw new UserError(`--${name} takes a whole number, not "${String(raw)}"`);
  }
  if (range.min !== undefined && value < range.min) throw new UserError(`--${name} must be at least ${range.min} (got ${value})`);
  if (range.max !== undefined && value > range.max) throw new UserError(`--${name} must be at most ${range.max} (got ${value})`);
  return value;
}

export function numberFlag(values: Values, name: string, range: { min?: number; max?: number } = {}): number | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (typeof raw !== 'string' || raw.trim() === '' || !Number.isFinite(value)) throw new UserError(`--${name} takes a number, not "${String(raw)}"`);
  if (range.min !== undefined && value < range.min) throw new UserError(`--${name} must be at least ${range.min} (got ${value})`);
  if (range.max !== undefined && value > range.max) throw new UserError(`--${name} must be at most ${range.max} (got ${value})`);
  return value;
}

export function stringFlag(values: Values, name: string): string | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string' || raw === '') throw new UserError(`--${name} needs a value`);
  return raw;
}

export function choiceFlag<T extends string>(values: Values, name: string, choices: readonly T[]): T | undefined {
  const raw = stringFlag(values, name);
  if (raw === undefined) return undefined;
  if (!choices.includes(raw as T)) throw new UserError(`--${name} must be one of ${choices.join(', ')} (got "${raw}")`);
  return raw as T;
}

export function needPositionals(positionals: string[], count: number, usage: string): void {
  if (positionals.length < count) throw new UserError(`missing argument: usage: ${usage}`);
  if (positionals.length > count) throw new UserError(`unexpected argument "${positionals[count]}": usage: ${usage}`);
}
