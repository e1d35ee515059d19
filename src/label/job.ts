import { existsSync, writeFileSync } from 'node:fs';
import pLimit from 'p-limit';
import { emptyCost } from '../core/cost.js';
import { UsageError } from '../core/errors.js';
import type { Cost } from '../core/types.js';
import { readJsonl } from '../jobs/jsonl.js';
import { runJsonlJob } from '../jobs/run-job.js';
import type { JobSettings } from '../jobs/settings.js';
import type { Policy } from '../models/policy.js';
import type { AnswerChecker } from './estimate.js';
import { createPrefixMemo } from './estimate.js';
import {
  type LabeledSolutionRecord,
  type LabelOptions,
  labelSolution,
  type SolutionToLabel,
  toProcessBenchRow,
  validateLabelOptions,
} from './label.js';
import { DEFAULT_SIGNAL_PARAMS, isPositiveLabel, type LabelSignal } from './signals.js';

export type LabelOutputFormat = 'jsonl' | 'processbench';

export interface LabelJobOptions extends LabelOptions {
  solutions: readonly SolutionToLabel[];
  policy: Policy;
  checker: AnswerChecker;
  /** Output file. */
  out: string;
  /** `jsonl` (default): labeled solutions. `processbench`: ProcessBench rows. */
  format?: LabelOutputFormat;
  /** The signal whose first error becomes the ProcessBench label (default: the first of `signals`). */
  processbenchSignal?: LabelSignal;
  /** ProcessBench `generator` field (default: the policy's model id). */
  generator?: string;
  /** Solutions labeled at once (default 8). */
  concurrency?: number;
  /** Generate calls in flight across all solutions (default 4 × concurrency). */
  requestConcurrency?: number;
  /** Start over instead of resuming from the output. */
  fresh?: boolean;
  /** Recorded on every row; a resumed output must have the same (see jobs/settings). */
  settings?: JobSettings;
  onProgress?: (p: { done: number; total: number; resumed: number }) => void;
}

/** Per-signal share of positive chunk labels (chunks without a label are left out). */
export interface SignalSummary {
  positive: number;
  labeled: number;
  /** positive / labeled (0 when nothing is labeled). */
  share: number;
  /** Solutions with a first error under this signal. */
  withError: number;
}

export interface LabelSummary {
  solutions: number;
  chunks: number;
  /** Solutions taken from an earlier, interrupted run's output. */
  resumed: number;
  /** Rollouts the labels rest on (cached or not) and their completion tokens. */
  rollouts: number;
  rolloutTokens: number;
  /** What this run actually spent: generate calls and tokens (cache hits and reuse cost nothing). */
  spent: Cost;
  requests: number;
  signals: Partial<Record<LabelSignal, SignalSummary>>;
  out: string;
  /** With `--format processbench`: the full labels kept next to the rows (also the resume state). */
  labelsFile?: string;
}

/** Where `--format processbench` keeps the full labeled records (and resumes from). */
export function labelsSidecarPath(out: string): string {
  return `${out}.labels.jsonl`;
}

/** Positives per signal over labeled records. */
export function summarizeSignals(
  records: readonly LabeledSolutionRecord[],
  signals: readonly LabelSignal[],
  softThreshold = DEFAULT_SIGNAL_PARAMS.softThreshold,
): Partial<Record<LabelSignal, SignalSummary>> {
  const out: Partial<Record<LabelSignal, SignalSummary>> = {};
  for (const s of signals) {
    const sum: SignalSummary = { positive: 0, labeled: 0, share: 0, withError: 0 };
    for (const r of records) {
      for (const c of r.chunks) {
        const v = c.labels[s];
        if (v === undefined || v === null) continue;
        sum.labeled++;
        if (isPositiveLabel(v, softThreshold)) sum.positive++;
      }
      if ((r.firstError[s] ?? -1) >= 0) sum.withError++;
    }
    sum.share = sum.labeled > 0 ? sum.positive / sum.labeled : 0;
    out[s] = sum;
  }
  return out;
}

/**
 * A resumed output must hold label records: resuming from some other JSONL (the input itself,
 * a sample file) would silently skip solutions and break the summary.
 */
