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

/** What went wrong with a model call. */
export type ModelFailureKind =
  | 'rate-limit'
  | 'server'
  | 'timeout'
  | 'connection'
  | 'refused'
  | 'client'
  | 'abort'
  /** The server answered, but not in the shape its protocol promises (a field missing or of another type). */
  | 'invalid-reply';

/** The data a failed model call carries (the message says the same for a person). */
export interface ModelCallErrorData {
  /** Backend: `openai`, `gguf`, `sim`, … */
  provider: string;
  model: string;
  /** The endpoint that answered or failed last, where there is one. */
  url?: string;
  kind: ModelFailureKind;
  /** HTTP status, when the server answered with one. */
  status?: number;
  /** Whether another attempt could succeed (true for a server that gave up after its retries). */
  retryable: boolean;
  /** Attempts made before giving up. */
  attempts?: number;
}

/**
 * A model call that failed for good: the backend, model, endpoint, what kind of failure, the HTTP
 * status and whether it was worth retrying travel as fields, not only inside the message.
 */
export class ModelCallError extends StepwiseError implements ModelCallErrorData {
  readonly provider: string;
  readonly model: string;
  readonly url?: string;
  readonly kind: ModelFailureKind;
  readonly status?: number;
  readonly retryable: boolean;
  readonly attempts?: number;
  constructor(data: ModelCallErrorData, message: string, options?: { cause?: unknown }) {
    super(message, { cause: options?.cause });
    this.name = 'ModelCallError';
    this.provider = data.provider;
    this.model = data.model;
    if (data.url !== undefined) this.url = data.url;
    this.kind = data.kind;
    if (data.status !== undefined) this.status = data.status;
    this.retryable = data.retryable;
    if (data.attempts !== undefined) this.attempts = data.attempts;
  }
}

/**
 * A method asked a model for something its backend cannot do (scores without echo + logprobs,
 * `/pooling` on a server without it, continuing an assistant message). Exit code 2: the user
 * picked a model that cannot serve this method.
 */
export class UnsupportedCapabilityError extends StepwiseError {
  readonly provider: string;
  readonly model: string;
  /** The `Capabilities` field (or feature) that is missing: `score`, `pooling`, `continueAssistant`, … */
  readonly capability: string;
  constructor(data: { provider: string; model: string; capability: string }, message: string) {
    super(message, { exitCode: 2 });
    this.name = 'UnsupportedCapabilityError';
    this.provider = data.provider;
    this.model = data.model;
    this.capability = data.capability;
  }
}
