import { closeSync, existsSync, openSync, readSync } from 'node:fs';
import { InputError } from '../core/errors.js';

/** One raw line of a file: its text, 1-based number, byte offset and byte length (without `\n`). */
export interface RawLine {
  text: string;
  line: number;
  offset: number;
  length: number;
}

const CHUNK = 1 << 20;

/**
 * The lines of `file`, read in 1 MB chunks: memory holds one chunk and one line, whatever the
 * file size. `complete` lines end in `\n`; a last line without one is yielded with
 * `partial: true` so writers of append-only files can tell a torn write from a record.
 */
export function* readLinesSync(
  file: string,
  options: { from?: number } = {},
): Generator<RawLine & { partial: boolean }> {
  const fd = openSync(file, 'r');
  try {
    const buf = Buffer.allocUnsafe(CHUNK);
    let carry: Buffer[] = [];
    let carryLen = 0;
    let pos = options.from ?? 0;
    let lineStart = pos;
    let lineNo = 0;
    for (;;) {
      const got = readSync(fd, buf, 0, CHUNK, pos);
      if (got === 0) break;
      let start = 0;
      for (;;) {
        const nl = buf.indexOf(10, start);
        if (nl < 0 || nl >= got) break;
        const piece = buf.subarray(start, nl);
        const whole = carryLen ? Buffer.concat([...carry, piece], carryLen + piece.length) : piece;
        lineNo++;
        yield {
          text: whole.toString('utf8'),
          line: lineNo,
          offset: lineStart,
          length: whole.length,
          partial: false,
        };
        lineStart += whole.length + 1;
        carry = [];
        carryLen = 0;
        start = nl + 1;
      }
      if (start < got) {
        // Copy: `buf` is reused by the next read.
        const rest = Buffer.from(buf.subarray(start, got));
        carry.push(rest);
        carryLen += rest.length;
      }
      pos += got;
    }
    if (carryLen > 0) {
      const whole = Buffer.concat(carry, carryLen);
      lineNo++;
      yield {
        text: whole.toString('utf8'),
        line: lineNo,
        offset: lineStart,
        length: whole.length,
        partial: true,
      };
    }
  } finally {
    closeSync(fd);
  }
}

/** One parsed JSONL record with its 1-based line number. */
export interface JsonlRecord {
  line: number;
  value: unknown;
}

/**
 * The records of a JSONL file one at a time (blank lines skipped). A line that is not JSON
 * throws an `InputError` naming the file and line (exit 2), or is skipped with `skipInvalid`.
 */
export function* streamJsonl(file: string, options: { skipInvalid?: boolean } = {}): Generator<JsonlRecord> {
  if (!existsSync(file)) throw new InputError({ file }, 'file not found');
  for (const l of readLinesSync(file)) {
    const s = l.text.trim();
    if (s === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(s);
    } catch (e) {
      if (options.skipInvalid) continue;
      throw new InputError({ file, line: l.line }, `not valid JSON (${(e as Error).message})`);
    }
    yield { line: l.line, value };
  }
}

/** Lines in `file` (a fast byte count of `\n`, plus a last line without one). */
export function countLines(file: string): number {
  const fd = openSync(file, 'r');
  try {
    const buf = Buffer.allocUnsafe(CHUNK);
    let n = 0;
    let pos = 0;
    let last = 10;
    for (;;) {
      const got = readSync(fd, buf, 0, CHUNK, pos);
      if (got === 0) break;
      for (let i = buf.indexOf(10, 0); i >= 0 && i < got; i = buf.indexOf(10, i + 1)) n++;
      last = buf[got - 1];
      pos += got;
    }
    return pos > 0 && last !== 10 ? n + 1 : n;
  } finally {
    closeSync(fd);
  }
}
