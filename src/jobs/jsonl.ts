import { existsSync, readFileSync } from 'node:fs';
import { InputError } from '../core/errors.js';
import { jsonArrayError } from './lines.js';

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
      const value: unknown = JSON.parse(s);
      if (lines.length === 0 && Array.isArray(value)) throw jsonArrayError(file, text);
      lines.push({ line: i + 1, value });
    } catch (e) {
      if (e instanceof InputError) throw e;
      // A pretty-printed JSON array (ProcessBench's `<subset>.json`): say so, not "not valid JSON".
      if (lines.length === 0 && skipped === 0 && s.startsWith('[')) throw jsonArrayError(file, text);
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
