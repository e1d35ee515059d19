import { createReadStream, existsSync, readFileSync, statSync } from 'node:fs';
import { createInterface } from 'node:readline';
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
 * The items of a data file, in order. Small files are read whole (JSON arrays, JSONL,
 * concatenated objects); big ones (≥ 64 MB, e.g. Math-Shepherd's 793 MB) are streamed as JSONL,
 * so memory stays flat and a `limit` stops reading early. `streamAboveBytes` moves that threshold.
 */
export async function* streamRecords(
  file: string,
  options: { streamAboveBytes?: number } = {},
): AsyncGenerator<RawItem> {
  const size = checkFile(file);
  const threshold = options.streamAboveBytes ?? STREAM_THRESHOLD_BYTES / (file.endsWith('.gz') ? 8 : 1);
  if (size < threshold) {
    yield* parseItems(readText(file), file);
    return;
  }
  const stream = createReadStream(file);
  const lines = createInterface({
    input: file.endsWith('.gz') ? stream.pipe(createGunzip()) : stream,
    crlfDelay: Number.POSITIVE_INFINITY,
  });
  try {
    let lineNo = 0;
    let ordinal = 0;
    for await (const raw of lines) {
      lineNo++;
      const line = (lineNo === 1 ? raw.replace(/^\uFEFF/, '') : raw).trim();
      if (line === '') continue;
      yield parseLine(line, { file, line: lineNo }, ordinal++);
    }
  } finally {
    lines.close();
    stream.destroy();
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

/**
 * Read `file`, validate each record with `schema` and turn it into a normalised record with
 * `convert`. The first bad record (not JSON, failing the schema, or rejected by `convert` with a
 * {@link RecordProblem}) throws an {@link InputError} naming file, line or index, and field;
 * with `skipInvalid` bad records are skipped and counted. `keep` drops records before validation
 * (e.g. a split by id); `limit` stops reading once that many records are kept.
 */
export async function loadRecords<S extends z.ZodType, T>(
  file: string,
  schema: S,
  convert: (value: z.infer<S>, record: RawRecord) => T,
  options: ReadOptions & { limit?: number; keep?: (value: unknown) => boolean } = {},
): Promise<{ records: T[]; skipped: number }> {
  const out: T[] = [];
  let skipped = 0;
  if (options.limit !== undefined && options.limit <= 0) return { records: out, skipped };
  for await (const item of streamRecords(file)) {
    let field: string | undefined;
    let problem: string;
    if ('error' in item) {
      problem = item.error;
    } else {
      if (options.keep && !options.keep(item.value)) continue;
      const parsed = schema.safeParse(item.value);
      if (parsed.success) {
        try {
          out.push(convert(parsed.data, item));
          if (options.limit !== undefined && out.length >= options.limit) break;
          continue;
        } catch (e) {
          if (!(e instanceof RecordProblem)) throw e;
          field = e.field;
          problem = e.message;
        }
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
    skipped++;
  }
  return { records: out, skipped };
}
