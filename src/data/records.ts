import { createReadStream, existsSync, readFileSync, statSync } from 'node:fs';
import { createGunzip, gunzipSync } from 'node:zlib';
import type { z } from 'zod';
import { InputError, type InputLocation } from '../core/errors.js';
import { detectFileKind, FILE_KIND_NAMES, type FileKind } from '../core/file-kind.js';

/** One raw record of an input file with where it came from (line for JSONL, index for JSON arrays). */
export interface RawRecord {
  location: InputLocation;
  /** 0-based position among the file's records (stable: counts records that are later skipped too). */
  ordinal: number;
  value: unknown;
}

/** Options shared by every reader and loader. */
export interface ReadOptions {
  /** Skip records that are not valid JSON or fail validation, and count them, instead of stopping. */
  skipInvalid?: boolean;
}

/** Read a file as UTF-8 text; `.gz` files are decompressed. A missing file is an {@link InputError}. */
export function readText(file: string): string {
  if (!existsSync(file)) throw new InputError({ file }, 'file not found');
  if (statSync(file).isDirectory()) throw new InputError({ file }, 'is a folder, expected a file');
  const bytes = readFileSync(file);
  const text = (file.endsWith('.gz') ? gunzipSync(bytes) : bytes).toString('utf8');
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** 1-based line of character `offset` in `text`. */
function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text[i] === '\n') line++;
  return line;
}

/**
 * Split `text` into top-level JSON values written one after another (pretty-printed objects
 * concatenated, as some PRM800K example files are). Returns null when the text is not such a sequence.
 */
function splitConcatenatedJson(text: string): Array<{ start: number; end: number }> | null {
  const values: Array<{ start: number; end: number }> = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') {
      if (depth === 0) return null;
      inString = true;
    } else if (ch === '{' || ch === '[') {
      if (depth === 0) start = i;
      depth++;
    } else if (ch === '}' || ch === ']') {
      depth--;
      if (depth < 0) return null;
      if (depth === 0) values.push({ start, end: i + 1 });
    } else if (depth === 0 && !/\s/.test(ch)) {
      return null;
    }
  }
  return depth === 0 && !inString ? values : null;
}

/** A line that is not JSON: where, and the parser's complaint. */
export interface InvalidLine {
  location: InputLocation;
  ordinal: number;
  error: string;
}

/** A raw record, or a line that could not be parsed (kept so `skipInvalid` can count it). */
export type RawItem = RawRecord | InvalidLine;

/** Parse the text of a whole data file into items (JSON array, JSONL, or concatenated objects). */
function parseItems(text: string, file: string): RawItem[] {
  const first = text.search(/\S/);
  if (first < 0) return [];
  if (text[first] === '[') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (e) {
      const message = (e as Error).message;
      const pos = /position (\d+)/.exec(message);
      const line = pos ? lineAt(text, Number(pos[1])) : undefined;
      throw new InputError({ file, line }, `not a valid JSON array (${message})`);
    }
    if (!Array.isArray(parsed)) throw new InputError({ file }, 'expected a JSON array of records');
    return parsed.map((value, index) => ({ location: { file, index }, ordinal: index, value }));
  }

  const lines = text.split('\n');
  const firstLine = lines.findIndex((l) => l.trim() !== '');
  if (!isJson(lines[firstLine].trim())) {
    // Not one object per line: maybe pretty-printed objects one after another.
    const spans = splitConcatenatedJson(text);
    if (spans && spans.length > 0 && spans.every((sp) => isJson(text.slice(sp.start, sp.end)))) {
      return spans.map((sp, ordinal) => ({
        location: { file, line: lineAt(text, sp.start) },
        ordinal,
        value: JSON.parse(text.slice(sp.start, sp.end)),
      }));
    }
  }
  const items: RawItem[] = [];
  let ordinal = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line === '') continue;
    items.push(parseLine(line, { file, line: i + 1 }, ordinal++));
  }
  return items;
}

function parseLine(line: string, location: InputLocation, ordinal: number): RawItem {
  try {
    return { location, ordinal, value: JSON.parse(line) };
  } catch (e) {
    return { location, ordinal, error: `not valid JSON (${(e as Error).message})` };
  }
}

/** Files at least this big are streamed line by line (JSONL only) instead of read whole. */
const STREAM_THRESHOLD_BYTES = 64 * 1024 * 1024;

