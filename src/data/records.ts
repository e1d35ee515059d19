import { existsSync, readFileSync, statSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import type { z } from 'zod';
import { InputError, type InputLocation } from '../core/errors.js';

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
  const text = readText(file);
  const first = text.search(/\S/);
  if (first < 0) return { records: [], skipped: 0 };
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
    return {
      records: parsed.map((value, index) => ({ location: { file, index }, ordinal: index, value })),
      skipped: 0,
    };
  }

  const lines = text.split('\n');
  const firstLine = lines.findIndex((l) => l.trim() !== '');
  if (!isJson(lines[firstLine].trim())) {
    // Not one object per line: maybe pretty-printed objects one after another.
    const spans = splitConcatenatedJson(text);
    if (spans && spans.length > 0 && spans.every((s) => isJson(text.slice(s.start, s.end)))) {
      return {
        records: spans.map((s, ordinal) => ({
          location: { file, line: lineAt(text, s.start) },
          ordinal,
          value: JSON.parse(text.slice(s.start, s.end)),
        })),
        skipped: 0,
      };
    }
  }

  const records: RawRecord[] = [];
  let skipped = 0;
  let ordinal = 0;
  for (let i = 0; i < lines.length; i++) {
    const s = lines[i].trim();
    if (s === '') continue;
    const location = { file, line: i + 1 };
    try {
      records.push({ location, ordinal, value: JSON.parse(s) });
    } catch (e) {
      if (!options.skipInvalid) throw new InputError(location, `not valid JSON (${(e as Error).message})`);
      skipped++;
    }
    ordinal++;
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

/**
 * Validate raw records with `schema` and turn each into a normalised record with `convert`.
 * The first bad record throws an {@link InputError} naming file, line or index, and field;
 * with `skipInvalid` bad records are skipped and counted.
 */
export function convertRecords<S extends z.ZodType, T>(
  raw: { records: RawRecord[]; skipped: number },
  schema: S,
  convert: (value: z.infer<S>, record: RawRecord) => T,
  options: ReadOptions & { limit?: number } = {},
): { records: T[]; skipped: number } {
  const out: T[] = [];
  let skipped = raw.skipped;
  for (const record of raw.records) {
    if (options.limit !== undefined && out.length >= options.limit) break;
    let field: string | undefined;
    let problem: string;
    const parsed = schema.safeParse(record.value);
    if (parsed.success) {
      try {
        out.push(convert(parsed.data, record));
        continue;
      } catch (e) {
        if (!(e instanceof RecordProblem)) throw e;
        field = e.field;
        problem = e.message;
      }
    } else {
      const issue = parsed.error.issues[0];
      field = issuePath(issue.path);
      problem = issue.message;
    }
    if (!options.skipInvalid) throw new InputError({ ...record.location, field }, problem);
    skipped++;
  }
  return { records: out, skipped };
}