function assertResumable(file: string, keepRollouts: boolean): void {
  if (!existsSync(file)) return;
  const { lines } = readJsonl(file, { skipInvalid: true });
  for (const { line, value } of lines) {
    const v = value as Partial<LabeledSolutionRecord> | null;
    if (!v || typeof v.id !== 'string' || !Array.isArray(v.chunks) || typeof v.firstError !== 'object')
      throw new UsageError(
        `${file}, line ${line}: not a \`stepwise label\` record, so the output cannot be resumed (use another --out, or --fresh to overwrite)`,
      );
    // A resumed file must not mix records with and without kept rollouts.
    const first = v.chunks[0] as { rollouts?: unknown } | undefined;
    if (first && Array.isArray(first.rollouts) !== keepRollouts)
      throw new UsageError(
        `${file}, line ${line}: labeled ${keepRollouts ? 'without' : 'with'} --keep-rollouts, so this run cannot resume it ` +
          `(${keepRollouts ? 'drop' : 'add'} --keep-rollouts, or use --fresh to start over)`,
      );
  }
}

/**
 * Label every solution, appending each finished record to the output as it completes (a killed
 * job resumes where it stopped; the model cache makes any rollout already received free), then
 * rewrite the output in input order. Concurrency limits solutions and generate calls; identical
 * prefixes (e.g. the empty prefix of samples of one problem) are estimated once.
 */
export async function runLabelJob(options: LabelJobOptions): Promise<LabelSummary> {
  validateLabelOptions(options);
  const format = options.format ?? 'jsonl';
  if (format !== 'jsonl' && format !== 'processbench')
    throw new UsageError(`unknown format "${String(format)}" (jsonl or processbench)`);
  const pbSignal = options.processbenchSignal ?? options.signals[0];
  if (format === 'processbench' && !options.signals.includes(pbSignal))
    throw new UsageError(
      `--processbench-signal ${pbSignal} is not among --signals ${options.signals.join(',')}`,
    );
  const concurrency = Math.max(1, options.concurrency ?? 8);
  const limit = pLimit(Math.max(1, options.requestConcurrency ?? 4 * concurrency));
  const memo = createPrefixMemo();
  const spent = emptyCost();
  let requests = 0;
  const labelsFile = format === 'processbench' ? labelsSidecarPath(options.out) : options.out;
  const ids = new Set<string>();
  for (const s of options.solutions) {
    if (ids.has(s.id)) throw new UsageError(`duplicate solution id "${s.id}"`);
    ids.add(s.id);
  }
  if (!options.fresh) assertResumable(labelsFile, options.keepRollouts ?? false);
  let resumed = 0;
  const records = await runJsonlJob<SolutionToLabel, LabeledSolutionRecord>({
    items: options.solutions,
    keyOf: (s) => s.id,
    keyOfOutput: (r) => r.id,
    out: labelsFile,
    concurrency,
    fresh: options.fresh,
    settings: options.settings,
    signal: options.signal,
    onProgress: (p) => {
      resumed = p.resumed;
      options.onProgress?.(p);
    },
    process: async (solution) => {
      const result = await labelSolution(options.policy, options.checker, solution, {
        ...options,
        limit,
        memo,
      });
      requests += result.requests;
      for (const k of ['calls', 'samples', 'promptTokens', 'completionTokens'] as const)
        spent.policy[k] += result.spent.policy[k];
      return result.record;
    },
  });
  if (options.signal?.aborted) throw options.signal.reason ?? new Error('aborted');
  if (format === 'processbench') {
    const generator = options.generator ?? options.policy.model.modelId;
    const rows = records.map((r) => JSON.stringify(toProcessBenchRow(r, pbSignal, generator)));
    writeFileSync(options.out, rows.length ? `${rows.join('\n')}\n` : '');
  }
  const softThreshold = options.params?.softThreshold ?? DEFAULT_SIGNAL_PARAMS.softThreshold;
  return {
    solutions: records.length,
    chunks: records.reduce((a, r) => a + r.chunks.length, 0),
    resumed,
    rollouts: records.reduce((a, r) => a + r.cost.rollouts, 0),
    rolloutTokens: records.reduce((a, r) => a + r.cost.tokens, 0),
    spent,
    requests,
    signals: summarizeSignals(records, options.signals, softThreshold),
    out: options.out,
    ...(format === 'processbench' ? { labelsFile } : {}),
  };
}
