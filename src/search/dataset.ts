import { existsSync } from 'node:fs';
import type { z } from 'zod';
import { addCosts, emptyCost } from '../core/cost.js';
import { UsageError } from '../core/errors.js';
import type { Segmentation } from '../core/segment.js';
import type { Cost, Problem } from '../core/types.js';
import type { SearchOutputRowSchema } from '../data/record-kinds.js';
import { streamJsonl } from '../jobs/lines.js';
import type { ResumeCounts } from '../jobs/made-from.js';
import { runStreamJob, type Shard } from '../jobs/run-job.js';
import type { JobSettings } from '../jobs/settings.js';
import { formatFailureShare } from '../judge/common.js';
import type { SearchConfig } from './registry.js';
import { runStrategy } from './registry.js';
import type { SearchDeps, SearchResult } from './types.js';

/** One output line of a search over a data set, as its strict schema declares (src/data/record-kinds.ts). */
export type SearchRecord = z.infer<typeof SearchOutputRowSchema>;

/** Mean cost of one problem, by role, and the totals. */
export interface CostPerProblem {
  policyTokens: number;
  judgeTokens: number;
  totalTokens: number;
  policyCalls: number;
  judgeCalls: number;
}

/** Accuracy and cost of a set of search records. */
export interface SearchSummary {
  strategy: string;
  problems: number;
  /** Problems with a gold answer (the denominator of accuracy). */
  checked: number;
  correct: number;
  accuracy: number;
  /** Problems with no extracted final answer. */
  noAnswer: number;
  /** Summed cost over all problems. */
  cost: Cost;
  costPerProblem: CostPerProblem;
  /** True when any problem came from the simulated world: these are not real model results. */
  simulated: boolean;
  /** Present and true when the judge read the gold answer: the accuracy is not a fair test. */
  judgeUsedGold?: true;
  /**
   * With a judge: its replies with no parsable verdict, the replies read, and the share of
   * unparsable ones, over every problem.
   */
  formatFailures?: number;
  judgeReplies?: number;
  formatFailureRate?: number;
}

/** A search result as an output line. */
export function toSearchRecord(
  problem: Problem,
  r: SearchResult,
  options: { trace?: boolean; simulated?: boolean; segmentation?: Segmentation } = {},
): SearchRecord {
  return {
    id: problem.id,
    question: problem.question,
    strategy: r.strategy,
    segmentation: options.segmentation ?? 'paragraph',
    gold: problem.answer,
    answer: r.answer,
    ...(r.correct !== undefined ? { correct: r.correct } : {}),
    finalText: r.finalText,
    chunks: r.chunks,
    cost: r.cost,
    stats: r.stats,
    ...(options.trace === false ? {} : { trace: r.trace, backtracks: r.backtracks }),
    ...(problem.source === 'sim' || options.simulated || r.simulated ? { simulated: true as const } : {}),
    ...(r.judgeUsedGold ? { judgeUsedGold: true as const } : {}),
  };
}

const tokensOf = (c: Cost['policy']): number => c.promptTokens + c.completionTokens;

type Summarized = Pick<SearchRecord, 'correct' | 'answer' | 'cost' | 'simulated' | 'judgeUsedGold'> &
  Partial<Pick<SearchRecord, 'stats'>>;

/** Accuracy over problems with a gold answer, and mean cost per problem. */
export function summarizeSearch(strategy: string, records: ReadonlyArray<Summarized>): SearchSummary {
  const acc = searchAccumulator(strategy);
  for (const r of records) acc.add(r);
  return acc.result();
}

/** {@link summarizeSearch} one record at a time: keeps counts and summed costs, not records. */
export function searchAccumulator(strategy: string): { add(r: Summarized): void; result(): SearchSummary } {
  let cost = emptyCost();
  let problems = 0;
  let checked = 0;
  let correct = 0;
  let noAnswer = 0;
  let simulated = false;
  let judgeUsedGold = false;
  let replies = 0;
  let formatFailures = 0;
  const num = (v: unknown) => (typeof v === 'number' ? v : 0);
  return {
    add(r) {
      cost = addCosts(cost, r.cost);
      replies += num(r.stats?.judgeReplies);
      formatFailures += num(r.stats?.formatFailures);
      problems++;
      if (r.correct !== undefined) checked++;
      if (r.correct === true) correct++;
      if (r.answer === null) noAnswer++;
      if (r.simulated === true) simulated = true;
      if (r.judgeUsedGold === true) judgeUsedGold = true;
    },
    result() {
      const n = Math.max(1, problems);
      return {
        strategy,
        problems,
        checked,
        correct,
        accuracy: checked === 0 ? 0 : correct / checked,
        noAnswer,
        cost,
        costPerProblem: {
          policyTokens: tokensOf(cost.policy) / n,
          judgeTokens: tokensOf(cost.judge) / n,
          totalTokens: (tokensOf(cost.policy) + tokensOf(cost.judge)) / n,
          policyCalls: cost.policy.calls / n,
          judgeCalls: cost.judge.calls / n,
        },
        simulated,
        ...(judgeUsedGold ? { judgeUsedGold: true as const } : {}),
        ...(replies > 0
          ? {
              formatFailures,
              judgeReplies: replies,
              formatFailureRate: formatFailureShare(formatFailures, replies),
            }
          : {}),
      };
    },
  };
}

