import type { z } from 'zod';
import type { FileKind } from '../core/file-kind.js';
import { LabelChunkSchema, LabelRowSchema, parseRecord } from '../data/record-kinds.js';
import { readJsonl } from '../jobs/jsonl.js';
import { DEFAULT_SIGNAL_PARAMS, isPositiveLabel } from '../label/signals.js';

/**
 * The rows of a `stepwise label` output file, as the training-data builders read them: the label
 * row kind's schema (src/data/record-kinds.ts). Only the fields they need are required; everything
 * else rides along. The two schema names are the library's public ones for those schemas
 * (src/index.ts re-exports this file); the code here uses the record-kinds names.
 */
export const LabeledChunkSchema = LabelChunkSchema;
export const LabeledSolutionSchema = LabelRowSchema;

export type LabeledChunk = z.infer<typeof LabelChunkSchema>;
export type LabeledSolution = z.infer<typeof LabelRowSchema>;

/**
 * Validate parsed JSONL values against a schema, naming file, line and field on the first bad one.
 * With `expect`, a record of another known kind is reported as such ("this is `stepwise sample`
 * output; export --task prm needs `stepwise label` output") instead of by its first bad field.
 */
export function validateRows<T>(
  file: string,
  lines: Array<{ line: number; value: unknown }>,
  schema: z.ZodType<T>,
  expect?: { kinds: readonly FileKind[]; who: string },
): T[] {
  return lines.map(({ line, value }) => parseRecord(schema, { file, line }, value, expect));
}

/** Read a `stepwise label` output file (`who`: the command reading it, for a wrong-kind message). */
export function readLabelFile(file: string, who = 'this command'): LabeledSolution[] {
  return validateRows(file, readJsonl(file).lines, LabelRowSchema, { kinds: ['label'], who });
}

/**
 * A chunk's label under `signal` as a boolean (positive = good step). Numeric (soft) labels
 * are positive at or above `softThreshold` — the one the file was labelled with
 * ({@link softThresholdOf} its row). Returns null when the chunk has no label for that signal.
 */
export function chunkLabel(
  chunk: LabeledChunk,
  signal: string,
  softThreshold: number = DEFAULT_SIGNAL_PARAMS.softThreshold,
): boolean | null {
  const v = chunk.labels[signal];
  if (v === undefined || v === null) return null;
  return isPositiveLabel(v, softThreshold);
}

/** The signals present in a label file (every key of any chunk's labels), in order of first appearance. */
export function signalsIn(rows: readonly LabeledSolution[]): string[] {
  const seen = new Set<string>();
  for (const r of rows) for (const c of r.chunks) for (const k of Object.keys(c.labels)) seen.add(k);
  return [...seen];
}
