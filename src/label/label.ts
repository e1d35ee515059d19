import type { z } from 'zod';
import { UsageError } from '../core/errors.js';
import { type Segmentation, writtenPrefix } from '../core/segment.js';
import type { Cost, Problem } from '../core/types.js';
import type {
  KeptRolloutSchema,
  LabeledChunkOutputSchema,
  LabelOutputRowSchema,
} from '../data/record-kinds.js';
import { type Policy, prefixFromChunks } from '../models/policy.js';
import {
  earlyStopBatch,
  type LabelConfig,
  resolveLabelConfig,
  type SearchMode,
  signalParamsOf,
} from './config.js';
import {
  type AnswerChecker,
  binarySearchFirstError,
  estimateStepValues,
  type PrefixEstimate,
  type PrefixMemo,
  type RolloutOptions,
  type TaskLimiter,
} from './estimate.js';
import { computeSignals, type LabelSignal } from './signals.js';

export type { SearchMode };

/**
 * What a labeling call shares with the rest of its job, besides the config: a limit on requests
 * in flight, the memo of estimated prefixes, and the job's abort signal.
 */
export interface LabelRuntime {
  limit?: TaskLimiter;
  memo?: PrefixMemo;
  signal?: AbortSignal;
}

/** A rollout kept in the output (`--keep-rollouts`; KeptRolloutSchema in src/data/record-kinds.ts). */
export type KeptRollout = z.infer<typeof KeptRolloutSchema>;

/** One labeled chunk of the output (LabeledChunkOutputSchema). */
export type LabeledChunkRecord = z.infer<typeof LabeledChunkOutputSchema>;

/** One line of `stepwise label` output, as its strict schema declares (LabelOutputRowSchema). */
export type LabeledSolutionRecord = z.infer<typeof LabelOutputRowSchema>;

/** A solution to label: its id, the problem and its chunk texts. */
export interface SolutionToLabel {
  id: string;
  problem: Problem;
  chunks: readonly string[];
  /** Known correctness of the final answer (e.g. from `stepwise sample`); checked when absent. */
  correct?: boolean;
  /**
   * How these chunks were made: `tags` = the policy's own `<chunk>` tags, `paragraph` = blank
   * lines (also a tags sample whose tags were malformed). Default: the job's segmentation.
   */
  segmentation?: Segmentation;
  /**
   * The solution as the policy wrote it, when known: `ends[i]` is where the prefix of chunks
   * 0..i ends in `text` (right after its `</chunk>`). Prefixes are then the policy's own text.
   */
  written?: { text: string; ends: readonly number[] };
}

/** Under tags: the text the prefixes are cut from and where each ends (see {@link LabeledSolutionRecord.written}). */
function writtenOf(
  solution: SolutionToLabel,
  segmentation: Segmentation,
): { text: string; ends: number[] } | undefined {
  if (segmentation !== 'tags') return undefined;
  if (solution.written) return { text: solution.written.text, ends: [...solution.written.ends] };
  const n = solution.chunks.length;
  return {
    text: solutionPrefix(solution, n, segmentation),
    ends: solution.chunks.map((_, i) => solutionPrefix(solution, i + 1, segmentation).length),
  };
}

/** The prefix of a solution made of its first k chunks, as the policy wrote it where known. */
export function solutionPrefix(solution: SolutionToLabel, k: number, jobSegmentation: Segmentation): string {
  if (k === 0) return '';
  if (solution.written) return solution.written.text.slice(0, solution.written.ends[k - 1]);
  return writtenPrefix(solution.chunks.slice(0, k), solution.segmentation ?? jobSegmentation);
}

export interface LabelResult {
  record: LabeledSolutionRecord;
  /** What was actually spent (cache hits and reuse cost nothing). */
  spent: Cost;
  /** Generate calls made. */
  requests: number;
}

/** The resolved config of a call on `policy`: its segmentation is the default one. */
export function labelConfigFor(policy: Policy, config: Partial<LabelConfig>): LabelConfig {
  return resolveLabelConfig(config, { segmentation: policy.segmentation, promptForm: policy.form });
}

/** The estimator's options under a config (the rollout half of it). */
export function rolloutOptionsOf(config: LabelConfig, runtime: LabelRuntime = {}): RolloutOptions {
  const batch = earlyStopBatch(config);
  return {
    rollouts: config.rollouts,
    temperature: config.temperature,
    maxTokens: config.maxTokens,
    seed: config.seed,
    earlyStop: batch === null ? false : { batchSize: batch },
    keepRollouts: config.keepRollouts,
    noCache: config.cache === false,
    limit: runtime.limit,
    memo: runtime.memo,
    signal: runtime.signal,
  };
}

function keptRollouts(p: PrefixEstimate | undefined): KeptRollout[] {
  return (p?.rollouts ?? []).map((r) => ({ text: r.text, correct: r.correct }));
}

