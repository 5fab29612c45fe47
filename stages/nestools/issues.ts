/**
 * What the NesTools consistency checks report. Error codes are exact strings shared by the CLI, the
 * pipeline's reject reasons and the tests.
 */

/** Codes for Python programs (LLM answers, .py files). */
export const PROGRAM_ERROR_CODES = [
  'syntax_error',
  'no_main',
  'unknown_function',
  'too_many_positional',
  'unknown_parameter',
  'missing_required',
  'undefined_variable',
  'arity_mismatch',
  'subscript_or_attribute',
  'builtin_call',
  // beyond the paper's list: what else keeps a program from being a chain
  'unsupported_syntax',
  'duplicate_argument',
  'duplicate_function',
  'bad_docstring',
  'no_calls',
  'no_task',
] as const;

/** Codes for NesTools-format records (JSONL). */
export const RECORD_ERROR_CODES = [
  'unknown_api',
  'unknown_parameter',
  'missing_required',
  'responses_mismatch',
  'bad_reference',
  'misnumbered_reference',
  // beyond the paper's list
  'malformed_record',
  'invalid_json',
  'duplicate_api',
  'bad_api_spec',
] as const;

/** Warnings: errors only under `--strict`. */
export const WARNING_CODES = ['type_mismatch', 'literal_type_mismatch', 'unused_function', 'unused_api', 'docstring_mismatch', 'extra_code'] as const;

export type IssueCode = (typeof PROGRAM_ERROR_CODES)[number] | (typeof RECORD_ERROR_CODES)[number] | (typeof WARNING_CODES)[number];

export interface CheckIssue {
  code: IssueCode;
  message: string;
  /** Line in the checked file, when known. */
  line?: number;
}

export interface CheckOutcome {
  ok: boolean;
  errors: CheckIssue[];
  warnings: CheckIssue[];
}

/** Collects issues as a check walks a program or record. */
export class IssueList {
  readonly errors: CheckIssue[] = [];
  readonly warnings: CheckIssue[] = [];

  error(code: IssueCode, message: string, line?: number): void {
    this.errors.push(line === undefined ? { code, message } : { code, message, line });
  }

  warn(code: IssueCode, message: string, line?: number): void {
    this.warnings.push(line === undefined ? { code, message } : { code, message, line });
  }

  /** The verdict; under `strict` every warning counts as an error. */
  outcome(strict = false): CheckOutcome {
    const errors = strict ? [...this.errors, ...this.warnings] : [...this.errors];
    return { ok: errors.length === 0, errors, warnings: strict ? [] : [...this.warnings] };
  }
}

/** `line 7: unknown_function: …` (one line per issue). */
export function formatIssue(issue: CheckIssue): string {
  return `${issue.line !== undefined ? `line ${issue.line}: ` : ''}${issue.code}: ${issue.message}`;
}
