import { UsageError } from './errors.js';
import type { SettingField } from './settings-schema.js';

/**
 * Settings written in a spec's query (`openai:m?timeout_ms=500`, `prm:sim?step_threshold=0.4`):
 * how a field is named there, how a written key and value are read. One reading for the model
 * specs (src/models/registry.ts) and the judge specs (src/judge/spec.ts).
 */

/** `timeoutMs` → `timeout_ms`: a setting's key in a spec's query. */
export function queryKeyOf(field: string): string {
  return field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/**
 * How a written key is matched against the {@link queryKeyOf} names. The two kinds of spec have
 * always read keys differently, and both readings are relied on, so the caller says which:
 * - `'camel-to-snake'` (judge settings): `topP` reads as `top_p`, `top_p` as itself; case kept;
 * - `'lowercase'` (provider settings, whose aliases are lowercase words): `TIMEOUT_MS` reads as
 *   `timeout_ms`, while `timeoutMs` reads as `timeoutms` (no setting).
 */
export type QueryKeySpelling = 'camel-to-snake' | 'lowercase';

/** One `key=value` of a query: the part as written, its key (decoded, trimmed, read) and value (decoded). */
export interface QueryEntry {
  part: string;
  key: string;
  value: string;
}

/**
 * The entries of a query (the text after `?`), empty parts skipped; a part without `=` has value ''.
 * Read one at a time, so a part's error comes before the next part is decoded.
 */
export function* queryEntries(query: string, spelling: QueryKeySpelling): Generator<QueryEntry> {
  for (const part of query.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const written = decodeURIComponent(eq < 0 ? part : part.slice(0, eq)).trim();
    const value = eq < 0 ? '' : decodeURIComponent(part.slice(eq + 1));
    const key = spelling === 'lowercase' ? written.toLowerCase() : queryKeyOf(written);
    yield { part, key, value };
  }
}

/**
 * A query value as its field's type: numbers and booleans from their text, words as they are.
 * Text that is not of the field's type is, with `strictAt` (the place to name), a usage error
 * there — the model specs' reading, which also refuses `Infinity`; without it the text is kept as
 * written, so the caller's schema check names the key and the value — the judge specs' reading.
 */
export function queryValue(field: SettingField, raw: string, strictAt?: string): unknown {
  if (field.kind === 'number') {
    const v = Number(raw);
    if (strictAt === undefined) return raw.trim() === '' || Number.isNaN(v) ? raw : v;
    if (raw.trim() === '' || !Number.isFinite(v)) throw new UsageError(`${strictAt}: ${raw} is not a number`);
    return v;
  }
  if (field.kind === 'boolean') {
    if (raw === 'true' || raw === 'false') return raw === 'true';
    if (strictAt === undefined) return raw;
    throw new UsageError(`${strictAt}: ${raw} is not true or false`);
  }
  return raw;
}
