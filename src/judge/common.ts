import { CostLedger } from '../core/cost.js';
import type { Cost, Judgment, Verdict } from '../core/types.js';
import type { Usage } from '../models/types.js';
import type { JudgeOptions, JudgeResult } from './types.js';

/** Default threshold of score-based verdicts: a chunk is negative when its score is below it. */
export const DEFAULT_THRESHOLD = 0.5;

/**
 * The judge-role account of one `judge` call: every model call a judge makes is recorded in a
 * {@link CostLedger} under role `judge` (rollouts of a rollout judge included: they are spent on
 * judging). Cache hits cost nothing: their calls, samples and tokens are not counted.
 */
export class JudgeCost {
  private readonly ledger = new CostLedger();

  /** Record one call's usage and the number of samples it returned (`cached`: served from the cache). */
  record(usage: Usage, samples: number, cached = false): void {
    this.ledger.record('judge', {
      calls: usage.calls,
      samples: cached || usage.calls === 0 ? 0 : samples,
      promptTokens: usage.promptTokens,
      completionTokens: usage.completionTokens,
    });
  }

  /** Add a cost computed elsewhere, all of it as the judge's. */
  addAsJudge(cost: Cost): void {
    for (const role of ['policy', 'judge'] as const) {
      const c = cost[role];
      this.ledger.record('judge', c);
    }
  }

  get cost(): Cost {
    return this.ledger.snapshot();
  }
}

/** Positive when `score >= threshold`, negative otherwise. */
export function verdictOf(score: number, threshold: number): Verdict {
  return score >= threshold ? 'positive' : 'negative';
}

/** The chunk indices a call asks for: `options.only` (in order, in range, deduplicated) or all. */
export function chunksToJudge(count: number, options: JudgeOptions = {}): number[] {
  if (!options.only) return Array.from({ length: count }, (_, i) => i);
  return [...new Set(options.only)]
    .filter((i) => Number.isInteger(i) && i >= 0 && i < count)
    .sort((a, b) => a - b);
}

/** Index of the first negative judgment, −1 when none. */
export function firstNegative(judgments: readonly Judgment[]): number {
  return judgments.find((j) => j.verdict === 'negative')?.chunkIndex ?? -1;
}

/**
 * Assemble a result from judgments in chunk order: with `firstErrorOnly`, judgments after the
 * first negative are dropped (the contract says none follow it).
 */
export function resultFrom(
  judgments: Judgment[],
  cost: Cost,
  options: JudgeOptions,
  extra: Partial<JudgeResult> = {},
): JudgeResult {
  const sorted = [...judgments].sort((a, b) => a.chunkIndex - b.chunkIndex);
  const firstError = firstNegative(sorted);
  const kept =
    options.firstErrorOnly && firstError >= 0 ? sorted.filter((j) => j.chunkIndex <= firstError) : sorted;
  const formatFailures = kept.reduce((s, j) => s + (j.formatFailures ?? 0), 0);
  return { judgments: kept, firstError, cost, formatFailures, ...extra };
}

/** Throw the abort reason when the signal has fired. */
export function throwIfAborted(signal?: AbortSignal): void {
  if (signal?.aborted) throw signal.reason ?? new Error('aborted');
}