/** A chunk's `rollouts` field: the count, or the kept rollouts themselves. */
function rolloutsField(p: PrefixEstimate | undefined, keep: boolean): number | KeptRollout[] {
  return keep ? keptRollouts(p) : (p?.samples ?? 0);
}

async function finalCorrect(checker: AnswerChecker, s: SolutionToLabel): Promise<boolean> {
  if (s.correct !== undefined) return s.correct;
  const r = await checker(s.problem, s.written?.text ?? prefixFromChunks(s.chunks));
  return typeof r === 'boolean' ? r : r.correct;
}

/**
 * Label one solution: estimate Q̂ for its prefixes (all of them, or by bisection) and compute
 * every requested signal's chunk labels and first error.
 */
export async function labelSolution(
  policy: Policy,
  checker: AnswerChecker,
  solution: SolutionToLabel,
  partial: Partial<LabelConfig>,
  runtime: LabelRuntime = {},
): Promise<LabelResult> {
  const config = labelConfigFor(policy, partial);
  const { search, segmentation, signals } = config;
  const keep = config.keepRollouts;
  const final = await finalCorrect(checker, solution);
  if (solution.written && solution.written.ends.length !== solution.chunks.length)
    throw new UsageError(
      `${solution.id}: ${solution.written.ends.length} prefix ends for ${solution.chunks.length} chunks`,
    );
  const options: RolloutOptions = {
    ...rolloutOptionsOf(config, runtime),
    prefixOf: (k) => solutionPrefix(solution, k, segmentation),
  };
  const written = writtenOf(solution, segmentation);
  const base = {
    id: solution.id,
    problem: solution.problem.question,
    answer: solution.problem.answer,
    finalAnswerCorrect: final,
    search,
    segmentation,
    ...(written ? { written } : {}),
  };
  if (search === 'linear') {
    const values = await estimateStepValues(
      policy,
      checker,
      solution.problem,
      solution.chunks,
      options,
      final,
    );
    const set = computeSignals(values.q, signals, signalParamsOf(config));
    const chunks: LabeledChunkRecord[] = solution.chunks.map((text, i) => ({
      text,
      q: values.q[i + 1],
      rollouts: rolloutsField(values.prefixes[i + 1], keep),
      labels: Object.fromEntries(signals.map((s) => [s, set.labels[s]![i]])),
    }));
    return {
      record: {
        ...base,
        ...(values.prefixes.some((p) => p.simulated) ? { simulated: true as const } : {}),
        q0: values.q[0],
        ...(keep ? { emptyPrefixRollouts: keptRollouts(values.prefixes[0]) } : {}),
        chunks,
        firstError: set.firstError,
        cost: { rollouts: values.rollouts, tokens: values.rolloutTokens },
      },
      spent: values.cost,
      requests: values.prefixes.reduce((a, p) => a + p.requests, 0),
    };
  }
  const found = await binarySearchFirstError(
    policy,
    checker,
    solution.problem,
    solution.chunks,
    options,
    final,
  );
  const probed = new Map(found.probes.map((p) => [p.prefixLength - 1, p]));
  const fe = found.firstError;
  const chunks: LabeledChunkRecord[] = solution.chunks.map((text, i) => {
    // Before the first error: positive (the chunk before it was probed positive, and every
    // earlier one is positive under the monotone assumption bisection rests on). At it:
    // negative (probed with no correct rollout). After it: not determined.
    const label = fe === -1 || i < fe ? true : i === fe ? false : null;
    const p = probed.get(i);
    return {
      text,
      q: p ? p.q : null,
      rollouts: rolloutsField(p, keep),
      labels: Object.fromEntries(signals.map((s) => [s, label])),
    };
  });
  return {
    record: {
      ...base,
      ...(found.probes.some((p) => p.simulated) ? { simulated: true as const } : {}),
      q0: null,
      chunks,
      firstError: Object.fromEntries(signals.map((s) => [s, fe])),
      cost: { rollouts: found.rollouts, tokens: found.rolloutTokens },
    },
    spent: found.cost,
    requests: found.probes.reduce((a, p) => a + p.requests, 0),
  };
}

/** One ProcessBench-format row. */
export interface ProcessBenchRow {
  id: string;
  generator: string;
  problem: string;
  steps: string[];
  /** Earliest wrong step (0-based) under the chosen signal, −1 when none. */
  label: number;
  final_answer_correct: boolean;
}

/** A labeled solution as a ProcessBench row, with the first error of `signal` as its label. */
export function toProcessBenchRow(
  record: LabeledSolutionRecord,
  signal: LabelSignal,
  generator = 'unknown',
): ProcessBenchRow {
  const label = record.firstError[signal];
  if (label === undefined)
    throw new UsageError(
      `signal ${signal} was not labeled (labeled: ${Object.keys(record.firstError).join(', ')})`,
    );
  return {
    id: record.id,
    generator,
    problem: record.problem,
    steps: record.chunks.map((c) => c.text),
    label,
    final_answer_correct: record.finalAnswerCorrect,
  };
}
