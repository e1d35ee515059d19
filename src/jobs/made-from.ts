import { createHash } from 'node:crypto';
import { canonicalJson } from '../core/canonical-json.js';
import type { JobSettings } from './settings.js';

/**
 * Resume by content. Every row a resumable job writes records, in field `madeFrom`, a digest of
 * exactly what it was made from: the input record's content and the job's settings. A rerun
 * compares that digest with the digest of the input record of the same key now; a row whose
 * input changed (e.g. the samples file was sampled again under the same ids) is redone, never
 * counted as resumed. Ids say which row; only content says whether the row still holds.
 */
export const MADE_FROM_FIELD = 'madeFrom';

/** 16 hex digits of SHA-256 over the canonical JSON of the input record and the settings hash. */
export function madeFromDigest(content: unknown, settings?: JobSettings): string {
  return createHash('sha256')
    .update(canonicalJson({ input: content, job: settings ? `${settings.command}:${settings.hash}` : null }))
    .digest('hex')
    .slice(0, 16);
}

/** The digest a row records, or undefined when it records none (written before rows did). */
export function recordedMadeFrom(row: unknown): string | undefined {
  const v = (row as Record<string, unknown> | null)?.[MADE_FROM_FIELD];
  return typeof v === 'string' && /^[0-9a-f]{16}$/.test(v) ? v : undefined;
}

/** How a row already in the output stands against the input record of its key now. */
export type ResumeVerdict =
  /** Same content, same settings: the row is kept. */
  | 'same'
  /** The input record changed since the row was made: the row is redone. */
  | 'changed'
  /** The row records no digest (written by an older stepwise): kept, with a warning. */
  | 'unverified';

/** What a resuming job found in its output, for the summary and `--json`. */
export interface ResumeCounts {
  /** Rows kept because their input is the same. */
  resumed: number;
  /** Rows redone because their input record changed since they were made. */
  redone: number;
  /** Rows kept that record no digest (an output of an older stepwise): their input cannot be checked. */
  unverified: number;
}

/** The phrase a summary prints for {@link ResumeCounts}, e.g. `40 resumed, 32 redone (input changed)`. */
export function resumePhrase(c: Partial<ResumeCounts>): string {
  const parts = [`${c.resumed ?? 0} resumed`];
  if (c.redone) parts.push(`${c.redone} redone (input changed)`);
  if (c.unverified) parts.push(`${c.unverified} unverified (no digest: older output)`);
  return parts.join(', ');
}
