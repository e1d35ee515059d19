import { closeSync, existsSync, openSync, writeSync } from 'node:fs';
import pLimit from 'p-limit';
import { CostLedger, emptyRoleCost } from '../core/cost.js';
import { UsageError } from '../core/errors.js';
import type { Segmentation } from '../core/segment.js';
import type { Cost } from '../core/types.js';
import { readLinesSync } from '../jobs/lines.js';
import { inShard, type JobProgress, runStreamJob, type Shard } from '../jobs/run-job.js';
import type { JobSettings } from '../jobs/settings.js';
import type { Policy } from '../models/policy.js';
import { type LabelConfig, type LabelOutputFormat, labelJobSettings } from './config.js';
import type { AnswerChecker } from './estimate.js';
import { createPrefixMemo } from './estimate.js';
import {
  type LabeledSolutionRecord,
  labelConfigFor,
  labelSolution,
  type SolutionToLabel,
  toProcessBenchRow,
} from './label.js';
import { DEFAULT_SIGNAL_PARAMS, isPositiveLabel, type LabelSignal } from './signals.js';

export type { LabelOutputFormat };

export interface LabelJobOptions {
  /** The label settings (resolved here: unset fields take their defaults, the policy's segmentation). */
  config: Partial<LabelConfig>;
  /** The solutions, read lazily (a generator over the input file keeps memory bounded). */
  solutions: Iterable<SolutionToLabel> | AsyncIterable<SolutionToLabel>;
  /** Solutions in the input, when known before reading (for progress). */
  total?: number;
  /**
   * The same solutions again, read once before any work: progress then counts prefixes (the
   * unit of labeling) with a total fixed before the first request, and rows whose input changed
   * are found (and refused under `strictResume`) before anything is spent.
   */
  plan?: Iterable<SolutionToLabel> | AsyncIterable<SolutionToLabel>;
  /** Exit 2 instead of redoing rows whose input changed (see jobs/made-from). */
  strictResume?: boolean;
  /** Told of rows kept unverified (an output written before rows recorded their input's digest). */
  onWarning?: (message: string) => void;
  /** Label only this part of the input (by a hash of the solution id). */
  shard?: Shard;
  policy: Policy;
  checker: AnswerChecker;
  /** Output file. */
  out: string;
  /** ProcessBench `generator` field (default: the policy's model id). */
  generator?: string;
  /** Generate calls in flight across all solutions (default 4 × the config's concurrency). */
  requestConcurrency?: number;
  /** Start over instead of resuming from the output. */
  fresh?: boolean;
  /**
   * The job's cost ledger (`ledgerOf(policy model)`): its world marks every output line
   * (`simulated: true` once any of the work was the simulated world's) and the summary. Without
   * one, only replies the sim server marked say so.
   */
  ledger?: CostLedger;
  /**
   * Record the job's settings on every row (a resumed output must have the same, see
   * jobs/settings): what the rows depend on besides the config — the policy spec, its chat
   * template's id, the data set — recorded with the config's row settings ({@link labelJobSettings}).
   * Absent: rows record no settings.
   */
  record?: Record<string, unknown>;
  /** Stops the job (Ctrl-C). */
  signal?: AbortSignal;
  /**
   * Whether an error means "this solution's requests went to a batch file": the solution is
   * then left for a later run instead of failing the job.
   */
  isPending?: (error: unknown) => boolean;
  onProgress?: (p: JobProgress) => void;
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
  /** The job's segmentation, and chunks per solution under it. */
  segmentation: Segmentation;
  chunksPerSolution: number;
  /** Solutions taken from an earlier, interrupted run's output. */
  resumed: number;
  /** Solutions whose row in the output was made from another input: labeled again. */
  redone: number;
  /** Solutions kept from an older output that records no digest of its input (unchecked). */
  unverified: number;
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
  /** Solutions left for a later run because their requests went to a batch file. */
  pending: number;
  /** Present and true when any record came from the simulated world. */
  simulated?: true;
  /** The resolved config the job ran with. */
  config: LabelConfig;
  /** The settings recorded on every row (with `record`). */
  settings?: JobSettings;
}