function checkFile(file: string): number {
  if (!existsSync(file)) throw new InputError({ file }, 'file not found');
  const stat = statSync(file);
  if (stat.isDirectory()) throw new InputError({ file }, 'is a folder, expected a file');
  return stat.size;
}

/**
 * The lines of a file (`.gz` decompressed as it is read), split at `\n` as the whole-file reader
 * splits them, one at a time: memory holds one read chunk and one line.
 */
async function* fileLines(file: string): AsyncGenerator<{ text: string; line: number }> {
  const stream = createReadStream(file);
  const gunzip = file.endsWith('.gz') ? createGunzip() : undefined;
  const input: AsyncIterable<Buffer> = gunzip ? stream.pipe(gunzip) : stream;
  try {
    let carry: Buffer[] = [];
    let carryLength = 0;
    let line = 0;
    for await (const chunk of input) {
      let start = 0;
      for (let nl = chunk.indexOf(10); nl >= 0; nl = chunk.indexOf(10, start)) {
        const piece = chunk.subarray(start, nl);
        const whole = carryLength ? Buffer.concat([...carry, piece]) : piece;
        carry = [];
        carryLength = 0;
        start = nl + 1;
        line++;
        yield { text: whole.toString('utf8'), line };
      }
      if (start < chunk.length) {
        carry.push(chunk.subarray(start));
        carryLength += chunk.length - start;
      }
    }
    if (carryLength > 0) yield { text: Buffer.concat(carry).toString('utf8'), line: line + 1 };
  } finally {
    gunzip?.destroy();
    stream.destroy();
  }
}

/**
 * The items of a data file, in order. JSONL (the first record is one JSON line) is read a line at
 * a time whatever its size, so memory stays flat and a `limit` stops reading early. Other layouts
 * (a JSON array, pretty-printed objects one after another) are read whole when smaller than 64 MB
 * (`streamAboveBytes` moves that threshold); at or above it every file is read as JSONL (e.g.
 * Math-Shepherd's 793 MB).
 */
export async function* streamRecords(
  file: string,
  options: { streamAboveBytes?: number } = {},
): AsyncGenerator<RawItem> {
  const size = checkFile(file);
  const threshold = options.streamAboveBytes ?? STREAM_THRESHOLD_BYTES / (file.endsWith('.gz') ? 8 : 1);
  let ordinal = 0;
  let sniffed = size >= threshold;
  for await (const { text, line } of fileLines(file)) {
    // trim() also drops a byte-order mark.
    const trimmed = text.trim();
    if (trimmed === '') continue;
    // Decided on the first record exactly as the whole-file reader decides (parseItems).
    if (!sniffed) {
      if (trimmed.startsWith('[') || !isJson(trimmed)) {
        yield* parseItems(readText(file), file);
        return;
      }
      sniffed = true;
    }
    yield parseLine(trimmed, { file, line }, ordinal++);
  }
}

/**
 * Read the records of a data file: a JSON array (location = array index), JSONL (location = line),
 * or JSON objects written one after another (location = the line where each starts).
 * Text that is not JSON throws an {@link InputError} naming file and line, or is skipped and
 * counted with `skipInvalid`.
 */
export function readRecords(
  file: string,
  options: ReadOptions = {},
): { records: RawRecord[]; skipped: number } {
  checkFile(file);
  const records: RawRecord[] = [];
  let skipped = 0;
  for (const item of parseItems(readText(file), file)) {
    if (!('error' in item)) records.push(item);
    else if (options.skipInvalid) skipped++;
    else throw new InputError(item.location, item.error);
  }
  return { records, skipped };
}

function isJson(s: string): boolean {
  try {
    JSON.parse(s);
    return true;
  } catch {
    return false;
  }
}

/** A record that parsed as JSON but is unusable; `field` names the offending field. */
export class RecordProblem extends Error {
  constructor(
    readonly field: string | undefined,
    message: string,
  ) {
    super(message);
    this.name = 'RecordProblem';
  }
}

/** Dotted path of a zod issue: `label.steps[3].completions[0].rating`. */
function issuePath(path: ReadonlyArray<PropertyKey>): string | undefined {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out === '' ? String(key) : `.${String(key)}`;
  }
  return out === '' ? undefined : out;
}

