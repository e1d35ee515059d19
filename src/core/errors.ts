/**
 * Errors a user can cause (bad input, bad flags, unreachable server). The CLI prints the
 * message — never a stack trace — and exits with `exitCode`.
 */
export class StepwiseError extends Error {
  readonly exitCode: number;
  constructor(message: string, options?: { exitCode?: number; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'StepwiseError';
    this.exitCode = options?.exitCode ?? 1;
  }
}

/** Where in an input a bad record sits: file and 1-based line, or array index for JSON arrays. */
export interface InputLocation {
  file: string;
  line?: number;
  index?: number;
  field?: string;
}

/** A bad record in an input file. Exit code 2. */
export class InputError extends StepwiseError {
  readonly location: InputLocation;
  constructor(location: InputLocation, problem: string) {
    const where = [
      location.file,
      location.line !== undefined ? `line ${location.line}` : undefined,
      location.index !== undefined ? `index ${location.index}` : undefined,
      location.field !== undefined ? `field "${location.field}"` : undefined,
    ]
      .filter(Boolean)
      .join(', ');
    super(`${where}: ${problem}`, { exitCode: 2 });
    this.name = 'InputError';
    this.location = location;
  }
}

/** Bad command-line usage (unknown value, missing flag). Exit code 2. */
export class UsageError extends StepwiseError {
  constructor(message: string) {
    super(message, { exitCode: 2 });
    this.name = 'UsageError';
  }
}