/** Where `--format processbench` keeps the full labeled records (and resumes from). */
export function labelsSidecarPath(out: string): string {
  return `${out}.labels.jsonl`;
}

/** Positives per signal over labeled records. */
export function summarizeSignals(
  records: Iterable<LabeledSolutionRecord>,
  signals: readonly LabelSignal[],
  softThreshold = DEFAULT_SIGNAL_PARAMS.softThreshold,
): Partial<Record<LabelSignal, SignalSummary>> {
  const acc = signalAccumulator(signals, softThreshold);
  for (const r of records) acc.add(r);
  return acc.result();
}

/** {@link summarizeSignals} one record at a time (a streamed job holds no list of records). */
export function signalAccumulator(
  signals: readonly LabelSignal[],
  softThreshold = DEFAULT_SIGNAL_PARAMS.softThreshold,
): { add(r: LabeledSolutionRecord): void; result(): Partial<Record<LabelSignal, SignalSummary>> } {
  const sums = signals.map((s): [LabelSignal, SignalSummary] => [
    s,
    { positive: 0, labeled: 0, share: 0, withError: 0 },
  ]);
  return {
    add(r) {
      for (const [s, sum] of sums) {
        for (const c of r.chunks) {
          const v = c.labels[s];
          if (v === undefined || v === null) continue;
          sum.labeled++;
          if (isPositiveLabel(v, softThreshold)) sum.positive++;
        }
        if ((r.firstError[s] ?? -1) >= 0) sum.withError++;
      }
    },
    result() {
      const out: Partial<Record<LabelSignal, SignalSummary>> = {};
      for (const [s, sum] of sums)
        out[s] = { ...sum, share: sum.labeled > 0 ? sum.positive / sum.labeled : 0 };
      return out;
    },
  };
}

/**
 * A resumed output must hold label records: resuming from some other JSONL (the input itself,
 * a sample file) would silently skip solutions and break the summary.
 */
function resumableCheck(
  file: string,
  keepRollouts: boolean,
  shard: Shard | undefined,
  segmentation: Segmentation,
): (value: unknown, line: number) => void {
  return (value, line) => {
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
    const was = v.segmentation ?? 'paragraph';
    if (was !== segmentation)
      throw new UsageError(
        `${file}, line ${line}: labeled with --segmentation ${was}, not ${segmentation}: a rerun must not mix them (pass --fresh to start over, or choose another --out)`,
      );
    // A shard's output holds only its own keys: one from another shard means the wrong --out.
    if (shard && !inShard(v.id, shard))
      throw new UsageError(
        `${file}, line ${line}: solution "${v.id}" is not in --shard ${shard.index}/${shard.count}, so this output belongs to another shard (use its own --out, or --fresh)`,
      );
  };
}

/** Write the ProcessBench rows of the finished labels file, one line at a time. */
function writeProcessBenchRows(
  labelsFile: string,
  out: string,
  signal: LabelSignal,
  generator: string,
): void {
  const fd = openSync(out, 'w');
  try {
    if (existsSync(labelsFile))
      for (const l of readLinesSync(labelsFile)) {
        if (l.partial || l.text.trim() === '') continue;
        const r = JSON.parse(l.text) as LabeledSolutionRecord;
        const row = {
          ...toProcessBenchRow(r, signal, generator),
          ...(r.simulated ? { simulated: true } : {}),
        };
        writeSync(fd, `${JSON.stringify(row)}\n`);
      }
  } finally {
    closeSync(fd);
  }
}

/**
 * Label every solution, appending each finished record to the output as it completes (a killed
 * job resumes where it stopped; the model cache makes any rollout already received free), then
 * put the output in input order. The input is read as the work proceeds and records are not
 * kept: memory is bounded by the concurrency, not by the size of the job. Concurrency limits
 * solutions and generate calls; identical prefixes (e.g. the empty prefix of samples of one
 * problem) are estimated once.
 */