/** Kinds that only stepwise writes: never a data set's records. */
function isStepwiseOutput(kind: FileKind | undefined): boolean {
  return (
    kind !== undefined &&
    kind !== 'problems' &&
    kind !== 'solutions' &&
    kind !== 'processbench' &&
    kind !== 'texts'
  );
}

/** A converted record, or the {@link RecordProblem} `convert` threw. */
function convertRecord<V, T>(
  convert: (value: V, record: RawRecord) => T,
  value: V,
  raw: RawRecord,
): { record: T } | { field: string | undefined; problem: string } {
  try {
    return { record: convert(value, raw) };
  } catch (e) {
    if (!(e instanceof RecordProblem)) throw e;
    return { field: e.field, problem: e.message };
  }
}

/** Options of {@link recordStream} and {@link loadRecords}. */
export type RecordOptions = ReadOptions & {
  limit?: number;
  keep?: (value: unknown) => boolean;
  /** Called for each bad record skipped under `skipInvalid`. */
  onSkipped?: () => void;
};

/**
 * The records of `file` one at a time, each validated with `schema` and turned into a normalised
 * record by `convert` (JSONL is read a line at a time: see {@link streamRecords}). The first bad
 * record (not JSON, failing the schema, or rejected by `convert` with a {@link RecordProblem})
 * throws an {@link InputError} naming file, line or index, and field; with `skipInvalid` bad
 * records are skipped (and `onSkipped` called). `keep` drops records before validation (e.g. a
 * split by id); `limit` stops reading once that many records are kept.
 */
export async function* recordStream<S extends z.ZodType, T>(
  file: string,
  schema: S,
  convert: (value: z.infer<S>, record: RawRecord) => T,
  options: RecordOptions = {},
): AsyncGenerator<T> {
  let kept = 0;
  if (options.limit !== undefined && options.limit <= 0) return;
  for await (const item of streamRecords(file)) {
    let field: string | undefined;
    let problem: string;
    if ('error' in item) {
      problem = item.error;
    } else {
      if (options.keep && !options.keep(item.value)) continue;
      const parsed = schema.safeParse(item.value);
      if (parsed.success) {
        const converted = convertRecord(convert, parsed.data, item);
        if ('record' in converted) {
          yield converted.record;
          kept++;
          if (options.limit !== undefined && kept >= options.limit) return;
          continue;
        }
        field = converted.field;
        problem = converted.problem;
      } else if (isStepwiseOutput(detectFileKind(item.value))) {
        // Another stepwise command's output given as a data set: say so, not which field is off.
        problem = `this is ${FILE_KIND_NAMES[detectFileKind(item.value)!]}, not a record of this data set`;
      } else {
        const issue = parsed.error.issues[0];
        field = issuePath(issue.path);
        problem = issue.message.replace(
          /^Invalid input: expected (.+), received undefined$/,
          'missing (expected $1)',
        );
      }
    }
    if (!options.skipInvalid) throw new InputError({ ...item.location, field }, problem);
    options.onSkipped?.();
  }
}

/** {@link recordStream}, collected: every record of `file`, and how many bad ones were skipped. */
export async function loadRecords<S extends z.ZodType, T>(
  file: string,
  schema: S,
  convert: (value: z.infer<S>, record: RawRecord) => T,
  options: RecordOptions = {},
): Promise<{ records: T[]; skipped: number }> {
  const records: T[] = [];
  let skipped = 0;
  const onSkipped = () => {
    skipped++;
    options.onSkipped?.();
  };
  for await (const r of recordStream(file, schema, convert, { ...options, onSkipped })) records.push(r);
  return { records, skipped };
}

/**
 * A data set's records, to be read as they are needed: the file is found (or its absence
 * reported) when the source is made; each `read()` reads it anew, one record at a time.
 */
export interface RecordSource<T> {
  /** The file or folder read. */
  path: string;
  read(hooks?: { onSkipped?: () => void }): AsyncGenerator<T>;
}

/** Every record of a source, and how many bad ones were skipped. */
export async function loadSource<T>(
  source: RecordSource<T>,
): Promise<{ records: T[]; skipped: number; path: string }> {
  const records: T[] = [];
  let skipped = 0;
  for await (const r of source.read({ onSkipped: () => skipped++ })) records.push(r);
  return { records, skipped, path: source.path };
}
