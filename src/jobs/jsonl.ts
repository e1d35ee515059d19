import {
  closeSync,
  existsSync,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { dirname } from 'node:path';
import { InputError } from '../core/errors.js';
import { assertSameSettings, type JobSettings, withSettings } from './settings.js';

/** One parsed JSONL line with its 1-based line number. */
export interface JsonlLine {
  line: number;
  value: unknown;
}

/**
 * Parse JSONL text. Blank lines are skipped. A line that is not JSON throws an `InputError`
 * naming the file and line (exit code 2), or is skipped and counted with `skipInvalid`.
 */
export function parseJsonl(
  text: string,
  file: string,
  options: { skipInvalid?: boolean } = {},
): { lines: JsonlLine[]; skipped: number } {
  const lines: JsonlLine[] = [];
  let skipped = 0;
  const raw = text.split('\n');
  for (let i = 0; i < raw.length; i++) {
    const s = raw[i].trim();
    if (s === '') continue;
    try {
      lines.push({ line: i + 1, value: JSON.parse(s) });
    } catch (e) {
      if (options.skipInvalid) {
        skipped++;
        continue;
      }
      throw new InputError({ file, line: i + 1 }, `not valid JSON (${(e as Error).message})`);
    }
  }
  return { lines, skipped };
}

export function readJsonl(
  file: string,
  options: { skipInvalid?: boolean } = {},
): { lines: JsonlLine[]; skipped: number } {
  if (!existsSync(file)) throw new InputError({ file }, 'file not found');
  return parseJsonl(readFileSync(file, 'utf8'), file, options);
}

/**
 * An append-only JSONL output that survives crashes: each record is one `write` of a whole line,
 * so a kill leaves at most one partial last line, which reopening cuts off. Records already in
 * the file are reported by key so a resumed job skips them.
 *
 * With `settings`, every appended record carries them (field `job`) and every record already in
 * the file must carry the same ones: opening a file made with other settings throws (exit 2,
 * naming the differences) before anything is written, unless `fresh`.
 */
export class ResumableJsonl<T extends object> {
  readonly path: string;
  /** Keys of the records already in the file when it was opened, and of those appended since. */
  readonly done = new Map<string, T>();
  private fd: number;

  constructor(
    path: string,
    keyOf: (record: T) => string,
    options: { fresh?: boolean; settings?: JobSettings } = {},
  ) {
    this.path = path;
    this.settings = options.settings;
    mkdirSync(dirname(path), { recursive: true });
    if (options.fresh || !existsSync(path)) writeFileSync(path, '');
    const text = readFileSync(path, 'utf8');
    // Cut a partial last line (a crash mid-write) and any line that does not parse.
    const lastNewline = text.lastIndexOf('\n');
    const complete = lastNewline < 0 ? '' : text.slice(0, lastNewline + 1);
    let good = '';
    const lines = complete.split('\n');
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i];
      if (line.trim() === '') continue;
      let rec: T;
      try {
        rec = JSON.parse(line) as T;
      } catch {
        // A corrupt line is dropped: its record will be recomputed.
        continue;
      }
      if (this.settings) assertSameSettings(path, i + 1, rec, this.settings);
      this.done.set(keyOf(rec), rec);
      good += `${line}\n`;
    }
    if (good !== text) writeFileSync(path, good);
    this.fd = openSync(path, 'a');
    this.keyOf = keyOf;
  }

  private readonly keyOf: (record: T) => string;
  private readonly settings?: JobSettings;

  /** Append one record (with the job's settings, when given) as one line, flushed to the OS before returning. */
  append(record: T): void {
    const row = this.settings ? withSettings(record, this.settings) : record;
    writeSync(this.fd, `${JSON.stringify(row)}\n`);
    this.done.set(this.keyOf(row), row);
  }

  /** Flush to disk and close. */
  close(): void {
    try {
      fsyncSync(this.fd);
    } catch {
      // fsync can fail on some filesystems (pipes); the data is already with the OS.
    }
    closeSync(this.fd);
  }

  /**
   * Rewrite the file with records in the given key order (records whose key is not listed go
   * last), atomically via a temporary file: a finished job's output does not depend on the
   * order in which concurrent work completed or on where it was interrupted.
   */
  finalize(order: readonly string[]): void {
    this.close();
    const seen = new Set<string>();
    let out = '';
    for (const k of order) {
      const rec = this.done.get(k);
      if (rec && !seen.has(k)) {
        out += `${JSON.stringify(rec)}\n`;
        seen.add(k);
      }
    }
    for (const [k, rec] of this.done) if (!seen.has(k)) out += `${JSON.stringify(rec)}\n`;
    const tmp = `${this.path}.tmp-${process.pid}`;
    writeFileSync(tmp, out);
    renameSync(tmp, this.path);
    this.fd = openSync(this.path, 'a');
  }
}

/** Truncate helper for tests that simulate a crash mid-line. */
export function truncateFile(path: string, length: number): void {
  const fd = openSync(path, 'r+');
  ftruncateSync(fd, length);
  closeSync(fd);
}
