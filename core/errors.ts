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

/** What to do about a file-system error the user can fix, by errno code. */
const FILE_SYSTEM_ADVICE: Record<string, string> = {
  ENOSPC: 'the disk is full: free space (toolkiln runs clean removes old run folders)',
  EDQUOT: 'the disk quota is used up: free space',
  EROFS: 'the file system is read-only: point TOOLKILN_HOME (or the path you gave) at a writable folder',
  EACCES: 'permission denied: make the folder writable for this user, or use another folder',
  EPERM: 'the operation is not permitted there: use another folder',
  EMFILE: 'too many open files: raise the limit (ulimit -n)',
  ENOTDIR: 'a part of the path is a file, not a folder: fix the path',
  EISDIR: 'the path is a folder where a file was expected: fix the path',
  EFBIG: 'the file is larger than this process may write (ulimit -f) or the file system allows: raise the limit or write elsewhere',
};

/**
 * A file-system error (ENOSPC, EROFS, EACCES, …) as a one-line message naming the path and what to
 * do, or null for anything else.
 */
export function fileSystemMessage(error: unknown): string | null {
  const e = error as NodeJS.ErrnoException;
  const advice = e && typeof e.code === 'string' ? FILE_SYSTEM_ADVICE[e.code] : undefined;
  if (!advice) return null;
  const what = e.syscall ? `${e.syscall} ${e.path ?? ''}`.trim() : (e.path ?? 'a file');
  return `cannot ${what}: ${advice} (${e.code})`;
}

/** Names the file on an errno error that lacks it (write(2) errors carry no path), then returns it. */
export function withPath(error: unknown, path: string): unknown {
  const e = error as NodeJS.ErrnoException;
  if (e && typeof e === 'object' && typeof e.code === 'string' && !e.path) e.path = path;
  return error;
}