export async function runLabelJob(options: LabelJobOptions): Promise<LabelSummary> {
  const config = labelConfigFor(options.policy, options.config);
  if (options.policy.form !== undefined && config.promptForm !== options.policy.form)
    throw new UsageError(
      `label config: promptForm ${config.promptForm}, but the policy is prompted ${options.policy.form}`,
    );
  const settings = options.record ? labelJobSettings(config, options.record) : undefined;
  const { format, segmentation, concurrency } = config;
  const pbSignal = config.processbenchSignal ?? config.signals[0];
  const limit = pLimit(Math.max(1, options.requestConcurrency ?? 4 * concurrency));
  const memo = createPrefixMemo();
  const ledger = options.ledger ?? new CostLedger();
  let requests = 0;
  const labelsFile = format === 'processbench' ? labelsSidecarPath(options.out) : options.out;
  const signals = signalAccumulator(config.signals, config.softThreshold);
  const totals = { solutions: 0, chunks: 0, rollouts: 0, rolloutTokens: 0 };
  const result = await runStreamJob<SolutionToLabel, LabeledSolutionRecord>({
    items: options.solutions,
    keyOf: (s) => s.id,
    keyOfOutput: (r) => r.id,
    out: labelsFile,
    concurrency,
    fresh: options.fresh,
    settings,
    shard: options.shard,
    total: options.total,
    plan: options.plan,
    // A solution's prefixes 0…H−1: the empty one and one after each chunk but the last (the whole
    // solution is checked, not rolled out from) — the unit rollouts are drawn for.
    unitsOf: options.plan ? (s) => Math.max(1, s.chunks.length) : undefined,
    unit: options.plan ? 'prefixes' : 'solutions',
    strictResume: options.strictResume,
    onWarning: options.onWarning,
    signal: options.signal,
    checkExisting: options.fresh
      ? undefined
      : resumableCheck(labelsFile, config.keepRollouts, options.shard, segmentation),
    // The file reader checks ids itself, naming the line.
    checkUniqueKeys: Array.isArray(options.solutions),
    onProgress: options.onProgress,
    onRecord: (r) => {
      totals.solutions++;
      totals.chunks += r.chunks.length;
      totals.rollouts += r.cost.rollouts;
      totals.rolloutTokens += r.cost.tokens;
      // A resumed line's world counts too: it is work of this job.
      if (r.simulated) ledger.saw('sim');
      signals.add(r);
    },
    process: async (solution) => {
      let labeled: Awaited<ReturnType<typeof labelSolution>>;
      try {
        labeled = await labelSolution(options.policy, options.checker, solution, config, {
          limit,
          memo,
          signal: options.signal,
        });
      } catch (e) {
        if (options.isPending?.(e)) return undefined;
        throw e;
      }
      requests += labeled.requests;
      ledger.add(
        { policy: labeled.spent.policy, judge: emptyRoleCost() },
        labeled.record.simulated ? 'sim' : undefined,
      );
      return ledger.simulated ? { ...labeled.record, simulated: true } : labeled.record;
    },
  });
  // Requests of a solution left pending may still be queued: let them reach the batch file.
  while (limit.activeCount + limit.pendingCount > 0) await new Promise((r) => setTimeout(r, 5));
  if (options.signal?.aborted) throw options.signal.reason ?? new Error('aborted');
  if (format === 'processbench')
    writeProcessBenchRows(
      labelsFile,
      options.out,
      pbSignal,
      options.generator ?? options.policy.model.modelId,
    );
  return {
    ...totals,
    resumed: result.resumed,
    redone: result.redone,
    unverified: result.unverified,
    segmentation,
    chunksPerSolution: totals.solutions === 0 ? 0 : totals.chunks / totals.solutions,
    spent: ledger.snapshot(),
    requests,
    signals: signals.result(),
    out: options.out,
    ...(format === 'processbench' ? { labelsFile } : {}),
    pending: result.pending,
    ...(ledger.simulated ? { simulated: true as const } : {}),
    config,
    ...(settings ? { settings } : {}),
  };
}
