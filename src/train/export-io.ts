import { closeSync, existsSync, mkdirSync, openSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import type { z } from 'zod';
import { InputError } from '../core/errors.js';
import type { FileKind } from '../core/file-kind.js';
import { parseRecord } from '../data/record-kinds.js';
import { streamJsonl } from '../jobs/lines.js';
import { removeOnExit } from '../jobs/remove-on-exit.js';
import { inShard, type JobProgress, type Shard } from '../jobs/run-job.js';

/**
 * The two ends of an export, shared by every task and format: the input read one record at a time
 * (as often as a task needs), and the output file written as rows come and put in place only when
 * complete.
 */

/** Where an export writes its rows: a JSONL or Parquet file, put in place only when complete. */
export interface RowWriter<T> {
  rows: number;
  write(row: T): void;
  /** Finish the file and move it to its path. */
  close(): void;
  /** Remove the unfinished file (the path keeps what it had). */
  abort(): void;
}

/**
 * JSONL rows appended as they come (in 1 MB writes) to a temporary file beside `path`, renamed
 * into place by `close`: a failed export leaves no half-written training set.
 */
export class JsonlRowWriter implements RowWriter<unknown> {
  private readonly tmp: string;
  private fd: number | undefined;
  private pending: string[] = [];
  private pendingChars = 0;
  private readonly finished: () => void;
  rows = 0;

  constructor(
    private readonly path: string,
    private readonly simulated: boolean,
  ) {
    mkdirSync(dirname(path), { recursive: true });
    this.tmp = `${path}.tmp-${process.pid}`;
    this.finished = removeOnExit(this.tmp);
    this.fd = openSync(this.tmp, 'w');
  }

  write(row: unknown): void {
    // Rows built from a simulated run say so, each on its own line.
    const line = `${JSON.stringify(this.simulated ? { ...(row as object), simulated: true } : row)}\n`;
    this.pending.push(line);
    this.pendingChars += line.length;
    this.rows++;
    if (this.pendingChars >= 1 << 20) this.flush();
  }

  private flush(): void {
    if (this.fd === undefined || this.pending.length === 0) return;
    writeSync(this.fd, this.pending.join(''));
    this.pending = [];
    this.pendingChars = 0;
  }

  close(): void {
    this.flush();
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    renameSync(this.tmp, this.path);
    this.finished();
  }

  abort(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    rmSync(this.tmp, { force: true });
    this.finished();
  }
}

/** Write through `w`; on any error remove the unfinished file and rethrow. */
export async function writeAll<W extends RowWriter<never>>(
  w: W,
  body: (w: W) => Promise<void> | void,
): Promise<number> {
  try {
    await body(w);
    w.close();
  } catch (e) {
    w.abort();
    throw e;
  }
  return w.rows;
}

/**
 * An export's input, read one record at a time — as often as the task needs (balancing reads it
 * once for the few facts it balances on, and again to write what it kept), so memory holds one
 * record and those facts, never the file. A file that changes while it is read is refused.
 */
export class ExportInput {
  private readonly stamp: string;
  /** Records of this part, counted by the last whole read (the total progress reports). */
  private partRecords = 0;
  private reads = 0;

  constructor(
    readonly file: string,
    readonly shard: Shard | undefined,
    /** Progress in records of this part, on each read that yields them (a task may read twice). */
    private readonly onProgress?: (p: JobProgress) => void,
  ) {
    if (!existsSync(file)) throw new InputError({ file }, 'file not found');
    this.stamp = ExportInput.stampOf(file);
  }

  private static stampOf(file: string): string {
    const st = statSync(file);
    return `${st.size}:${st.mtimeMs}`;
  }

  private checkUnchanged(): void {
    if (existsSync(this.file) && ExportInput.stampOf(this.file) === this.stamp) return;
    throw new InputError(
      { file: this.file },
      'the file changed while export was reading it (export reads its input more than once); run export again on a finished file',
    );
  }

  /** Whether a record is in this part (`--shard`): by its `id`, hashed as every job's shard. */
  private mine(value: unknown): boolean {
    const id = (value as { id?: unknown } | null)?.id;
    return typeof id !== 'string' || inShard(id, this.shard);
  }

  /**
   * Every record, checked by `parse` (which names file, line and field when one is bad), with
   * whether it is in this part and whether it says it came from a simulated run.
   */
  *all<T>(
    parse: (value: unknown, line: number) => T,
  ): Generator<{ line: number; record: T; mine: boolean; simulated: boolean }> {
    this.checkUnchanged();
    let part = 0;
    for (const { line, value } of streamJsonl(this.file)) {
      const record = parse(value, line);
      const simulated = (value as { simulated?: unknown } | null)?.simulated === true;
      const mine = this.mine(value);
      if (mine) part++;
      yield { line, record, mine, simulated };
    }
    this.checkUnchanged();
    this.partRecords = part;
  }

  /** The records of this part, checked by `parse`. */
  *records<T>(parse: (value: unknown, line: number) => T): Generator<{ line: number; record: T }> {
    this.checkUnchanged();
    this.reads++;
    const unit = this.reads > 1 ? `records (read ${this.reads})` : 'records';
    const report = (done: number) =>
      this.onProgress?.({ done, total: Math.max(done, this.partRecords), resumed: 0, unit });
    let done = 0;
    report(0);
    for (const { line, value } of streamJsonl(this.file)) {
      if (!this.mine(value)) continue;
      yield { line, record: parse(value, line) };
      if (++done % 100 === 0) report(done);
    }
    report(done);
    this.checkUnchanged();
  }
}

/** One record checked against `schema` (errors name file, line, field; a record of another kind says so). */
export function checked<T>(
  file: string,
  schema: z.ZodType<T>,
  expect: { kinds: readonly FileKind[]; who: string },
): (value: unknown, line: number) => T {
  return (value, line) => parseRecord(schema, { file, line }, value, expect);
}
