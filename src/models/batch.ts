import { createHash } from 'node:crypto';
import { closeSync, existsSync, openSync, writeSync } from 'node:fs';
import { InputError, StepwiseError } from '../core/errors.js';
import { jsonArrayError, readLinesSync } from '../jobs/lines.js';
import type { Db } from '../store/db.js';
import { canonicalJson } from './cache.js';

/**
 * Batch files: instead of sending its requests, a job writes them as an OpenAI Batch API input
 * file (`{custom_id, method, url, body}` per line, the format `vllm run-batch`, Ray Data LLM
 * pipelines and hosted Batch APIs take), and later reads the matching output file
 * (`{id, custom_id, response: {status_code, request_id, body}, error}` per line) back.
 * A request's custom_id is a hash of its URL and body, so the rerun that reads the output
 * recognises each answer by asking the very same request again.
 */

/** The two endpoints generate requests go to. */
export type BatchUrl = '/v1/completions' | '/v1/chat/completions';

/** Thrown for a request with no answer yet: it was written to the batch file (or is missing). */
export class BatchPending extends StepwiseError {
  constructor(readonly customId: string) {
    super(`request ${customId} is waiting for its batch result`);
    this.name = 'BatchPending';
  }
}

/** The answer to one request from a batch output file, or BatchPending. */
export interface BatchExchange {
  /** The response body of (url, body) from the loaded results; otherwise records it and throws BatchPending. */
  exchange(url: BatchUrl, body: Record<string, unknown>): unknown;
}

/** The custom_id of a request: stable across runs and machines. */
export function batchCustomId(url: BatchUrl, body: Record<string, unknown>): string {
  return `sw-${createHash('sha256').update(canonicalJson({ url, body })).digest('hex').slice(0, 40)}`;
}

const RESULT_PREFIX = 'batch:';

export interface BatchLoadSummary {
  /** Answers loaded (status 200, no error). */
  loaded: number;
  /** Lines with an error or a non-200 status: their requests stay pending. */
  failed: number;
  /** The first failure, to show. */
  firstError?: string;
}

/**
 * Read a Batch API output file into the store (one row per answer, keyed by custom_id), a line
 * at a time: a file of any size is loaded in bounded memory. The answers become ordinary cache
 * entries as the job asks for them.
 */
export function loadBatchResults(db: Db, file: string): BatchLoadSummary {
  if (!existsSync(file)) throw new InputError({ file }, 'file not found');
  const insert = db.prepare<[string, string, number]>(
    'INSERT OR REPLACE INTO cache (key, value, created_at) VALUES (?, ?, ?)',
  );
  const summary: BatchLoadSummary = { loaded: 0, failed: 0 };
  let rows: Array<[string, string]> = [];
  const flush = db.transaction((batch: Array<[string, string]>) => {
    const now = Date.now();
    for (const [k, v] of batch) insert.run(k, v, now);
  });
  for (const l of readLinesSync(file)) {
    if (l.text.trim() === '') continue;
    let v: Record<string, unknown>;
    try {
      v = JSON.parse(l.text) as Record<string, unknown>;
    } catch (e) {
      if (l.text.trim().startsWith('[')) throw jsonArrayError(file);
      throw new InputError({ file, line: l.line }, `not valid JSON (${(e as Error).message})`);
    }
    if (typeof v !== 'object' || v === null || Array.isArray(v))
      throw new InputError({ file, line: l.line }, 'expected a Batch API output object');
    if (typeof v.custom_id !== 'string' || v.custom_id === '')
      throw new InputError({ file, line: l.line, field: 'custom_id' }, 'missing custom_id');
    const response = v.response as { status_code?: unknown; body?: unknown } | null | undefined;
    if (response !== undefined && response !== null && typeof response !== 'object')
      throw new InputError({ file, line: l.line, field: 'response' }, 'expected an object or null');
    const status = response?.status_code ?? 200;
    const body = response?.body;
    const ok =
      (v.error === null || v.error === undefined) &&
      status === 200 &&
      typeof body === 'object' &&
      body !== null &&
      Array.isArray((body as { choices?: unknown }).choices);
    if (!ok) {
      summary.failed++;
      summary.firstError ??= `${v.custom_id}: ${
        v.error !== null && v.error !== undefined
          ? JSON.stringify(v.error).slice(0, 300)
          : status !== 200
            ? `HTTP ${String(status)}`
            : 'response has no body with choices'
      }`;
      continue;
    }
    rows.push([`${RESULT_PREFIX}${v.custom_id}`, JSON.stringify(body)]);
    summary.loaded++;
    if (rows.length >= 1000) {
      flush(rows);
      rows = [];
    }
  }
  flush(rows);
  return summary;
}

/**
 * The batch side of a job: answers from loaded results (`--batch-in`), and requests without one
 * written to `out` (`--batch-out`), each custom_id once. Without `out`, a request with no answer
 * is still BatchPending (the job counts it and says another round is needed).
 */
export class BatchFiles implements BatchExchange {
  /** Requests written to the batch file. */
  written = 0;
  /** Answers taken from loaded results. */
  answered = 0;
  /** Requests with no answer (written or not). */
  missing = 0;
  private readonly fd: number | undefined;
  private closed = false;
  private readonly seen = new Set<string>();
  private readonly consumed = new Set<string>();
  private readonly select;
  private readonly remove;

  constructor(
    private readonly db: Db,
    readonly out?: string,
  ) {
    this.fd = out === undefined ? undefined : openSync(out, 'w');
    this.select = db.prepare<[string], { value: string }>('SELECT value FROM cache WHERE key = ?');
    this.remove = db.prepare<[string]>('DELETE FROM cache WHERE key = ?');
  }

  exchange(url: BatchUrl, body: Record<string, unknown>): unknown {
    const id = batchCustomId(url, body);
    const row = this.select.get(`${RESULT_PREFIX}${id}`);
    if (row) {
      this.answered++;
      this.consumed.add(id);
      return JSON.parse(row.value);
    }
    if (!this.seen.has(id)) {
      this.seen.add(id);
      this.missing++;
      // A request that reaches here after close (work still settling when the job ended) is
      // left for the next round rather than written to a closed file.
      if (this.fd !== undefined && !this.closed) {
        writeSync(this.fd, `${JSON.stringify({ custom_id: id, method: 'POST', url, body })}\n`);
        this.written++;
      }
    }
    throw new BatchPending(id);
  }

  /**
   * Close the batch file and drop the answers this run used: they now live in the model cache
   * as samples, and a second copy would only grow the store.
   */
  close(options: { keepAnswers?: boolean } = {}): void {
    if (this.closed) return;
    this.closed = true;
    if (this.fd !== undefined) closeSync(this.fd);
    if (options.keepAnswers) return;
    this.db.transaction(() => {
      for (const id of this.consumed) this.remove.run(`${RESULT_PREFIX}${id}`);
    })();
  }
}
