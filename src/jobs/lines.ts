import { closeSync, existsSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { InputError } from '../core/errors.js';
import { detectFileKind, FILE_KIND_NAMES } from '../core/file-kind.js';

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
  let first = true;
  for (const l of readLinesSync(file)) {
    const s = l.text.trim();
    if (s === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(s);
    } catch (e) {
      if (first && s.startsWith('[')) throw jsonArrayError(file);
      if (options.skipInvalid) continue;
      throw new InputError({ file, line: l.line }, `not valid JSON (${(e as Error).message})`);
    }
    if (first && Array.isArray(value)) throw jsonArrayError(file);
    first = false;
    yield { line: l.line, value };
  }
}

/** Files up to this size are read whole to say what a JSON array holds. */
const ARRAY_SNIFF_BYTES = 64 * 1024 * 1024;

/**
 * The error for a JSON array given where JSONL is read (ProcessBench's official `<subset>.json`,
 * an exported list): it says what the file is and what it holds — never "not valid JSON", which
 * is what its first line `[` is on its own.
 */
export function jsonArrayError(file: string, text?: string): InputError {
  let holds = '';
  let kind: string | undefined;
  try {
    if (text !== undefined || statSync(file).size <= ARRAY_SNIFF_BYTES) {
      const parsed: unknown = JSON.parse(text ?? readFileSync(file, 'utf8'));
      if (Array.isArray(parsed)) {
        kind = detectFileKind(parsed[0]);
        holds = kind ? ` holding ${FILE_KIND_NAMES[kind as keyof typeof FILE_KIND_NAMES]}` : '';
      }
    }
  } catch {
    // Not a whole JSON array either: say what the first line shows.
  }
  const reader =
    kind === 'processbench'
      ? '; `stepwise eval processbench --path FILE` and `--dataset processbench --path FILE` read it as it is'
      : '';
  return new InputError(
    { file, line: 1 },
    `a JSON array${holds}, not JSONL (one JSON record per line)${reader}; convert it with: jq -c '.[]' FILE > FILE.jsonl`,
  );
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
