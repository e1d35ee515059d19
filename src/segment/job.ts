import type { z } from 'zod';
import { InputError } from '../core/errors.js';
import { wrongKindError } from '../core/file-kind.js';
import type { LanguageModel } from '../core/model.js';
import { splitParagraphs } from '../core/segment.js';
import { resolveSettings, settingFields } from '../core/settings-schema.js';
import type { SegmentOutputRowSchema } from '../data/record-kinds.js';
import { readJsonl } from '../jobs/jsonl.js';
import type { ResumeCounts } from '../jobs/made-from.js';
import { runJsonlJob } from '../jobs/run-job.js';
import { methodJobSettings } from '../jobs/settings.js';
import { type LlmSegmenterOptions, segmentWithLlm } from './llm.js';
import { SEGMENT_SETTINGS, type SegmentConfig } from './settings.js';

/** One input row of `stepwise segment --segmentation llm`: a solution text (and, optionally, its problem). */
export interface SegmentInputRow {
  id: string;
  text: string;
  problem?: string;
}

/** One output row (its schema is in src/data/record-kinds.ts): the chunks of the input text, which splitter made them, and the replies asked for. */
export type SegmentedRow = z.infer<typeof SegmentOutputRowSchema>;

/** Read `{id, text, problem?}` rows; throws an InputError naming line and field. */
export function readSegmentInput(file: string): SegmentInputRow[] {
  const rows: SegmentInputRow[] = [];
  const seen = new Set<string>();
  for (const { line, value } of readJsonl(file).lines) {
    const wrong = wrongKindError({ file, line }, value, ['texts'], 'segment --segmentation llm', {
      strict: false,
    });
    if (wrong) throw wrong;
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      throw new InputError({ file, line }, 'expected a JSON object {id, text}');
    const v = value as Record<string, unknown>;
    const id = typeof v.id === 'number' ? String(v.id) : v.id;
    if (typeof id !== 'string' || id === '') throw new InputError({ file, line, field: 'id' }, 'missing id');
    if (seen.has(id)) throw new InputError({ file, line, field: 'id' }, `duplicate id "${id}"`);
    seen.add(id);
    if (typeof v.text !== 'string')
      throw new InputError({ file, line, field: 'text' }, 'missing solution text (a string)');
    const problem = v.problem ?? v.question;
    if (problem !== undefined && typeof problem !== 'string')
      throw new InputError({ file, line, field: 'problem' }, 'expected a string');
    rows.push({ id, text: v.text, ...(typeof problem === 'string' ? { problem } : {}) });
  }
  return rows;
}

export interface SegmentJobOptions extends LlmSegmenterOptions {
  rows: readonly SegmentInputRow[];
  model: LanguageModel;
  /** The model spec, recorded with the job's settings on every row. */
  modelSpec: string;
  out: string;
  concurrency?: number;
  fresh?: boolean;
  /** Exit 2 instead of redoing rows whose input text changed since they were segmented (jobs/made-from). */
  strictResume?: boolean;
  /** Told of rows kept unverified (an older output that records no digest of its input). */
  onWarning?: (message: string) => void;
  onProgress?: (p: { done: number; total: number; resumed: number }) => void;
}

/** What a segmentation run did: chunks per solution before (paragraphs) and after, rejected replies. */
export interface SegmentSummary extends ResumeCounts {
  solutions: number;
  /** Rows whose chunks come from an accepted reply / from the paragraph fallback. */
  methods: { llm: number; paragraph: number };
  chunksPerSolution: { paragraphs: number; segmented: number };
  /** Replies asked for (requests), and of them rejected. */
  requests: number;
  rejectedReplies: number;
  out: string;
}

/**
 * The settings of a run: those given (undefined: not given), checked against
 * {@link SEGMENT_SETTINGS} and completed with its defaults. A field the schema does not have is
 * left out (the options also carry the model, the rows and callbacks).
 */
export function resolveSegmentConfig(
  options: Partial<Record<keyof SegmentConfig, unknown>>,
  nameOf: (field: string) => string = (k) => `segment settings: ${k}`,
): SegmentConfig {
  const given: Record<string, unknown> = {};
  for (const f of settingFields(SEGMENT_SETTINGS))
    if (options[f.key as keyof SegmentConfig] !== undefined)
      given[f.key] = options[f.key as keyof SegmentConfig];
  return resolveSettings(SEGMENT_SETTINGS, given, nameOf, 'segment settings');
}

/**
 * Segment every row with the LLM into a resumable JSONL file (a finished row is appended as
 * soon as it is done; a rerun skips rows already there), then summarise the whole file.
 */
export async function runSegmentJob(options: SegmentJobOptions): Promise<SegmentSummary> {
  const config = resolveSegmentConfig(options);
  // `by` and the first reply's temperature are recorded as they always were (no flag sets the latter).
  const settings = methodJobSettings('segment', SEGMENT_SETTINGS, config, {
    by: 'llm',
    model: options.modelSpec,
    temperature: options.temperature ?? 0,
  });
  let resume: ResumeCounts = { resumed: 0, redone: 0, unverified: 0 };
  const records = await runJsonlJob<SegmentInputRow, SegmentedRow>({
    items: options.rows,
    keyOf: (r) => r.id,
    keyOfOutput: (r) => r.id,
    out: options.out,
    concurrency: config.concurrency,
    fresh: options.fresh,
    strictResume: options.strictResume,
    onWarning: options.onWarning,
    unit: 'solutions',
    settings,
    signal: options.signal,
    onProgress: options.onProgress,
    onFinish: (r) => {
      resume = { resumed: r.resumed, redone: r.redone, unverified: r.unverified };
    },
    process: async (row) => {
      const s = await segmentWithLlm(options.model, row.text, options);
      return {
        id: row.id,
        chunks: s.chunks.map((c) => ({ text: c.text, span: c.span })),
        method: s.method,
        attempts: s.attempts,
        rejected: s.rejected,
        text: row.text,
        ...(row.problem !== undefined ? { problem: row.problem } : {}),
      };
    },
  });
  if (options.signal?.aborted) throw options.signal.reason ?? new Error('aborted');
  const n = records.length;
  const mean = (f: (r: SegmentedRow) => number) => (n === 0 ? 0 : records.reduce((a, r) => a + f(r), 0) / n);
  return {
    solutions: n,
    ...resume,
    methods: {
      llm: records.filter((r) => r.method === 'llm').length,
      paragraph: records.filter((r) => r.method === 'paragraph').length,
    },
    chunksPerSolution: {
      paragraphs: mean((r) => splitParagraphs(r.text).length),
      segmented: mean((r) => r.chunks.length),
    },
    requests: records.reduce((a, r) => a + r.attempts, 0),
    rejectedReplies: records.reduce((a, r) => a + r.rejected.length, 0),
    out: options.out,
  };
}
