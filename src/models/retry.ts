import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import type { ModelFailureKind } from '../core/errors.js';
import type { Rng } from '../core/rng.js';

/** When and how long to retry a failed request. */
export interface RetryPolicy {
  /** Retries after the first attempt (so at most `maxRetries + 1` attempts). */
  maxRetries: number;
  /** Delay before the first retry; doubles each retry. */
  baseDelayMs: number;
  /** Cap on one backoff delay. */
  maxDelayMs: number;
  /** Cap on a server's `Retry-After` (a misconfigured server may ask for hours). */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxRetries: 8,
  baseDelayMs: 250,
  maxDelayMs: 20_000,
  maxRetryAfterMs: 120_000,
};

/**
 * Exponential backoff with "equal jitter": half the doubled delay is fixed, half random, so
 * clients that failed together do not retry in lockstep, yet every retry still waits.
 */
export function backoffDelay(retry: number, policy: RetryPolicy, rng: Rng): number {
  const d = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, retry));
  return d / 2 + rng.next() * (d / 2);
}

/**
 * Milliseconds a server asks us to wait: `retry-after-ms`, or `Retry-After` as seconds or an
 * HTTP date. Undefined when absent or unparsable.
 */
export function parseRetryAfter(headers: Headers | undefined, now: number = Date.now()): number | undefined {
  if (!headers) return undefined;
  const ms = headers.get('retry-after-ms');
  if (ms !== null && ms.trim() !== '' && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
  const ra = headers.get('retry-after');
  if (ra === null || ra.trim() === '') return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(ra)) return Math.max(0, Number(ra) * 1000);
  const date = Date.parse(ra);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** What went wrong with one attempt (an HTTP-level failure: never `invalid-reply`). */
export type FailureKind = Exclude<ModelFailureKind, 'invalid-reply'>;

export interface Failure {
  kind: FailureKind;
  /** Worth another attempt. */
  retryable: boolean;
  status?: number;
  message: string;
  /** Server-requested wait (429/503 `Retry-After`). */
  retryAfterMs?: number;
}

function causeCode(err: unknown): string | undefined {
  let e: unknown = err;
  for (let depth = 0; depth < 4 && e; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

function causeMessage(err: unknown): string {
  const cause = (err as { cause?: { message?: string } }).cause;
  return cause?.message
    ? `${(err as Error).message}: ${cause.message}`
    : String((err as Error)?.message ?? err);
}

/** Classify an error thrown by the `openai` SDK (or the fetch under it). */
export function classifyError(err: unknown): Failure {
  if (err instanceof APIUserAbortError || (err as Error)?.name === 'AbortError') {
    return { kind: 'abort', retryable: false, message: 'aborted' };
  }
  if (err instanceof APIConnectionTimeoutError) {
    return { kind: 'timeout', retryable: true, message: 'request timed out' };
  }
  if (err instanceof APIConnectionError) {
    const code = causeCode(err);
    if (code === 'ECONNREFUSED') return { kind: 'refused', retryable: true, message: causeMessage(err) };
    return { kind: 'connection', retryable: true, message: causeMessage(err) };
  }
  if (err instanceof APIError) {
    const status = err.status ?? 0;
    const message = err.message;
    if (status === 429)
      return {
        kind: 'rate-limit',
        retryable: true,
        status,
        message,
        retryAfterMs: parseRetryAfter(err.headers),
      };
    if (status >= 500 || status === 408 || status === 409)
      return { kind: 'server', retryable: true, status, message, retryAfterMs: parseRetryAfter(err.headers) };
    return { kind: 'client', retryable: false, status, message };
  }
  const code = causeCode(err);
  if (code === 'ECONNREFUSED') return { kind: 'refused', retryable: true, message: causeMessage(err) };
  if (code && /^(ECONNRESET|EPIPE|ETIMEDOUT|ECONNABORTED|EAI_AGAIN|UND_ERR_SOCKET)$/.test(code))
    return { kind: 'connection', retryable: true, message: causeMessage(err) };
  return { kind: 'client', retryable: false, message: String((err as Error)?.message ?? err) };
}

/** Sleep `ms`, resolving early with an abort error when `signal` fires. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason ?? new Error('aborted'));
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    function onAbort(): void {
      clearTimeout(timer);
      reject(signal?.reason ?? new Error('aborted'));
    }
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