/**
 * A resumed output must hold results of the same strategy: mixing strategies in one file would
 * make its accuracy meaningless. Throws a UsageError that says what to do.
 */
function assertResumable(out: string, strategy: string, segmentation: Segmentation, fresh?: boolean): void {
  if (fresh || !existsSync(out)) return;
  // One line at a time: a resumed output can be far larger than memory.
  for (const { line, value } of streamJsonl(out, { skipInvalid: true })) {
    const was = (value as { segmentation?: unknown } | null)?.segmentation ?? 'paragraph';
    if (was !== segmentation)
      throw new UsageError(
        `${out}, line ${line}: searched with --segmentation ${String(was)}, not ${segmentation}: pass --fresh to start it over, or choose another --out`,
      );
    const other = (value as { strategy?: unknown } | null)?.strategy;
    if (typeof other === 'string' && other !== strategy)
      throw new UsageError(
        `${out} holds results of strategy "${other}", not "${strategy}": pass --fresh to start it over, or choose another --out`,
      );
  }
}

/** Options of {@link searchDataset}. */
export interface SearchJobOptions {
  /** The problems, taken at most `concurrency` ahead of the work (a list, or read from a file as needed). */
  problems: Iterable<Problem> | AsyncIterable<Problem>;
  /** How many problems there are, for progress and the run record (a list's length by default). */
  total?: number;
  strategy: string;
  config?: Partial<SearchConfig>;
  deps: SearchDeps;
  /** JSONL output, one {@link SearchRecord} per problem; a rerun resumes it. */
  out: string;
  /** Problems searched at once. Default 4. */
  concurrency?: number;
  /** Only this part of the problems (by a hash of the problem id); parts join with `stepwise merge`. */
  shard?: Shard;
  fresh?: boolean;
  /** Recorded on every row and in the run; a resumed output must have the same (see jobs/settings). */
  settings?: JobSettings;
  /** Keep the trace of attempts in each record (default true: the web view draws it). */
  trace?: boolean;
  /** Mark every record simulated (a simulated policy or judge), whatever the problems' source. */
  simulated?: boolean;
  /**
   * Called once the output is known to be resumable, before any work: a command records its run
   * here (the run store is the command's business, not the library's), so a refused rerun leaves
   * no run behind.
   */
  onStart?: () => void;
  onProgress?: (p: { done: number; total: number; resumed: number; correct: number }) => void;
  /** Exit 2 instead of redoing rows whose problem changed since they were searched (jobs/made-from). */
  strictResume?: boolean;
  /** The problems again, read once before any work (jobs/run-job `plan`): changed rows are found first. */
  plan?: Iterable<Problem> | AsyncIterable<Problem>;
  /** Told of rows kept unverified (an older output that records no digest of its input). */
  onWarning?: (message: string) => void;
}

/** How many problems a search runs over: `total`, or the list's length (undefined: not known). */
export function problemCount(options: Pick<SearchJobOptions, 'problems' | 'total'>): number | undefined {
  return options.total ?? (Array.isArray(options.problems) ? options.problems.length : undefined);
}

/**
 * Run one strategy over problems: each result is appended to `out` as soon as it is done, a
 * rerun skips problems already there, and the file ends in input order. Returns the summary
 * (accuracy, cost per problem), accumulated as records go by: records are not held, so memory
 * is bounded by the problems in flight, not by the size of the job.
 */
export async function searchDataset(
  options: SearchJobOptions,
): Promise<{ summary: SearchSummary; items: number } & ResumeCounts> {
  const segmentation = options.config?.segmentation ?? 'paragraph';
  assertResumable(options.out, options.strategy, segmentation, options.fresh);
  options.onStart?.();
  let correct = 0;
  const acc = searchAccumulator(options.strategy);
  const result = await runStreamJob<Problem, SearchRecord>({
    items: options.problems,
    total: options.shard ? undefined : problemCount(options),
    keyOf: (p) => p.id,
    keyOfOutput: (r) => r.id,
    out: options.out,
    concurrency: options.concurrency ?? 4,
    fresh: options.fresh,
    strictResume: options.strictResume,
    onWarning: options.onWarning,
    plan: options.plan,
    unit: 'problems',
    settings: options.settings,
    shard: options.shard,
    signal: options.deps.signal,
    onRecord: (r) => acc.add(r),
    process: async (problem) => {
      // The domain in deps checks the answer (code: the problem's tests in the sandbox).
      const r = await runStrategy(options.strategy, problem, options.config ?? {}, options.deps);
      if (r.correct) correct++;
      return toSearchRecord(problem, r, {
        trace: options.trace,
        simulated: options.simulated,
        segmentation,
      });
    },
    onProgress: (p) => options.onProgress?.({ ...p, correct }),
  });
  return {
    summary: acc.result(),
    items: result.items,
    resumed: result.resumed,
    redone: result.redone,
    unverified: result.unverified,
  };
}
