/**
 * An error the user can act on: the CLI prints its message as one line (no stack) and exits with
 * `exitCode`. Messages say which file / row / record, what is wrong and what to do.
 */
export class UserError extends Error {
  constructor(message: string, readonly exitCode = 2) {
    super(message);
    this.name = 'UserError';
  }
}

/** The message of anything thrown, without a stack. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
